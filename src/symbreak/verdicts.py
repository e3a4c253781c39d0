"""Which form keeps which symmetry, for which σ: the decision procedures behind the book's table.

Every verdict is reached on the *unit level*: a unit of a form contributes
``h(a, b) v`` to the output, with ``a = x·q`` and ``b = x·k`` (the two rank-1
factors) or ``s = x W xᵀ`` (the full form).  A transformation of the
parameters or of the input changes the unit's coefficient into ``h'``; the
layer keeps the symmetry for every choice of weights and inputs iff
``h' − h ≡ 0``.  That identity is decided by :func:`symbreak.decide.decide_zero`:
a proof on every sign cell, or a rational counterexample.

=================  ===============================  ============================
form               unit coefficient ``h``           transformations
=================  ===============================  ============================
``kv``             ``σ(a)``, ``a = x·k``            parity ``x → −x``
``rank1``          ``σ(a b)``                       exchange, inverse scaling, parity
``full``           ``σ(x W xᵀ)``                    exchange (``W → Wᵀ``), parity, gauge
``gated``          ``σ(a) b``                       exchange, inverse scaling, parity
=================  ===============================  ============================

Inverse scaling is ``(a, b) → (α a, b / α)``; "α > 0" and "α < 0" are decided
for a symbolic ``α`` of that sign, i.e. for *every* such α.  The gauge
symmetry ``(Q_j, K_j) → (Q_j A, K_j A^{-T})`` of the rank-``R`` form is a
matrix identity (:func:`symbreak.symbolic.gauge_identity`), true for every σ.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp
import torch

from symbreak.activations import Activation, resolve
from symbreak.decide import Decision, decide_zero
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma, margin
from symbreak.symbolic import gauge_identity, matrix, row
from symbreak.symmetry import exchange, gauge, inverse_scale

__all__ = [
    "FORMS",
    "SYMMETRIES",
    "Verdict",
    "verdict",
    "symmetry_table",
    "exchange_decision",
    "inverse_scaling_decision",
    "gaussian_moment",
    "exchange_defect",
    "inverse_scaling_defect",
    "Measurement",
    "form_layer",
    "parity_class",
    "even_part_is_bilinear",
    "measure",
]

#: Forms of the table, in reading order.
FORMS: dict[str, str] = {
    "kv": "plain MLP",
    "rank1": "symmetric rank-1",
    "full": "full bilinear",
    "gated": "gated",
}
#: Symmetries of the table, in reading order.
SYMMETRIES: dict[str, str] = {
    "exchange": "exchange q ↔ k",
    "scale_pos": "inverse scaling, α > 0",
    "scale_neg": "inverse scaling, α < 0",
    "parity": "parity x → −x",
    "gauge": "gauge GL(R)",
}

a, b = sp.symbols("a b", real=True)
alpha_pos = sp.Symbol("alpha", positive=True)
alpha_neg = sp.Symbol("alpha", negative=True)


@dataclass(frozen=True)
class Verdict:
    """One cell of the symmetry table.

    ``holds`` is ``True``/``False``, or ``None`` where the symmetry does not
    apply to the form (``method == "n/a"``).  ``decision`` carries the proof or
    the counterexample.
    """

    form: str
    symmetry: str
    activation: str
    holds: bool | None
    method: str
    decision: Decision | None = None

    @property
    def symbol(self) -> str:
        """``✓``, ``✗`` or ``—`` for the table."""
        return {True: "✓", False: "✗", None: "—"}[self.holds]


def _check_form(form: str) -> str:
    if form not in FORMS:
        raise ValueError(f"form: expected one of {list(FORMS)}, got {form!r}")
    return form


def _check_symmetry(symmetry: str) -> str:
    if symmetry not in SYMMETRIES:
        raise ValueError(f"symmetry: expected one of {list(SYMMETRIES)}, got {symmetry!r}")
    return symmetry


def _unit_identity(form: str, symmetry: str, sigma: Activation) -> tuple[sp.Expr, tuple[sp.Symbol, ...]] | None:
    """``(h' − h, variables)`` for the unit of ``form`` under ``symmetry``; None when not applicable."""
    s = sigma.sym
    if form == "kv":
        return (s(-a) - s(a), (a,)) if symmetry == "parity" else None
    if form == "rank1":
        h = s(a * b)
        after = {
            "exchange": s(b * a),
            "scale_pos": s((alpha_pos * a) * (b / alpha_pos)),
            "scale_neg": s((alpha_neg * a) * (b / alpha_neg)),
            "parity": s((-a) * (-b)),
        }.get(symmetry)
        return None if after is None else (after - h, (a, b))
    if form == "gated":
        h = s(a) * b
        after = {
            "exchange": s(b) * a,
            "scale_pos": s(alpha_pos * a) * b / alpha_pos,
            "scale_neg": s(alpha_neg * a) * b / alpha_neg,
            "parity": s(-a) * (-b),
        }.get(symmetry)
        return None if after is None else (after - h, (a, b))
    return None


def _full_identity(symmetry: str, sigma: Activation) -> sp.Expr | None:
    """``h' − h`` for a unit of the full form (``d = 2``, symbolic ``x`` and ``W``), or None."""
    x, W = row("x", 2), matrix("w", 2, 2)
    s = sigma.sym
    score = sp.expand((x * W * x.T)[0, 0])
    if symmetry == "exchange":  # (Q_j, K_j) → (K_j, Q_j) maps W_j = Q_j K_jᵀ to W_jᵀ
        return s(sp.expand((x * W.T * x.T)[0, 0])) - s(score)
    if symmetry == "parity":
        return s(sp.expand(((-x) * W * (-x).T)[0, 0])) - s(score)
    return None


@functools.cache
def _gauge_holds(d: int, R: int) -> bool:
    return gauge_identity(d, R) == sp.zeros(d, d)


def verdict(form: str, symmetry: str, activation: str | Activation) -> Verdict:
    """Decide whether ``form`` keeps ``symmetry`` with activation σ, for all weights and inputs.

    Verdicts are cached per ``(form, symmetry, σ)``: each is a theorem about σ.
    """
    return _verdict(_check_form(form), _check_symmetry(symmetry), resolve(activation))


@functools.cache
def _verdict(form: str, symmetry: str, sigma: Activation) -> Verdict:
    name = sigma.name
    if symmetry == "gauge":
        if form == "kv":
            return Verdict(form, symmetry, name, None, "n/a")
        if form in ("rank1", "gated"):  # at rank 1, GL(1) is inverse scaling by every α ≠ 0
            pos, neg = verdict(form, "scale_pos", sigma), verdict(form, "scale_neg", sigma)
            failed = next((v for v in (pos, neg) if not v.holds), None)
            if failed is None:
                return Verdict(form, symmetry, name, True, "proof (GL(1): both inverse scalings)", pos.decision)
            return Verdict(
                form, symmetry, name, False, "counterexample (GL(1): " + failed.symmetry + ")", failed.decision
            )
        holds = _gauge_holds(2, 2)
        return Verdict(form, symmetry, name, holds, "proof (matrix identity, every σ)")
    if form == "full":
        if symmetry in ("scale_pos", "scale_neg"):
            # inverse scaling is the gauge with A = α I (R = d): it holds whenever the gauge does
            holds = _gauge_holds(2, 1)
            return Verdict(form, symmetry, name, holds, "proof (gauge with A = α)")
        expr = _full_identity(symmetry, sigma)
        # the arguments agree after expansion, so the difference is identically zero for every σ
        decision = (
            Decision(True, "proof")
            if sp.simplify(expr) == 0
            else decide_zero(expr, tuple(sorted(expr.free_symbols, key=str)))
        )
        return Verdict(form, symmetry, name, decision.holds, decision.method, decision)
    identity = _unit_identity(form, symmetry, sigma)
    if identity is None:
        return Verdict(form, symmetry, name, None, "n/a")
    expr, variables = identity
    decision = decide_zero(expr, variables)
    return Verdict(form, symmetry, name, decision.holds, decision.method, decision)


def symmetry_table(activations: list[str]) -> dict[tuple[str, str, str], Verdict]:
    """Every cell ``(form, symmetry, activation)`` of the table, decided."""
    return {(form, sym, act): verdict(form, sym, act) for form in FORMS for sym in SYMMETRIES for act in activations}


def exchange_decision(activation: str | Activation) -> Decision:
    """Decision on ``σ(a) b − σ(b) a ≡ 0`` (``thm-exchange``)."""
    sigma = resolve(activation)
    return decide_zero(sigma.sym(a) * b - sigma.sym(b) * a, (a, b))


def inverse_scaling_decision(activation: str | Activation, sign: int) -> Decision:
    """Decision on ``σ(α z) − α σ(z) ≡ 0`` for every ``α`` of the given sign (``thm-inverse-scaling``)."""
    if sign not in (1, -1):
        raise ValueError(f"sign: expected +1 or -1, got {sign!r}")
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    al = alpha_pos if sign == 1 else alpha_neg
    return decide_zero(sigma.sym(al * z) - al * sigma.sym(z), (z,))


# ---------------------------------------------------------------------------
# How badly: Gaussian moments of the defects


_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(160)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)  # weights for the standard normal density


