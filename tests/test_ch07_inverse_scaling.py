"""Chapter 7 (inverse scaling): thm-inverse-scaling, cor-single-alpha, prop-inverse-scaling-defect and the remarks.

Facts asserted here that ``tests/test_verdicts.py`` and ``tests/test_symmetry.py``
do not already cover:

* ``thm-inverse-scaling`` — the symbolic layer identities (part 1 and the
  predicted change of part 2, for an undefined σ); the two-slope form and the
  substitution certificate of part 4 (i); the group property of ``G_σ``
  (part 3) on a set of rational factors; agreement of the sign-class decisions
  with the registry's properties;
* ``cor-single-alpha`` — single factors, decided and measured on layers, and the
  groups returned by ``symbolic.scaling_group``;
* ``prop-inverse-scaling-defect`` — the closed form ``(c₊ − c₋)²``, the
  reflection ``x → −x`` on layers, and the quadrature against the closed form
  and against Monte Carlo for smooth σ;
* ``rem-single-alpha`` and ``rem-gate-temperature`` — their sympy identities.
"""

from __future__ import annotations

import math
from fractions import Fraction

import matplotlib
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import equal_within_rounding, exceeds_rounding, inputs, seeds, sizes, transform_error
from symbreak import REGISTRY, GatedMLP, inverse_scale, symbolic
from symbreak import verdicts as V
from symbreak.decide import decide_zero
from symbreak.numerics import forward_error_bound
from symbreak.plotting import figure, signed_alpha_curves
from symbreak.symbolic.scaling import in_scaling_group, scaling_decision

F64 = torch.float64
LINEAR = {"identity"}
POS_HOMOGENEOUS = {"identity", "relu", "leaky_relu", "abs"}
ODD = {"identity", "tanh"}
#: G_σ for every registered σ, written from the theorem and the corollary (not from the procedures).
GROUPS = {
    "identity": r"\mathbb{R}\setminus\{0\}",
    "relu": r"(0, \infty)",
    "leaky_relu": r"(0, \infty)",
    "abs": r"(0, \infty)",
    "gelu": r"\{1\}",
    "gelu_tanh": r"\{1\}",
    "silu": r"\{1\}",
    "sigmoid": r"\{1\}",
    "softplus": r"\{1\}",
    "tanh": r"\{1, -1\}",
}
FACTORS = [sp.Rational(v) for v in ("-3", "-2", "-1", "-1/2", "1/2", "1", "2", "3")]


def in_group(name: str, alpha: sp.Rational) -> bool:
    """Membership in G_σ by the theorem (linear: all; positively homogeneous: α > 0; odd: ±1; else 1)."""
    if name in LINEAR:
        return True
    if name in POS_HOMOGENEOUS:
        return alpha > 0
    return alpha == 1 or (alpha == -1 and name in ODD)


# ---------------------------------------------------------------------------
# thm-inverse-scaling


@pytest.mark.parametrize("activation", [None, "relu", "silu"])
def test_thm_inverse_scaling_layer_identity(activation):
    """thm-inverse-scaling, parts 1-2: the symmetric form is unchanged; the gated unit becomes σ(α a) b / α."""
    d, m, d_out = (3, 2, 2) if activation is None else (2, 2, 1)
    symmetric, gated = symbolic.inverse_scaling_layer_identity(d, m, d_out, activation)
    assert symmetric == sp.zeros(1, d_out)
    assert gated == sp.zeros(1, d_out)


def test_thm_inverse_scaling_two_slopes_on_every_cell():
    """thm-inverse-scaling, part 4: P(αz) = αP(z) for α > 0, P(z) + P(−z) = (c₊ − c₋)|z|, and the α < 0 change."""
    assert symbolic.piecewise_linear_scaling_cells() == sp.zeros(3, 3)


