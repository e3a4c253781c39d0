"""Cost formulas agree with the layers: parameters by numel, matrix products by FlopCounterMode, elementwise work by
a count of the aten calls; and bad sizes are rejected."""

from __future__ import annotations

import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from symbreak import costs
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, GlobalQueryMLP, KeyValueMLP


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


def _layer(form: str, d: int, m: int, d_out: int, R: int) -> torch.nn.Module:
    """The package's layer that evaluates ``form`` (σ = identity, so that only the form's own work runs)."""
    act = "identity"
    if form in ("rank1", "rankR", "full"):
        return BilinearMLP(d, m, d_out, rank={"rank1": 1, "rankR": R, "full": d}[form], activation=act)
    if form in ("full_features", "full_packed"):
        return FullBilinearMLP(d, m, d_out, act, packed=form == "full_packed")
    return {"kv": KeyValueMLP, "global_query": GlobalQueryMLP, "gated": GatedMLP}[form](d, m, d_out, act)


_ALL_FORMS = [*costs.FORMS, "full_features"]


def _formulas(form: str) -> costs.Form:
    return costs.FULL_FEATURES if form == "full_features" else costs.FORMS[form]


@given(d=st.integers(1, 6), m=st.integers(1, 6), d_out=st.integers(1, 4), R=st.integers(1, 4), n=st.integers(1, 4))
def test_every_form_counted_on_its_layer(d, m, d_out, R, n):
    """Each formula of every form against its layer: parameters = numel of the stored tensors; matmul FLOPs =
    what FlopCounterMode counts; elementwise FLOPs = the counted mul/add/addcmul entries of the forward pass.

    The one convention: ``full`` counts a unit's dot product ``(xQ_j)·(xK_j)`` of length d as d multiply–adds
    (2d FLOPs, as chapter 3 writes it), while its layer, ``BilinearMLP(rank=d)``, starts the sum with a plain
    product, so the layer counts m fewer.
    """
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(d * 100 + m), dtype=torch.float64)
    for form in _ALL_FORMS:
        torch.manual_seed(0)
        layer = _layer(form, d, m, d_out, R).double()
        sizes_ = {"d": d, "m": m, "d_out": d_out, "R": R}
        assert sum(p.numel() for p in layer.parameters()) == costs.evaluate(_formulas(form).parameters, **sizes_)
        with FlopCounterMode(display=False) as flops, torch.no_grad():
            layer(x)
        assert flops.get_total_flops() == n * costs.evaluate(costs.matmul_flops(form), **sizes_), form
        convention = m if form == "full" else 0
        elementwise = costs.evaluate(_formulas(form).elementwise_flops, **sizes_)
        with torch.no_grad():
            assert costs.counted_elementwise(lambda net=layer: net(x), n) == elementwise - convention, form


def test_counted_elementwise_counts_what_it_claims():
    """counted_elementwise: a product of two 3×4 tensors is 12, an addcmul 24, a matrix product or σ 0; per token."""
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    runs = ((lambda: a * b, 12), (lambda: torch.addcmul(a, a, b), 24), (lambda: a @ b.T, 0), (lambda: a.relu(), 0))
    for run, expected in runs:
        assert costs.counted_elementwise(run, 1) == expected
    assert costs.counted_elementwise(lambda: a - b, 3) == 4
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        costs.counted_elementwise(lambda: None, 0)
    with pytest.raises(TypeError, match="run: expected a callable, got int"):
        costs.counted_elementwise(3, 1)


def test_llama_7b_full_form_storage():
    """2 m d² numbers in the maps at LLaMA-7B's sizes, counted on a BilinearMLP(rank=d) built on the meta device."""
    sizes_ = costs.MODELS["LLaMA-7B"]
    with torch.device("meta"):
        layer = BilinearMLP(sizes_["d"], sizes_["m"], rank=sizes_["d"])
    maps = layer.Q.numel() + layer.K.numel()
    assert costs.evaluate(costs.map_parameters("full"), **sizes_) == maps
    assert costs.evaluate(costs.parameters("full"), **sizes_) == maps + layer.V.numel()


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