def gaussian_moment(expr: sp.Expr, z: sp.Symbol) -> tuple[float, sp.Expr | None]:
    """``E[expr(z)]`` for ``z ~ N(0, 1)``: ``(value, closed form or None)``.

    Where ``expr`` is a polynomial on each half-line (piecewise-linear σ), sympy
    integrates it against the density on each half-line, exactly.  Otherwise the
    value comes from 160-point Gauss–Hermite quadrature of the even part of
    ``expr`` (the registered activations are smooth away from 0, their only
    kink), and the closed form is ``None``.
    """
    t = sp.Symbol("t", positive=True)
    density = sp.exp(-(t**2) / 2) / sp.sqrt(2 * sp.pi)
    halves = [sp.simplify(expr.subs(z, sgn * t)) for sgn in (1, -1)]
    # a closed form is attempted where it is guaranteed to exist and be fast: on each
    # half-line the integrand is a polynomial in t times the density
    if all(h.is_polynomial(t) for h in halves):
        closed = sp.simplify(sum(sp.integrate(h * density, (t, 0, sp.oo)) for h in halves))
        return float(closed), closed
    f = sp.lambdify(z, expr, modules=["scipy", "numpy"])
    # E[f(z)] = ∫₀^∞ (f(t) + f(−t)) φ(t) dt = ½ E[f(|z|) + f(−|z|)]; quadrature on the even extension
    g = lambda u: 0.5 * (np.asarray(f(np.abs(u)), float) + np.asarray(f(-np.abs(u)), float))  # noqa: E731
    return float(np.sum(_GH_WEIGHTS * g(_GH_NODES))), None


