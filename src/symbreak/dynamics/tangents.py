"""The rescaling symmetries as moves in parameter space: tangents, predicted flat counts, rescaled copies.

* :func:`symmetry_tangents`, :func:`pair_tangents`, :func:`transpose_tangents`,
  :func:`predicted_tangents`, :func:`rescaling_tangents` — tangent vectors ``ξ``;
* :func:`rescaling_is_symmetry`, :func:`predicted_flat_count`, :func:`predicted_span` — what
  ``prop-flat-directions`` predicts; :func:`net_parameters`, :func:`quadratic_map_dimension` — counts
  to compare it with;
* :func:`rescale` — a rescaled copy of a layer;
* :func:`drift_alignment`, :func:`random_alignment` — the share of a move that lies along given
  tangents, and its typical value for a random move.
"""

from __future__ import annotations

import copy
import math

import torch

from symbreak.dynamics._base import _block_vector, _check_layer
from symbreak.dynamics.charges import kept_rescalings
from symbreak.layers import BilinearMLP, FeedForward, KeyValueMLP


def symmetry_tangents(layer: FeedForward) -> dict[str, list[torch.Tensor]]:
    """The tangent vectors of the one-parameter rescaling symmetries of ``layer``, per kind.

    The kept rescalings of :data:`~symbreak.dynamics.charges.KEPT_RESCALINGS`, in its order,
    each skipped when it is the combination of those already listed (``"kv"`` of the rank-``R``
    form, ``"qk"`` of the gated form, when σ is positively homogeneous):

    * ``"qk"``: ``(q_j, −k_j)`` — inverse scaling of query and key (symmetric rank-1 form, every σ; the gated
      form keeps it with a positively homogeneous σ, as the difference of ``"qv"`` and ``"kv"``, so never listed);
    * ``"gauge"``: in place of ``"qk"`` at rank ``R > 1``, the ``R²`` generators ``E_rs`` of
      ``GL(R)`` per unit, ``δq_{j,s} = q_{j,r}``, ``δk_{j,r} = −k_{j,s}`` (every σ);
    * ``"kv"``: ``(k_j, −v_j)`` — gated forms (linear in ``k_j`` and ``v_j``), and the
      key–value memory when σ is positively homogeneous;
    * ``"qv"``: ``(q_j, −v_j)`` — when σ is positively homogeneous (bilinear and gated forms).

    Which kinds apply is decided from the activation's properties (registry).
    """
    kept = kept_rescalings(layer)
    listed: list[str] = []
    for pair in kept:
        if kept[pair] and _span_dimension([*listed, pair]) > _span_dimension(listed):
            listed.append(pair)
    out: dict[str, list[torch.Tensor]] = {}
    for pair in listed:
        if isinstance(layer, BilinearMLP) and pair == "qk" and layer.rank > 1:
            out["gauge"] = _gauge_tangents(layer)
        else:
            out[pair] = [_rescaling_vector(layer, pair, j, negate_mask=True) for j in range(layer.m)]
    return out


def _gauge_tangents(layer: BilinearMLP) -> list[torch.Tensor]:
    """The generators ``E_rs`` of ``GL(R)`` per unit: ``δq_{j,s} = q_{j,r}``, ``δk_{j,r} = −k_{j,s}``."""
    R = layer.rank
    gens = []
    for j in range(layer.m):
        for r in range(R):
            for s_ in range(R):
                dq, dk = torch.zeros_like(layer.Q), torch.zeros_like(layer.K)
                dq[s_, j] = layer.Q[r, j].detach()
                dk[r, j] = -layer.K[s_, j].detach()
                gens.append(_block_vector(layer, {"Q": dq, "K": dk}))
    return gens


def _span_dimension(pairs: list[str]) -> int:
    """The dimension per unit of the span of the rescalings ``pairs``: blocks touched minus connected groups."""
    groups: list[set[str]] = []
    for pair in pairs:
        touching = [g for g in groups if g & set(pair)]
        groups = [g for g in groups if not g & set(pair)] + [set(pair).union(*touching)]
    return sum(len(g) - 1 for g in groups)


