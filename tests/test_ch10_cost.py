"""Chapter 10, what the forms cost: ``prop-cost-formulas`` against the package's layers.

Nothing here is a timing: parameter counts are read from the layers' tensors,
matrix-product FLOPs from torch's ``FlopCounterMode`` (which counts ``2nkp`` per
product), and the numbers kept for the backward pass from the tensors autograd
saves (:func:`symbreak.costs.saved_per_token`).
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from symbreak import costs
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, GlobalQueryMLP, KeyValueMLP

FORMS = ["kv", "global_query", "rank1", "rankR", "gated", "full", "full_features", "full_packed"]


def _formulas(form: str) -> costs.Form:
    return costs.FULL_FEATURES if form == "full_features" else costs.FORMS[form]


def _layer(form: str, d: int, m: int, R: int, activation: str = "silu") -> torch.nn.Module:
    if form == "kv":
        return KeyValueMLP(d, m, activation=activation)
    if form == "global_query":
        return GlobalQueryMLP(d, m, activation=activation)
    if form in ("rank1", "rankR", "full"):
        return BilinearMLP(d, m, rank={"rank1": 1, "rankR": R, "full": d}[form], activation=activation)
    if form == "gated":
        return GatedMLP(d, m, activation=activation)
    return FullBilinearMLP(d, m, activation=activation, packed=form == "full_packed")


sizes_st = st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4))


@given(sizes=sizes_st, form=st.sampled_from(FORMS))
def test_prop_cost_formulas_parameters_equal_the_layers(sizes, form):
    """prop-cost-formulas: the parameter formula equals the number of stored parameters of the layer."""
    d, m, R = sizes
    torch.manual_seed(0)
    layer = _layer(form, d, m, R)
    stored = sum(p.numel() for p in layer.parameters())
    assert stored == costs.evaluate(_formulas(form).parameters, d=d, m=m, R=R)


@given(sizes=sizes_st, form=st.sampled_from(FORMS), n=st.integers(1, 5))
def test_prop_cost_formulas_matmul_flops_equal_the_counter(sizes, form, n):
    """prop-cost-formulas: matmul_flops equals the FLOPs FlopCounterMode counts in the layer's forward pass."""
    d, m, R = sizes
    torch.manual_seed(0)
    layer = _layer(form, d, m, R)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        layer(torch.randn(n, d))
    assert counter.get_total_flops() == n * costs.evaluate(costs.matmul_flops(form), d=d, m=m, R=R)


@pytest.mark.parametrize("form", FORMS)
def test_prop_cost_formulas_elementwise_part_is_nonnegative(form):
    """prop-cost-formulas: flops − matmul_flops is the elementwise work, a polynomial with non-negative values."""
    rest = sp.expand(_formulas(form).flops - costs.matmul_flops(form))
    for d in (1, 3, 8):
        for m in (1, 5):
            assert costs.evaluate(rest, d=d, m=m, R=3) >= 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("d", "m", "R"), [(6, 10, 3), (8, 16, 2), (3, 5, 4)])
def test_prop_cost_formulas_memory_equals_saved_tensors(form, d, m, R):
    """prop-cost-formulas: with σ = SiLU the kept numbers per token equal what autograd saves."""
    torch.manual_seed(0)
    x = torch.randn(7, d)
    measured = costs.saved_per_token(_layer(form, d, m, R), x)
    assert measured == costs.evaluate(_formulas(form).memory, d=d, m=m, R=R)


@pytest.mark.parametrize("form", ["kv", "global_query", "rank1", "rankR", "full", "full_features", "full_packed"])
def test_prop_cost_formulas_relu_keeps_m_fewer(form):
    """prop-cost-formulas: ReLU saves its output, which the product with V keeps anyway: m numbers fewer.

    The gated layer too: its query factor's ReLU is kept (for both the gate's and the product's backward), not
    the factor itself, and its key factor is a tensor of its own (two products), so 4m − m = 3m.
    """
    d, m, R = 6, 10, 3
    torch.manual_seed(0)
    x = torch.randn(7, d)
    assert (
        costs.saved_per_token(_layer(form, d, m, R, "relu"), x)
        == costs.evaluate(_formulas(form).memory, d=d, m=m, R=R) - m
    )
    assert costs.saved_per_token(_layer("gated", d, m, R, "relu"), x) == 3 * m


