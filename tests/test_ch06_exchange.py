"""Chapter 6 (the exchange symmetry): thm-exchange, prop-relu-exchange, prop-exchange-defect, rem-gelu-defect,
cor-exchange-layer-change, and the helpers the chapter adds to ``symbreak.symbolic`` and ``symbreak.plotting``.

The cells of the symmetry table and the Gaussian closed forms of ``verdicts.exchange_defect`` are asserted in
``tests/test_verdicts.py``; this file asserts what the chapter states beyond them:

* ``thm-exchange`` — the layer-level identities (symbolic), the ⇐ direction for a symbolic slope ``c``, and the
  counterexample of every nonlinear σ realised on a one-unit float64 ``GatedMLP``;
* ``prop-relu-exchange`` — ``D_ReLU(a, b) = a b (H(a) − H(b))`` on every quadrant (symbolic, and bitwise in
  torch), and the fraction ``θ/π`` of Gaussian inputs on which a ReGLU unit changes;
* ``prop-exchange-defect`` — ``E[D²] = 2(E[σ²] − E[zσ]²)``: the expansion, the exact direct integral for the
  piecewise-linear σ, and a direct numerical double integral for a smooth σ (SiLU);
* ``rem-gelu-defect`` — ``Δ_GELU = 1/6 + 1/(π√3)``;
* ``cor-exchange-layer-change`` — the squared relative change of an orthonormal gated layer is ``Δ_σ / E[σ²]``;
* ``prop-exchange-defect-scale`` — the scale step and the limits of ``r_σ(s)`` (symbolic), and ``r_σ(s)`` against
  Monte Carlo pairs of scale ``s``.
"""

from __future__ import annotations

import math

import matplotlib
import mpmath
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, equal_within_rounding, exceeds_rounding, inputs, seeds, sizes
from symbreak import REGISTRY, BilinearMLP, GatedMLP, exchange, output_change, symbolic
from symbreak.activations import LEAKY_SLOPE
from symbreak.decide import Decision
from symbreak.numerics import forward_error_bound
from symbreak.plotting import annotate_quadrants, figure, sorted_bars
from symbreak.symbolic.exchange import exchange_ratio_limits, exchange_scale_identity
from symbreak.symmetry import exchange_change_ratio
from symbreak.verdicts import exchange_decision, exchange_defect, gaussian_moment

F64 = torch.float64
NONLINEAR = [name for name in ACTIVATIONS if not REGISTRY[name].is_linear]
PIECEWISE_LINEAR = ["identity", "relu", "leaky_relu", "abs"]


# ---------------------------------------------------------------------------
# thm-exchange


#: Each registered σ written from its primary source in mpmath, independently of the registry's sympy and torch code:
#: GELU z Φ(z) and its tanh approximation (Hendrycks & Gimpel 2016), SiLU z/(1 + e^{−z}) (Elfwing et al. 2018).
MP_SIGMA = {
    "identity": lambda z: z,
    "relu": lambda z: max(z, mpmath.mpf(0)),
    "leaky_relu": lambda z: z if z > 0 else mpmath.mpf(1) / 100 * z,
    "gelu": lambda z: z * (1 + mpmath.erf(z / mpmath.sqrt(2))) / 2,
    "gelu_tanh": lambda z: z / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (z + mpmath.mpf("0.044715") * z**3))),
    "silu": lambda z: z / (1 + mpmath.exp(-z)),
    "sigmoid": lambda z: 1 / (1 + mpmath.exp(-z)),
    "tanh": mpmath.tanh,
    "softplus": lambda z: mpmath.log(1 + mpmath.exp(z)),
    "abs": abs,
}

#: D_σ at its witness, derived by hand: at (1, −1), D = −(σ(1) + σ(−1)); σ(z) = z g(z) with g(z) + g(−z) = 1 gives
#: σ(1) + σ(−1) = 2 g(1) − 1 (tanh(1/2) for SiLU, erf(1/√2) for GELU); softplus(1) + softplus(−1) = log(2 + e + 1/e).
HAND_VALUES = {
    "relu": ((1, -1), lambda: -1),
    "leaky_relu": ((1, -1), lambda: -(1 - mpmath.mpf(1) / 100)),
    "gelu": ((1, -1), lambda: -mpmath.erf(1 / mpmath.sqrt(2))),
    "gelu_tanh": ((1, -1), lambda: -mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * mpmath.mpf("1.044715"))),
    "silu": ((1, -1), lambda: -mpmath.tanh(mpmath.mpf(1) / 2)),
    "sigmoid": ((1, -1), lambda: -1),
    "tanh": ((1, 2), lambda: 2 * mpmath.tanh(1) - mpmath.tanh(2)),  # odd σ: D(a, −a) = 0, so not (1, −1)
    "softplus": ((1, -1), lambda: -mpmath.log(2 + mpmath.e + 1 / mpmath.e)),
    "abs": ((1, -1), lambda: -2),
}


