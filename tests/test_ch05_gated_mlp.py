"""Chapter 5 (the gated MLP): prop-gated-rank-one, prop-llama-t5, and the helpers the chapter adds.

The facts asserted here are the chapter's claims, on the package's layers and
symbolic identities:

* ``prop-gated-rank-one`` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V = Σ_j σ(x·q_j)(x·k_j) v_j``,
  and the gated and symmetric rank-1 forms with the same weights agree iff σ
  is linear;
* ``prop-gate-times-score`` — for ``σ(z) = z·s(z)`` the gated layer is
  ``Σ_j s(x·q_j)(x q_jᵀ k_j xᵀ) v_j``, checked against an exact (mpmath)
  evaluation with gates written from the activations' definitions;
* ``prop-gated-vs-symmetric-classes`` — symmetric rank-1 layers are even, single
  gated units with non-odd σ are not, and ``silu(x²)`` is no SwiGLU layer;
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
from symbreak.numerics import forward_error_bound, gate_times_score_error
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


@pytest.mark.parametrize("name", [n for n in REGISTRY if not REGISTRY[n].is_linear])
def test_prop_gated_rank_one_converse_construction(name):
    """prop-gated-rank-one: the proof's one-unit layers (d = m = d_out = 1, x = 1, Q = a, K = b, V = 1) differ.

    The torch layers are evaluated at the decided counterexample (a, b) and compared with σ(a) b and σ(ab)
    computed by the registry's sympy expression, so the layers' own arithmetic is tested, not the proof's algebra.
    """
    decision = decide_zero(*symbolic.gated_symmetric_unit_difference(name))
    a, b = (float(v) for v in decision.witness.values())
    one = torch.ones(1, 1, dtype=F64)
    gated = GatedMLP.from_weights(a * one, b * one, one, activation=name)
    symmetric = BilinearMLP.from_weights(a * one, b * one, one, activation=name)
    z = sp.Symbol("z", real=True)
    expr = REGISTRY[name].expr
    expected_gated, expected_symmetric = float(expr.subs(z, a) * b), float(expr.subs(z, a * b))
    with torch.no_grad():
        out_gated, out_symmetric = gated(one).item(), symmetric(one).item()
    assert out_gated == pytest.approx(expected_gated, rel=1e-12, abs=1e-300)
    assert out_symmetric == pytest.approx(expected_symmetric, rel=1e-12, abs=1e-300)
    assert abs(out_gated - out_symmetric) > 1e-6  # the two outputs differ by the decided |value| ≥ 0.1 here
    assert abs(float(decision.value)) > 1e-6


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
# prop-gate-times-score: σ(z) = z·s(z) gives σ(a) b = s(a)(ab)


def test_prop_gate_times_score_symbolic_layer():
    """prop-gate-times-score: the gated layer with σ(z) = z s(z) is Σ_j s(x·q_j)(x q_jᵀ k_j xᵀ) v_j, s undefined."""
    assert symbolic.gate_times_score_identity(2, 3, 2) == sp.zeros(1, 2)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_prop_gate_times_score_gate_exists_iff_sigma_vanishes_at_zero(name):
    """prop-gate-times-score, part 1: a gate exists iff σ(0) = 0; where it does, σ(z) − z s(z) ≡ 0 is proven."""
    sigma_at_zero = float(REGISTRY[name](torch.zeros(1, dtype=F64)))  # torch's own σ(0), not the sympy one
    assert symbolic.vanishes_at_zero(name) is (sigma_at_zero == 0.0)
    assert (name in symbolic.GATES) is symbolic.vanishes_at_zero(name)
    if name in symbolic.GATES:
        decision = decide_zero(*symbolic.gate_factorisation(name))
        assert decision.holds is True and decision.method == "proof"


def test_prop_gate_times_score_wrong_gate_is_refuted():
    """prop-gate-times-score: the decision can fail — GELU against SiLU's gate is refuted."""
    z = sp.Symbol("z", real=True)
    decision = decide_zero(REGISTRY["gelu"].expr - z * symbolic.GATES["silu"], (z,))
    assert decision.holds is False


