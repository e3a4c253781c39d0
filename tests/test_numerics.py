"""The rounding bound holds: float32 layers stay within it of their float64 evaluation."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, seeds
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import forward_error_bound, gamma, unit_roundoff


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