def test_thm_exchange_mpmath_formulas_are_the_registry():
    """thm-exchange: the mpmath formulas above are the registered σ (so the checks below test the registry's σ)."""
    assert set(MP_SIGMA) == set(ACTIVATIONS)
    assert LEAKY_SLOPE == sp.Rational(1, 100)
    with mpmath.workdps(30):
        for name, sigma in MP_SIGMA.items():
            for z in (sp.Rational(v) for v in ("-3", "-1", "-1/3", "1/7", "2")):
                registry = sp.N(REGISTRY[name].sym(z), 30)
                assert abs(sigma(mpmath.mpf(z.p) / z.q) - mpmath.mpf(str(registry))) < 1e-25


@pytest.mark.parametrize("act", NONLINEAR)
def test_thm_exchange_counterexample_is_nonzero_by_hand_and_in_mpmath(act):
    """thm-exchange (⇒): the decided witness is rational, D_σ there is non-zero in 50-digit mpmath from σ's primary
    formula, and equals the hand-derived closed form and the decision's certified value."""
    decision = exchange_decision(act)
    assert decision.holds is False and decision.method == "counterexample"
    point, hand = HAND_VALUES[act]
    witness = tuple(decision.witness.values())
    assert all(isinstance(v, sp.Rational) for v in witness) and witness == point
    with mpmath.workdps(50):
        a, b = (mpmath.mpf(v) for v in point)
        defect = MP_SIGMA[act](a) * b - MP_SIGMA[act](b) * a
        assert abs(defect) > mpmath.mpf("0.01")  # every closed form above is at least 0.05 in size
        assert abs(defect - hand()) < mpmath.mpf(10) ** -45
        assert abs(defect - mpmath.mpf(str(decision.value))) < mpmath.mpf(10) ** -45


def test_thm_exchange_kept_case_vanishes_at_random_rational_points():
    """thm-exchange (⇐): for the one linear σ of the registry, D_σ is exactly 0 at 300 random rational points
    (registry's sympy σ, exact arithmetic), while every nonlinear σ has a point among them where D_σ ≠ 0 in mpmath."""
    rng = np.random.default_rng(20260601)  # a stream of its own, not the one the decision procedure searches
    points = [
        tuple(
            sp.Rational(int(n), int(q)) for n, q in zip(rng.integers(-50, 51, 2), rng.integers(1, 20, 2), strict=True)
        )
        for _ in range(300)
    ]
    linear = [name for name in ACTIVATIONS if REGISTRY[name].is_linear]
    assert linear == ["identity"]
    sigma = REGISTRY["identity"].sym
    assert all(sigma(a) * b - sigma(b) * a == 0 for a, b in points)
    with mpmath.workdps(30):
        for name in NONLINEAR:
            f = MP_SIGMA[name]
            values = [
                f(mpmath.mpf(a.p) / a.q) * (mpmath.mpf(b.p) / b.q) - f(mpmath.mpf(b.p) / b.q) * (mpmath.mpf(a.p) / a.q)
                for a, b in points
            ]
            assert max(abs(v) for v in values) > 1, name


def test_thm_exchange_linear_sigma_with_symbolic_slope():
    """thm-exchange, part 1 (⇐): σ(z) = c z gives D ≡ 0 for a symbolic c; (⇒) at b = 1, D = σ(a) − a σ(1)."""
    D, (a, b) = symbolic.exchange_unit_difference()
    c = sp.Symbol("c", real=True)
    assert sp.expand(D.replace(sp.Function("sigma"), lambda arg: c * arg)) == 0
    sigma = sp.Function("sigma")
    assert sp.expand(D.subs(b, 1) - (sigma(a) - a * sigma(1))) == 0


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
def test_thm_exchange_symmetric_layer_symbolic(activation):
    """thm-exchange, part 2: the symmetric rank-1 layer with Q ↔ K minus the layer is the zero matrix, every σ."""
    assert symbolic.exchange_layer_difference("rank1", 2, 3, 2, activation) == sp.zeros(1, 2)


