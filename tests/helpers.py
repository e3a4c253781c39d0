"""Helpers shared by the test modules (strategies and derived-tolerance assertions)."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from symbreak.activations import names
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
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


# Which norm differences gradient flow conserves, per (form, σ): the law holds
# iff the loss is invariant under that inverse scaling (thm-conservation).
CONSERVATION_CASES = [
    ("rank1", "relu", {"qk": True, "kv": True}),
    ("rank1", "gelu", {"qk": True, "kv": False}),
    ("rank1", "silu", {"qk": True, "kv": False}),
    ("rank1", "identity", {"qk": True, "kv": True}),
    ("gated", "relu", {"qk": True, "kv": True}),
    ("gated", "gelu", {"qk": False, "kv": True}),
    ("gated", "silu", {"qk": False, "kv": True}),
    ("kv", "relu", {"kv": True}),
    ("kv", "gelu", {"kv": False}),
]


def small_layer(form: str, act: str, d: int = 4, m: int = 3, d_out: int = 2) -> FeedForward:
    """A float64 layer of ``form`` ("rank1", "gated", else the key–value MLP), drawn from torch's global generator."""
    if form == "rank1":
        return BilinearMLP(d, m, d_out, rank=1, activation=act, dtype=torch.float64)
    if form == "gated":
        return GatedMLP(d, m, d_out, activation=act, dtype=torch.float64)
    return KeyValueMLP(d, m, d_out, activation=act, dtype=torch.float64)


def gelu_teacher_data(seed: int, d: int = 4, d_out: int = 2, n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` inputs and the outputs of a random float64 GELU key–value teacher (width 6), from ``seed``."""
    from symbreak.dynamics import teacher_data

    torch.manual_seed(seed + 1)
    teacher = KeyValueMLP(d, 6, d_out, activation="gelu", dtype=torch.float64)
    return teacher_data(teacher, d, n, seed=seed)
