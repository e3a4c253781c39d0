"""Timing helpers: sane values and clear errors (timings themselves are never asserted)."""

from __future__ import annotations

import statistics

import pytest
import torch

from symbreak.timing import best_time, counted_flops, interleaved, matmul_ratio, peak_mib, plain_matmul, threads


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


def test_threads_sets_the_number_inside_and_restores_it_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="inside"):
        with threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        with threads(0):
            pass


def test_interleaved_takes_the_runs_in_turn_and_reduces_each():
    calls = []
    samples = iter([3.0, 10.0, 1.0, 30.0, 2.0, 20.0])  # a, b, a, b, a, b

    def timer(run):
        calls.append(run())
        return next(samples)

    fastest = interleaved({"a": lambda: "a", "b": lambda: "b"}, 3, timer)
    assert calls == ["a", "b"] * 3
    assert fastest == {"a": 1.0, "b": 10.0}
    samples = iter([3.0, 10.0, 1.0, 30.0, 2.0, 20.0])
    assert interleaved({"a": lambda: 0, "b": lambda: 0}, 3, lambda run: next(samples), reduce=statistics.median) == {
        "a": 2.0,
        "b": 20.0,
    }


def test_interleaved_bad_arguments():
    with pytest.raises(TypeError, match="runs: expected a non-empty mapping of names to callables"):
        interleaved({}, 1, lambda run: 0.0)
    with pytest.raises(ValueError, match="rounds: expected an int >= 1, got 0"):
        interleaved({"a": lambda: None}, 0, lambda run: 0.0)
    with pytest.raises(TypeError, match="timer: expected a callable run -> seconds, got NoneType"):
        interleaved({"a": lambda: None}, 1, None)


def test_counted_flops_are_2nkp_per_token():
    # one product (n × k) @ (k × p) costs 2 n k p FLOPs; per token 2 k p
    a, b = torch.randn(6, 5), torch.randn(5, 3)
    assert counted_flops(lambda: a @ b, 6) == 2 * 5 * 3
    assert counted_flops(lambda: (a @ b) @ torch.randn(3, 4), 6) == 2 * 5 * 3 + 2 * 3 * 4
    assert counted_flops(lambda: a + 1.0, 6) == 0  # elementwise work is not counted
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        counted_flops(lambda: None, 0)
    with pytest.raises(TypeError, match="run: expected a callable, got int"):
        counted_flops(3, 1)
