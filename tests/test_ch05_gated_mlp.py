"""Chapter 5 (the gated MLP): prop-gated-rank-one, prop-llama-t5, and the helpers the chapter adds.

The facts asserted here are the chapter's claims, on the package's layers and
symbolic identities:

* ``prop-gated-rank-one`` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V = Σ_j σ(x·q_j)(x·k_j) v_j``,
  and the gated and symmetric rank-1 forms with the same weights agree iff σ
  is linear;
* ``prop-llama-t5`` — the published block ``w_down(σ(w_gate(x)) ⊙ w_up(x))``,
  written with PyTorch's ``nn.Linear`` convention, is ``GatedMLP`` with
  ``Q = w_gate``, ``K = w_up``, ``V = w_downᵀ`` (the numerical comparison with
  the reference blocks is in ``tests/test_models.py``).
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, inputs, seeds, sizes
from symbreak import REGISTRY, BilinearMLP, GatedMLP, symbolic
from symbreak.decide import Decision, decide_zero
from symbreak.models import GLU_VARIANTS
from symbreak.numerics import forward_error_bound
from symbreak.plotting import figure, heatmap_grid, markdown_table

F64 = torch.float64


# ---------------------------------------------------------------------------
# prop-gated-rank-one, part 1: the gated MLP is a sum over units of σ(x·q_j)(x·k_j) v_j


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_gated_rank_one_unit_sum(d, m, seed, act):
    """prop-gated-rank-one: GatedMLP equals Σ_j σ(x·q_j)(x·k_j) v_j, evaluated unit by unit, within rounding."""
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, d_out=3, activation=act, dtype=F64)
    x = inputs(seed, 7, d)
    with torch.no_grad():
        unit_sum = sum(
            (layer.activation(x @ layer.Q[j]) * (x @ layer.K[j])).unsqueeze(-1) * layer.V[j] for j in range(m)
        )
        difference = (layer(x) - unit_sum).abs()
        assert bool((difference <= 2 * forward_error_bound(layer, x)).all())


@pytest.mark.parametrize("activation", [None, *GLU_VARIANTS.values(), "gelu_tanh"])
def test_prop_gated_rank_one_symbolic(activation):
    """prop-gated-rank-one: the symbolic identity for an undefined σ and every member of the GLU family."""
    assert symbolic.gated_layer_identity(3, 3, 2, activation) == sp.zeros(1, 2)


# ---------------------------------------------------------------------------
# prop-gated-rank-one, part 2: σ(a) b = σ(ab) for all a, b iff σ is linear


@pytest.mark.parametrize("name", list(REGISTRY))
def test_prop_gated_rank_one_coefficients_agree_iff_linear(name):
    """prop-gated-rank-one: σ(a) b − σ(ab) ≡ 0 is decided true exactly for the linear registered σ."""
    decision = decide_zero(*symbolic.gated_symmetric_unit_difference(name))
    assert decision.holds is REGISTRY[name].is_linear
    if not decision.holds:
        assert decision.method == "counterexample" and decision.witness


def test_prop_gated_rank_one_converse_step():
    """prop-gated-rank-one: the proof's step a = 1 turns σ(a) b − σ(ab) into σ(1) b − σ(b)."""
    difference, (a, b) = symbolic.gated_symmetric_unit_difference()
    sigma = sp.Function("sigma")
    assert sp.simplify(difference.subs(a, 1) - (sigma(1) * b - sigma(b))) == 0


def test_prop_gated_rank_one_identity_layers_agree_symbolically():
    """prop-gated-rank-one: with σ = identity the gated and symmetric rank-1 layers are the same function."""
    assert symbolic.gated_symmetric_layer_difference(3, 2, 2, "identity") == sp.zeros(1, 2)
    assert symbolic.gated_symmetric_layer_difference(2, 1, 1, "relu") != sp.zeros(1, 1)
    assert symbolic.gated_symmetric_layer_difference(2, 1, 1) != sp.zeros(1, 1)


@pytest.mark.parametrize("name", list(GLU_VARIANTS.values()))
def test_prop_gated_rank_one_same_weights_torch(name):
    """prop-gated-rank-one: GatedMLP and BilinearMLP(rank=1) with the same Q, K, V agree iff σ is linear."""
    torch.manual_seed(5)
    gated = GatedMLP(6, 10, activation=name, dtype=F64)
    symmetric = BilinearMLP.from_weights(gated.Q.detach(), gated.K.detach(), gated.V.detach(), activation=name)
    x = inputs(11, 32, 6)
    with torch.no_grad():
        difference = (gated(x) - symmetric(x)).abs()
        bound = forward_error_bound(gated, x) + forward_error_bound(symmetric, x)
    within = bool((difference <= bound).all())
    assert within is REGISTRY[name].is_linear


# ---------------------------------------------------------------------------
# prop-llama-t5: the published block under PyTorch's Linear convention


@pytest.mark.parametrize("activation", ["silu", "gelu_tanh", None])
def test_prop_llama_t5_symbolic_mapping(activation):
    """prop-llama-t5: w_down(σ(w_gate(x)) ⊙ w_up(x)) = GatedMLP(Q = w_gate, K = w_up, V = w_downᵀ)."""
    assert symbolic.linear_gated_block_identity(3, 2, 2, activation) == sp.zeros(1, 2)


def test_prop_llama_t5_swapped_mapping_fails():
    """prop-llama-t5: the swapped assignment Q = w_up, K = w_gate is wrong for SiLU, harmless for the identity."""
    assert symbolic.linear_gated_block_identity(1, 1, 1, "silu", swap_gate_up=True) != sp.zeros(1, 1)
    assert symbolic.linear_gated_block_identity(2, 2, 1, "identity", swap_gate_up=True) == sp.zeros(1, 1)


