"""The symmetrised gated control ½[σ(a)b + σ(b)a] computes its formula and keeps the exchange symmetry."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import inputs, seeds, sizes
from symbreak import activations as A
from symbreak.layers import GatedMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP
from symbreak.numerics import forward_error_bound, gamma, unit_roundoff

GATES = ["silu", "gelu", "relu", "sigmoid", "tanh", "identity"]


def _bound(layer: SymmetrisedGatedMLP, x: torch.Tensor) -> torch.Tensor:
    """A bound on ``|fl(f(x)) − f(x)|`` of the symmetrised layer, from the gated layer's bounds.

    ``f = ½(g₁ + g₂)`` with ``g₁ = (σ(a) ⊙ b) V`` and ``g₂ = (σ(b) ⊙ a) V`` (the
    gated layers of ``(Q, K)`` and ``(K, Q)``).  The layer rounds the two
    hidden products as the gated layers do, adds them once (relative error
    ``u`` on ``|h₁| + |h₂|``) and halves exactly, then multiplies by ``V``:
    ``β = ½(β₁ + β₂) + 2u(1 + γ_m) ((|h₁| + |h₂|) |V|)``.
    """
    g1 = GatedMLP.from_weights(layer.Q, layer.K, layer.V, layer.activation)
    g2 = GatedMLP.from_weights(layer.K, layer.Q, layer.V, layer.activation)
    with torch.no_grad():
        h = (g1.hidden(x).abs() + g2.hidden(x).abs()) @ layer.V.abs()
        u, gm = unit_roundoff(x.dtype), gamma(layer.m, x.dtype)
        return 0.5 * (forward_error_bound(g1, x) + forward_error_bound(g2, x)) + 2 * u * (1 + gm) * h


def _swapped(layer: SymmetrisedGatedMLP) -> SymmetrisedGatedMLP:
    return SymmetrisedGatedMLP.from_weights(layer.K, layer.Q, layer.V, layer.activation)


@given(d=sizes, m=sizes, d_out=sizes, seed=seeds, act=st.sampled_from(GATES))
def test_formula_against_a_unit_by_unit_reference(d, m, d_out, seed, act):
    """The layer is Σ_j ½[σ(x·q_j)(x·k_j) + σ(x·k_j)(x·q_j)] v_j, computed unit by unit in float64."""
    torch.manual_seed(seed)
    layer = SymmetrisedGatedMLP(d, m, d_out, activation=act)
    x = inputs(seed, 5, d).float()
    sigma = A.get(act)
    Q, K, V, x64 = (t.detach().double() for t in (layer.Q, layer.K, layer.V, x))
    ref = sum(
        0.5 * (sigma(x64 @ Q[j]) * (x64 @ K[j]) + sigma(x64 @ K[j]) * (x64 @ Q[j])).unsqueeze(-1) * V[j]
        for j in range(m)
    )
    got = layer(x).detach().double()
    # the float64 reference's own error is far below the float32 bound
    assert bool(((got - ref).abs() <= _bound(layer, x).double() * 1.01).all())


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(GATES))
def test_exchange_leaves_the_function_unchanged_within_rounding(d, m, seed, act):
    """Q ↔ K gives the same exact function: the two computations differ by at most β_f + β_g."""
    torch.manual_seed(seed)
    layer = SymmetrisedGatedMLP(d, m, activation=act)
    swapped = _swapped(layer)
    x = inputs(seed, 7, d).float()
    with torch.no_grad():
        difference = (swapped(x) - layer(x)).abs()
    assert bool((difference <= _bound(layer, x) + _bound(swapped, x)).all())


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(GATES))
def test_exchange_leaves_the_computed_output_unchanged_bit_for_bit(d, m, seed, act):
    """prop-symmetrised-exchange in floating point: the two factors come from two products of the same shape, so
    Q ↔ K swaps them exactly and σ(a)b + σ(b)a is the same two rounded products added in the other order."""
    torch.manual_seed(seed)
    layer = SymmetrisedGatedMLP(d, m, activation=act)
    x = inputs(seed, 33, d).float()
    with torch.no_grad():
        a, b = layer.factors(x)
        a2, b2 = _swapped(layer).factors(x)
        assert torch.equal(a2, b) and torch.equal(b2, a)
        assert torch.equal(_swapped(layer)(x), layer(x))


def test_the_bound_detects_a_broken_exchange():
    """The gated form (σ on one factor) changes under Q ↔ K by far more than that bound: the test can fail."""
    torch.manual_seed(0)
    gated = GatedMLP(16, 12, activation="silu")
    layer = SymmetrisedGatedMLP.from_weights(gated.Q, gated.K, gated.V, "silu")
    x = inputs(0, 7, 16).float()
    with torch.no_grad():
        broken = (GatedMLP.from_weights(gated.K, gated.Q, gated.V, "silu")(x) - gated(x)).abs()
    assert not bool((broken <= _bound(layer, x) + _bound(_swapped(layer), x)).all())


def test_symmetrised_is_the_mean_of_the_gated_form_and_its_exchange():
    """f = ½(g(Q, K) + g(K, Q)) with g the gated layer, and with σ = id f is the bilinear layer g."""
    torch.manual_seed(1)
    layer = SymmetrisedGatedMLP(8, 5, 3, activation="gelu", dtype=torch.float64)
    g1 = GatedMLP.from_weights(layer.Q, layer.K, layer.V, "gelu")
    g2 = GatedMLP.from_weights(layer.K, layer.Q, layer.V, "gelu")
    x = torch.randn(4, 6, 8, dtype=torch.float64)
    torch.testing.assert_close(layer(x), 0.5 * (g1(x) + g2(x)), rtol=1e-12, atol=1e-12)
    linear = SymmetrisedGatedMLP.from_weights(layer.Q, layer.K, layer.V, "identity")
    bilinear = GatedMLP.from_weights(layer.Q, layer.K, layer.V, "identity")
    torch.testing.assert_close(linear(x), bilinear(x), rtol=1e-12, atol=1e-12)


def test_shapes_parameters_and_constructor_conventions():
    """(batch, time, d) → (batch, time, d_out); three m×d-sized matrices; the gated form's defaults."""
    layer = SymmetrisedGatedMLP(6, 4, 5)
    assert layer.activation.name == "silu"
    assert [n for n, _ in layer.named_parameters()] == ["Q", "K", "V"]
    assert sum(p.numel() for p in layer.parameters()) == 4 * 6 * 2 + 4 * 5
    assert layer(torch.randn(2, 3, 6)).shape == (2, 3, 5)
    assert isinstance(SymmetrisedGatedMLP.from_weights(layer.Q, layer.K, layer.V), SymmetrisedGatedMLP)
    assert not isinstance(layer, GatedMLP)  # no bound or swap test of the gated form applies by accident
    with torch.no_grad():  # the blocked evaluation of a large batch gives the same rows
        big = torch.randn(300_000, 6)
        torch.testing.assert_close(layer(big)[:5], layer(big[:5]))


def test_bad_input_is_rejected_with_its_name():
    with pytest.raises(TypeError, match="d: expected a positive int"):
        SymmetrisedGatedMLP(2.0, 3)
    with pytest.raises(ValueError, match="m: expected an int >= 1"):
        SymmetrisedGatedMLP(2, 0)
    with pytest.raises(ValueError, match="K: expected the shape of Q"):
        SymmetrisedGatedMLP.from_weights(torch.zeros(3, 2), torch.zeros(2, 2), torch.zeros(3, 2))
    with pytest.raises(ValueError, match="x: expected last dimension d = 2"):
        SymmetrisedGatedMLP(2, 3)(torch.zeros(4, 3))
