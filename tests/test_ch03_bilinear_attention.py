"""Chapter 3: full bilinear attention, its transpose and gauge symmetries, and its cost.

Claims ``def-bilinear-attention``, ``thm-transpose`` and ``thm-gauge`` (and the
proposition ``prop-bilinear-expressivity``), asserted on the package's layers with
tolerances from :mod:`symbreak.numerics`, plus the helpers the chapter added to
:mod:`symbreak.symbolic`, :mod:`symbreak.costs` and :mod:`symbreak.plotting`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, equal_within_rounding, inputs, seeds, sizes
from symbreak import costs, symbolic
from symbreak.activations import get, z
from symbreak.approximation import sym
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma, unit_roundoff
from symbreak.plotting import figure, loglog_curves
from symbreak.symbolic.bilinear import expressivity_routes
from symbreak.symmetry import exchange, gauge, inverse_scale

F64 = torch.float64
U64 = unit_roundoff(F64)


def _from_unit_forms(W: torch.Tensor, V: torch.Tensor, activation: str) -> BilinearMLP:
    """``BilinearMLP(rank=d)`` with ``q_{j,r} = e_r`` and ``k_{j,r} = W_j[r]``, i.e. ``Q_j = I``, ``K_j = W_jᵀ``."""
    m, d, _ = W.shape
    Q = torch.eye(d, dtype=W.dtype)[:, None, :].expand(d, m, d).clone()
    return BilinearMLP.from_weights(Q, W.permute(1, 0, 2).clone(), V, activation=activation)


def _pair_memory(W: torch.Tensor, V: torch.Tensor, activation: str) -> KeyValueMLP:
    """The key–value memory over the ``d²`` features ``vec(xᵀx)`` with keys ``vec(W_j)``."""
    m, d, _ = W.shape
    return KeyValueMLP.from_weights(W.reshape(m, d * d), V, activation=activation)


def _pairs(x: torch.Tensor) -> torch.Tensor:
    """``vec(xᵀ x)``: the ``d²`` products ``x_a x_b`` of every token."""
    return torch.einsum("na,nb->nab", x, x).flatten(-2)


# --- def-bilinear-attention -------------------------------------------------------------


@pytest.mark.parametrize(("R", "activation"), [(None, None), (2, None), (None, "silu"), (1, "relu")])
def test_def_bilinear_attention_symbolic(R, activation):
    """def-bilinear-attention: (x Q_j)·(x K_j) = x W_j xᵀ, and Σ_j σ(x W_j xᵀ) v_j is the stacked rank-R layer."""
    dot_vs_quadratic, quadratic_vs_stacked = symbolic.bilinear_attention_identity(3, 2, 2, R, activation)
    assert dot_vs_quadratic == sp.zeros(1, 2)
    assert quadratic_vs_stacked == sp.zeros(1, 2)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_def_bilinear_attention_rank_d_is_the_full_form(d, m, seed, act):
    """def-bilinear-attention: BilinearMLP(rank=d) with q_{j,r} = e_r, k_{j,r} = W_j[r] computes Σ_j σ(x W_j xᵀ) v_j.

    The unit forms are W exactly (each entry is one product with 1 plus zeros).
    The independent reference is the key–value memory over vec(xᵀx) with keys
    vec(W_j); its input features carry one rounding each (relative error u),
    passed to its bound as ``param_rel_error``.
    """
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(m, d, d, generator=g, dtype=F64)
    V = torch.randn(m, 3, generator=g, dtype=F64)
    layer = _from_unit_forms(W, V, act)
    assert torch.equal(layer.unit_forms().detach(), W)
    x = inputs(seed, 8, d)
    memory = _pair_memory(W, V, act)
    with torch.no_grad():
        diff = (layer(x) - memory(_pairs(x))).abs()
        bound = forward_error_bound(layer, x) + forward_error_bound(memory, _pairs(x), param_rel_error=U64)
    assert bool((diff <= bound).all())


@given(seed=seeds, d=sizes, m=sizes)
def test_def_bilinear_attention_homogeneity(seed, d, m):
    """def-bilinear-attention, prop-bilinear-expressivity: f(2x) = 4 f(x) for ReLU bilinear attention, 2 f(x) memory.

    Tolerance: the two evaluations are bounded separately, β(2x) + 2^k β(x).
    """
    torch.manual_seed(seed)
    x = inputs(seed, 8, d)
    memory = KeyValueMLP(d, m, activation="relu", dtype=F64)
    bilinear = BilinearMLP(d, m, rank=d, activation="relu", dtype=F64)
    for layer, degree in ((memory, 1), (bilinear, 2)):
        with torch.no_grad():
            diff = (layer(2 * x) - 2**degree * layer(x)).abs()
            bound = forward_error_bound(layer, 2 * x) + 2**degree * forward_error_bound(layer, x)
        assert bool((diff <= bound).all())


@given(d=st.integers(1, 7), m=st.integers(1, 7), d_out=st.integers(1, 7))
def test_def_bilinear_attention_parameter_count(d, m, d_out):
    """def-bilinear-attention: the full form stores 2 m d² numbers in its maps plus m d_out values, counted.

    The maps are counted as the numel of ``Q`` and ``K`` of ``BilinearMLP(rank=d)``, the values as that of ``V``;
    the check is that each Q_j, K_j of the layer is a d×d map (``unit_forms`` has shape (m, d, d)).
    """
    layer = BilinearMLP(d, m, d_out, rank=d)
    assert tuple(layer.unit_forms().shape) == (m, d, d)
    maps = layer.Q.numel() + layer.K.numel()
    assert maps == costs.evaluate(costs.map_parameters("full"), d=d, m=m, d_out=d_out)
    assert maps + layer.V.numel() == costs.evaluate(costs.parameters("full"), d=d, m=m, d_out=d_out)


def test_def_bilinear_attention_llama_ratio():
    """def-bilinear-attention: for LLaMA-7B the full form stores (2d + 1)/3 times the numbers of its SwiGLU layer.

    Both layers are built at LLaMA-7B's sizes on the meta device (no memory) and their tensors counted.
    """
    sizes_ = costs.MODELS["LLaMA-7B"]
    with torch.device("meta"):
        full = sum(p.numel() for p in BilinearMLP(sizes_["d"], sizes_["m"], rank=sizes_["d"]).parameters())
        gated = sum(p.numel() for p in GatedMLP(sizes_["d"], sizes_["m"]).parameters())
    assert full * 3 == gated * (2 * sizes_["d"] + 1)
    assert full == costs.evaluate(costs.parameters("full"), **sizes_)
    assert gated == costs.evaluate(costs.parameters("gated"), **sizes_)


# --- thm-transpose --------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_thm_transpose_symbolic(d):
    """thm-transpose: x W xᵀ = x Wᵀ xᵀ = x sym(W) xᵀ, and the scores span exactly d(d+1)/2 dimensions."""
    assert symbolic.transpose_identity(d) == (0, 0)
    assert symbolic.score_dimension_identity(d) == 0


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_transpose_only_sym_matters(d, m, seed, act):
    """thm-transpose: layers with unit forms W_j, W_jᵀ and sym(W_j) compute the same function.

    sym(W) = (W + Wᵀ)/2 is one rounded addition (the halving is exact), so its
    layer's parameters carry a relative error u.
    """
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(m, d, d, generator=g, dtype=F64)
    V = torch.randn(m, 2, generator=g, dtype=F64)
    x = inputs(seed, 8, d)
    layer = _from_unit_forms(W, V, act)
    assert equal_within_rounding(layer, _from_unit_forms(W.mT.contiguous(), V, act), x)
    assert equal_within_rounding(layer, _from_unit_forms(sym(W), V, act), x, U64)


@given(d=sizes, m=sizes, seed=seeds)
def test_thm_transpose_antisymmetric_forms_score_zero(d, m, seed):
    """thm-transpose: an antisymmetric W_j scores x W_j xᵀ = 0; with σ = identity the exact output is 0."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(m, d, d, generator=g, dtype=F64)
    layer = _from_unit_forms(W - W.mT, torch.randn(m, 2, generator=g, dtype=F64), "identity")
    x = inputs(seed, 8, d)
    with torch.no_grad():
        assert bool((layer(x).abs() <= forward_error_bound(layer, x)).all())