def exchange_defect(activation: str | Activation) -> tuple[float, sp.Expr | None]:
    """``E[(σ(a) b − σ(b) a)²]`` for ``a, b ~ N(0, 1)`` independent, ``= 2(E[σ(z)²] − E[z σ(z)]²)``.

    Returns ``(value, closed form or None)``.
    """
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    m2, c2 = gaussian_moment(sigma.sym(z) ** 2, z)
    m1, c1 = gaussian_moment(z * sigma.sym(z), z)
    closed = sp.simplify(2 * (c2 - c1**2)) if c2 is not None and c1 is not None else None
    return 2 * (m2 - m1**2), closed


def inverse_scaling_defect(activation: str | Activation, alpha: float) -> float:
    """``E[(σ(α a) b / α − σ(a) b)²] = E[(σ(α z)/α − σ(z))²]`` for ``a, b, z ~ N(0, 1)``, by quadrature."""
    if alpha == 0:
        raise ValueError("alpha: expected a non-zero real number, got 0")
    sigma = resolve(activation)
    z = sp.Symbol("z", real=True)
    f = sp.lambdify(z, sigma.sym(z), modules=["scipy", "numpy"])
    g = lambda u: (np.asarray(f(alpha * u), float) / alpha - np.asarray(f(u), float)) ** 2  # noqa: E731
    # split at the kink: the even extension of g on |u|
    return float(np.sum(_GH_WEIGHTS * 0.5 * (g(np.abs(_GH_NODES)) + g(-np.abs(_GH_NODES)))))


# ---------------------------------------------------------------------------
# Numerical confirmation on the layers


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


def measure(
    form: str, symmetry: str, activation: str | Activation, *, seed: int = 0, n: int = 256, d: int = 6, m: int = 8
) -> Measurement | None:
    """Apply ``symmetry`` to a random float64 layer of ``form`` and measure the output change (None if n/a).

    Inverse scaling uses ``α = ±1.7`` on every unit; the gauge uses
    ``α = −0.6`` at rank 1 and, for the full form, ``A = D P`` with ``D`` a
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
        new = inverse_scale(layer, 1.7 if symmetry == "scale_pos" else -1.7)
        param_error = gamma(1, torch.float64)
    elif symmetry == "parity":
        x_new = -x
    elif form == "full":
        perm = torch.randperm(d)
        signs = torch.where(torch.rand(d) < 0.5, -1.0, 1.0).double()
        A = torch.diag(signs * 2.0 ** torch.randint(-2, 3, (d,)).double()) @ torch.eye(d, dtype=torch.float64)[perm]
        new = gauge(layer, A)
    else:
        new = inverse_scale(layer, -0.6)
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