def test_prop_cost_formulas_packed_keeps_no_copies_when_x_requires_grad():
    """prop-cost-formulas: with x requiring grad, the packed features keep only views of x, no copies.

    The features are products ``x_i · (x_i, …, x_d)`` of slices of the token; a
    gather at the triangle's indices would keep two copies, ``d(d+1)`` numbers more.
    """
    d, m = 6, 10
    torch.manual_seed(0)
    layer = FullBilinearMLP(d, m, packed=True)
    x = torch.randn(7, d)
    base = costs.saved_per_token(layer, x)
    assert costs.saved_per_token(layer, x.clone().requires_grad_(True)) == base
    bilinear = BilinearMLP(d, m, rank=2)
    assert costs.saved_per_token(bilinear, x.clone().requires_grad_(True)) == costs.saved_per_token(bilinear, x)


def test_prop_cost_formulas_consistency():
    """prop-cost-formulas: rank-R at R = 1 is rank-1, gated costs what rank-1 costs, R = d stores the maps."""
    kinds = (costs.parameters, costs.flops, costs.memory)
    for f in kinds:
        assert sp.simplify(f("rankR").subs(costs.R, 1) - f("rank1")) == 0
        assert sp.simplify(f("gated") - f("rank1")) == 0
    for f in (costs.parameters, costs.memory):
        assert sp.simplify(f("rankR").subs(costs.R, costs.d) - f("full")) == 0
    assert sp.simplify(costs.flops("rankR").subs(costs.R, costs.d) - costs.flops("full")) == -costs.m
    share = costs.FORMS["full_packed"].parameters.subs(costs.d_out, 0) / costs.FULL_FEATURES.parameters.subs(
        costs.d_out, 0
    )
    assert sp.simplify(share - (costs.d + 1) / (2 * costs.d)) == 0


def test_prop_cost_formulas_degrees():
    """prop-cost-formulas: at m = 4d every vector form is quadratic in d, the full form cubic."""
    proportional = {costs.m: 4 * costs.d, costs.d_out: costs.d, costs.R: 4}
    for form in FORMS:
        degree = sp.Poly(sp.expand(_formulas(form).flops.subs(proportional)), costs.d).degree()
        assert degree == (3 if form.startswith("full") else 2)


def test_power_law_exponent():
    assert costs.power_law_exponent([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0, abs=1e-12)
    assert costs.power_law_exponent([2, 4], [5.0, 5.0]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="sizes, values: expected two 1-d sequences of equal length >= 2"):
        costs.power_law_exponent([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="sizes, values: expected positive numbers"):
        costs.power_law_exponent([1, 2], [0, 1])
    with pytest.raises(ValueError, match="sizes: expected at least two distinct sizes"):
        costs.power_law_exponent([2, 2], [1, 3])


def test_matmul_flops_and_saved_per_token_bad_input():
    with pytest.raises(ValueError, match="form: expected one of .*'full_features'.*, got 'dense'"):
        costs.matmul_flops("dense")
    with pytest.raises(TypeError, match="form: expected a form name"):
        costs.matmul_flops(3)
    with pytest.raises(TypeError, match="layer: expected a torch.nn.Module, got str"):
        costs.saved_per_token("kv", torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"x: expected a 2-d tensor \(n, d\) with n >= 1 tokens, got \(3,\)"):
        costs.saved_per_token(KeyValueMLP(3, 2), torch.zeros(3))


def test_full_features_formulas():
    """FULL_FEATURES: W_j over x ⊗ x; half the maps' parameters and matrix-product FLOPs, d² + 2m kept."""
    maps, features = costs.FORMS["full"], costs.FULL_FEATURES
    value_params = costs.m * costs.d_out
    assert sp.simplify(2 * (features.parameters - value_params) - (maps.parameters - value_params)) == 0
    assert features.memory == costs.d**2 + 2 * costs.m
    # matrix products, counted by torch: the maps route spends twice the score FLOPs of the features route
    d, m, n = 5, 4, 3
    counted = {}
    for form in ("full", "full_features"):
        torch.manual_seed(0)
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            _layer(form, d, m, d)(torch.randn(n, d))
        counted[form] = counter.get_total_flops()
    value_flops = n * 2 * m * d  # the product with V, d_out = d
    assert counted["full"] - value_flops == 2 * (counted["full_features"] - value_flops) == n * 4 * m * d**2
