"""Chapter 8 (parity and the summary of Part III): prop-parity, rem-parity-parts,
rem-diagonal-split, cor-parity-comparison, cor-symmetry-breaking, and the
symbolic helpers the chapter adds.

The facts asserted here are the chapter's statements, on the package's layers
and symbolic identities; the cells of the symmetry table themselves are tested
one by one in ``tests/test_verdicts.py``.

* ``prop-parity`` — bias-free rank-R forms (symmetric rank-1, full) are even in
  x for every σ; the gated form is even iff σ is odd and odd iff σ is even; the
  plain MLP is even iff σ is even and odd iff σ is odd;
* ``rem-parity-parts`` — G = G₊ + G₋ with the odd and even parts of σ;
  σ(z) − σ(−z) = z exactly for ReLU, GELU, GELU (tanh), SiLU and softplus,
  and then G(x) + G(−x) is the bilinear layer with the same weights;
* ``rem-diagonal-split`` — (x·q)(x·k) = (x·a)² − (x·b)², and for σ = identity a
  layer of m units is a symmetric layer of 2m diagonal units;
* ``cor-parity-comparison`` — on a sample closed under negation an even model's
  mean squared error is its error against y_e plus the mean of ‖y_o‖²;
* ``cor-symmetry-breaking`` — every cell of the table equals the prediction
  from the decided properties of σ (linear, positively homogeneous, odd, even).
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, inputs, seeds, sizes
from symbreak import REGISTRY, BilinearMLP, GatedMLP, KeyValueMLP, symbolic
from symbreak.activations import z
from symbreak.decide import decide_zero
from symbreak.dynamics import train
from symbreak.numerics import forward_error_bound, gamma
from symbreak.symbolic.parity import PARITY_FORMS, even_part_identity, predicted_parity, sigma_parity
from symbreak.verdicts import FORMS, SYMMETRIES, even_part_is_bilinear, parity_class, symmetry_table, verdict

F64 = torch.float64
ODD = {"identity", "tanh"}
EVEN = {"abs"}
#: σ(z) − σ(−z) = z: σ = z·g(z) with g(z) + g(−z) = 1, and softplus
HALF_LINEAR_ODD_PART = {"relu", "gelu", "gelu_tanh", "silu", "softplus"}


def _layer(form: str, act: str, d: int, m: int, d_out: int = 2):
    if form == "kv":
        return KeyValueMLP(d, m, d_out, activation=act, dtype=F64)
    if form == "rank1":
        return BilinearMLP(d, m, d_out, rank=1, activation=act, dtype=F64)
    if form == "full":
        return BilinearMLP(d, m, d_out, rank=d, activation=act, dtype=F64)
    return GatedMLP(d, m, d_out, activation=act, dtype=F64)


# ---------------------------------------------------------------------------
# prop-parity


@pytest.mark.parametrize(("d", "R"), [(3, 1), (2, 2), (3, 2)])
@pytest.mark.parametrize("act", [None, "relu", "silu"])
def test_prop_parity_rank_R_symbolic(d, R, act):
    """prop-parity, part 1: f(−x) − f(x) = 0 for the rank-R form, symbolically (undefined σ and two registered)."""
    assert symbolic.rank_R_parity_identity(d, 2, 2, R, act) == sp.zeros(1, 2)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_prop_parity_sigma_parity_decided(act):
    """prop-parity: σ is odd iff σ_e ≡ 0, even iff σ_o ≡ 0; the odd σ are identity and tanh, |z| is even."""
    even_part, odd_part = symbolic.parity_parts(act)
    assert decide_zero(even_part, (z,)).holds == (act in ODD)
    assert decide_zero(odd_part, (z,)).holds == (act in EVEN)
    assert REGISTRY[act].is_odd == (act in ODD)
    assert sigma_parity(act) == ("odd" if act in ODD else "even" if act in EVEN else "neither")


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_prop_parity_verdicts_follow_parity_of_sigma(act):
    """prop-parity: the unit verdicts are the parity decisions of σ (gated: odd; plain: even; quadratic: always)."""
    even_part, odd_part = symbolic.parity_parts(act)
    assert verdict("gated", "parity", act).holds == decide_zero(even_part, (z,)).holds
    assert verdict("kv", "parity", act).holds == decide_zero(odd_part, (z,)).holds
    assert verdict("rank1", "parity", act).holds is True
    assert verdict("full", "parity", act).holds is True


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("act", ACTIVATIONS)
def test_prop_parity_layer_classes(form, act):
    """prop-parity on layers: the measured parity class of each form is the predicted one."""
    torch.manual_seed(11)
    layer = _layer(form, act, d=5, m=6)
    x = inputs(12, 128, 5)
    if form in ("rank1", "full"):
        expected = "even"
    elif form == "gated":
        expected = "even" if act in ODD else "odd" if act in EVEN else "neither"
    else:
        expected = "even" if act in EVEN else "odd" if act in ODD else "neither"
    assert parity_class(layer, x) == expected
    assert predicted_parity(form, act) == expected


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_parity_symmetric_forms_exactly_even_in_floating_point(d, m, seed, act):
    """prop-parity: the rank-1 and full forms are even bit for bit in float64 (negation is exact)."""
    torch.manual_seed(seed)
    x = inputs(seed, 16, d)
    for layer in (_layer("rank1", act, d, m), _layer("full", act, d, m)):
        with torch.no_grad():
            assert torch.equal(layer(-x), layer(x))


def test_prop_parity_converse_single_unit():
    """prop-parity, converse: d = m = d_out = 1, x = 1, Q = a, K = 1 gives f(x) = σ(a), f(−x) = −σ(−a)."""
    for act in ("relu", "silu", "gelu"):
        layer = GatedMLP.from_weights(
            torch.tensor([[1.5]], dtype=F64), torch.tensor([[1.0]], dtype=F64), torch.tensor([[1.0]], dtype=F64), act
        )
        x = torch.tensor([[1.0]], dtype=F64)
        with torch.no_grad():
            assert float(layer(x)) == pytest.approx(float(REGISTRY[act](torch.tensor(1.5, dtype=F64))))
            assert float(layer(-x)) == pytest.approx(-float(REGISTRY[act](torch.tensor(-1.5, dtype=F64))))
            assert abs(float(layer(x) - layer(-x))) > 0.1


# ---------------------------------------------------------------------------
# rem-parity-parts


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_rem_parity_parts_odd_part_is_half_identity(act):
    """rem-parity-parts: σ(z) − σ(−z) = z is proved exactly for ReLU, GELU, GELU (tanh), SiLU and softplus."""
    _, odd_part = symbolic.parity_parts(act)
    decision = decide_zero(2 * odd_part - z, (z,))
    assert decision.holds == (act in HALF_LINEAR_ODD_PART)


def test_rem_parity_parts_closed_forms():
    """rem-parity-parts: σ_e = |z|/2 (ReLU), (z/2) erf(z/√2) (GELU), (z/2) tanh(z/2) (SiLU).

    Symbolically (``even_part_identity``) and, independently of sympy, at sample points:
    ``(σ(t) + σ(−t))/2`` from the torch activation against the stated form from ``math``.
    """
    stated = {
        "relu": lambda t: abs(t) / 2,
        "gelu": lambda t: t / 2 * math.erf(t / math.sqrt(2)),
        "silu": lambda t: t / 2 * math.tanh(t / 2),
    }
    points = torch.tensor([-3.0, -0.7, 0.0, 0.4, 2.5], dtype=F64)
    for act, closed in stated.items():
        assert even_part_identity(act) == 0
        sigma = REGISTRY[act]
        even_part = (sigma(points) + sigma(-points)) / 2
        for t, value in zip(points.tolist(), even_part.tolist(), strict=True):
            assert value == pytest.approx(closed(t), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_rem_parity_parts_simplified_parts_are_the_parts(act):
    """The simplified σ_e, σ_o shown in tbl-parity-parts take the values (σ(t) ± σ(−t))/2 of the torch σ."""
    parts = symbolic.parity_parts(act, simplified=True)
    sigma = REGISTRY[act]
    for t in (-2.0, -0.3, 0.5, 1.7):
        value = torch.tensor(t, dtype=F64)
        expected = ((sigma(value) + sigma(-value)) / 2, (sigma(value) - sigma(-value)) / 2)
        for part, want in zip(parts, expected, strict=True):
            assert float(part.subs(z, sp.Rational(str(t))).evalf(30)) == pytest.approx(float(want), rel=1e-9, abs=1e-12)


def test_rem_parity_parts_undefined_sigma_sums_to_sigma():
    """rem-parity-parts: σ_e + σ_o = σ, σ_e even and σ_o odd, for an undefined σ."""
    even_part, odd_part = symbolic.parity_parts()
    sigma = sp.Function("sigma")
    assert sp.simplify(even_part + odd_part - sigma(z)) == 0
    assert sp.simplify(even_part.subs(z, -z) - even_part) == 0
    assert sp.simplify(odd_part.subs(z, -z) + odd_part) == 0


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_rem_parity_parts_even_part_is_bilinear_layer(act):
    """rem-parity-parts: G(x) + G(−x) equals the bilinear layer (same weights) within rounding iff σ(z) − σ(−z) = z.

    ``HALF_LINEAR_ODD_PART`` is derived by hand (σ = z·g(z) with g(z) + g(−z) = 1, and softplus).
    """
    torch.manual_seed(5)
    gated = GatedMLP(6, 8, activation=act, dtype=F64)
    assert even_part_is_bilinear(gated, inputs(6, 128, 6)) == (act in HALF_LINEAR_ODD_PART)


@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_rem_parity_parts_exchange_breaking_lives_in_odd_part(act):
    """rem-parity-parts: with σ_o = z/2 the exchange defect σ(b)a − σ(a)b equals that of σ_e, exactly."""
    a, b = sp.symbols("a b", real=True)
    sigma = REGISTRY[act].sym
    even_part, _ = symbolic.parity_parts(act)
    sigma_e = sp.Lambda(z, even_part)
    defect = sigma(b) * a - sigma(a) * b - (sigma_e(b) * a - sigma_e(a) * b)
    assert decide_zero(defect, (a, b)).holds is True


# ---------------------------------------------------------------------------
# rem-diagonal-split


@pytest.mark.parametrize(("d", "m", "d_out"), [(1, 1, 1), (3, 2, 2), (2, 3, 1)])
def test_rem_diagonal_split_symbolic(d, m, d_out):
    """rem-diagonal-split: the bilinear layer equals the layer of 2m diagonal units with values ±v_j."""
    assert symbolic.diagonal_split_identity(d, m, d_out) == sp.zeros(1, d_out)


@pytest.mark.parametrize("act", ["relu", "silu", None])
def test_rem_diagonal_split_fails_for_nonlinear_sigma(act):
    """rem-diagonal-split: for a nonlinear (or undefined) σ the split holds for the scores only."""
    assert symbolic.diagonal_split_identity(1, 1, 1, act) != sp.zeros(1, 1)


@pytest.mark.parametrize(("act", "expected"), [("identity", True), ("silu", False), ("relu", False)])
def test_rem_diagonal_split_layers(act, expected):
    """rem-diagonal-split on layers: GatedMLP(identity) = BilinearMLP of 2m diagonal units, within rounding."""
    torch.manual_seed(2)
    single = GatedMLP(5, 6, activation=act, dtype=F64)
    x = inputs(3, 128, 5)
    with torch.no_grad():
        C = torch.cat([(single.Q + single.K) / 2, (single.Q - single.K) / 2])
        diagonal = BilinearMLP.from_weights(C, C, torch.cat([single.V, -single.V]), activation=act)
        difference = (single(x) - diagonal(x)).abs()
        bound = forward_error_bound(single, x) + forward_error_bound(diagonal, x, param_rel_error=2**-53)
    assert diagonal.m == 2 * single.m
    assert bool((difference <= bound).all()) == expected


# ---------------------------------------------------------------------------
# cor-parity-comparison


@pytest.mark.parametrize("d_out", [1, 2, 4])
def test_cor_parity_comparison_pair_identity(d_out):
    """cor-parity-comparison: ½(‖y₊ − f‖² + ‖y₋ − f‖²) = ‖y_e − f‖² + ‖y_o‖², symbolically."""
    assert symbolic.parity_loss_split_identity(d_out) == 0


@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_cor_parity_comparison_floor_on_a_negation_closed_sample(act):
    """cor-parity-comparison: a random even layer's loss is E + F ≥ F, the energy of the target's odd part."""
    torch.manual_seed(4)
    teacher = GatedMLP(4, 5, 2, activation="silu", dtype=F64)
    student = BilinearMLP(4, 7, 2, rank=1, activation=act, dtype=F64)
    tokens = inputs(9, 64, 4)
    X = torch.cat([tokens, -tokens])
    with torch.no_grad():
        Y, f = teacher(X), student(X)
    n = tokens.shape[0]
    y_even, y_odd = (Y[:n] + Y[n:]) / 2, (Y[:n] - Y[n:]) / 2
    N = X.shape[0]
    loss = float(0.5 * ((Y - f) ** 2).sum() / N)
    fit = float(((y_even - f[:n]) ** 2).sum() / N)
    floor = float(((y_odd) ** 2).sum() / N)
    g = gamma(N * Y.shape[1] + 4, F64)
    assert torch.equal(f[:n], f[n:])
    assert floor > 0
    assert abs(loss - fit - floor) <= 2 * g * (loss + fit + floor)
    assert loss >= floor - g * (loss + floor)


def test_cor_parity_comparison_linear_target_no_better_than_zero():
    """cor-parity-comparison: on a linear (odd) target a trained even model never beats predicting zero."""
    torch.manual_seed(6)
    W = torch.randn(2, 3, dtype=F64)
    tokens = inputs(10, 64, 3)
    X = torch.cat([tokens, -tokens])
    Y = X @ W.T
    zero_loss = float(0.5 * (Y**2).sum() / X.shape[0])
    student = BilinearMLP(3, 6, 2, rank=1, activation="silu", dtype=F64)
    history = train(student, X, Y, lr=1e-2, steps=40, optimizer="adam")
    g = gamma(Y.numel() + 4, F64)
    assert min(history.loss) >= zero_loss * (1 - 2 * g)


# ---------------------------------------------------------------------------
# cor-symmetry-breaking


def test_cor_symmetry_breaking_cells_from_properties_of_sigma():
    """cor-symmetry-breaking: the gated rows are kept exactly by the σ with the property the corollary names."""
    table = symmetry_table(ACTIVATIONS)
    linear = {n for n in ACTIVATIONS if REGISTRY[n].is_linear}
    homogeneous = {n for n in ACTIVATIONS if REGISTRY[n].is_positively_homogeneous}
    odd = {n for n in ACTIVATIONS if REGISTRY[n].is_odd}
    even = {n for n in ACTIVATIONS if decide_zero(symbolic.parity_parts(n)[1], (z,)).holds}
    every = set(ACTIVATIONS)
    predicted = {
        "exchange": linear,
        "scale_pos": homogeneous,
        "scale_neg": linear,
        "parity": odd,
        "gauge": linear,
        "kv_scale": every,
    }
    plain = {"parity": even, "kv_scale": homogeneous}
    for s in SYMMETRIES:
        assert {n for n in ACTIVATIONS if table["gated", s, n].holds} == predicted[s]
        for n in ACTIVATIONS:
            symmetric = (n in homogeneous) if s == "kv_scale" else True
            assert table["rank1", s, n].holds is symmetric
            assert table["full", s, n].holds is symmetric
            assert table["kv", s, n].holds == ((n in plain[s]) if s in plain else None)


def test_cor_symmetry_breaking_item_4_kv_rescaling_single_unit():
    """cor-symmetry-breaking, item 4: (k, v) → (αk, v/α) on one unit; gated unchanged, symmetric iff homogeneous."""
    x = torch.tensor([[0.7, -1.3]], dtype=torch.float64)
    q, k, v = torch.tensor([[1.1, 0.4]]), torch.tensor([[-0.9, 2.0]]), torch.tensor([[1.0]])
    q, k, v = q.double(), k.double(), v.double()
    alpha = 4.0  # a power of two: the rescaled weights are exact
    for act in ("silu", "relu"):
        gated = GatedMLP.from_weights(q, k, v, activation=act)
        symmetric = BilinearMLP.from_weights(q, k, v, activation=act)
        gated2 = GatedMLP.from_weights(q, alpha * k, v / alpha, activation=act)
        symmetric2 = BilinearMLP.from_weights(q, alpha * k, v / alpha, activation=act)
        with torch.no_grad():
            g, g2, s_, s2 = gated(x), gated2(x), symmetric(x), symmetric2(x)
        tol = 8 * gamma(4, torch.float64) * max(abs(float(g)), abs(float(s_)), 1.0)  # convention: a few roundings
        assert abs(float(g2 - g)) <= tol
        assert (abs(float(s2 - s_)) <= tol) == (act == "relu")


def test_cor_symmetry_breaking_glu_family():
    """cor-symmetry-breaking: ReGLU keeps only inverse scaling with α > 0; GEGLU and SwiGLU keep none of the three."""
    three = ("exchange", "scale_pos", "scale_neg", "parity")
    assert [verdict("gated", s, "relu").holds for s in three] == [False, True, False, False]
    for act in ("gelu", "silu", "gelu_tanh"):
        assert not any(verdict("gated", s, act).holds for s in three)


def test_cor_symmetry_breaking_items_1_and_2():
    """cor-symmetry-breaking, items 1–2: the static-query score and the gated unit sum, symbolically."""
    assert symbolic.static_query_identity(2) == 0
    assert symbolic.gated_layer_identity(2, 2, 1) == sp.zeros(1, 1)


# ---------------------------------------------------------------------------
# argument checks of the helpers added for chapter 8


def test_bad_arguments():
    with pytest.raises(ValueError, match="activation: expected one of"):
        symbolic.parity_parts("swish")
    with pytest.raises(TypeError, match="activation: expected a registered name"):
        symbolic.parity_parts(3)
    with pytest.raises(ValueError, match="R: expected an int >= 1, got 0"):
        symbolic.rank_R_parity_identity(2, 2, 2, 0)
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.rank_R_parity_identity(0, 2, 2, 1)
    with pytest.raises(ValueError, match="m: expected an int >= 1, got 0"):
        symbolic.diagonal_split_identity(2, 0, 1)
    with pytest.raises(ValueError, match="d_out: expected an int >= 1, got -1"):
        symbolic.parity_loss_split_identity(-1)
    with pytest.raises(TypeError, match="simplified: expected a bool, got int"):
        symbolic.parity_parts("relu", simplified=1)
    with pytest.raises(ValueError, match=r"activation: expected one of \['relu', 'gelu', 'silu'\], got 'tanh'"):
        even_part_identity("tanh")
    with pytest.raises(ValueError, match="form: expected one of"):
        predicted_parity("swap", "relu")
    with pytest.raises(ValueError, match="activation: expected one of"):
        sigma_parity("swish")
    assert set(PARITY_FORMS) == set(FORMS)