@given(d=sizes, m=sizes, rank=st.integers(1, 4), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_transpose_exchange_transposes_unit_forms(d, m, rank, seed, act):
    """thm-transpose: exchanging q_{j,r} ↔ k_{j,r} turns W_j into W_jᵀ, so the layer is unchanged for every σ.

    Both unit forms are length-R sums of the same products: they differ by at
    most 2γ_R Σ_r |q_{j,r}|ᵀ|k_{j,r}|.
    """
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=rank, activation=act, dtype=F64)
    swapped = exchange(layer)
    with torch.no_grad():
        diff = (swapped.unit_forms() - layer.unit_forms().mT).abs()
        bound = 2 * gamma(rank, F64) * torch.einsum("rjd,rje->jed", layer.Q.abs(), layer.K.abs())
    assert bool((diff <= bound).all())
    assert equal_within_rounding(layer, swapped, inputs(seed, 8, d))


# --- thm-gauge --------------------------------------------------------------------------


@given(
    d=sizes,
    m=sizes,
    seed=seeds,
    act=st.sampled_from(ACTIVATIONS),
    data=st.data(),
)
def test_thm_gauge_full_form_exact_A(d, m, seed, act, data):
    """thm-gauge: (Q_j, K_j) → (Q_j A, K_j A⁻ᵀ) with A ∈ GL(d) leaves the full form (R = d) unchanged.

    A = D P (signed powers of two times a permutation) and A⁻¹ = Pᵀ D⁻¹ are
    exact in floating point, so the transformed parameters are exact and the
    outputs must agree within the two layers' rounding bounds.
    """
    perm = data.draw(st.permutations(range(d)))
    exps = data.draw(st.lists(st.integers(-3, 3), min_size=d, max_size=d))
    signs = data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=d, max_size=d))
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=d, activation=act, dtype=F64)
    D = torch.diag(torch.tensor([s * 2.0**e for s, e in zip(signs, exps, strict=True)], dtype=F64))
    P = torch.eye(d, dtype=F64)[list(perm)]
    A = D @ P
    assert torch.equal(torch.linalg.inv(A), P.T @ torch.linalg.inv(D))
    new = gauge(layer, A)
    assert bool(torch.isfinite(new.unit_forms()).all())
    assert equal_within_rounding(layer, new, inputs(seed, 8, d))