def test_thm_exchange_gated_layer_symbolic():
    """thm-exchange, part 3: zero for the identity; for an undefined σ and d = m = d_out = 1 it is −D_σ(qx, kx) v."""
    assert symbolic.exchange_layer_difference("gated", 3, 3, 2, "identity") == sp.zeros(1, 2)
    diff = symbolic.exchange_layer_difference("gated", 1, 1, 1)
    D, (a, b) = symbolic.exchange_unit_difference()
    x, q, k, v = sp.symbols("x_1 q_11 k_11 v_11", real=True)
    assert sp.expand(diff[0, 0] + D.subs({a: q * x, b: k * x}, simultaneous=True) * v) == 0
    assert symbolic.exchange_layer_difference("gated", 1, 1, 1, "relu") != sp.zeros(1, 1)


@pytest.mark.parametrize("act", NONLINEAR)
def test_thm_exchange_counterexample_on_a_one_unit_layer(act):
    """thm-exchange, part 3 (⇒): the witness as x = 1, Q = a, K = b, V = 1 changes the layer beyond rounding."""
    decision = exchange_decision(act)
    a, b = (float(value) for value in decision.witness.values())
    layer = GatedMLP.from_weights(
        torch.tensor([[a]], dtype=F64), torch.tensor([[b]], dtype=F64), torch.ones(1, 1, dtype=F64), act
    )
    x = torch.ones(1, 1, dtype=F64)
    assert exceeds_rounding(layer, exchange(layer), x)
    with torch.no_grad():
        change = (layer(x) - exchange(layer)(x)).item()
    assert change == pytest.approx(float(decision.value), rel=1e-12)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_exchange_symmetric_layer_keeps_output(d, m, seed, act):
    """thm-exchange, part 2: a random float64 symmetric rank-1 layer and its exchange agree within rounding."""
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, d_out=2, rank=1, activation=act, dtype=F64)
    assert equal_within_rounding(layer, exchange(layer), inputs(seed, 9, d))


