"""The symmetry table measured: each transformation applied to a random float64 layer, against its rounding bound."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from types import MappingProxyType

import torch

from symbreak.activations import Activation, resolve
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma, margin
from symbreak.symmetry import exchange, gauge, inverse_scale
from symbreak.verdicts._base import _check_form, _check_symmetry
from symbreak.verdicts.table import verdict


@dataclass(frozen=True)
class Measurement:
    """The output change of a layer under a symmetry, on random weights and inputs.

    ``change`` is ``‖g(x') − f(x)‖_F / ‖f(x)‖_F``; ``within_rounding`` says
    whether every entry of ``|g(x') − f(x)|`` is within the derived rounding
    bound of the two computations, i.e. whether the exact outputs may agree;
    ``margin`` is the largest share ``|g(x') − f(x)| / bound`` over the entries
    (:func:`symbreak.numerics.margin`: at most 1 exactly when ``within_rounding``).

    Where the symmetry is kept, ``change`` is a rounding error and its digits
    depend on the processor; state ``margin`` against a chosen share with
    :func:`symbreak.report.margin_check` instead.
    """

    change: float
    within_rounding: bool
    margin: float


def form_layer(form: str, activation: str | Activation, d: int = 6, m: int = 8) -> FeedForward:
    """A random float64 layer of ``form`` with σ, drawn from torch's global generator.

    ``"kv"``: ``KeyValueMLP``, ``σ(x Kᵀ) V``; ``"rank1"``: ``BilinearMLP(rank=1)``,
    ``Σ_j σ((x·q_j)(x·k_j)) v_j``; ``"full"``: ``BilinearMLP(rank=d)``, which
    reaches every ``W_j``; ``"gated"``: ``GatedMLP``, ``Σ_j σ(x·q_j)(x·k_j) v_j``;
    ``m`` units of width ``d``.  Raises ``ValueError`` for another form.
    """
    _check_form(form)
    dtype = torch.float64
    if form == "kv":
        return KeyValueMLP(d, m, activation=activation, dtype=dtype)
    if form == "rank1":
        return BilinearMLP(d, m, rank=1, activation=activation, dtype=dtype)
    if form == "full":
        return BilinearMLP(d, m, rank=d, activation=activation, dtype=dtype)
    return GatedMLP(d, m, activation=activation, dtype=dtype)


#: The factor ``α`` of the measured inverse scaling ``(q_j, k_j) → (α q_j, k_j/α)`` (and ``−α``).
SCALE_ALPHA = 1.7
#: The factor of the measured rescaling ``(k_j, v_j) → (α k_j, v_j/α)``.
KV_ALPHA = 1.7
#: What :func:`measure` uses unless told otherwise: width ``d``, units ``m``, tokens ``n``, the
#: inverse-scaling factor ``±alpha``, the rank-1 gauge factor and the ``(k, v)`` factor.
MEASURE_CONFIG = MappingProxyType(
    {"d": 6, "m": 8, "n": 256, "alpha": SCALE_ALPHA, "gauge_alpha": -0.6, "kv_alpha": KV_ALPHA}
)


def rescale_key_value(layer: FeedForward, alpha: float) -> FeedForward:
    """The layer with ``k_j → α k_j`` and ``v_j → v_j/α`` for every unit (every rank-``R`` key factor ``k_{j,r}``).

    Each rescaled entry is one rounded multiplication or division (relative error at
    most ``u``).  Raises ``ValueError`` for ``α ≤ 0`` or a non-finite ``α``.
    """
    if not isinstance(layer, (KeyValueMLP, BilinearMLP, GatedMLP)):
        raise TypeError(f"layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got {type(layer).__name__}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < float("inf"):
        raise ValueError(f"alpha: expected a finite real number > 0, got {alpha!r}")
    new = copy.deepcopy(layer)
    with torch.no_grad():
        new.K.mul_(alpha)
        new.V.div_(alpha)
    return new


def measure(
    form: str,
    symmetry: str,
    activation: str | Activation,
    *,
    seed: int = 0,
    n: int = MEASURE_CONFIG["n"],
    d: int = MEASURE_CONFIG["d"],
    m: int = MEASURE_CONFIG["m"],
) -> Measurement | None:
    """Apply ``symmetry`` to a random float64 layer of ``form`` and measure the output change (None if n/a).

    The factors are those of :data:`MEASURE_CONFIG`: inverse scaling uses ``α = ±SCALE_ALPHA`` on
    every unit, the rescaling ``(k_j, v_j) → (α k_j, v_j/α)`` ``α = KV_ALPHA``
    (:func:`rescale_key_value`); the gauge uses ``α = −0.6`` at rank 1 and, for the full form, ``A = D P`` with ``D`` a
    diagonal of signed powers of two and ``P`` a permutation (exact in
    floating point); parity negates the inputs.
    """
    _check_form(form)
    _check_symmetry(symmetry)
    sigma = resolve(activation)
    if verdict(form, symmetry, sigma).holds is None:
        return None
    torch.manual_seed(seed)
    layer = form_layer(form, sigma, d, m)
    x = torch.randn(n, d, dtype=torch.float64)
    x_new, new, param_error = x, layer, 0.0
    if symmetry == "exchange":
        new = exchange(layer)
    elif symmetry in ("scale_pos", "scale_neg"):
        new = inverse_scale(layer, MEASURE_CONFIG["alpha"] * (1 if symmetry == "scale_pos" else -1))
        param_error = gamma(1, torch.float64)
    elif symmetry == "kv_scale":
        new = rescale_key_value(layer, MEASURE_CONFIG["kv_alpha"])
        param_error = gamma(1, torch.float64)
    elif symmetry == "parity":
        x_new = -x
    elif form == "full":
        perm = torch.randperm(d)
        signs = torch.where(torch.rand(d) < 0.5, -1.0, 1.0).double()
        A = torch.diag(signs * 2.0 ** torch.randint(-2, 3, (d,)).double()) @ torch.eye(d, dtype=torch.float64)[perm]
        new = gauge(layer, A)
    else:
        new = inverse_scale(layer, MEASURE_CONFIG["gauge_alpha"])
        param_error = gamma(1, torch.float64)
    with torch.no_grad():
        y, y_new = layer(x), new(x_new)
        diff = (y_new - y).abs()
        bound = forward_error_bound(layer, x) + forward_error_bound(new, x_new, param_error)
        change = float(torch.linalg.vector_norm(y_new - y) / torch.linalg.vector_norm(y))
    return Measurement(change, bool((diff <= bound).all()), margin(diff, bound))


@torch.no_grad()
def even_part_is_bilinear(layer: GatedMLP, x: torch.Tensor) -> bool:
    """Whether ``G(x) + G(−x) = ((x Qᵀ) ⊙ (x Kᵀ)) V`` within rounding, for the gated layer ``G`` (eq-gated-even-part).

    ``G(x) = (σ(x Qᵀ) ⊙ (x Kᵀ)) V``; the right-hand side is the bilinear layer with
    the same weights (``GatedMLP`` with σ = identity).  Entry by entry, the
    tolerance is ``β_G(x) + β_G(−x) + β_id(x) + γ_1 |G(x) + G(−x)|``: the three
    layers' bounds from :func:`symbreak.numerics.forward_error_bound` and the one
    addition.  ``rem-parity-parts`` predicts agreement iff ``σ(z) − σ(−z) = z``.
    """
    if not isinstance(layer, GatedMLP):
        raise TypeError(f"layer: expected a GatedMLP, got {type(layer).__name__}")
    bilinear = GatedMLP.from_weights(layer.Q, layer.K, layer.V, activation="identity")
    both = layer(x) + layer(-x)
    bound = (
        forward_error_bound(layer, x)
        + forward_error_bound(layer, -x)
        + forward_error_bound(bilinear, x)
        + gamma(1, layer.Q.dtype) * both.abs()
    )
    return bool(((both - bilinear(x)).abs() <= bound).all())


@torch.no_grad()
def parity_class(layer: FeedForward, x: torch.Tensor) -> str:
    """``"even"``, ``"odd"`` or ``"neither"``: ``f(−x)`` against ``±f(x)`` within the derived rounding bound.

    Even when ``|f(−x) − f(x)| ≤ β(x) + β(−x)`` entry by entry, odd when ``|f(−x) + f(x)|`` is, with
    ``β`` from :func:`symbreak.numerics.forward_error_bound`; checked in that order.  ``f(x)`` and
    ``f(−x)`` are evaluated in two calls of the same shape.
    """
    if not isinstance(layer, FeedForward):
        raise TypeError(f"layer: expected a FeedForward layer, got {type(layer).__name__}")
    y, y_flipped = layer(x), layer(-x)
    bound = forward_error_bound(layer, x) + forward_error_bound(layer, -x)
    if bool(((y_flipped - y).abs() <= bound).all()):
        return "even"
    if bool(((y_flipped + y).abs() <= bound).all()):
        return "odd"
    return "neither"