def test_prop_gate_times_score_gate_ranges():
    """prop-gate-times-score, part 3: gates in [0, 1] on a sample except abs's sign z, which takes both signs."""
    points = [sp.Rational(k, 4) for k in range(-40, 41) if k]
    for name in symbolic.GATES:
        low, high = symbolic.gate_range(name, points)
        if name == "abs":
            assert (low, high) == (-1.0, 1.0)
        else:
            assert 0.0 <= low <= high <= 1.0
    assert symbolic.gate_range("relu", points) == (0.0, 1.0)
    with pytest.raises(ValueError, match="points: expected non-zero rationals, got 0"):
        symbolic.gate_range("relu", [0])
    with pytest.raises(ValueError, match="gate: expected one of"):
        symbolic.gate_range("sigmoid", points)


@pytest.mark.parametrize("name", ["identity", "relu", "gelu", "gelu_tanh", "silu"])
def test_prop_gate_times_score_exact_evaluation(name):
    """prop-gate-times-score: GatedMLP is within its rounding bound of the exact Σ_j s(a_j)(a_j b_j) v_j."""
    torch.manual_seed(3)
    layer = GatedMLP(5, 6, d_out=2, activation=name, dtype=F64)
    x = inputs(17, 9, 5)
    with torch.no_grad():
        bound = forward_error_bound(layer, x)
    assert bool((gate_times_score_error(layer, x) <= bound).all())


def test_prop_gate_times_score_exact_evaluation_control():
    """prop-gate-times-score: the exact side with another activation's gate is far outside the bound."""
    torch.manual_seed(4)
    layer = GatedMLP(5, 6, d_out=2, activation="gelu", dtype=F64)
    x = inputs(18, 9, 5)
    with torch.no_grad():
        bound = forward_error_bound(layer, x)
    assert bool((gate_times_score_error(layer, x, gate="silu") > bound).any())
    with pytest.raises(ValueError, match="expected a gated layer with activation in"):
        gate_times_score_error(GatedMLP(2, 2, activation="sigmoid", dtype=F64), inputs(1, 2, 2))
    with pytest.raises(TypeError, match="layer: expected a float64 GatedMLP, got BilinearMLP"):
        gate_times_score_error(BilinearMLP(2, 2, dtype=F64), inputs(1, 2, 2))
    with pytest.raises(ValueError, match=r"x: expected a tensor of shape \(n, 5\)"):
        gate_times_score_error(layer, inputs(1, 2, 4))


# ---------------------------------------------------------------------------
# prop-gated-vs-symmetric-classes: parity and the even part of the gate


@pytest.mark.parametrize(("activation", "m"), [(None, 2), ("relu", 3), ("silu", 2)])
def test_prop_gated_vs_symmetric_classes_symmetric_is_even(activation, m):
    """prop-gated-vs-symmetric-classes, item 1: the symmetric rank-1 layer of width m is even, symbolically."""
    difference = symbolic.symmetric_parity_identity(2, m, 2, activation)
    assert difference.shape == (1, 2) and all(entry == 0 for entry in difference)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_prop_gated_vs_symmetric_classes_gated_unit_even_iff_odd(name):
    """prop-gated-vs-symmetric-classes, item 2: σ(z) z is even exactly for the odd registered σ."""
    decision = decide_zero(*symbolic.gated_unit_parity_difference(name))
    assert decision.holds is REGISTRY[name].is_odd
    if not decision.holds:
        z0 = float(next(iter(decision.witness.values())))
        x = torch.tensor([[z0], [-z0]], dtype=F64)
        one = torch.ones(1, 1, dtype=F64)
        unit = GatedMLP.from_weights(one, one, one, activation=name)
        with torch.no_grad():
            out = unit(x).flatten()
        assert abs(out[0] - out[1]) > 1e-3  # the decided value z0 (σ(z0) + σ(−z0)) is at least 0.46 here