@given(seed=seeds, d=sizes, m=sizes, exponent=st.integers(-6, 6), negative=st.booleans())
def test_thm_gauge_inverse_scaling_is_the_rank_one_case(seed, d, m, exponent, negative):
    """thm-gauge: at R = 1, A = α is inverse scaling q_j → α q_j, k_j → k_j/α (parameters equal for α = ±2^e)."""
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=1, dtype=F64)
    alpha = (-1.0 if negative else 1.0) * 2.0**exponent
    by_gauge = gauge(layer, torch.tensor([[alpha]], dtype=F64))
    by_scaling = inverse_scale(layer, alpha)
    assert torch.equal(by_gauge.Q, by_scaling.Q)
    assert torch.equal(by_gauge.K, by_scaling.K)


@given(seed=seeds, d=sizes, m=sizes, alpha=st.floats(0.1, 10.0))
def test_thm_gauge_alpha_identity_scales_every_rank(seed, d, m, alpha):
    """thm-gauge: A = α I scales all the unit's queries by α and keys by 1/α: the layer is unchanged.

    The gauge's parameters carry at most γ_2 relative error (1/α, then a product).
    """
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=d, activation="gelu", dtype=F64)
    new = gauge(layer, alpha * torch.eye(d, dtype=F64))
    assert equal_within_rounding(layer, new, inputs(seed, 8, d), gamma(2, F64))
    assert equal_within_rounding(layer, inverse_scale(layer, alpha), inputs(seed, 8, d), U64)


