"""symbreak.dynamics.floors: the rounding floors of a float32 loss, gradient and Hessian bound their float64 values."""

from __future__ import annotations

import copy

import pytest
import torch

from symbreak import dynamics as D
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP

F32, F64 = torch.float32, torch.float64


def _pair(form: str, act: str, seed: int):
    """A float32 layer with data, and the same numbers in float64 (whose rounding is 2⁻²⁹ times smaller)."""
    torch.manual_seed(seed)
    layer = {"rank1": BilinearMLP, "gated": GatedMLP, "kv": KeyValueMLP}[form](4, 3, 2, activation=act, dtype=F32)
    generator = torch.Generator().manual_seed(seed + 100)
    X = torch.randn(30, 4, generator=generator, dtype=F32)
    Y = torch.randn(30, 2, generator=generator, dtype=F32)
    exact = copy.deepcopy(layer).to(F64)
    return layer, X, Y, exact, X.to(F64), Y.to(F64)


CASES = [("rank1", "silu"), ("gated", "gelu"), ("kv", "relu")]


@pytest.mark.parametrize(("form", "act"), CASES)
def test_loss_rounding_bound_covers_the_float32_loss(form, act):
    layer, X, Y, exact, X64, Y64 = _pair(form, act, 1)
    computed = float(D.mse(layer, X, Y).detach())
    reference = float(D.mse(exact, X64, Y64).detach())
    bound = D.loss_rounding_bound(layer, X, Y)
    assert abs(computed - reference) <= bound
    assert bound < 1e3 * torch.finfo(F32).eps * reference  # a rounding-sized bound, not a loose one


@pytest.mark.parametrize(("form", "act"), CASES)
def test_gradient_rounding_floor_covers_the_float32_gradient(form, act):
    """‖ĝ − g‖ ≤ ε_fl, with g the float64 gradient of the same numbers."""
    layer, X, Y, exact, X64, Y64 = _pair(form, act, 2)
    theta = D.flat_params(layer).requires_grad_(True)
    (computed,) = torch.autograd.grad(D._loss_of_theta(layer, X, Y)(theta), theta)
    theta64 = D.flat_params(exact).requires_grad_(True)
    (reference,) = torch.autograd.grad(D._loss_of_theta(exact, X64, Y64)(theta64), theta64)
    assert float((computed.to(F64) - reference).norm()) <= D.gradient_rounding_floor(layer, X, Y)


@pytest.mark.parametrize(("form", "act"), CASES)
def test_hessian_rounding_bound_covers_the_float32_hessian(form, act):
    """‖Ĥ − H‖₂ ≤ η_H, with H the float64 Hessian of the same numbers."""
    layer, X, Y, exact, X64, Y64 = _pair(form, act, 3)
    difference = D.loss_hessian(layer, X, Y).to(F64) - D.loss_hessian(exact, X64, Y64)
    assert float(torch.linalg.matrix_norm(difference, ord=2)) <= D.hessian_rounding_bound(layer, X, Y)


def test_floors_check_their_data():
    layer, X, Y, *_ = _pair("gated", "gelu", 0)
    with pytest.raises(ValueError, match=r"X: expected shape \(n, d = 4\)"):
        D.loss_rounding_bound(layer, X[:, :3], Y)
    with pytest.raises(ValueError, match=r"Y: expected shape \(n = 30, d_out = 2\)"):
        D.gradient_rounding_floor(layer, X, Y[:, :1])
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        D.hessian_rounding_bound(torch.nn.Linear(4, 2), X, Y)