@given(seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_prop_gated_vs_symmetric_classes_symmetric_layer_even_in_floating_point(seed, act):
    """prop-gated-vs-symmetric-classes, item 1: negation is exact, so BilinearMLP gives identical f(−x), f(x)."""
    torch.manual_seed(seed)
    layer = BilinearMLP(4, 6, d_out=2, activation=act, dtype=F64)
    x = inputs(seed + 1, 5, 4)
    with torch.no_grad():
        assert torch.equal(layer(-x), layer(x))


def test_prop_gated_vs_symmetric_classes_gate_complement():
    """prop-gated-vs-symmetric-classes, item 3: s(z) + s(−z) = 1 for ReLU, GELU, GELU-tanh, SiLU, not for the rest."""
    holds = {name: decide_zero(*symbolic.gate_complement(name)).holds for name in symbolic.GATES}
    assert {n for n, h in holds.items() if h} == {"relu", "gelu", "gelu_tanh", "silu"}
    assert all(h is False for n, h in holds.items() if n not in {"relu", "gelu", "gelu_tanh", "silu"})


def test_prop_gated_vs_symmetric_classes_fit_bound():
    """prop-gated-vs-symmetric-classes, items 3 and 4: no SwiGLU/GEGLU fit beats the bound; ReGLU fits exactly."""
    t = torch.arange(1, 61, dtype=F64) / 20
    t = torch.cat([-t.flip(0), t])
    slopes = torch.arange(-40, 41, dtype=F64) / 5
    for name in ("silu", "gelu"):
        fit = symbolic.even_unit_fit(name, slopes, t)
        assert fit["bound"] > 0.01 * fit["target"]
        assert fit["residual"] >= fit["bound"] - 1e-9 * fit["target"]
    relu = symbolic.even_unit_fit("relu", slopes, t)
    assert relu["bound"] == 0.0 and relu["residual"] <= 1e-9 * relu["target"]
    with pytest.raises(ValueError, match="t: expected non-zero points symmetric about 0"):
        symbolic.even_unit_fit("silu", slopes, t[1:])
    with pytest.raises(ValueError, match="slopes: expected a non-empty 1-d float64 tensor"):
        symbolic.even_unit_fit("silu", slopes.float(), t)
    with pytest.raises(ValueError, match="name: expected one of"):
        symbolic.even_unit_fit("swishy", slopes, t)


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
    assert symbolic.decision_text(refuted) == "no\u00a0$(z = 1, \\alpha = 2)$"  # one formula, held to "no"
    assert symbolic.decision_text(Decision(None, "undecided")) == "undecided"
    with pytest.raises(TypeError, match="decision: expected a symbreak.decide.Decision, got bool"):
        symbolic.decision_text(True)


def test_activation_properties():
    assert symbolic.activation_properties("identity") == ["identity", "`identity`", "$z$", *["yes (proof)"] * 3]
    shown, name, latex, linear, odd, homogeneous = symbolic.activation_properties("relu")
    assert (shown, name, latex) == ("ReLU", "`relu`", r"$\max\left(0, z\right)$")
    assert (linear, odd) == ("no\u00a0$(z = -1)$", "no\u00a0$(z = 1)$")
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


def test_markdown_table_right_aligns_columns_of_numbers():
    rows = [
        ["ReLU", "0.123 ± 0.004", "< 0.001", "5/5"],
        ["GELU", "—", "1,088", "4/5"],
        ["SiLU", "-2e-3", "3.5\u00a0%", "x"],
    ]
    table = markdown_table(["form", "error", "p", "early"], rows)
    assert table.splitlines()[1] == "|---|---:|---:|---|"
    assert markdown_table(["a"], [["—"], [""]]).splitlines()[1] == "|---|"  # no number at all: left