def pair_tangents(layer: FeedForward, pair: str) -> list[torch.Tensor]:
    """Per unit ``j``, the tangent of rescaling a pair of blocks: ``"qk"`` → ``(q_j, −k_j)``, ``"kv"``, ``"qv"``.

    The vector has ``θ``'s entries of the first block of unit ``j`` (all ``r`` at
    rank ``R``), minus those of the second, and zeros elsewhere — whether or not
    the rescaling is a symmetry of ``layer`` (compare :func:`symmetry_tangents`).
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    return [_rescaling_vector(layer, pair, j) for j in range(layer.m)]


def _rescaling_vector(layer: FeedForward, pair: str, j: int, *, negate_mask: bool = False) -> torch.Tensor:
    """The tangent of rescaling ``pair`` of unit ``j``: its first block's entries, minus its second's.

    ``negate_mask`` negates the second block's whole mask, so that its zeros are ``−0.0``
    (as :func:`symmetry_tangents` has always built them; the values are the same).
    """
    names = {"q": "Q", "k": "K", "v": "V"}
    parts = {}
    for sign, key in ((1.0, pair[0]), (-1.0, pair[1])):
        p = layer.get_parameter(names[key])
        mask = torch.zeros_like(p)
        idx = (slice(None), j) if isinstance(layer, BilinearMLP) and key in "qk" else j
        if negate_mask and sign < 0:
            mask[idx] = p[idx].detach()
            mask = -mask
        else:
            mask[idx] = sign * p[idx].detach()
        parts[names[key]] = mask
    return _block_vector(layer, parts)


def rescaling_is_symmetry(layer: FeedForward, pair: str) -> bool:
    """Whether rescaling ``pair`` of each unit (``"qk"``, ``"kv"``, ``"qv"``) leaves ``layer``'s function unchanged.

    By ``prop-flat-directions``, part 2, as :data:`~symbreak.dynamics.charges.KEPT_RESCALINGS`
    records: ``"qk"`` for the rank-``R`` form (the gauge element ``α I``) and for the gated form
    with a positively homogeneous σ; ``"kv"`` for the gated form, and for the others with a
    positively homogeneous σ; ``"qv"`` for the rank-``R`` and gated forms with a positively
    homogeneous σ.  Decided from the activation's registry properties.
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    return kept_rescalings(layer)[pair]


def transpose_tangents(layer: BilinearMLP) -> list[torch.Tensor]:
    """The ``R(R−1)`` generators per unit that the transpose symmetry adds to ``GL(R)`` at rank ``R``.

    The score ``Σ_r a_r b_r`` (``a_r = x·q_{j,r}``, ``b_r = x·k_{j,r}``) is kept by
    the orthogonal group ``O(R, R)`` of dimension ``R(2R−1)``; besides the ``R²``
    generators of ``GL(R)`` it has, for each ``r < s``,
    ``δq_{j,r} = k_{j,s}``, ``δq_{j,s} = −k_{j,r}`` and
    ``δk_{j,r} = q_{j,s}``, ``δk_{j,s} = −q_{j,r}``; both change ``W_j`` by an
    antisymmetric matrix only.  Empty at ``R = 1``.
    """
    if not isinstance(layer, BilinearMLP):
        raise TypeError(f"layer: expected a BilinearMLP, got {type(layer).__name__}")
    R = layer.rank
    Q, K = layer.Q.detach(), layer.K.detach()
    out = []
    for j in range(layer.m):
        for r in range(R):
            for s_ in range(r + 1, R):
                dq = torch.zeros_like(Q)
                dq[r, j], dq[s_, j] = K[s_, j], -K[r, j]
                out.append(_block_vector(layer, {"Q": dq}))
                dk = torch.zeros_like(K)
                dk[r, j], dk[s_, j] = Q[s_, j], -Q[r, j]
                out.append(_block_vector(layer, {"K": dk}))
    return out


def predicted_tangents(layer: FeedForward) -> dict[str, list[torch.Tensor]]:
    """:func:`symmetry_tangents` together with :func:`transpose_tangents` (kind ``"transpose"``) at rank ``R > 1``."""
    out = symmetry_tangents(layer)
    if isinstance(layer, BilinearMLP) and layer.rank > 1:
        out["transpose"] = transpose_tangents(layer)
    return out


def predicted_flat_count(layer: FeedForward) -> int:
    """The number of flat directions the rescaling symmetries force, per the formula of ``prop-flat-directions``.

    ``m·c`` with ``c`` per unit: the dimension of the span of the kept rescalings
    (:data:`~symbreak.dynamics.charges.KEPT_RESCALINGS`), plus at rank ``R`` the
    ``R(2R−1) − 1`` generators of the score's ``O(R, R)`` besides its ``α I`` (the kept
    ``"qk"``).  So: key–value memory ``[σ pos. homogeneous]``; rank ``R``:
    ``R(2R−1) + [σ pos. homogeneous]``; gated: ``1 + [σ pos. homogeneous]``.
    """
    kept = kept_rescalings(layer)
    per_unit = _span_dimension([pair for pair in kept if kept[pair]])
    if isinstance(layer, BilinearMLP):
        per_unit += layer.rank * (2 * layer.rank - 1) - 1
    return layer.m * per_unit


def predicted_span(layer: FeedForward) -> int:
    """``rank Ξ``: the dimension of the span of :func:`predicted_tangents`, ``Ξ`` the matrix stacking them (0 if none).

    ``prop-flat-directions`` says it is :func:`predicted_flat_count` at parameters with
    ``q_j, k_j, v_j ≠ 0`` (and, at rank ``R``, independent ``q_{j,r}, k_{j,r}``).
    """
    tangents = [xi for vectors in predicted_tangents(_check_layer(layer)).values() for xi in vectors]
    return int(torch.linalg.matrix_rank(torch.stack(tangents, 1))) if tangents else 0


