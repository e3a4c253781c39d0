"""The symmetry table: every cell decided by the procedures, checked against the theorems and the layers.

Ground truth is written from the theorems, independently of the procedures:

* the symmetric rank-1 and the full bilinear forms keep every symmetry for every σ
  (thm-exchange, thm-inverse-scaling, prop-parity, thm-gauge);
* the gated form keeps exchange iff σ is linear (thm-exchange), inverse scaling for
  every α > 0 iff σ is positively homogeneous and for every α < 0 iff σ is linear
  (thm-inverse-scaling), parity iff σ is odd (prop-parity);
* the standard MLP is even iff σ is even;
* the rescaling ``(k_j, v_j) → (α k_j, v_j/α)``, ``α > 0``, is kept by the gated form for every σ
  (it is linear in ``k_j`` and ``v_j``) and by the other forms iff σ is positively homogeneous.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from symbreak import activations as A
from symbreak import verdicts as V

NAMES = A.names()
LINEAR = {"identity"}
POS_HOMOGENEOUS = {"identity", "relu", "leaky_relu", "abs"}
ODD = {"identity", "tanh"}
EVEN = {"abs"}


def expected(form: str, symmetry: str, act: str) -> bool | None:
    if symmetry == "kv_scale":
        return True if form == "gated" else act in POS_HOMOGENEOUS
    if form == "kv":
        return (act in EVEN) if symmetry == "parity" else None
    if form in ("rank1", "full"):
        return True
    return {
        "exchange": act in LINEAR,
        "scale_pos": act in POS_HOMOGENEOUS,
        "scale_neg": act in LINEAR,
        "parity": act in ODD,
        "gauge": act in LINEAR,
    }[symmetry]


CELLS = [(f, s, a) for f in V.FORMS for s in V.SYMMETRIES for a in NAMES]


@pytest.mark.parametrize(("form", "symmetry", "act"), CELLS)
def test_cor_symmetry_breaking_table_cell(form, symmetry, act):
    """cor-symmetry-breaking / tbl-symmetries: each cell of the table, decided, agrees with the theorems."""
    v = V.verdict(form, symmetry, act)
    assert v.holds == expected(form, symmetry, act)
    if v.holds is False:
        assert v.method.startswith("counterexample")
        assert all(val.is_Rational for val in v.decision.witness.values())


@pytest.mark.parametrize(("form", "symmetry", "act"), CELLS)
def test_table_cell_confirmed_on_layers(form, symmetry, act):
    """A kept symmetry changes a random float64 layer by no more than rounding; a broken one by more."""
    m = V.measure(form, symmetry, act, seed=3)
    truth = expected(form, symmetry, act)
    if truth is None:
        assert m is None
    else:
        assert m.within_rounding == truth
        # the margin is the largest share of the bound: at most 1 exactly when within rounding
        assert (m.margin <= 1) == m.within_rounding


@pytest.mark.parametrize("act", NAMES)
def test_thm_exchange_decision_and_counterexample(act):
    """thm-exchange: σ(a)b − σ(b)a ≡ 0 iff σ is linear; otherwise a rational witness with a non-zero value."""
    d = V.exchange_decision(act)
    assert d.holds == (act in LINEAR)
    if not d.holds:
        sigma = A.get(act)
        value = (sigma.sym(V.a) * V.b - sigma.sym(V.b) * V.a).subs(d.witness)
        assert abs(float(value.evalf(30))) > 1e-12


@pytest.mark.parametrize("act", NAMES)
def test_thm_inverse_scaling_decisions(act):
    """thm-inverse-scaling: σ(αz) = ασ(z) for all α > 0 iff positively homogeneous; for all α < 0 iff linear."""
    assert V.inverse_scaling_decision(act, +1).holds == (act in POS_HOMOGENEOUS)
    assert V.inverse_scaling_decision(act, -1).holds == (act in LINEAR)


def test_exchange_defect_closed_forms():
    """E[(σ(a)b − σ(b)a)²] = 2(E[σ²] − E[zσ]²): 0 for the identity, 1/2 for ReLU, 2 for |z|."""
    assert V.exchange_defect("identity")[1] == 0
    assert V.exchange_defect("relu")[1] == sp.Rational(1, 2)
    assert V.exchange_defect("abs")[1] == 2
    # leaky ReLU with slope c: E[σ²] = (1 + c²)/2, E[zσ] = (1 + c)/2 → 2((1+c²)/2 − (1+c)²/4) = (1 − c)²/2
    c = sp.Rational(1, 100)
    assert V.exchange_defect("leaky_relu")[1] == (1 - c) ** 2 / 2


@pytest.mark.parametrize("act", ["gelu", "silu", "tanh", "softplus", "sigmoid"])
def test_exchange_defect_quadrature_matches_monte_carlo(act):
    """The quadrature value agrees with a 4·10⁶-sample Monte Carlo mean within 5 standard errors."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 4_000_000, generator=g, dtype=torch.float64)
    sigma = A.get(act)
    sample = (sigma(a) * b - sigma(b) * a) ** 2
    mean, se = float(sample.mean()), float(sample.std() / 4_000_000**0.5)
    value, closed = V.exchange_defect(act)
    assert closed is None
    assert abs(value - mean) <= 5 * se


