"""The rounding bound holds: float32 layers stay within it of their float64 evaluation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, seeds
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma, margin, unit_roundoff, within_bound


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
