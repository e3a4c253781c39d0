"""Helpers shared by the test modules (strategies and derived-tolerance assertions)."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from symbreak.activations import names
from symbreak.layers import FeedForward
from symbreak.numerics import forward_error_bound, gamma

ACTIVATIONS = names()

sizes = st.integers(min_value=1, max_value=6)
seeds = st.integers(min_value=0, max_value=2**31 - 1)
nonzero_alpha = st.floats(min_value=-8.0, max_value=8.0, allow_nan=False).filter(lambda a: abs(a) >= 1 / 8)
positive_alpha = st.floats(min_value=1 / 8, max_value=8.0)


def inputs(seed: int, n: int, d: int) -> torch.Tensor:
    """``n`` standard normal inputs of width ``d`` in float64, from ``seed``."""
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def equal_within_rounding(f: FeedForward, g: FeedForward, x: torch.Tensor, param_rel_error: float = 0.0) -> bool:
    """``|f(x) − g(x)| ≤ β_f(x) + β_g(x)`` elementwise: equal as exact functions, up to derived rounding.

    ``g``'s parameters may carry a relative error ``param_rel_error`` from the
    transformation that produced them.
    """
    with torch.no_grad():
        diff = (f(x) - g(x)).abs()
        bound = forward_error_bound(f, x) + forward_error_bound(g, x, param_rel_error)
    return bool((diff <= bound).all())


def exceeds_rounding(f: FeedForward, g: FeedForward, x: torch.Tensor, param_rel_error: float = 0.0) -> bool:
    """Some output differs by more than the rounding bound: the exact functions differ."""
    return not equal_within_rounding(f, g, x, param_rel_error)


def transform_error(dtype: torch.dtype, operations: int = 2) -> float:
    """Relative error of a parameter produced by ``operations`` rounded operations."""
    return gamma(operations, dtype)