# --- the helpers this chapter added ---------------------------------------------------------


def test_symbolic_helpers_reject_bad_sizes():
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.bilinear_attention_identity(0, 2, 2)
    with pytest.raises(ValueError, match="R: expected an int >= 1, got -1"):
        symbolic.bilinear_attention_identity(2, 2, 2, R=-1)
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 2.5"):
        symbolic.score_dimension_identity(2.5)


def test_sweep_evaluates_along_widths():
    """def-bilinear-attention: sweep gives 2·m·d² + m·d at m = 4d for the full form."""
    widths = [1, 2, 8]
    assert costs.sweep(costs.parameters("full"), widths) == [2 * 4 * w * w**2 + 4 * w * w for w in widths]
    assert costs.sweep(costs.parameters("rankR"), [4], units_per_width=2, rank=3) == [2 * 3 * 8 * 4 + 8 * 4]
    with pytest.raises(ValueError, match="widths: expected at least one width"):
        costs.sweep(costs.parameters("kv"), [])
    with pytest.raises(TypeError, match="widths: expected a sequence of ints, got int"):
        costs.sweep(costs.parameters("kv"), 4)
    with pytest.raises(ValueError, match="units_per_width: expected an int >= 1, got 0"):
        costs.sweep(costs.parameters("kv"), [4], units_per_width=0)
    with pytest.raises(ValueError, match=r"sizes: expected values for \['R'\]"):
        costs.sweep(costs.parameters("rankR"), [4])


def test_latex_count_formats_and_rejects():
    assert costs.latex_count(369412276224) == r"$3.69 \cdot 10^{11}$"
    assert costs.latex_count(2730.67, digits=0) == r"$3 \cdot 10^{3}$"
    assert costs.latex_count(7.5, digits=1) == "$7.5$"
    assert costs.latex_count(0.00125) == r"$1.25 \cdot 10^{-3}$"
    assert costs.latex_count(369412276224, unicode=True) == "3.69·10¹¹"
    assert costs.latex_count(0.00125, unicode=True) == "1.25·10⁻³"
    assert costs.latex_count(7.5, digits=1, unicode=True) == "7.5"
    with pytest.raises(TypeError, match="unicode: expected a bool, got str"):
        costs.latex_count(12, unicode="yes")
    with pytest.raises(ValueError, match="value: expected a finite positive number, got 0"):
        costs.latex_count(0)
    with pytest.raises(TypeError, match="value: expected a real number, got str"):
        costs.latex_count("12")
    with pytest.raises(ValueError, match="digits: expected an int >= 0, got -1"):
        costs.latex_count(12, digits=-1)


def test_loglog_curves_draws_and_rejects():
    fig, axes = figure()
    loglog_curves(
        axes[0],
        [1, 10, 100],
        {"a": [1, 2, 3], "ref": [1, 10, 100]},
        xlabel="d",
        ylabel="numbers",
        styles={"ref": "--"},
        points={"model": (50.0, 5.0)},
        right_axis=("GB", 2e-9),
        legend_loc="lower right",
    )
    assert axes[0].get_xscale() == "log" and axes[0].get_yscale() == "log"
    assert len(axes[0].get_lines()) == 3
    with pytest.raises(ValueError, match=r"curves\['a'\]: expected 3 values like x"):
        loglog_curves(axes[0], [1, 2, 3], {"a": [1, 2]}, xlabel="d", ylabel="n")
    with pytest.raises(ValueError, match=r"curves\['a'\]: expected positive values"):
        loglog_curves(axes[0], [1, 2, 3], {"a": [1, 0, 2]}, xlabel="d", ylabel="n")
    with pytest.raises(ValueError, match="x: expected a non-empty 1-d sequence of positive numbers"):
        loglog_curves(axes[0], [0, 1], {"a": [1, 2]}, xlabel="d", ylabel="n")
    with pytest.raises(ValueError, match="styles: expected labels among"):
        loglog_curves(axes[0], [1, 2], {"a": [1, 2]}, xlabel="d", ylabel="n", styles={"b": "--"})
    with pytest.raises(ValueError, match="right_axis: expected a positive factor"):
        loglog_curves(axes[0], [1, 2], {"a": [1, 2]}, xlabel="d", ylabel="n", right_axis=("GB", 0.0))
    plt.close(fig)