def net_parameters(layer: FeedForward) -> int:
    """``P − k``: the parameters of ``layer`` net of the ``k`` = :func:`predicted_flat_count` symmetry directions."""
    layer = _check_layer(layer)
    return sum(p.numel() for p in layer.parameters()) - predicted_flat_count(layer)


def quadratic_map_dimension(d: int, d_out: int) -> int:
    """``d_out · d(d+1)/2``: the dimension of the quadratic maps ``R^d → R^{d_out}``, ``x ↦ (x W_o xᵀ)_o``.

    With σ the identity both rank-1 forms compute such maps (``W_o`` symmetric), so a layer
    whose :func:`net_parameters` exceed it has flat directions that no symmetry explains.
    """
    for name, value in (("d", d), ("d_out", d_out)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    return d_out * d * (d + 1) // 2


def rescaling_tangents(layer: FeedForward) -> list[torch.Tensor]:
    """Every unit-wise rescaling tangent of ``layer`` (:func:`pair_tangents` of each pair), symmetry or not."""
    layer = _check_layer(layer)
    pairs = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    return [xi for p in pairs for xi in pair_tangents(layer, p)]


def rescale(layer: FeedForward, pair: str, alpha: float, units: int | list[int] | None = None) -> FeedForward:
    """A copy of ``layer`` with the first block of ``pair`` multiplied by ``α`` and the second divided by ``α``.

    ``pair`` is ``"qk"`` (the inverse scaling of :func:`symbreak.symmetry.inverse_scale`),
    ``"kv"`` or ``"qv"``; ``units`` selects the units (default: all).  The copy
    computes the same function exactly when the rescaling is a symmetry of the form.
    """
    layer = _check_layer(layer)
    allowed = ("kv",) if isinstance(layer, KeyValueMLP) else ("qk", "kv", "qv")
    if pair not in allowed:
        raise ValueError(f"pair: expected one of {list(allowed)} for {type(layer).__name__}, got {pair!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha == 0 or alpha != alpha:
        raise ValueError(f"alpha: expected a non-zero real number, got {alpha!r}")
    idx = list(range(layer.m)) if units is None else ([units] if isinstance(units, int) else list(units))
    for j in idx:
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < layer.m:
            raise ValueError(f"units: expected indices in [0, {layer.m}), got {j!r}")
    new = copy.deepcopy(layer)
    names = {"q": "Q", "k": "K", "v": "V"}
    with torch.no_grad():
        for key, divide in ((pair[0], False), (pair[1], True)):
            p = new.get_parameter(names[key])
            block = p[:, idx] if isinstance(new, BilinearMLP) and key in "qk" else p[idx]
            block = block / alpha if divide else block * alpha
            if isinstance(new, BilinearMLP) and key in "qk":
                p[:, idx] = block
            else:
                p[idx] = block
    return new


def drift_alignment(before: torch.Tensor, after: torch.Tensor, tangents: list[torch.Tensor]) -> float:
    """``‖Π Δθ‖ / ‖Δθ‖``: the share of the move ``Δθ = after − before`` in the span of ``tangents``.

    ``Π`` is the orthogonal projector onto that span.

    1 for a move along the span, about ``√(k/P)`` for a random direction in ``P``
    dimensions against a ``k``-dimensional span.
    """
    for name, t in (("before", before), ("after", after)):
        if not isinstance(t, torch.Tensor) or t.ndim != 1:
            raise TypeError(f"{name}: expected a 1-d tensor of parameters, got {getattr(t, 'shape', type(t).__name__)}")
    if before.shape != after.shape:
        raise ValueError(f"after: expected the shape of before {tuple(before.shape)}, got {tuple(after.shape)}")
    if not tangents:
        raise ValueError("tangents: expected at least one tangent vector, got none")
    delta = after - before
    size = float(delta.norm())
    if size == 0:
        raise ValueError("after: equals before, so the move has no direction")
    U, sv, _ = torch.linalg.svd(torch.stack(tangents, 1), full_matrices=False)
    U = U[:, sv > max(U.shape) * torch.finfo(U.dtype).eps * sv[0]]
    return float((U @ (U.T @ delta)).norm()) / size


def random_alignment(layer: FeedForward) -> float:
    """``√(k/P)``: about the :func:`drift_alignment` of a random move against the span of all rescaling tangents.

    ``k`` is the dimension of the span of :func:`rescaling_tangents` (``2m`` for a rank-1 form,
    ``m`` for the key–value memory) and ``P`` the number of parameters: a direction drawn
    uniformly in ``R^P`` has ``E ‖Π z‖² = k/P`` for the projector ``Π`` onto a ``k``-dimensional span.
    """
    layer = _check_layer(layer)
    k = int(torch.linalg.matrix_rank(torch.stack(rescaling_tangents(layer), 1)))
    return math.sqrt(k / sum(p.numel() for p in layer.parameters()))