@pytest.mark.parametrize("activation", [None, "relu", "abs", "gelu"])
def test_thm_inverse_scaling_positive_homogeneity_certificate(activation):
    """thm-inverse-scaling, part 4 (i): σ − P on each sign cell is a value of H(α, z) = σ(αz) − ασ(z), α > 0."""
    assert symbolic.positive_homogeneity_certificate(activation) == sp.zeros(1, 3)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_thm_inverse_scaling_sign_classes_match_registry(name):
    """thm-inverse-scaling, part 4: 'every α > 0' is positive homogeneity, 'every α < 0' is linearity."""
    sigma = REGISTRY[name]
    assert V.inverse_scaling_decision(name, +1).holds == sigma.positive_homogeneity.holds
    assert V.inverse_scaling_decision(name, -1).holds == sigma.linearity.holds


@pytest.mark.parametrize("name", list(REGISTRY))
def test_thm_inverse_scaling_group_on_rational_factors(name):
    """thm-inverse-scaling, part 3: the decided G_σ ∩ FACTORS is closed under products and inverses (within FACTORS).

    Also cor-single-alpha: the decided membership is the one written from the theorem and the corollary.
    """
    kept = {a for a in FACTORS if decide_zero(*symbolic.scaling_defect(name, a)).holds}
    assert kept == {a for a in FACTORS if in_group(name, a)}
    assert sp.Integer(1) in kept
    for a in kept:
        if 1 / a in FACTORS:
            assert 1 / a in kept
        for b in kept:
            if a * b in FACTORS:
                assert a * b in kept


@pytest.mark.parametrize("name", list(REGISTRY))
def test_cor_single_alpha_membership_in_the_decided_group(name):
    """cor-single-alpha: α ∈ G_σ read off the group's name is the membership written from the theorem."""
    assert [in_scaling_group(GROUPS[name], a) for a in FACTORS] == [in_group(name, a) for a in FACTORS]


@pytest.mark.parametrize(("name", "alpha"), [("relu", -1), ("gelu", 2), ("tanh", Fraction(1, 2)), ("softplus", -1)])
def test_thm_inverse_scaling_decision_refutes_with_a_true_witness(name, alpha):
    """thm-inverse-scaling, part 2: a refuted α comes with a point z where σ(α z) ≠ α σ(z), checked in float64."""
    decision = scaling_decision(name, alpha)
    assert decision.holds is False and not in_group(name, sp.Rational(alpha))
    z = torch.tensor([float(v) for v in decision.witness.values()], dtype=F64)
    gap = (REGISTRY[name](float(alpha) * z) - float(alpha) * REGISTRY[name](z)).abs().item()
    assert gap > 1e-6  # a counterexample, not rounding: every witness here gives a gap of order 0.1


@pytest.mark.parametrize(("name", "alpha"), [("relu", 2), ("abs", Fraction(1, 3)), ("tanh", -1), ("identity", -3)])
def test_thm_inverse_scaling_decision_proves_the_kept_factors(name, alpha):
    assert scaling_decision(name, alpha).holds is True and in_group(name, sp.Rational(alpha))


def test_in_scaling_group_bad_arguments():
    with pytest.raises(ValueError, match="group: expected one of"):
        in_scaling_group("undecided", 2)
    with pytest.raises(ValueError, match="alpha: expected a non-zero real number, got 0"):
        in_scaling_group(r"\{1\}", 0)


def test_thm_inverse_scaling_symbolic_alpha_is_linearity():
    """σ(αz) = ασ(z) for a symbolic α ≠ 0 of either sign holds iff σ is linear (part 4 (ii))."""
    for name in ("identity", "relu", "tanh"):
        assert decide_zero(*symbolic.scaling_defect(name)).holds == (name in LINEAR)


@given(seed=seeds, d=sizes, m=sizes, alpha=st.sampled_from([-3.0, -1.0, -0.5, -0.25]))
def test_thm_inverse_scaling_reglu_breaks_every_negative_alpha(seed, d, m, alpha):
    """thm-inverse-scaling, part 4 (iii): ReGLU keeps no α < 0; a one-unit layer at a = b = 1 shows it for any α."""
    layer = GatedMLP.from_weights(
        torch.tensor([[1.0] + [0.0] * (d - 1)], dtype=F64),
        torch.tensor([[1.0] + [0.0] * (d - 1)], dtype=F64),
        torch.ones(1, 1, dtype=F64),
        activation="relu",
    )
    x = torch.zeros(1, d, dtype=F64)
    x[0, 0] = 1.0
    assert exceeds_rounding(layer, inverse_scale(layer, alpha), x, transform_error(F64, 1))


