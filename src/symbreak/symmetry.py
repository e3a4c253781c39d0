"""Transformations of a layer's parameters, and how much they change its output.

Every transformation returns a new layer and leaves its argument untouched.

* :func:`exchange` — ``q_j ↔ k_j`` for every unit (every ``r`` at rank ``R``);
* :func:`inverse_scale` — ``q_j → α q_j``, ``k_j → k_j / α`` for the chosen units;
* :func:`gauge` — ``(Q_j, K_j) → (Q_j A, K_j A^{-T})`` for an invertible
  ``A ∈ R^{R×R}``, with ``Q_j = [q_{j,1}ᵀ … q_{j,R}ᵀ] ∈ R^{d×R}``; inverse
  scaling is the case ``A = α I``;
* :func:`output_change` — ``‖g(X) − f(X)‖_F / ‖f(X)‖_F`` on given inputs ``X``;
* :func:`compare_outputs` — ``|g(X') − f(X)|`` entry by entry against the rounding bound
  ``β_f(X) + β_g(X')`` of the two computations, as a :class:`Change`;
* :func:`exchange_change_ratio` — the expected squared relative change of a gated unit
  under ``q_j ↔ k_j`` when its two factors are independent ``N(0, s²)``, against ``s``.
"""

from __future__ import annotations

import copy
import math
import numbers
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import torch

from symbreak.activations import Activation, resolve
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, SymmetrisedGatedMLP
from symbreak.numerics import forward_error_bound, margin

__all__ = ["exchange", "inverse_scale", "gauge", "output_change", "Change", "compare_outputs", "exchange_change_ratio"]

QueryKeyLayer = BilinearMLP | GatedMLP
#: The layers :func:`exchange` takes: the forms with ``Q`` and ``K``, and the control that keeps the exchange symmetry.
ExchangeLayer = BilinearMLP | GatedMLP | SymmetrisedGatedMLP


def _check_query_key(layer: object) -> QueryKeyLayer:
    if not isinstance(layer, (BilinearMLP, GatedMLP)):
        raise TypeError(f"layer: expected a BilinearMLP or GatedMLP (a form with Q and K), got {type(layer).__name__}")
    return layer


def _index(value: object) -> int:
    """``value`` as an int (an integer-like such as ``numpy.int64`` too, by ``operator.index``); a bool is none."""
    if isinstance(value, bool):
        raise TypeError
    return operator.index(value)


def _unit_index(units: int | Sequence[int] | None, m: int) -> slice | list[int]:
    if units is None:
        return slice(None)
    try:
        idx = [_index(units)]
    except TypeError:
        idx = list(units) if isinstance(units, Iterable) else [units]
    for position, j in enumerate(idx):
        try:
            idx[position] = _index(j)
        except TypeError:
            raise TypeError(f"units: expected ints in [0, {m}), got {type(j).__name__} ({j!r})") from None
        if not 0 <= idx[position] < m:
            raise ValueError(f"units: expected indices in [0, {m}), got {j}")
    return idx


def exchange(layer: ExchangeLayer) -> ExchangeLayer:
    """The layer with ``Q`` and ``K`` exchanged: ``q_j ↔ k_j`` for every unit (a copy; ``layer`` is unchanged).

    ``layer`` is a :class:`~symbreak.layers.BilinearMLP`, a :class:`~symbreak.layers.GatedMLP` or the control
    :class:`~symbreak.layers.SymmetrisedGatedMLP`, whose output the exchange leaves unchanged (a ``TypeError``
    otherwise).  Exchanging twice gives the layer back::

        >>> import torch
        >>> from symbreak import GatedMLP, exchange
        >>> layer = GatedMLP(d=3, m=2, activation="relu")
        >>> torch.equal(exchange(exchange(layer)).Q, layer.Q), torch.equal(exchange(layer).Q, layer.K)
        (True, True)
    """
    if not isinstance(layer, (BilinearMLP, GatedMLP, SymmetrisedGatedMLP)):
        raise TypeError(
            f"layer: expected a BilinearMLP, GatedMLP or SymmetrisedGatedMLP (a form with Q and K), "
            f"got {type(layer).__name__}"
        )
    new = copy.deepcopy(layer)
    with torch.no_grad():
        new.Q.copy_(layer.K)
        new.K.copy_(layer.Q)
    return new