def test_inverse_scaling_defect_relu():
    """ReLU: zero for α > 0; for α < 0, σ(αz)/α − σ(z) = −z, so the defect is E[z²] = 1."""
    assert V.inverse_scaling_defect("relu", 3.0) == pytest.approx(0.0, abs=1e-15)
    assert V.inverse_scaling_defect("relu", -2.0) == pytest.approx(1.0, rel=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="form: expected one of"):
        V.verdict("mlp", "exchange", "relu")
    with pytest.raises(ValueError, match="symmetry: expected one of"):
        V.verdict("gated", "swap", "relu")
    with pytest.raises(ValueError, match="activation: expected one of"):
        V.verdict("gated", "exchange", "swish")
    with pytest.raises(ValueError, match="sign: expected"):
        V.inverse_scaling_decision("relu", 0)
    with pytest.raises(ValueError, match="alpha: expected a non-zero real number, got 0"):
        V.inverse_scaling_defect("relu", 0)


def test_parity_class_of_layers_whose_parity_is_known():
    """prop-parity: σ = identity makes the standard MLP odd, every symmetric rank-1 layer is even, ReLU's neither."""
    from symbreak import BilinearMLP, KeyValueMLP

    torch.manual_seed(0)
    x = torch.randn(64, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert V.parity_class(KeyValueMLP(5, 7, activation="identity", dtype=torch.float64), x) == "odd"
    assert V.parity_class(BilinearMLP(5, 7, rank=1, activation="relu", dtype=torch.float64), x) == "even"
    assert V.parity_class(KeyValueMLP(5, 7, activation="relu", dtype=torch.float64), x) == "neither"
    with pytest.raises(TypeError, match="layer: expected a FeedForward layer, got Linear"):
        V.parity_class(torch.nn.Linear(5, 2), x)


def test_form_layer_builds_each_form():
    """``form_layer``: the standard MLP, the symmetric rank-1 form, the rank-d (full) form and the gated MLP
    (float64)."""
    from symbreak import BilinearMLP, GatedMLP, KeyValueMLP

    layers = {form: V.form_layer(form, "silu", d=5, m=3) for form in V.FORMS}
    assert type(layers["kv"]) is KeyValueMLP and type(layers["gated"]) is GatedMLP
    assert isinstance(layers["rank1"], BilinearMLP) and layers["rank1"].rank == 1
    assert isinstance(layers["full"], BilinearMLP) and layers["full"].rank == 5
    assert all((la.d, la.m, la.d_out, la.V.dtype) == (5, 3, 5, torch.float64) for la in layers.values())
    with pytest.raises(ValueError, match="form: expected one of"):
        V.form_layer("wide", "silu")


@pytest.mark.parametrize(("act", "half"), [("relu", True), ("softplus", True), ("sigmoid", False), ("identity", False)])
def test_even_part_is_bilinear(act, half):
    """rem-parity-parts: G(x) + G(−x) is the bilinear layer iff σ(z) − σ(−z) = z.

    By hand: yes for ReLU and softplus; no for the sigmoid, where σ(z) − σ(−z) = tanh(z/2),
    and for the identity, where it is 2z.
    """
    from symbreak import GatedMLP

    torch.manual_seed(2)
    x = torch.randn(64, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    assert V.even_part_is_bilinear(GatedMLP(5, 7, activation=act, dtype=torch.float64), x) is half
    with pytest.raises(TypeError, match="layer: expected a GatedMLP, got KeyValueMLP"):
        V.even_part_is_bilinear(V.form_layer("kv", act), torch.zeros(2, 6, dtype=torch.float64))


# ---------------------------------------------------------------------------
# the rescaling column, the full form for every d, and the kinds of cell


def test_kv_scale_column_agrees_with_kept_rescalings():
    """tbl-symmetries / cor-symmetry-breaking: the (k_j, v_j) column is the "kv" entry of dynamics.KEPT_RESCALINGS."""
    from symbreak.dynamics import KEPT_RESCALINGS
    from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP

    layer_class = {"kv": KeyValueMLP, "rank1": BilinearMLP, "full": BilinearMLP, "gated": GatedMLP}
    for form, cls in layer_class.items():
        condition = KEPT_RESCALINGS[cls]["kv"]
        for act in NAMES:
            predicted = condition is None or getattr(A.resolve(act), condition)
            assert V.verdict(form, "kv_scale", act).holds == predicted


@pytest.mark.parametrize("symmetry", ["exchange", "scale_pos", "scale_neg", "parity", "gauge", "kv_scale"])
def test_cor_symmetry_breaking_full_form_cells_for_every_d(symmetry):
    """tbl-symmetries, full form: each cell rests on a score identity for matrix symbols of symbolic size d."""
    from symbreak.symbolic.parity import full_score_identity, is_zero_identity

    assert is_zero_identity(full_score_identity(symmetry))
    assert V.full_identity_holds(symmetry)
    for d in () if symmetry == "gauge" else (2, 3, 4, 5):
        assert is_zero_identity(full_score_identity(symmetry, d))
    if symmetry != "kv_scale":
        assert all(V.verdict("full", symmetry, n).kind == "matrix identity" for n in ("relu", "silu"))


def test_full_score_identity_can_fail():
    """Controls: the exchange of a non-symmetric quadratic form's matrix and an unbalanced key rescaling move it."""
    from symbreak.symbolic import matrix, row
    from symbreak.symbolic.parity import is_zero_identity

    x, Q, K = row("x", 3), matrix("q", 3, 3), matrix("k", 3, 3)
    alpha = sp.Symbol("alpha", positive=True)
    # the bilinear form x Q Kᵀ yᵀ of two tokens is not symmetric: exchange moves it
    y = row("y", 3)
    assert sp.expand((x * K * Q.T * y.T)[0, 0] - (x * Q * K.T * y.T)[0, 0]) != 0
    # rescaling the key map without the factor α on the old score is not an identity
    assert sp.expand((x * Q * (alpha * K).T * x.T)[0, 0] - (x * Q * K.T * x.T)[0, 0]) != 0
    assert not is_zero_identity(sp.Matrix([[x[0]]]))


def test_kinds_of_cell():
    """The cells sympy writes as 0 are counted apart: canonical forms, not proofs."""
    assert V.verdict("rank1", "exchange", "silu").kind == "canonical form"  # σ(b·a) is σ(a·b) as written
    assert V.verdict("rank1", "exchange", "silu").symbol == "✓°"
    assert V.verdict("gated", "kv_scale", "silu").kind == "canonical form"
    assert V.verdict("gated", "scale_pos", "relu").kind == "proof"  # Max(0, α a)/α needs the sign split
    assert V.verdict("gated", "scale_pos", "relu").symbol == "✓"
    assert V.verdict("gated", "exchange", "relu").kind == "counterexample"
    assert V.verdict("kv", "exchange", "relu").kind == "n/a"
    assert V.verdict("full", "parity", "gelu").kind == "matrix identity"
    assert {v.kind for v in V.symmetry_table(NAMES).values()} <= set(V.KINDS)


def test_rescale_key_value():
    torch.manual_seed(0)
    layer = V.form_layer("gated", "silu", d=3, m=2)
    new = V.rescale_key_value(layer, 2.0)
    assert torch.equal(new.K, 2 * layer.K) and torch.equal(new.V, layer.V / 2)
    with pytest.raises(ValueError, match="alpha: expected a finite real number > 0, got -1"):
        V.rescale_key_value(layer, -1.0)
    with pytest.raises(TypeError, match="layer: expected a KeyValueMLP, BilinearMLP or GatedMLP, got str"):
        V.rescale_key_value("x", 2.0)


def test_configured_constants_are_the_ones_used():
    """``GH_POINTS`` is the node count of the module's quadrature, ``SCALE_ALPHA`` the factor ``measure`` uses."""
    from symbreak.verdicts import moments

    assert V.GH_POINTS == 160 and moments._GH_NODES.shape == (V.GH_POINTS,)
    assert V.SCALE_ALPHA == 1.7 and V.MEASURE_CONFIG["alpha"] == V.SCALE_ALPHA