# ---------------------------------------------------------------------------
# cor-single-alpha


@pytest.mark.parametrize("name", list(REGISTRY))
def test_cor_single_alpha_scaling_group(name):
    """cor-single-alpha: symbolic.scaling_group returns G_σ as the theorem and the corollary give it."""
    assert symbolic.scaling_group(name) == GROUPS[name]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("identity", (1, 1)),
        ("relu", (1, 0)),
        ("leaky_relu", (1, sp.Rational(1, 100))),
        ("abs", (1, -1)),
        ("silu", (sp.Rational(1, 2), sp.Rational(1, 2))),
        ("gelu", (sp.Rational(1, 2), sp.Rational(1, 2))),
        ("sigmoid", (sp.Rational(1, 4), sp.Rational(1, 4))),
        ("tanh", (1, 1)),
    ],
)
def test_cor_single_alpha_one_sided_derivatives(name, expected):
    """σ'(0⁺), σ'(0⁻) from the expression: the two-slope σ are not differentiable at 0 (except the identity)."""
    assert symbolic.one_sided_derivatives(name) == tuple(sp.sympify(e) for e in expected)


@pytest.mark.parametrize("name", ["gelu", "silu", "tanh", "sigmoid", "softplus"])
@pytest.mark.parametrize("alpha", [-2.0, -1.0, 0.5, 2.0])
def test_cor_single_alpha_on_layers(name, alpha):
    """cor-single-alpha: a random gated layer with smooth σ is unchanged only for tanh at α = −1."""
    torch.manual_seed(7)
    layer = GatedMLP(5, 6, activation=name, dtype=F64)
    kept = equal_within_rounding(layer, inverse_scale(layer, alpha), inputs(7, 64, 5), transform_error(F64, 1))
    assert kept == (name == "tanh" and alpha == -1.0)


# ---------------------------------------------------------------------------
# prop-inverse-scaling-defect


def test_prop_inverse_scaling_defect_closed_form():
    """prop-inverse-scaling-defect: E[(P(αz)/α − P(z))²] = 0 for α > 0 and (c₊ − c₋)² for α < 0, exactly."""
    assert symbolic.piecewise_linear_scaling_defect() == (0, 0)


@pytest.mark.parametrize(("name", "exact"), [("relu", 1.0), ("leaky_relu", 0.99**2), ("abs", 4.0)])
@pytest.mark.parametrize("alpha", [-4.0, -1.0, -0.3, 0.3, 2.5])
def test_prop_inverse_scaling_defect_quadrature(name, exact, alpha):
    """The 160-point quadrature reproduces (c₊ − c₋)² for α < 0 and 0 for α > 0 (a polynomial on each half-line)."""
    value = V.inverse_scaling_defect(name, alpha)
    if alpha > 0:
        assert value == pytest.approx(0.0, abs=1e-30)
    else:
        assert value == pytest.approx(exact, rel=64 * 2.0**-53)