@given(d=st.integers(1, 9), m=st.integers(1, 9), d_out=st.integers(1, 9))
def test_overhead_of_a_global_query_counts_the_layers(d, m, d_out):
    """overhead("global_query"): the extra parameters are GlobalQueryMLP's minus KeyValueMLP's, counted."""
    extra = costs.overhead("global_query", base="kv")
    counted = _numel(GlobalQueryMLP(d, m, d_out)) - _numel(KeyValueMLP(d, m, d_out))
    assert costs.evaluate(extra["parameters"], d=d, m=m, d_out=d_out) == counted
    share = counted / _numel(KeyValueMLP(d, m, d_out))
    relative = extra["relative"].subs({costs.d: d, costs.m: m, costs.d_out: d_out})
    assert float(relative) == pytest.approx(share, rel=1e-12)


def test_overhead_formulas_as_written_in_chapter_2():
    """The global query map adds d² parameters and 2d² FLOPs (one d×d product per token): d²/(m(d + d_out))."""
    d, m, d_out = costs.d, costs.m, costs.d_out
    extra = costs.overhead("global_query")
    assert sp.simplify(extra["parameters"] - d**2) == 0
    assert sp.simplify(extra["flops"] - 2 * d**2) == 0
    assert sp.simplify(extra["relative"] - d**2 / (m * (d + d_out))) == 0
    # against another base: the full form over the rank-1 form keeps the values, adds 2md² − 2md
    assert sp.simplify(costs.overhead("full", base="rank1")["parameters"] - (2 * m * d**2 - 2 * m * d)) == 0


def test_at_ratio_makes_shares_functions_of_m_over_d():
    """With d_out = d and m = ρd the global-query overhead is 1/(2ρ): 12.5 % at ρ = 4 (T5-base's ReLU layer)."""
    of_ratio = costs.at_ratio(costs.overhead("global_query")["relative"])
    assert of_ratio.free_symbols == {costs.rho}
    assert of_ratio.subs(costs.rho, 4) == sp.Rational(1, 8)
    # T5-base (ReLU): d = 768, m = 3072 = 4d → 768² / (3072 · 1536)
    assert float(of_ratio.subs(costs.rho, 4)) == 768**2 / (3072 * 1536)
    assert costs.at_ratio(costs.m / costs.d) == costs.rho
    with pytest.raises(TypeError, match="expr: expected a sympy expression, got float"):
        costs.at_ratio(0.5)


@given(d=st.integers(1, 9), m=st.integers(1, 9), d_out=st.integers(1, 9))
def test_map_parameters_are_the_layers_without_their_values(d, m, d_out):
    """map_parameters(form) counts the layer's parameters other than V, for the layers of every rank-limited form."""
    for form, layer in (
        ("kv", KeyValueMLP(d, m, d_out)),
        ("global_query", GlobalQueryMLP(d, m, d_out)),
        ("rank1", BilinearMLP(d, m, d_out, rank=1)),
        ("gated", GatedMLP(d, m, d_out)),
        ("full", BilinearMLP(d, m, d_out, rank=d)),
    ):
        expected = _numel(layer) - layer.V.numel()
        assert costs.evaluate(costs.map_parameters(form), d=d, m=m, d_out=d_out) == expected, form


def test_model_forms_name_a_form_for_every_model():
    """MODEL_FORMS covers exactly the models of MODELS; T5-base's ReLU layer is the standard MLP, the others gated."""
    assert list(costs.MODEL_FORMS) == list(costs.MODELS)
    assert set(costs.MODEL_FORMS.values()) <= set(costs.FORMS)
    assert costs.MODEL_FORMS["T5-base (ReLU)"] == "kv"
    # the GLU variants of T5 keep the ReLU layer's parameter count with m = 2048 instead of 3072 (3md = 2md')
    relu, glu = costs.MODELS["T5-base (ReLU)"], costs.MODELS["T5-base (GLU variants)"]
    assert costs.evaluate(costs.parameters(costs.MODEL_FORMS["T5-base (GLU variants)"]), **glu) == 3 * 768 * 2048
    assert costs.evaluate(costs.parameters("kv"), **relu) == 2 * 768 * 3072 == 3 * 768 * 2048


def test_overhead_rejects_bad_forms():
    with pytest.raises(ValueError, match="base: expected one of"):
        costs.overhead("global_query", base="mlp")
    with pytest.raises(TypeError, match="form: expected a form name"):
        costs.overhead(None)
