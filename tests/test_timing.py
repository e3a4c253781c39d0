"""Timing helpers: sane values and clear errors (timings themselves are never asserted)."""

from __future__ import annotations

import pytest
import torch

from symbreak.timing import best_time, matmul_ratio, peak_mib, plain_matmul


def test_peak_memory_sees_an_allocation():
    # a 1000×1000 float32 result is 3.8 MiB; the peak must include it
    assert peak_mib(lambda: torch.ones(1000, 1000) * 2) >= 1000 * 1000 * 4 / 2**20


def test_plain_matmul_shape_matches_flops():
    run = plain_matmul(64, 2 * 64 * 32 * 10, 32)
    assert run().shape == (64, 10)


def test_ratio_and_time_are_positive():
    a = torch.randn(64, 32)
    b = torch.randn(32, 16)
    ratio, t = matmul_ratio(lambda: a @ b, 64, 2 * 64 * 32 * 16, 32, repeats=2)
    assert ratio > 0 and t > 0
    assert best_time(lambda: a @ b, repeats=1, min_time=0.001) > 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="repeats: expected an int >= 1"):
        best_time(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="n, k, flops: expected positive ints"):
        plain_matmul(0, 10, 2)
