"""symbreak.dynamics.drift: step sweeps, a run's drift and allowance, the decay rates and the one-unit converse."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from helpers import gelu_teacher_data, small_layer
from symbreak import dynamics as D

F64 = torch.float64

pytestmark = pytest.mark.usefixtures("one_thread")


def _query_key_gradients(layer, X, Y) -> tuple[torch.Tensor, torch.Tensor]:
    """``(‖g_{q_j}‖², ‖g_{k_j}‖²)`` per unit of a rank-1 BilinearMLP, from L = (1/2n) Σ ‖f(x_i) − y_i‖² by autograd."""
    loss = 0.5 * ((layer(X) - Y) ** 2).sum() / X.shape[0]
    g_q, g_k = torch.autograd.grad(loss, [layer.Q, layer.K])
    return (g_q[0] ** 2).sum(-1), (g_k[0] ** 2).sum(-1)


def test_step_sweep_one_step_is_eta_squared_times_the_gradient_difference():
    """thm-conservation, λ = 0: one step moves ‖q_j‖² − ‖k_j‖² by exactly η²(‖g_q‖² − ‖g_k‖²) (to 1e-8 relative)."""
    X, Y = gelu_teacher_data(0)
    torch.manual_seed(2)
    layer = small_layer("rank1", "silu")
    sweep = D.step_sweep(layer, X, Y, duration=0.5, steps=[5, 10, 20], pair="qk")
    assert sweep.steps == [5, 10, 20] and sweep.lrs == [0.1, 0.05, 0.025]
    gq, gk = _query_key_gradients(layer, X, Y)
    for lr, drift in zip(sweep.lrs, sweep.one_step, strict=True):
        expected = float((lr**2 * (gq - gk)).abs().max())
        assert drift == pytest.approx(expected, rel=1e-8)
    assert sweep.one_step_slope == pytest.approx(2.0, abs=1e-6)
    assert len(sweep.fixed_time) == 3 and all(v > 0 for v in sweep.fixed_time)


def test_drift_and_allowance_of_one_step():
    """After one step the drift is |c_j(1) − c_j(0)| and the allowance η²‖∇L(θ_0)‖², both computed by hand."""
    X, Y = gelu_teacher_data(1)
    torch.manual_seed(3)
    layer = small_layer("gated", "silu")
    start = copy.deepcopy(layer)
    lr = 0.07
    history = D.train(layer, X, Y, lr=lr, steps=1)
    drift, allowance = D.drift_and_allowance(history, "kv", lr=lr)
    loss = 0.5 * ((start(X) - Y) ** 2).sum() / X.shape[0]
    grad_sq = sum(float((g**2).sum()) for g in torch.autograd.grad(loss, list(start.parameters())))
    assert allowance == pytest.approx(lr**2 * grad_sq, rel=1e-12)

    def charge(m):
        return ((m.K**2).sum(-1) - (m.V**2).sum(-1)).detach()

    assert drift == pytest.approx(float((charge(layer) - charge(start)).abs().max()), rel=1e-12)


def test_drift_stays_within_the_allowance_where_the_law_holds():
    """thm-conservation: SwiGLU conserves ‖k_j‖² − ‖v_j‖², so its drift over a run is at most η² Σ_t ‖∇L_t‖²."""
    X, Y = gelu_teacher_data(2)
    torch.manual_seed(4)
    history = D.train(small_layer("gated", "silu"), X, Y, lr=0.05, steps=40)
    drift, allowance = D.drift_and_allowance(history, "kv", lr=0.05)
    assert 0 < drift <= allowance


def test_drift_and_allowance_needs_every_step():
    X, Y = gelu_teacher_data(0)
    history = D.train(small_layer("gated", "silu"), X, Y, lr=0.05, steps=10, record_every=5)
    with pytest.raises(ValueError, match="history: expected a run recorded at every step"):
        D.drift_and_allowance(history, "kv", lr=0.05)


def test_momentum_flow_settings_discretise_the_flow():
    """η = h², μ = 1 − γh with h = γ/S: S√η = γ (time γ·... covered) and (1 − μ)/√η = γ."""
    lrs, momenta = D.momentum_flow_settings([10, 40], 2.0)
    for steps, lr, mu in zip([10, 40], lrs, momenta, strict=True):
        assert steps * math.sqrt(lr) == pytest.approx(2.0, rel=1e-14)
        assert (1 - mu) / math.sqrt(lr) == pytest.approx(2.0, rel=1e-14)
    with pytest.raises(ValueError, match="steps: expected a non-empty sequence of ints >= 1"):
        D.momentum_flow_settings([0], 2.0)
    with pytest.raises(ValueError, match="damping: expected a real number > 0"):
        D.momentum_flow_settings([10], -1.0)


def test_decay_rates_of_exact_exponentials():
    """c_j(t) = c_j(0) e^{−ρ_j t} recorded at t = s η gives back ρ_j, per unit, of either sign of c."""
    lr, rho, c0 = 0.02, torch.tensor([0.5, 0.8], dtype=F64), torch.tensor([2.0, -3.0], dtype=F64)
    steps = [0, 5, 10, 15, 20]
    history = D.History(steps=steps, kv=[c0 * torch.exp(-rho * s * lr) for s in steps])
    assert D.decay_rates(history, "kv", lr=lr) == pytest.approx([0.5, 0.8], rel=1e-12)


def test_discrete_decay_rate():
    """−2 ln(1 − ηλ)/η: exactly the rate of (1 − ηλ)² per step; 2λ + ηλ² + (2/3)η²λ³ to O(η³λ⁴)."""
    lr, lam = 0.02, 0.25
    rate = D.discrete_decay_rate(lr, lam)
    assert math.exp(-rate * lr) == pytest.approx((1 - lr * lam) ** 2, rel=1e-14)
    assert abs(rate - (2 * lam + lr * lam**2 + 2 / 3 * lr**2 * lam**3)) < lr**3 * lam**4
    with pytest.raises(ValueError, match="lr, weight_decay: expected η > 0 and 0 < ηλ < 1"):
        D.discrete_decay_rate(0.5, 2.0)


def _silu_euler(z: float) -> tuple[float, float]:
    """SiLU: σ(z) = z s(z) and E(z) = z σ'(z) − σ(z) = z² s(z)(1 − s(z)), s the logistic sigmoid."""
    s = 1 / (1 + math.exp(-z))
    return z * s, z * z * s * (1 - s)


