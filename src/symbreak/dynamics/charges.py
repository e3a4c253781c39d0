"""The per-unit quantities the symmetries conserve, and which of them a layer's symmetries protect.

* :func:`norm_differences` — per unit ``‖q_j‖² − ‖k_j‖²`` (``"qk"``) and
  ``‖k_j‖² − ‖v_j‖²`` (``"kv"``), summed over ``r`` at rank ``R``;
* :func:`diagonal_gap` — the distance from the invariant diagonal ``{q_j = k_j}``, and
  :func:`on_diagonal`, :func:`off_diagonal` — starts on it and near it;
* :data:`KEPT_RESCALINGS`, :func:`kept_rescalings` — the one table of which unit-wise rescaling
  each form keeps, and its reading for a layer;
* :func:`conserved_pairs` — per pair, whether ``thm-conservation`` says it is conserved, and
  :func:`by_law` — per-pair measurements grouped by that prediction.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType

import torch

from symbreak.dynamics._base import _check_layer, _query_key_value
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP


def norm_differences(layer: FeedForward) -> dict[str, torch.Tensor]:
    """Per unit: ``"qk"``: ``‖q_j‖² − ‖k_j‖²`` (not for a KeyValueMLP) and ``"kv"``: ``‖k_j‖² − ‖v_j‖²``."""
    blocks = _query_key_value(_check_layer(layer))
    sq = {name: (w.detach() ** 2).sum(-1) for name, w in blocks.items()}
    out = {"kv": sq["k"] - sq["v"]}
    if "q" in sq:
        out["qk"] = sq["q"] - sq["k"]
    return out


def diagonal_gap(layer: BilinearMLP | GatedMLP) -> float:
    """``max_j ‖q_j − k_j‖_∞``: the distance from the diagonal ``{q_j = k_j}`` (``thm-invariant-diagonal``)."""
    blocks = _query_key_value(_check_layer(layer))
    if "q" not in blocks:
        raise TypeError("layer: expected a form with queries (BilinearMLP or GatedMLP), got a KeyValueMLP")
    return float((blocks["q"] - blocks["k"]).detach().abs().max())


def _with_queries(layer: object) -> BilinearMLP | GatedMLP:
    if not isinstance(layer, (BilinearMLP, GatedMLP)):
        raise TypeError(f"layer: expected a form with queries (BilinearMLP or GatedMLP), got {type(layer).__name__}")
    return layer


def on_diagonal(layer: BilinearMLP | GatedMLP) -> BilinearMLP | GatedMLP:
    """A copy of ``layer`` with every key set to its query, ``k_j = q_j``: a point of the diagonal."""
    new = copy.deepcopy(_with_queries(layer))
    with torch.no_grad():
        new.K.copy_(new.Q)
    return new


def off_diagonal(layer: BilinearMLP | GatedMLP, eps: float, generator: torch.Generator) -> BilinearMLP | GatedMLP:
    """A copy of ``layer`` with ``k_j → k_j + ε ξ_j``, ``ξ`` standard normal drawn from ``generator``.

    Started from a point of the diagonal, each key is its query plus independent
    ``N(0, ε²)`` noise, entry by entry.  ``generator`` advances by one draw per key entry.
    """
    new = copy.deepcopy(_with_queries(layer))
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0:
        raise ValueError(f"eps: expected a real number > 0, got {eps!r}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
    with torch.no_grad():
        new.K.add_(eps * torch.randn(new.K.shape, generator=generator, dtype=new.K.dtype))
    return new


# Which unit-wise rescaling each form keeps: per form, per pair ``"ab"`` (``a_j → α a_j``,
# ``b_j → b_j/α``, ``α > 0``), the activation property that makes it a symmetry (``None``:
# every σ).  ``"qk"``: the bilinear score ``(x·q_j)(x·k_j)`` (rank ``R``: ``Σ_r``) never sees it;
# the gated unit ``σ(x·q_j)(x·k_j)`` keeps it iff σ is positively homogeneous.  ``"kv"``: the
# gated unit is linear in ``k_j`` and ``v_j``; the others need σ positively homogeneous.
# ``"qv"``: σ positively homogeneous.  The one source of ``conserved_pairs``,
# ``rescaling_is_symmetry``, ``symmetry_tangents`` and ``predicted_flat_count``; per form the
# order is the one in which ``symmetry_tangents`` lists a basis of the kept ones.
_HOMOGENEOUS = "is_positively_homogeneous"
#: Which unit-wise rescaling each form keeps: per form, per pair ``"ab"``, the activation property that makes it a
#: symmetry (``None``: every σ), as the comment above details.
KEPT_RESCALINGS = MappingProxyType(
    {
        KeyValueMLP: MappingProxyType({"kv": _HOMOGENEOUS}),
        BilinearMLP: MappingProxyType({"qk": None, "qv": _HOMOGENEOUS, "kv": _HOMOGENEOUS}),
        GatedMLP: MappingProxyType({"kv": None, "qv": _HOMOGENEOUS, "qk": _HOMOGENEOUS}),
    }
)


def kept_rescalings(layer: FeedForward) -> dict[str, bool]:
    """Per rescaling pair of ``layer``'s form (:data:`KEPT_RESCALINGS`), whether it leaves the function unchanged."""
    layer = _check_layer(layer)
    for form, pairs in KEPT_RESCALINGS.items():
        if isinstance(layer, form):
            return {pair: cond is None or getattr(layer.activation, cond) for pair, cond in pairs.items()}
    raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")


def conserved_pairs(layer: FeedForward) -> dict[str, bool]:
    """Per pair, whether ``thm-conservation`` says gradient flow conserves its norm difference.

    Read from :data:`KEPT_RESCALINGS`:
    ``"qk"`` (``‖q_j‖² − ‖k_j‖²``) is conserved where the loss is invariant under
    ``q_j → α q_j``, ``k_j → k_j/α`` (``α > 0``): always for ``BilinearMLP`` (every
    σ; at rank ``R`` the sum over ``r``), for ``GatedMLP`` iff σ is positively
    homogeneous.  ``"kv"`` (``‖k_j‖² − ‖v_j‖²``) is conserved where the loss is
    invariant under ``k_j → α k_j``, ``v_j → v_j/α``: always for ``GatedMLP``
    (linear in ``k_j`` and in ``v_j``), for ``BilinearMLP`` and ``KeyValueMLP``
    iff σ is positively homogeneous.  A ``KeyValueMLP`` has no ``"qk"`` entry.
    """
    kept = kept_rescalings(layer)
    return {pair: kept[pair] for pair in ("qk", "kv") if pair in kept}


def by_law(
    values: Mapping[str, Mapping[str, float]], laws: Mapping[str, Mapping[str, bool]]
) -> dict[bool, list[float]]:
    """``values[label][pair]`` grouped by the prediction ``laws[label][pair]`` (:func:`conserved_pairs`).

    ``{True: [the values of the conserved pairs], False: [those of the others]}``, each in the
    order of ``values``.  Every pair of ``values`` must have a prediction.
    """
    grouped: dict[bool, list[float]] = {True: [], False: []}
    for label, per_pair in values.items():
        for pair, value in per_pair.items():
            if pair not in laws.get(label, {}):
                raise ValueError(f"laws: expected a prediction for {label!r}, pair {pair!r}, got none")
            grouped[bool(laws[label][pair])].append(value)
    return grouped