@given(seed=seeds, d=sizes, m=sizes, alpha=st.floats(-8.0, -0.125), act=st.sampled_from(["relu", "leaky_relu", "abs"]))
def test_prop_inverse_scaling_defect_reflects_input(seed, d, m, alpha, act):
    """prop-inverse-scaling-defect: positively homogeneous σ, α < 0 — the scaled gated layer at x is the layer at −x."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, activation=act, dtype=F64)
    x = inputs(seed, 8, d)
    scaled = inverse_scale(layer, alpha)
    with torch.no_grad():
        bound = forward_error_bound(scaled, x, transform_error(F64, 1)) + forward_error_bound(layer, -x)
        assert bool(((scaled(x) - layer(-x)).abs() <= bound).all())


@pytest.mark.parametrize(("name", "alpha"), [("silu", 2.0), ("gelu", -0.5), ("tanh", 3.0), ("softplus", 0.5)])
def test_prop_inverse_scaling_defect_quadrature_matches_monte_carlo(name, alpha):
    """D(α) = E[(σ(αa) b/α − σ(a) b)²] by quadrature agrees with a 10⁶-sample mean within 5 standard errors.

    The Monte Carlo sample uses the product form with an independent b (part 1 of the proposition).
    """
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(2, 1_000_000, generator=g, dtype=F64)
    sigma = REGISTRY[name]
    sample = (sigma(alpha * a) * b / alpha - sigma(a) * b) ** 2
    mean, se = float(sample.mean()), float(sample.std() / 1000.0)
    assert abs(V.inverse_scaling_defect(name, alpha) - mean) <= 5 * se


# ---------------------------------------------------------------------------
# rem-single-alpha, rem-gate-temperature


def test_rem_single_alpha_log_periodic():
    """rem-single-alpha: σ(z) = z(2 + sin(2π log₂|z|)) keeps α = 2 and α = −1, not α = 3; not differentiable at 0."""
    sigma = symbolic.log_periodic_activation(2)
    assert decide_zero(*symbolic.scaling_defect(sigma, 2)).holds is True
    assert decide_zero(*symbolic.scaling_defect(sigma, -1)).holds is True
    assert decide_zero(*symbolic.scaling_defect(sigma, 3)).holds is False
    assert not symbolic.one_sided_derivatives(sigma)[0].is_number
    assert symbolic.scaling_group(sigma) == "undecided"
    # the torch function is the sympy expression
    points = [-3.0, -0.7, 0.0, 0.3, 5.0]
    values = sigma(torch.tensor(points, dtype=F64))
    for p, v in zip(points, values.tolist(), strict=True):
        assert v == pytest.approx(float(sigma.sym(sp.nsimplify(p))), rel=1e-14, abs=1e-300)


def test_rem_single_alpha_other_base():
    """log_periodic_activation(3) keeps α = 3 and not α = 2."""
    sigma = symbolic.log_periodic_activation(3)
    assert decide_zero(*symbolic.scaling_defect(sigma, 3)).holds is True
    assert decide_zero(*symbolic.scaling_defect(sigma, 2)).holds is False


def test_rem_gate_temperature_identities():
    """rem-gate-temperature: silu(αz)/α = z·sigmoid(αz), gelu(αz)/α = zΦ(αz); gates run from 0 through ½ to 1."""
    identities, limits = symbolic.gate_temperature_identity()
    assert identities == sp.zeros(1, 2)
    assert limits == sp.zeros(2, 3)


def test_rem_gate_temperature_limits_of_the_defect():
    """rem-gate-temperature: D(α) for SiLU tends to E[(relu − silu)²] (α → ∞) and to E[(z/2 − silu)²] (α → 0).

    With f_α(z) = z s(αz) (s the logistic sigmoid) and |f_α + f_lim − 2σ| ≤ 4|z|:
    ``|D(α) − D(∞)| ≤ 4 E[z² s(−α|z|)] ≤ 16 φ(0)/α³`` (since s(−u) ≤ e^{−u}) and
    ``|D(α) − D(0)| ≤ α E[|z|³] = 2α √(2/π)`` (since |s(u) − ½| ≤ |u|/4).
    """
    z = sp.Symbol("z", real=True)
    silu = REGISTRY["silu"].sym(z)
    plus = V.gaussian_moment((sp.Max(z, 0) - silu) ** 2, z)[0]
    zero = V.gaussian_moment((z / 2 - silu) ** 2, z)[0]
    big, small = 16.0, 2.0**-12  # 16 · (largest quadrature node ≈ 25) keeps exp(−αz) finite
    assert abs(V.inverse_scaling_defect("silu", big) - plus) <= 16 / math.sqrt(2 * math.pi) / big**3
    assert abs(V.inverse_scaling_defect("silu", small) - zero) <= 2 * small * math.sqrt(2 / math.pi)


# ---------------------------------------------------------------------------
# package helpers: arguments and the figure


def test_scaling_defect_arguments():
    expr, (z,) = symbolic.scaling_defect("relu", Fraction(1, 2))
    assert sp.simplify(expr.subs(z, 3)) == 0
    expr, _ = symbolic.scaling_defect("relu", 0.5)  # a float is made exact
    assert sp.Rational(1, 2) in expr.atoms(sp.Rational)
    with pytest.raises(ValueError, match="alpha: expected a non-zero real number, got 0"):
        symbolic.scaling_defect("relu", 0)
    with pytest.raises(TypeError, match="alpha: expected a non-zero real number, got str"):
        symbolic.scaling_defect("relu", "2")
    with pytest.raises(TypeError, match="alpha: expected a non-zero real number, got bool"):
        symbolic.scaling_defect("relu", True)
    with pytest.raises(TypeError, match="alpha: expected a non-zero real number"):
        symbolic.scaling_defect("relu", sp.I)


def test_other_bad_arguments():
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.inverse_scaling_layer_identity(0, 1, 1)
    with pytest.raises(ValueError, match="base: expected an int >= 2, got 1"):
        symbolic.log_periodic_activation(1)
    with pytest.raises(ValueError, match="activation: expected one with a sympy expression"):
        symbolic.one_sided_derivatives(torch.relu)
    assert symbolic.scaling_group(torch.relu) == "undecided"


def test_signed_alpha_curves_draws_both_sides():
    mags = 2.0 ** np.linspace(-2, 2, 5)
    fig, axes = figure(ncols=2, sharey=True)
    signed_alpha_curves(
        axes,
        mags,
        {"a": (np.ones(5), None), "b": (2 * np.ones(5), 3 * np.ones(5))},
        ylabel="D",
        exact={"a": (1.0, None)},
    )
    assert len(axes[0].lines) == 3 and len(axes[1].lines) == 1  # two curves and one dashed line; one curve
    assert axes[0].xaxis_inverted() and not axes[1].xaxis_inverted()
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["−1/4", "−1/2", "−1", "−2", "−4"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]
    matplotlib.pyplot.close(fig)


def test_signed_alpha_curves_bad_arguments():
    fig, axes = figure(ncols=2)
    mags = [0.5, 1.0, 2.0]
    with pytest.raises(ValueError, match="axes: expected 2 axes"):
        signed_alpha_curves(axes[:1], mags, {}, ylabel="D")
    with pytest.raises(ValueError, match="magnitudes: expected a non-empty 1-d sequence of positive numbers"):
        signed_alpha_curves(axes, [0.0, 1.0], {}, ylabel="D")
    with pytest.raises(ValueError, match=r"curves\['a'\]: expected 3 values like magnitudes"):
        signed_alpha_curves(axes, mags, {"a": ([1.0], None)}, ylabel="D")
    with pytest.raises(ValueError, match=r"curves\['a'\]: expected positive values"):
        signed_alpha_curves(axes, mags, {"a": ([1.0, 0.0, 1.0], None)}, ylabel="D")
    with pytest.raises(ValueError, match="exact: expected labels among"):
        signed_alpha_curves(axes, mags, {"a": (None, None)}, ylabel="D", exact={"b": (1.0, None)})
    matplotlib.pyplot.close(fig)


def test_log_periodic_is_lipschitz_on_a_grid():
    """rem-single-alpha: |σ(u) − σ(v)| ≤ (3 + 2π/ln 2)|u − v| on a fine grid away from and across 0."""
    sigma = symbolic.log_periodic_activation(2)
    u = torch.linspace(-4.0, 4.0, 200_001, dtype=F64)
    slopes = (sigma(u[1:]) - sigma(u[:-1])).abs() / (u[1:] - u[:-1])
    assert float(slopes.max()) <= 3 + 2 * math.pi / math.log(2)