@given(d=sizes, m=sizes, seed=seeds)
def test_thm_exchange_bilinear_gated_layer_keeps_output(d, m, seed):
    """thm-exchange, part 3 (⇐): the gated layer with σ = identity and its exchange agree within rounding."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, d_out=2, activation="identity", dtype=F64)
    assert equal_within_rounding(layer, exchange(layer), inputs(seed, 9, d))


def test_exchange_layer_difference_bad_arguments():
    with pytest.raises(ValueError, match="form: expected 'rank1' or 'gated', got 'full'"):
        symbolic.exchange_layer_difference("full", 2, 2, 1)
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.exchange_layer_difference("gated", 0, 2, 1)


# ---------------------------------------------------------------------------
# counterexample_cells (the table of thm-exchange)


def test_counterexample_cells_rows():
    """thm-exchange table: a proof gives dashes; a counterexample its witness, exact value and 12 digits."""
    expr, _ = symbolic.exchange_unit_difference("identity")
    assert symbolic.counterexample_cells(expr, exchange_decision("identity")) == ["yes (proof)", "—", "—", "—"]
    expr, _ = symbolic.exchange_unit_difference("sigmoid")
    verdict, witness, exact, digits = symbolic.counterexample_cells(expr, exchange_decision("sigmoid"))
    assert verdict == "no (counterexample)"
    assert witness == "$a = 1$, $b = -1$"
    assert exact == "$-1$"  # −(σ(1) + σ(−1)) = −1 exactly for the logistic sigmoid
    assert digits == "$-1$"  # an exact integer: no trailing zeros
    expr, _ = symbolic.exchange_unit_difference("leaky_relu")
    assert symbolic.counterexample_cells(expr, exchange_decision("leaky_relu"))[3] == "$-0.99$"  # −(1 − 1/100)
    expr, _ = symbolic.exchange_unit_difference("gelu")
    # −(GELU(1) + GELU(−1)) = −erf(1/√2) = −0.682689492137086… (the normal law's one-sigma mass), to 12 digits
    assert symbolic.counterexample_cells(expr, exchange_decision("gelu"))[3] == "$-0.682689492137$"
    expr, _ = symbolic.exchange_unit_difference("tanh")
    assert symbolic.counterexample_cells(expr, exchange_decision("tanh"))[1] == "$a = 1$, $b = 2$"
    assert symbolic.counterexample_cells(expr, Decision(None, "undecided"))[0] == "undecided"


def test_counterexample_cells_bad_arguments():
    expr, _ = symbolic.exchange_unit_difference("relu")
    with pytest.raises(TypeError, match="expr: expected a sympy expression, got str"):
        symbolic.counterexample_cells("D", exchange_decision("relu"))
    with pytest.raises(TypeError, match="decision: expected a symbreak.decide.Decision, got bool"):
        symbolic.counterexample_cells(expr, False)
    wrong = Decision(False, "counterexample", exchange_decision("relu").witness, sp.Integer(5))
    with pytest.raises(ValueError, match="decision: its value 5 is not expr at its witness"):
        symbolic.counterexample_cells(expr, wrong)


# ---------------------------------------------------------------------------
# prop-relu-exchange


def test_prop_relu_exchange_quadrants_symbolic():
    """prop-relu-exchange: D_ReLU is 0 on the same-sign quadrants, ab on (+, −) and −ab on (−, +)."""
    a, b = sp.symbols("a b", real=True)
    assert symbolic.exchange_by_quadrant("relu") == {(1, 1): 0, (-1, -1): 0, (1, -1): a * b, (-1, 1): -a * b}
    s = LEAKY_SLOPE  # the leaky ReLU: (1 − s) times the ReLU picture
    assert symbolic.exchange_by_quadrant("leaky_relu") == {
        (1, 1): 0,
        (-1, -1): 0,
        (1, -1): (1 - s) * a * b,
        (-1, 1): -(1 - s) * a * b,
    }
    assert tuple(symbolic.exchange_by_quadrant("relu")) == symbolic.QUADRANTS


def test_prop_relu_exchange_gelu_is_a_smooth_gate():
    """prop-relu-exchange (remark after it): GELU = zΦ(z) gives D = ab(Φ(a) − Φ(b)) on every quadrant."""
    a, b = sp.symbols("a b", real=True)
    Phi = lambda t: (1 + sp.erf(t / sp.sqrt(2))) / 2  # noqa: E731
    for cell in symbolic.exchange_by_quadrant("gelu").values():
        assert sp.simplify(cell - a * b * (Phi(a) - Phi(b))) == 0


def test_prop_relu_exchange_formula_bitwise():
    """prop-relu-exchange: relu(a)b − relu(b)a equals ab(H(a) − H(b)) exactly in float64 (one rounding each side)."""
    g = torch.Generator().manual_seed(11)
    a, b = torch.randn(2, 100_000, generator=g, dtype=F64)
    a[:10], b[10:20] = 0.0, 0.0  # the axes belong to the zero set
    relu = REGISTRY["relu"]
    defect = relu(a) * b - relu(b) * a
    assert torch.equal(defect, a * b * ((a > 0).double() - (b > 0).double()))
    assert torch.equal(defect == 0, a * b >= 0)


@pytest.mark.parametrize("theta", [0.0, math.pi / 3, math.pi / 2, 3 * math.pi / 4, math.pi])
def test_prop_relu_exchange_angle_fraction(theta):
    """prop-relu-exchange, part 2: a ReGLU unit changes on a fraction θ/π of Gaussian inputs (within 5 s.e.)."""
    g = torch.Generator().manual_seed(5)
    d, n = 6, 40_000
    basis = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64))[0]
    u, w = basis[:, 0], basis[:, 1]
    k = math.cos(theta) * u + math.sin(theta) * w
    unit = GatedMLP.from_weights(u[None], k[None], torch.ones(1, 1, dtype=F64), "relu")
    swapped = exchange(unit)
    x = torch.randn(n, d, generator=g, dtype=F64)
    with torch.no_grad():
        bound = forward_error_bound(unit, x) + forward_error_bound(swapped, x)
        changed = ((swapped(x) - unit(x)).abs() > bound).double().mean().item()
    p = theta / math.pi
    assert abs(changed - p) <= 5 * math.sqrt(p * (1 - p) / n)


# ---------------------------------------------------------------------------
# prop-exchange-defect and rem-gelu-defect


@pytest.mark.parametrize("activation", [None, "relu", "silu"])
def test_prop_exchange_defect_expansion(activation):
    """prop-exchange-defect: D² = b²σ(a)² + a²σ(b)² − 2(aσ(a))(bσ(b)) identically."""
    assert symbolic.exchange_defect_expansion(activation) == 0


@pytest.mark.parametrize("act", PIECEWISE_LINEAR)
def test_prop_exchange_defect_direct_integral(act):
    """prop-exchange-defect: the exact double integral of D² equals 2(E[σ²] − E[zσ]²) (verdicts' closed form)."""
    assert sp.simplify(symbolic.exchange_defect_direct(act) - exchange_defect(act)[1]) == 0


def test_prop_exchange_defect_closed_forms():
    """prop-exchange-defect: 0, 1/2, (1 − s)²/2, 2 for identity, ReLU, leaky ReLU (slope s), |z|."""
    expected = {"identity": 0, "relu": sp.Rational(1, 2), "leaky_relu": (1 - LEAKY_SLOPE) ** 2 / 2, "abs": 2}
    assert {name: symbolic.exchange_defect_direct(name) for name in PIECEWISE_LINEAR} == expected


def test_exchange_defect_direct_rejects_smooth_sigma():
    with pytest.raises(ValueError, match="activation: expected a σ that is a polynomial on each half-line"):
        symbolic.exchange_defect_direct("gelu")


def _phi(t: float) -> float:
    return math.exp(-t * t / 2) / math.sqrt(2 * math.pi)


def test_prop_exchange_defect_identity_for_a_smooth_sigma():
    """prop-exchange-defect: for SiLU, ∬ D² φφ (scipy dblquad) = 2(E[σ²] − E[zσ]²) (scipy quad).

    The tolerance is the sum of the integrators' own error estimates, propagated through the formula.
    """
    from scipy import integrate, special

    def silu(t: float) -> float:
        return t * special.expit(t)

    inf = np.inf
    direct, err2d = integrate.dblquad(
        lambda b, a: (silu(a) * b - silu(b) * a) ** 2 * _phi(a) * _phi(b), -inf, inf, -inf, inf, epsabs=1e-11
    )
    m2, e2 = integrate.quad(lambda t: silu(t) ** 2 * _phi(t), -inf, inf, epsabs=1e-13, epsrel=1e-13)
    m1, e1 = integrate.quad(lambda t: t * silu(t) * _phi(t), -inf, inf, epsabs=1e-13, epsrel=1e-13)
    assert abs(direct - 2 * (m2 - m1**2)) <= err2d + 2 * (e2 + 2 * abs(m1) * e1 + e1**2)
    # the package's Gauss–Hermite value of the same identity lies within the double integral's error estimate
    assert abs(exchange_defect("silu")[0] - direct) <= err2d + 2 * (e2 + 2 * abs(m1) * e1 + e1**2)


def test_rem_gelu_defect_closed_form():
    """rem-gelu-defect: Δ_GELU = 1/6 + 1/(π√3); every antiderivative and Stein step checks out (residuals 0)."""
    closed, residuals = symbolic.gelu_exchange_defect()
    assert residuals and all(r == 0 for r in residuals)
    assert sp.simplify(closed - (sp.Rational(1, 6) + 1 / (sp.pi * sp.sqrt(3)))) == 0


def test_rem_gelu_defect_against_direct_integration():
    """rem-gelu-defect: the closed form against scipy's dblquad of D_GELU² φφ, within its error estimate."""
    from scipy import integrate, special

    def gelu(t: float) -> float:
        return t * special.ndtr(t)

    inf = np.inf
    direct, err = integrate.dblquad(
        lambda b, a: (gelu(a) * b - gelu(b) * a) ** 2 * _phi(a) * _phi(b), -inf, inf, -inf, inf, epsabs=1e-11
    )
    assert abs(direct - float(symbolic.gelu_exchange_defect()[0])) <= err


# ---------------------------------------------------------------------------
# cor-exchange-layer-change


@pytest.mark.parametrize("act", ["relu", "silu", "tanh", "abs"])
def test_cor_exchange_layer_change_orthonormal(act):
    """cor-exchange-layer-change: ‖f' − f‖²/‖f‖² → Δ_σ/E[σ²] for orthonormal Q, K, V (within 5 delta-method s.e.)."""
    g = torch.Generator().manual_seed(2)
    d, m, n = 16, 8, 20_000
    orthogonal = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64))[0]
    layer = GatedMLP.from_weights(orthogonal[:, :m].T, orthogonal[:, m:].T, torch.eye(m, dtype=F64), act)
    swapped = exchange(layer)
    x = torch.randn(n, d, generator=g, dtype=F64)
    with torch.no_grad():
        change = (swapped(x) - layer(x)).pow(2).sum(-1)
        size = layer(x).pow(2).sum(-1)
    ratio = (change.sum() / size.sum()).item()
    se = ((change - ratio * size).pow(2).sum().sqrt() / size.sum()).item()
    z = sp.Symbol("z", real=True)
    predicted = exchange_defect(act)[0] / gaussian_moment(REGISTRY[act].expr ** 2, z)[0]
    assert abs(ratio - predicted) <= 5 * se
    assert math.sqrt(ratio) == pytest.approx(output_change(layer, swapped, x), rel=1e-12)


