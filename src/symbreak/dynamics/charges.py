"""The per-unit quantities the symmetries conserve, and which of them a layer's symmetries protect.

* :func:`norm_differences` — per unit ``‖q_j‖² − ‖k_j‖²`` (``"qk"``) and
  ``‖k_j‖² − ‖v_j‖²`` (``"kv"``), summed over ``r`` at rank ``R``;
* :func:`diagonal_gap` — the distance from the invariant diagonal ``{q_j = k_j}``;
* :func:`conserved_pairs` — per pair, whether ``thm-conservation`` says it is conserved.
"""

from __future__ import annotations

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


def conserved_pairs(layer: FeedForward) -> dict[str, bool]:
    """Per pair, whether ``thm-conservation`` says gradient flow conserves its norm difference.

    ``"qk"`` (``‖q_j‖² − ‖k_j‖²``) is conserved where the loss is invariant under
    ``q_j → α q_j``, ``k_j → k_j/α`` (``α > 0``): always for ``BilinearMLP`` (every
    σ; at rank ``R`` the sum over ``r``), for ``GatedMLP`` iff σ is positively
    homogeneous.  ``"kv"`` (``‖k_j‖² − ‖v_j‖²``) is conserved where the loss is
    invariant under ``k_j → α k_j``, ``v_j → v_j/α``: always for ``GatedMLP``
    (linear in ``k_j`` and in ``v_j``), for ``BilinearMLP`` and ``KeyValueMLP``
    iff σ is positively homogeneous.  A ``KeyValueMLP`` has no ``"qk"`` entry.
    """
    layer = _check_layer(layer)
    homogeneous = layer.activation.is_positively_homogeneous
    if isinstance(layer, BilinearMLP):
        return {"qk": True, "kv": homogeneous}
    if isinstance(layer, GatedMLP):
        return {"qk": homogeneous, "kv": True}
    if isinstance(layer, KeyValueMLP):
        return {"kv": homogeneous}
    raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")
