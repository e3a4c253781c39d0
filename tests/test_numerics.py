"""The rounding bound holds: float32 layers stay within it of their float64 evaluation."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, seeds
from symbreak.activations import REGISTRY, z
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import (
    EIGH_GROWTH,
    ELEMENTWISE_ULPS,
    LINEAR_TAILS,
    eigh_backward_error,
    forward_error_bound,
    gamma,
    low_rank_error_tolerance,
    margin,
    unit_roundoff,
    within_bound,
)


def _as64(layer):
    params = [p.detach().double() for p in layer.parameters()]
    return type(layer).from_weights(*params, activation=layer.activation)


@given(seed=seeds, act=st.sampled_from(ACTIVATIONS), form=st.sampled_from(["kv", "bilinear", "gated"]))
def test_float32_error_within_bound(seed, act, form):
    torch.manual_seed(seed)
    layer = {
        "kv": KeyValueMLP(16, 32, activation=act),
        "bilinear": BilinearMLP(16, 32, rank=2, activation=act),
        "gated": GatedMLP(16, 32, activation=act),
    }[form]
    x = torch.randn(64, 16)
    with torch.no_grad():
        err = (layer(x).double() - _as64(layer)(x.double())).abs()
    # the float64 value is itself within its (2^-29 times smaller) bound of the exact one
    assert bool((err <= forward_error_bound(layer, x).double() + forward_error_bound(_as64(layer), x.double())).all())


def test_gamma_and_roundoff():
    assert unit_roundoff(torch.float64) == 2.0**-53
    assert gamma(2, torch.float32) == pytest.approx(2 * 2.0**-24, rel=1e-6)
    with pytest.raises(TypeError, match="dtype: expected a floating-point dtype"):
        unit_roundoff(torch.int64)


def test_within_bound_entry_by_entry():
    bound = torch.tensor([1.0, 2.0, 3.0])
    assert within_bound(torch.tensor([1.0, -2.0, 0.0]), bound)
    assert not within_bound(torch.tensor([0.0, 0.0, 3.5]), bound)


def test_margin_is_the_largest_share():
    assert margin(torch.tensor([0.5, 1.0]), torch.tensor([1.0, 4.0])) == 0.5
    assert margin(torch.zeros(2), torch.zeros(2)) == 0.0
    assert margin(torch.tensor([1e-300], dtype=torch.float64), torch.tensor([0.0])) == math.inf


def test_within_bound_bad_arguments():
    with pytest.raises(TypeError, match="difference: expected a tensor or a real number, got str"):
        within_bound("1", 1.0)
    with pytest.raises(ValueError, match="bound: expected non-negative entries"):
        within_bound(0.0, -1.0)


# --------------------------------------------------------------------------- the two assumptions behind every bound

#: The stated grid: step 1/128 over [−40, 40], and 1201 magnitudes from 1e-300 to 1e4 of each sign.
_MAGNITUDES = np.geomspace(1e-300, 1e4, 1201)
_GRID = np.concatenate([np.arange(-40 * 128, 40 * 128 + 1) / 128.0, _MAGNITUDES, -_MAGNITUDES])


def _mp(expr, order: int = 0):
    return sp.lambdify(z, sp.diff(expr, z, order) if order else expr, modules="mpmath")


def _ulps(name: str) -> float:
    """Worst ``|torch σ(s) − σ(s)| / (u max(|σ(s)|, L|s|))`` on the grid, σ(s) from mpmath at 40 digits."""
    act = REGISTRY[name]
    f = _mp(act.expr)
    with mpmath.workdps(40):
        ref = np.array([float(f(mpmath.mpf(float(s)))) for s in _GRID])
    got = act(torch.tensor(_GRID, dtype=torch.float64)).numpy()
    err = np.abs(got - ref)
    tail = LINEAR_TAILS.get(name)
    if tail is not None:  # the part the bound adds where torch returns z itself
        err = np.maximum(err - np.where(np.abs(_GRID) > tail, math.exp(-tail), 0.0), 0.0)
    scale = unit_roundoff(torch.float64) * np.maximum(np.abs(ref), act.lipschitz * np.abs(_GRID))
    return float(np.max(np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), np.where(err > 0, np.inf, 0.0))))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_torch_activations_within_elementwise_ulps_of_mpmath(name):
    """ELEMENTWISE_ULPS: torch's float64 σ is within 8 units of roundoff of max(|σ(s)|, L|s|) (mpmath reference).

    Worst cases found (x86-64, native): 0 (identity, ReLU, abs), 0.02 (leaky ReLU), 1.5 (tanh), 1.8 (GELU,
    tanh-GELU, SiLU), 2.2 (sigmoid), 2.0 (softplus once LINEAR_TAILS is subtracted; about 10⁶ without it).
    """
    assert _ulps(name) <= ELEMENTWISE_ULPS


def test_softplus_needs_its_linear_tail():
    """Without LINEAR_TAILS the 8-ulp assumption fails for softplus just above 20 (torch's threshold)."""
    s = torch.tensor([20.5], dtype=torch.float64)
    with mpmath.workdps(40):
        ref = float(mpmath.log(1 + mpmath.exp(mpmath.mpf(20.5))))
    err = abs(float(torch.nn.functional.softplus(s)) - ref)
    assert err > 1e5 * unit_roundoff(torch.float64) * 20.5 and err < math.exp(-20)


def _critical_sup(expr, start: float) -> mpmath.mpf:
    """``|σ'(z*)|`` at the root ``z*`` of σ'' nearest ``start`` (mpmath, 40 digits)."""
    d1, d2 = _mp(expr, 1), _mp(expr, 2)
    with mpmath.workdps(40):
        return abs(d1(mpmath.findroot(d2, mpmath.mpf(start))))


#: sup|σ'| from its maximiser: exact where known, else a root of σ'' found by mpmath near a stated start.
_SUP = {
    "identity": lambda e: mpmath.mpf(1),
    "relu": lambda e: mpmath.mpf(1),
    "leaky_relu": lambda e: mpmath.mpf(1),  # slopes 1 and 1/100
    "abs": lambda e: mpmath.mpf(1),
    "tanh": lambda e: mpmath.mpf(1),  # σ' = sech², largest at 0
    "sigmoid": lambda e: mpmath.mpf(1) / 4,  # σ' = s(1 − s) ≤ 1/4, equality at 0
    "softplus": lambda e: mpmath.mpf(1),  # σ' = sigmoid < 1, → 1 at +∞
    # GELU: σ'' = φ(z)(2 − z²), so z* = √2 exactly and sup = Φ(√2) + √2 φ(√2)
    "gelu": lambda e: mpmath.ncdf(mpmath.sqrt(2)) + mpmath.sqrt(2) * mpmath.npdf(mpmath.sqrt(2)),
    "gelu_tanh": lambda e: _critical_sup(e, 1.4),
    "silu": lambda e: _critical_sup(e, 2.4),
}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_lipschitz_from_the_grid_bounds_the_supremum(name):
    """Activation.lipschitz: sup|σ'| ≤ L ≤ (1 + 2·10⁻⁶) sup|σ'| (the grid argument of numerics' docstring).

    Also the tails: ``|σ'(±z)| ≤ L`` at ``z = 40·2^k``, ``k = 0..10`` (mpmath), and the grid's Taylor term
    ``½ (h/2)² max|σ'''|`` (over ``[−10, 10]``, step ``10⁻³``) is below ``10⁻⁷`` of the supremum.
    """
    act = REGISTRY[name]
    with mpmath.workdps(40):
        sup = _SUP[name](act.expr)
        L = mpmath.mpf(act.lipschitz)
        assert sup <= L <= sup * (1 + mpmath.mpf("2e-6"))
        if act.expr.has(sp.Max, sp.Min, sp.Abs):  # piecewise linear: the tails are linear pieces; slope = a chord
            f = _mp(act.expr)
            assert all(abs(f(mpmath.mpf(s + 1)) - f(mpmath.mpf(s))) <= L for s in (40, 10**6, -41, -(10**6) - 1))
            return
        d1, d3 = _mp(act.expr, 1), _mp(act.expr, 3)
        for k in range(11):
            for s in (40 * 2**k, -40 * 2**k):
                assert abs(d1(mpmath.mpf(s))) <= L
        third = max(abs(d3(mpmath.mpf(float(s)))) for s in np.arange(-10_000, 10_001, 7) / 1000.0)
        assert third * (mpmath.mpf("1e-4") / 2) ** 2 / 2 <= sup * mpmath.mpf("1e-7")


def test_eigh_backward_error_and_low_rank_tolerance():
    """The stated convention η = 64 d u, and δ = 2r/(1 − r), δ² = 2δ + δ² with r = √d η."""
    u = unit_roundoff(torch.float64)
    assert eigh_backward_error(3, torch.float64) == EIGH_GROWTH * 3 * u
    delta, delta_sq = low_rank_error_tolerance(4, torch.float64)
    r = 2 * EIGH_GROWTH * 4 * u
    assert delta == pytest.approx(2 * r / (1 - r), rel=1e-12) and delta_sq == pytest.approx(2 * delta + delta**2)
    with pytest.raises(ValueError, match="d: expected an int >= 1, got 0"):
        eigh_backward_error(0, torch.float64)


def test_softplus_bound_adds_its_tail_only_above_the_threshold():
    """LINEAR_TAILS: the bound of a softplus layer grows by e^{-20} where a score exceeds 20, nowhere else."""
    layer = KeyValueMLP.from_weights(torch.eye(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64), "softplus")
    x = torch.tensor([[1.0, 25.0]], dtype=torch.float64)
    bound = forward_error_bound(layer, x)
    assert float(bound[0, 1]) >= math.exp(-20) > 1e3 * float(bound[0, 0])
    with mpmath.workdps(40):
        exact = float(mpmath.log(1 + mpmath.exp(mpmath.mpf(25))))
    with torch.no_grad():
        assert abs(float(layer(x)[0, 1]) - exact) <= float(bound[0, 1])