def inverse_scale(layer: QueryKeyLayer, alpha: float, units: int | Sequence[int] | None = None) -> QueryKeyLayer:
    """The layer with ``q_j → α q_j`` and ``k_j → k_j / α`` for ``j`` in ``units`` (default: all).

    ``alpha`` is a finite non-zero real number (``ValueError`` otherwise).  ReGLU keeps its output for ``α > 0``
    (``thm-inverse-scaling``: ReLU is positively homogeneous); SwiGLU does not::

        >>> import torch
        >>> from symbreak import GatedMLP, inverse_scale, output_change
        >>> x = torch.randn(6, 4, dtype=torch.float64)
        >>> reglu, swiglu = (GatedMLP(4, 8, 2, name, dtype=torch.float64) for name in ("relu", "silu"))
        >>> output_change(reglu, inverse_scale(reglu, 4.0), x) < 1e-12  # rounding only (float64)
        True
        >>> output_change(swiglu, inverse_scale(swiglu, 4.0), x) > 1e-3
        True
    """
    layer = _check_query_key(layer)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha: expected a real number, got {type(alpha).__name__} ({alpha!r})")
    if not isinstance(alpha, int | float):
        alpha = float(alpha)  # numpy.float32(2.0), fractions.Fraction(1, 2), …
    if alpha == 0 or alpha != alpha or abs(alpha) == float("inf"):
        raise ValueError(f"alpha: expected a finite non-zero real number, got {alpha}")
    idx = _unit_index(units, layer.m)
    new = copy.deepcopy(layer)
    with torch.no_grad():
        new.Q[..., idx, :] *= alpha
        new.K[..., idx, :] /= alpha
    return new


def gauge(layer: BilinearMLP, A: torch.Tensor, units: int | Sequence[int] | None = None) -> BilinearMLP:
    """The layer with ``(Q_j, K_j) → (Q_j A, K_j A^{-T})`` for ``j`` in ``units`` (default: all).

    In the stored layout (``Q[r, j]`` is ``q_{j,r}``) this is
    ``q'_{j,s} = Σ_r A_{rs} q_{j,r}`` and ``k'_{j,s} = Σ_r (A^{-1})_{sr} k_{j,r}``,
    so that ``W_j = Q_j K_jᵀ`` is unchanged.
    """
    if not isinstance(layer, BilinearMLP):
        raise TypeError(f"layer: expected a BilinearMLP, got {type(layer).__name__}")
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"A: expected a torch.Tensor, got {type(A).__name__}")
    R = layer.rank
    if A.shape != (R, R):
        raise ValueError(f"A: expected shape (rank, rank) = ({R}, {R}), got {tuple(A.shape)}")
    A = A.to(layer.Q.dtype)
    if torch.linalg.matrix_rank(A) < R:
        raise ValueError("A: expected an invertible matrix, got a singular one")
    idx = _unit_index(units, layer.m)
    new = copy.deepcopy(layer)
    with torch.no_grad():
        Qj, Kj = layer.Q[:, idx, :], layer.K[:, idx, :]
        new.Q[:, idx, :] = torch.einsum("rs,rjd->sjd", A, Qj)
        new.K[:, idx, :] = torch.einsum("sr,rjd->sjd", torch.linalg.inv(A), Kj)
    return new


def output_change(before: FeedForward, after: FeedForward, x: torch.Tensor) -> float:
    """``‖after(x) − before(x)‖_F / ‖before(x)‖_F``: the relative change of the output on ``x``."""
    for name, layer in (("before", before), ("after", after)):
        if not isinstance(layer, FeedForward):
            raise TypeError(f"{name}: expected a symbreak layer, got {type(layer).__name__}")
    with torch.no_grad():
        y0, y1 = before(x), after(x)
        scale = torch.linalg.vector_norm(y0)
        if scale == 0:
            raise ValueError("before: the output on x is identically zero, so a relative change is undefined")
        return float(torch.linalg.vector_norm(y1 - y0) / scale)