# ---------------------------------------------------------------------------
# plotting helpers


def test_sorted_bars_order_and_checks():
    fig, axes = figure(ncols=2)
    values = {"a": 1.0, "b": 3.0, "c": 2.0}
    assert sorted_bars(axes[0], values, xlabel="x", points={"a": 1.1}, point_errors={"a": 0.1}) == ["b", "c", "a"]
    assert sorted_bars(axes[1], values, xlabel="x", order=["a", "b", "c"], bar_label="bars") == ["a", "b", "c"]
    heights = dict(zip([t.get_text() for t in axes[0].get_yticklabels()], axes[0].get_yticks(), strict=True))
    assert heights["b"] > heights["c"] > heights["a"]  # the largest at the top
    with pytest.raises(ValueError, match="order: expected a permutation"):
        sorted_bars(axes[0], values, xlabel="x", order=["a", "b"])
    with pytest.raises(ValueError, match="points: expected labels among"):
        sorted_bars(axes[0], values, xlabel="x", points={"z": 1.0})
    with pytest.raises(ValueError, match="point_errors: expected together with points"):
        sorted_bars(axes[0], values, xlabel="x", point_errors={"a": 1.0})
    with pytest.raises(ValueError, match="values: expected at least one"):
        sorted_bars(axes[0], {}, xlabel="x")
    matplotlib.pyplot.close(fig)


