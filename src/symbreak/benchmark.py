"""The benchmark of ``make bench``: its sizes, FLOP counts, timed passes and result format.

``benchmarks/bench.py`` runs it at the sizes below and the cost chapter runs
the same functions at smaller ones.  Each layer is compared with one plain
matmul of the same FLOP count (:func:`symbreak.timing.matmul_ratio`).
:func:`reference_results` returns one recorded run, shipped with the package.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import torch

from symbreak.costs import evaluate
from symbreak.costs import matmul_flops as _formula

__all__ = [
    "N",
    "D",
    "M",
    "RANK",
    "D_FULL",
    "M_FULL",
    "matmul_flops",
    "forward",
    "forward_backward",
    "processor",
    "check_results",
    "reference_results",
]

# batch, width, units and terms of the targets; the full form at its own sizes
N, D, M, RANK = 4096, 256, 1024, 4
D_FULL, M_FULL = 64, 256


def processor() -> str:
    """The processor's model name (from /proc/cpuinfo on Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cost_form(form: str, layer: torch.nn.Module) -> tuple[str, dict[str, int]]:
    """The :data:`symbreak.costs.FORMS` entry that ``layer`` evaluates for the benchmark's ``form``, and its sizes."""
    sizes = {"d": layer.d, "m": layer.m, "d_out": layer.d_out}
    if form in ("kv", "gated"):
        return form, sizes
    if form in ("rank1", "rankR"):  # the layer's own number of terms (1 for rank1)
        return "rankR", {**sizes, "R": layer.rank}
    if form == "full":
        return ("full_packed" if layer.packed else "full_features"), sizes
    raise ValueError(f"form: expected one of {_FORMS}, got {form!r}")


def matmul_flops(form: str, layer: torch.nn.Module, n: int) -> int:
    """Matmul FLOPs of one forward pass of ``layer`` on ``n`` tokens (2 per multiply–add).

    ``n`` times :func:`symbreak.costs.matmul_flops` at the layer's sizes; the
    benchmark's ``full`` is ``full_packed`` or ``full_features`` as ``layer.packed`` says.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    key, sizes = _cost_form(form, layer)
    return n * evaluate(_formula(key), **sizes)


def forward(layer: torch.nn.Module, x: torch.Tensor) -> Callable[[], object]:
    """A closure evaluating ``layer(x)`` under ``torch.no_grad``: the forward pass that is timed."""

    def run():
        with torch.no_grad():
            return layer(x)

    return run


def forward_backward(layer: torch.nn.Module, x: torch.Tensor) -> Callable[[], object]:
    """A closure back-propagating ``layer(x).sum()`` to the parameters and to ``x`` (about 3× the FLOPs)."""
    x = x.clone().requires_grad_(True)

    def run():
        layer.zero_grad(set_to_none=True)
        x.grad = None
        layer(x).sum().backward()

    return run


_FORMS = ("kv", "rank1", "gated", "full", "rankR")
_PASSES = ("forward", "forward+backward")


def check_results(results: dict) -> dict:
    """Check that ``results`` has the shape ``make bench`` writes; return it.

    ``{"matmul_gflops": float, "layers": [{"form", "pass", "gflops",
    "ratio_to_matmul", "peak_mib"}, …], "full_form_speedup_over_einsum": float,
    "packed_speedup_over_einsum": float, "config": {…}}`` with one row per form
    and pass.
    """
    if not isinstance(results, dict):
        raise TypeError(f"results: expected a dict, got {type(results).__name__}")
    keys = ("matmul_gflops", "layers", "full_form_speedup_over_einsum", "packed_speedup_over_einsum", "config")
    missing = [k for k in keys if k not in results]
    if missing:
        raise ValueError(f"results: expected the keys {keys}, missing {missing}")
    for key in ("matmul_gflops", "full_form_speedup_over_einsum", "packed_speedup_over_einsum"):
        if not isinstance(results[key], float) or results[key] <= 0:
            raise ValueError(f"results[{key!r}]: expected a positive float, got {results[key]!r}")
    pairs = set()
    for row in results["layers"]:
        if row.get("form") not in _FORMS or row.get("pass") not in _PASSES:
            raise ValueError(f"results['layers']: expected form in {_FORMS} and pass in {_PASSES}, got {row!r}")
        for key in ("gflops", "ratio_to_matmul", "peak_mib"):
            if not isinstance(row.get(key), float) or row[key] <= 0:
                raise ValueError(f"results['layers'] {row['form']}/{row['pass']}: {key} must be a positive float")
        pairs.add((row["form"], row["pass"]))
    expected = {(f, p) for f in _FORMS for p in _PASSES}
    if pairs != expected:
        raise ValueError(f"results['layers']: expected one row per form and pass, missing {sorted(expected - pairs)}")
    return results


def reference_results() -> dict:
    """The results of one ``make bench`` run recorded with the package (``symbreak/data/bench_reference.json``).

    Its ``config`` says when, on which processor and with how many threads it
    was measured; the cost chapter shows it beside the reader's own numbers.
    """
    text = resources.files("symbreak").joinpath("data/bench_reference.json").read_text()
    return check_results(json.loads(text))