def _gelu_euler(z: float) -> tuple[float, float]:
    """GELU: σ(z) = z Φ(z) and E(z) = z² φ(z), Φ and φ the standard normal distribution and density."""
    return z * (1 + math.erf(z / math.sqrt(2))) / 2, z * z * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize(("activation", "sigma_and_euler"), [("silu", _silu_euler), ("gelu", _gelu_euler)])
@pytest.mark.parametrize(("z0", "v", "y"), [(1.0, 1.0, 0.0), (0.7, 1.5, 0.2), (-1.3, 0.5, 1.0)])
def test_one_unit_gap_is_the_proofs_prediction(activation, sigma_and_euler, z0, v, y):
    """thm-invariant-diagonal (converse): one step from q = k = z0 opens the gap η |r v E(z0)|, r = σ(z0) z0 v − y."""
    lr = 0.1
    sigma, euler = sigma_and_euler(z0)
    expected = lr * abs((sigma * z0 * v - y) * v * euler)
    assert D.one_unit_gap(z0, lr=lr, activation=activation, v=v, y=y) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("activation", ["relu", "identity"])
def test_one_unit_gap_vanishes_for_homogeneous_sigma(activation):
    """E ≡ 0: the two computed gradients are the same floats, so the gap stays exactly 0."""
    assert D.one_unit_gap(1.0, lr=0.1, activation=activation, y=0.3) == 0.0


def test_sweep_and_gap_bad_arguments():
    X, Y = gelu_teacher_data(0)
    layer = small_layer("rank1", "silu")
    with pytest.raises(ValueError, match="steps: expected a non-empty sequence of ints >= 1"):
        D.step_sweep(layer, X, Y, duration=1.0, steps=[], pair="qk")
    with pytest.raises(ValueError, match="duration: expected a real number > 0"):
        D.step_sweep(layer, X, Y, duration=0, steps=[1, 2], pair="qk")
    with pytest.raises(TypeError, match="z0: expected a real number, got str"):
        D.one_unit_gap("1", lr=0.1, activation="silu")
    with pytest.raises(ValueError, match="lr: expected a positive learning rate"):
        D.decay_rates(D.History(steps=[0, 1], kv=[torch.ones(1), torch.ones(1)]), "kv", lr=0)
