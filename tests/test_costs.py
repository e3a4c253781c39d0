"""Cost formulas agree with the layers' actual parameter counts and reject bad sizes."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from symbreak import costs
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP


def _numel(layer) -> int:
    return sum(p.numel() for p in layer.parameters())


@given(d=st.integers(1, 9), m=st.integers(1, 9), d_out=st.integers(1, 9), R=st.integers(1, 4))
def test_parameter_formulas_match_layers(d, m, d_out, R):
    ev = lambda form: costs.evaluate(costs.parameters(form), d=d, m=m, d_out=d_out, R=R)  # noqa: E731
    assert ev("kv") == _numel(KeyValueMLP(d, m, d_out))
    assert ev("rank1") == _numel(BilinearMLP(d, m, d_out, rank=1))
    assert ev("rankR") == _numel(BilinearMLP(d, m, d_out, rank=R))
    assert ev("gated") == _numel(GatedMLP(d, m, d_out))
    # R = d reaches the full form's per-unit maps Q_j, K_j ∈ R^{d×d}
    assert costs.evaluate(costs.parameters("rankR"), d=d, m=m, d_out=d_out, R=d) == ev("full")


def test_symbolic_relations():
    assert sp.simplify(costs.parameters("rankR").subs(costs.R, 1) - costs.parameters("rank1")) == 0
    assert sp.simplify(costs.parameters("global_query") - costs.parameters("kv") - costs.d**2) == 0
    # packing sym(W_j) stores d(d+1)/2 of the d² numbers of W_j
    assert (
        sp.simplify(costs.parameters("full_packed") - costs.m * costs.d * (costs.d + 1) / 2 - costs.m * costs.d_out)
        == 0
    )


def test_llama_7b_full_form_storage():
    # 2 m d² = 2 · 11008 · 4096² for the per-unit maps alone
    value = costs.evaluate(costs.parameters("full"), d=4096, m=11008) - 11008 * 4096
    assert value == 2 * 11008 * 4096**2


def test_bad_form_and_sizes():
    with pytest.raises(ValueError, match="form: expected one of"):
        costs.parameters("fullest")
    with pytest.raises(TypeError, match="form: expected a form name"):
        costs.flops(3)
    with pytest.raises(ValueError, match="m: expected an int >= 1, got 0"):
        costs.evaluate(costs.parameters("kv"), d=3, m=0)
    with pytest.raises(ValueError, match=r"sizes: expected values for \['R'\]"):
        costs.evaluate(costs.parameters("rankR"), d=3, m=2)
    with pytest.raises(ValueError, match="sizes: expected keys among"):
        costs.evaluate(costs.parameters("kv"), width=3)