def test_annotate_quadrants_checks():
    fig, axes = figure()
    annotate_quadrants(axes[0], {(1, 1): "0", (-1, 1): "+"}, (-3.0, 3.0, -3.0, 3.0))
    assert [t.get_text() for t in axes[0].texts] == ["0", "+"]
    assert axes[0].texts[1].get_position() == (-1.5, 1.5)
    with pytest.raises(ValueError, match="extent: expected a box around the origin"):
        annotate_quadrants(axes[0], {}, (0.0, 3.0, -3.0, 3.0))
    with pytest.raises(ValueError, match="labels: expected sign pairs"):
        annotate_quadrants(axes[0], {(0, 1): "?"}, (-3.0, 3.0, -3.0, 3.0))
    with pytest.raises(ValueError, match="extent: expected"):
        annotate_quadrants(axes[0], {}, (-3.0, 3.0))
    matplotlib.pyplot.close(fig)


# ---------------------------------------------------------------------------
# prop-exchange-defect-scale


def test_prop_exchange_defect_scale_symbolic_step_and_limits():
    """prop-exchange-defect-scale: D_σ(su, sw) = s D_{σ_s}(u, w) for an undefined σ; the limits 1, 0, 2, 2 − 2/π."""
    assert exchange_scale_identity() == [0, 0]
    assert exchange_ratio_limits() == {
        "z g(z), s → ∞": 1,
        "z g(z), s → 0": 0,
        "sigmoid, s → 0": 2,
        "sigmoid, s → ∞": 2 - 2 / sp.pi,
    }


@pytest.mark.parametrize("act", ["silu", "gelu", "sigmoid", "relu"])
@pytest.mark.parametrize("s", [0.25, 3.0])
def test_prop_exchange_defect_scale_monte_carlo(act, s):
    """prop-exchange-defect-scale: Σ D_σ(a, b)² / Σ (σ(a) b)² over 400 000 pairs a, b ~ N(0, s²) (a stream of its
    own) is within 5 delta-method standard errors of the quadrature r_σ(s)."""
    generator = torch.Generator().manual_seed(6_2026)
    a, b = s * torch.randn(2, 400_000, generator=generator, dtype=F64)
    sigma = REGISTRY[act]
    change, coefficient = (sigma(a) * b - sigma(b) * a) ** 2, (sigma(a) * b) ** 2
    ratio = change.sum() / coefficient.sum()
    se = torch.sqrt(((change - ratio * coefficient) ** 2).sum()) / coefficient.sum()
    assert abs(ratio.item() - exchange_change_ratio(act, [s])[0]) <= 5 * se.item() + 1e-12