def test_prop_llama_t5_published_activations():
    """prop-llama-t5: the registry's silu and gelu_tanh are the published z·sigmoid(z) and T5's gelu_new."""
    z = sp.Symbol("z", real=True)
    silu = z / (1 + sp.exp(-z))
    gelu_new = sp.Rational(1, 2) * z * (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (z + sp.Rational(44715, 10**6) * z**3)))
    assert sp.simplify(silu - REGISTRY["silu"].expr) == 0
    assert sp.simplify(gelu_new - REGISTRY["gelu_tanh"].expr) == 0


# ---------------------------------------------------------------------------
# the chapter's helpers: decision_text, activation_properties, markdown_table, heatmap_grid


def test_decision_text():
    assert symbolic.decision_text(Decision(True, "proof")) == "yes (proof)"
    z, alpha = sp.Symbol("z"), sp.Symbol("alpha")
    refuted = Decision(False, "counterexample", {z: sp.Integer(1), alpha: sp.Integer(2)}, sp.Integer(1))
    assert symbolic.decision_text(refuted) == r"no ($z = 1$, $\alpha = 2$)"
    assert symbolic.decision_text(Decision(None, "undecided")) == "undecided"
    with pytest.raises(TypeError, match="decision: expected a symbreak.decide.Decision, got bool"):
        symbolic.decision_text(True)


def test_activation_properties():
    assert symbolic.activation_properties("identity") == ["`identity`", "$z$", *["yes (proof)"] * 3]
    name, latex, linear, odd, homogeneous = symbolic.activation_properties("relu")
    assert (name, latex) == ("`relu`", r"$\max\left(0, z\right)$")
    assert (linear, odd) == ("no ($z = -1$)", "no ($z = 1$)")
    assert homogeneous == "yes (proof)"
    with pytest.raises(ValueError, match="activation: expected one of"):
        symbolic.activation_properties("swishy")


def test_new_symbolic_functions_reject_bad_sizes():
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        symbolic.gated_symmetric_layer_difference(0, 1, 1)
    with pytest.raises(ValueError, match="m: expected an int >= 1, got 1.5"):
        symbolic.linear_gated_block_identity(2, 1.5, 1)
    with pytest.raises(TypeError, match="swap_gate_up: expected a bool, got int"):
        symbolic.linear_gated_block_identity(1, 1, 1, swap_gate_up=1)


def test_markdown_table():
    table = markdown_table(["a", "b"], [["1", "x|y"], ["$z$", "w"]])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 1 | x\\|y |", "| $z$ | w |"]
    with pytest.raises(ValueError, match=r"rows\[0\]: expected 2 cells like the header"):
        markdown_table(["a", "b"], [["1"]])
    with pytest.raises(TypeError, match=r"rows\[0\]: expected str cells"):
        markdown_table(["a"], [[1]])
    with pytest.raises(TypeError, match="header: expected a non-empty sequence of str"):
        markdown_table([], [])


def test_heatmap_grid_draws_every_panel():
    fields = np.stack([np.stack([np.outer(np.arange(4.0), np.arange(5.0)) * s for s in (1, -1, 0)]) for _ in range(2)])
    fig, axes = figure(ncols=3, nrows=2)
    titles = [["f", "g", "h"], ["f", "g", "h"]]
    heatmap_grid(fig, axes, fields, titles, extent=(-1.0, 1.0, -1.0, 1.0), xlabel="$a$", ylabel="$b$")
    assert all(len(ax.images) == 1 and ax.get_xlabel() == "$a$" and ax.get_ylabel() == "$b$" for ax in axes)
    assert len(fig.axes) == 6 + 2  # one colour bar per row
    image = axes[0].images[0]
    assert image.get_clim() == (-12.0, 12.0)  # symmetric about 0, shared by the row
    matplotlib.pyplot.close(fig)
    fig, axes = figure(ncols=3, nrows=2)
    heatmap_grid(fig, axes, fields, titles, extent=(-1.0, 1.0, -1.0, 1.0), xlabel="$a$", ylabel="$b$", label_outer=True)
    assert [ax.get_xlabel() for ax in axes] == ["", "", "", "$a$", "$a$", "$a$"]
    assert [ax.get_ylabel() for ax in axes] == ["$b$", "", "", "$b$", "", ""]
    matplotlib.pyplot.close(fig)


def test_heatmap_grid_rejects_bad_input():
    fig, axes = figure(ncols=2)
    with pytest.raises(ValueError, match="fields: expected a 4-d array"):
        heatmap_grid(fig, axes, np.zeros((2, 3, 3)), [["a", "b"]], extent=(0, 1, 0, 1), xlabel="a", ylabel="b")
    with pytest.raises(ValueError, match="axes: expected rows·cols = 3 axes, got 2"):
        heatmap_grid(fig, axes, np.zeros((1, 3, 3, 3)), [["a", "b", "c"]], extent=(0, 1, 0, 1), xlabel="a", ylabel="b")
    with pytest.raises(ValueError, match="titles: expected 1 rows of 2 strings"):
        heatmap_grid(fig, axes, np.zeros((1, 2, 3, 3)), [["a"]], extent=(0, 1, 0, 1), xlabel="a", ylabel="b")
    with pytest.raises(ValueError, match="contour_levels: expected an int >= 0, got -1"):
        heatmap_grid(
            fig,
            axes,
            np.zeros((1, 2, 3, 3)),
            [["a", "b"]],
            extent=(0, 1, 0, 1),
            xlabel="a",
            ylabel="b",
            contour_levels=-1,
        )
    matplotlib.pyplot.close(fig)