# --- prop-bilinear-expressivity -----------------------------------------------------------


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_prop_bilinear_expressivity_every_activation_has_both_routes(name):
    """prop-bilinear-expressivity: items 1 and 2 each have a route for every registered σ, the one the proof names."""
    routes = expressivity_routes(name)
    assert routes["even_score"] == 0
    homogeneous = {"identity", "relu", "leaky_relu", "abs"}
    assert routes["homogeneous"] == (name in homogeneous)
    assert routes["memory_not_bilinear"] == ("homogeneity" if name == "abs" else "parity")
    bounded = {"sigmoid", "tanh"}
    expected = "homogeneity" if name in homogeneous else ("poles" if name in bounded else "growth")
    assert routes["bilinear_not_memory"] == expected


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "softplus"])
def test_prop_bilinear_expressivity_growth_route_in_torch(name):
    """prop-bilinear-expressivity, item 2 by growth: σ(s)/s → 1 as s → +∞ and σ(s)/s stays bounded as s → −∞.

    Checked on torch's σ, not on the sympy expression the routes use: at s = ±10⁶ in float64 (convention:
    within 10⁻⁶ of 1, and |σ(−s)| ≤ s).
    """
    sigma = get(name)
    s = torch.tensor(1e6, dtype=F64)
    assert abs(float(sigma(s) / s) - 1) <= 1e-6
    assert float(sigma(-s).abs()) <= float(s)


@pytest.mark.parametrize(("name", "pole"), [("sigmoid", 1.0), ("tanh", 0.5)])
def test_prop_bilinear_expressivity_pole_route_in_torch(name, pole):
    """prop-bilinear-expressivity, item 2 by poles: σ(t²) blows up near t₀ = √(iπ·c), while σ(c_j t) stays bounded.

    torch's complex σ at t₀² + h grows like 1/h; along the ray of t₀ (argument π/4) σ(c t) for real c is bounded
    near t₀ (c t is off the imaginary axis). Convention: |σ| > 10⁵ at h = 10⁻⁶, < 10 along the ray.
    """
    fn = {"sigmoid": torch.sigmoid, "tanh": torch.tanh}[name]
    w0 = torch.tensor(complex(0.0, torch.pi * pole), dtype=torch.complex128)
    assert float(fn(w0 + 1e-6).abs()) > 1e5
    t0 = w0.sqrt()
    assert abs(float(torch.angle(t0)) - torch.pi / 4) < 1e-12
    for c in (-3.0, -1.0, -0.5, 0.5, 1.0, 3.0):
        assert float(fn(c * (t0 + 1e-6)).abs()) < 10


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_bilinear_expressivity_parity_on_layers(d, m, seed, act):
    """prop-bilinear-expressivity, item 1: full bilinear attention is even within its rounding bound for every σ; the
    one-unit memory with k = z₀e₁ (z₀ = 1, the decision's witness) is not, beyond its bound, for every σ but |·|."""
    torch.manual_seed(seed)
    x = inputs(seed, 8, d)
    layer = BilinearMLP(d, m, rank=d, activation=act, dtype=F64)
    with torch.no_grad():
        bound = forward_error_bound(layer, x) + forward_error_bound(layer, -x)
        assert bool(((layer(-x) - layer(x)).abs() <= bound).all())
        assert expressivity_routes(act)["even_sigma"].witness in ({}, {z: 1})
        e1 = torch.eye(d, dtype=F64)[:1]
        unit = KeyValueMLP.from_weights(e1, torch.ones(1, 1, dtype=F64), activation=act)
        bound = forward_error_bound(unit, e1) + forward_error_bound(unit, -e1)
        odd = bool(((unit(e1) - unit(-e1)).abs() > bound).all())
    assert odd == (act != "abs")
