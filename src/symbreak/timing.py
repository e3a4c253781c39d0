"""Measuring throughput: wall-clock timing, counted FLOPs, peak tensor memory, and the matmul yardstick.

The benchmark (``benchmarks/bench.py``) and the cost chapter both use these:
:func:`best_time` and :func:`interleaved` time closures, :func:`threads` runs a
timing on a fixed number of threads, :func:`counted_flops` counts the FLOPs of
a call and :func:`peak_mib` its peak tensor memory.
On a shared machine absolute times are noisy; a layer's time is therefore
compared with that of one plain matmul of the same FLOP count, measured in
the same run: ``ratio = t_matmul / t_layer`` (1.0 is the matmul-bound limit),
each time the fastest of interleaved repeats.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Mapping

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

__all__ = ["best_time", "peak_mib", "plain_matmul", "matmul_ratio", "interleaved", "threads", "counted_flops"]


@contextlib.contextmanager
def _quiet_fd(fd: int):
    """Silence a file descriptor (the profiler's C++ start/stop lines go straight to fd 2)."""
    saved = os.dup(fd)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), fd)
        try:
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)


@contextlib.contextmanager
def threads(n: int):
    """Run the ``with`` block on ``n`` intra-op torch threads, then restore the number there was before.

    A timing on one thread depends less on how many cores happen to be idle.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def best_time(fn: Callable[[], object], repeats: int = 7, min_time: float = 0.05) -> float:
    """Median over ``repeats`` of the mean seconds per call; each repeat runs for at least ``min_time`` s."""
    if repeats < 1:
        raise ValueError(f"repeats: expected an int >= 1, got {repeats}")
    fn()  # warm-up
    samples = []
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        samples.append(elapsed / calls)
    return statistics.median(samples)


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak of live CPU tensor memory during ``fn`` (allocation events of the torch profiler), in MiB."""
    with _quiet_fd(2), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e for e in prof.events() if e.self_cpu_memory_usage), key=lambda e: e.time_range.start)
    live = peak = 0
    for e in events:
        live += e.self_cpu_memory_usage
        peak = max(peak, live)
    return peak / 2**20


def plain_matmul(n: int, flops: int, k: int, backward: bool = False) -> Callable[[], object]:
    """A closure computing ``(n × k) @ (k × p)``, with ``p`` chosen so that ``2 n k p ≈ flops``.

    With ``backward=True`` it also back-propagates through the product (3× the FLOPs).
    """
    if min(n, k, flops) < 1:
        raise ValueError(f"n, k, flops: expected positive ints, got n={n}, k={k}, flops={flops}")
    p = max(1, round(flops / (2 * n * k)))
    a = torch.randn(n, k, requires_grad=backward)
    b = torch.randn(k, p, requires_grad=backward)
    if not backward:

        def forward():
            with torch.no_grad():
                return a @ b

        return forward

    def forward_backward():
        a.grad = b.grad = None
        (a @ b).sum().backward()

    return forward_backward


def matmul_ratio(
    run: Callable[[], object], n: int, flops: int, k: int, backward: bool = False, repeats: int = 9
) -> tuple[float, float]:
    """``(ratio, t_run)`` with ``ratio = min t_matmul / min t_run`` over interleaved repeats.

    Layer and yardstick are timed alternately, ``repeats`` times each (every
    sample the mean over at least 0.1 s of calls).  On a shared machine noise
    only ever adds time, so the fastest sample of each side is its
    least-disturbed measurement (the convention of Python's ``timeit``), and
    interleaving gives both sides the same chances of a quiet moment.
    """
    if repeats < 1:
        raise ValueError(f"repeats: expected an int >= 1, got {repeats}")
    ref = plain_matmul(n, flops, k, backward)
    run()
    ref()
    fastest = interleaved({"run": run, "ref": ref}, repeats, lambda f: best_time(f, repeats=1, min_time=0.1))
    return fastest["ref"] / fastest["run"], fastest["run"]


def interleaved(
    runs: Mapping[str, Callable[[], object]],
    rounds: int,
    timer: Callable[[Callable[[], object]], float],
    reduce: Callable[[list[float]], float] = min,
) -> dict[str, float]:
    """``reduce`` of ``rounds`` timings of every run, taken in turn: run 1, run 2, …, run 1, run 2, …

    ``timer(run)`` is one sample in seconds (e.g. ``best_time(run, repeats=1)``).
    Taking the runs in turn gives each the same chances of a quiet moment of a
    shared machine; ``reduce=min`` keeps the least-disturbed sample (noise only
    adds time), ``statistics.median`` the typical one.
    """
    if not isinstance(runs, Mapping) or not runs or not all(callable(r) for r in runs.values()):
        raise TypeError(f"runs: expected a non-empty mapping of names to callables, got {runs!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds: expected an int >= 1, got {rounds!r}")
    if not callable(timer):
        raise TypeError(f"timer: expected a callable run -> seconds, got {type(timer).__name__}")
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            samples[name].append(timer(run))
    return {name: reduce(values) for name, values in samples.items()}


def counted_flops(run: Callable[[], object], n: int) -> int:
    """The FLOPs that torch's ``FlopCounterMode`` counts during ``run()`` (``2nkp`` per matrix product), per token.

    ``n`` is the number of tokens that ``run`` evaluates; the total is divided by it (integer division).
    """
    if not callable(run):
        raise TypeError(f"run: expected a callable, got {type(run).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    with FlopCounterMode(display=False) as counter:
        run()
    return counter.get_total_flops() // n