@dataclass(frozen=True, eq=False)
class Change:
    """The change ``g(x') − f(x)`` of an output, entry by entry, against a rounding bound ``β``.

    ``before`` is ``f(x)``, ``after`` is ``g(x')`` and ``bound`` bounds the
    rounding error of the two computations together (``β_f(x) + β_g(x')`` from
    :func:`compare_outputs`); all three have one shape, rows are inputs.  The
    exact outputs may agree where ``|g(x') − f(x)| ≤ β`` and provably differ
    where it is larger.
    """

    before: torch.Tensor
    after: torch.Tensor
    bound: torch.Tensor

    def __post_init__(self) -> None:
        for name in ("before", "after", "bound"):
            value = getattr(self, name)
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
        if self.after.shape != self.before.shape or self.bound.shape != self.before.shape:
            shapes = tuple(tuple(getattr(self, n).shape) for n in ("before", "after", "bound"))
            raise ValueError(f"before, after, bound: expected one shape, got {shapes}")

    @cached_property
    def difference(self) -> torch.Tensor:
        """``|g(x') − f(x)|``, entry by entry."""
        return (self.after - self.before).abs()

    @property
    def within(self) -> bool:
        """Whether every entry satisfies ``|g(x') − f(x)| ≤ β``: the exact outputs may agree."""
        return bool((self.difference <= self.bound).all())

    @property
    def outside(self) -> float:
        """The share of entries with ``|g(x') − f(x)| > β``: where the exact outputs provably differ."""
        return (self.difference > self.bound).double().mean().item()

    @property
    def margin(self) -> float:
        """The largest share ``|g(x') − f(x)| / β`` over the entries (:func:`symbreak.numerics.margin`)."""
        return margin(self.difference, self.bound)

    @property
    def largest(self) -> float:
        """``max |g(x') − f(x)| / max |f(x)|``: the largest change against the largest output entry."""
        return (self.difference.max() / self.before.abs().max()).item()

    @property
    def relative(self) -> float:
        """``‖g(x') − f(x)‖_F / ‖f(x)‖_F``, as :func:`output_change`."""
        scale = torch.linalg.vector_norm(self.before)
        if scale == 0:
            raise ValueError("before: the output is identically zero, so a relative change is undefined")
        return float(torch.linalg.vector_norm(self.after - self.before) / scale)

    def squared_norms(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(C, F)`` per input ``i`` (a row): ``C_i = ‖g(x'_i) − f(x_i)‖²`` and ``F_i = ‖f(x_i)‖²``."""
        return (self.after - self.before).pow(2).sum(-1), self.before.pow(2).sum(-1)


def compare_outputs(
    before: FeedForward,
    after: FeedForward,
    x: torch.Tensor,
    *,
    x_after: torch.Tensor | None = None,
    after_param_error: float = 0.0,
) -> Change:
    """``f = before`` at ``x`` against ``g = after`` at ``x'`` (default ``x' = x``), with ``β = β_f(x) + β_g(x')``.

    ``β_f`` is the forward rounding bound of :func:`symbreak.numerics.forward_error_bound`;
    ``after_param_error`` is the relative error of ``g``'s parameters when a
    transformation computed them (``γ_1`` for ``α q_j`` and ``k_j / α``).  So
    ``compare_outputs(f, exchange(f), x).within`` says whether ``Q ↔ K`` may
    leave the layer's output unchanged on ``x``, and ``x_after = −x`` compares
    a transformed layer with the reflected input.
    """
    for name, layer in (("before", before), ("after", after)):
        if not isinstance(layer, FeedForward):
            raise TypeError(f"{name}: expected a symbreak layer, got {type(layer).__name__}")
    x_after = x if x_after is None else x_after
    with torch.no_grad():
        y, y_after = before(x), after(x_after)
        bound = forward_error_bound(before, x) + forward_error_bound(after, x_after, after_param_error)
    return Change(y, y_after, bound)


#: Composite Gauss–Legendre rule for ``∫₀^∞ h(t) φ(t) dt``: ``[0, 12]`` in panels of at most 1/20, 10 nodes each.
_PANEL_WIDTH, _PANEL_NODES, _HALF_LINE_END = 0.05, 10, 12.0


def _half_line_rule(scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Nodes ``t`` and weights ``w · φ(t)`` on ``[0, 12]``, panels of width ``min(1/20, 1/(4 s))`` (float64)."""
    import numpy as np

    panels = math.ceil(_HALF_LINE_END / min(_PANEL_WIDTH, 0.25 / scale))
    width = _HALF_LINE_END / panels
    unit_nodes, unit_weights = np.polynomial.legendre.leggauss(_PANEL_NODES)
    starts = np.arange(panels) * width
    nodes = (starts[:, None] + (unit_nodes[None, :] + 1) * (width / 2)).ravel()
    weights = np.tile(unit_weights * (width / 2), panels) * np.exp(-(nodes**2) / 2) / np.sqrt(2 * np.pi)
    return torch.from_numpy(nodes), torch.from_numpy(weights)


def exchange_change_ratio(activation: str | Activation, scales: Sequence[float]) -> list[float]:
    """``r_σ(s) = E[D_σ(a, b)²] / E[(σ(a) b)²]`` for independent ``a, b ~ N(0, s²)``, for each ``s`` in ``scales``.

    ``D_σ(a, b) = σ(a) b − σ(b) a`` is the change of a gated unit's coefficient
    under ``q_j ↔ k_j``; with ``a = s u``, ``b = s w`` and ``σ_s(z) = σ(s z)``,
    ``r_σ(s) = 2(1 − E[z σ_s(z)]² / E[σ_s(z)²])`` (proposition
    ``prop-exchange-defect-scale``).  The two Gaussian means are computed with the
    registry's torch function in float64 by a composite Gauss–Legendre rule on
    each half-line: ``[0, 12]`` in panels of width ``min(1/20, 1/(4s))`` with 10
    nodes each, so that the kink of a piecewise-linear σ at 0 is a panel end and
    a gate of width ``1/s`` spans several panels; the Gaussian mass beyond 12 is
    below ``10⁻³²``.  Scales must be finite and positive.
    """
    sigma = resolve(activation)
    values = [float(s) for s in scales]
    if not values or not all(math.isfinite(s) and s > 0 for s in values):
        raise ValueError(f"scales: expected a non-empty sequence of finite numbers > 0, got {list(scales)}")
    ratios = []
    for s in values:
        nodes, weights = _half_line_rule(s)
        moments = torch.zeros(2, dtype=torch.float64)
        for sign in (1.0, -1.0):
            z = sign * nodes
            with torch.no_grad():
                value = sigma(s * z)
            moments += torch.stack([(weights * value.pow(2)).sum(), (weights * z * value).sum()])
        square, cross = moments.tolist()
        if not square > 0:
            raise ValueError(f"activation: expected E[σ(s z)²] > 0, got {square} for {sigma.name!r} at s = {s}")
        ratios.append(2 * (1 - cross**2 / square))
    return ratios
