"""How the cost of a layer grows: time, peak memory and the overhead ratio along the batch, ``d``, ``m`` and ``R``.

``make bench`` measures :func:`measure_scaling` along :data:`SCALING_SWEEPS` and
stores it with its record (the ``"scaling"`` entry); the cost chapter draws it
on log–log axes beside the slopes of the formulas (:func:`formula_degrees`), so
a reader sees where each form leaves the matmul-bound regime.  The sizes of a
sweep are ``(n, d, m, R)`` as functions of the swept value; ``d_out = d``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy as sp
import torch

from symbreak import costs
from symbreak.benchmark import forward, forward_backward
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.timing import peak_mib
from symbreak.yardsticks import Spread, own_products

__all__ = ["SCALING_SWEEPS", "SCALING_FORMS", "METRICS", "scaling_layer", "formula_degrees", "measure_scaling"]
__all__ += ["check_scaling"]

#: The swept size → (its values, value → ``(n, d, m, R)``): the batch at the benchmark's sizes, then ``d`` with
#: ``m = 4d``, ``m`` and ``R`` on a batch of 1024.
SCALING_SWEEPS: dict[str, tuple[tuple[int, ...], Callable[[int], tuple[int, int, int, int]]]] = {
    "n": ((256, 512, 1024, 2048, 4096), lambda v: (v, 256, 1024, 4)),
    "d": ((64, 128, 256, 512), lambda v: (1024, v, 4 * v, 4)),
    "m": ((256, 512, 1024, 2048, 4096), lambda v: (1024, 256, v, 4)),
    "R": ((1, 2, 4, 8, 16), lambda v: (1024, 256, 1024, v)),
}
#: The forms of the scaling record (``rankR`` at ``R = 1`` is the symmetric rank-1 form); only ``rankR`` along ``R``.
SCALING_FORMS = ("kv", "gated", "rankR")
#: What is measured at every point: seconds per token of each pass, peak MiB of forward+backward per 1000 tokens,
#: and the median own-products ratio of each pass.
METRICS = ("forward_s", "backward_s", "peak_mib_per_1k", "own_forward", "own_backward")

_SYMBOLS = {"n": None, "d": costs.d, "m": costs.m, "R": costs.R}


def scaling_layer(form: str, d: int, m: int, rank: int) -> torch.nn.Module:
    """The layer of ``form`` (:data:`SCALING_FORMS`; ReLU for ``kv``, else SiLU), from torch's global generator."""
    if form == "kv":
        return KeyValueMLP(d, m, activation="relu")
    if form == "gated":
        return GatedMLP(d, m, activation="silu")
    if form == "rankR":
        return BilinearMLP(d, m, rank=rank, activation="silu")
    raise ValueError(f"form: expected one of {SCALING_FORMS}, got {form!r}")


def _forms(size: str) -> tuple[str, ...]:
    return ("rankR",) if size == "R" else SCALING_FORMS


def formula_degrees(size: str, form: str) -> dict[str, int]:
    """Degrees in the swept size of ``form``'s FLOPs and kept numbers per token (``costs.flops``, ``costs.memory``).

    Per token, so 0 along the batch; ``m = 4d`` along ``d``; the other sizes fixed as in :data:`SCALING_SWEEPS`.
    """
    if size not in SCALING_SWEEPS:
        raise ValueError(f"size: expected one of {tuple(SCALING_SWEEPS)}, got {size!r}")
    if form not in _forms(size):
        raise ValueError(f"form: expected one of {_forms(size)} along {size!r}, got {form!r}")
    if size == "n":
        return {"flops": 0, "memory": 0}
    t = sp.Symbol("t", positive=True)
    _, d, m, rank = SCALING_SWEEPS[size][1](1)
    at = {costs.d: d, costs.m: m, costs.R: rank}
    at[_SYMBOLS[size]] = t
    if size == "d":
        at[costs.m] = 4 * t
    at[costs.d_out] = at[costs.d]
    formula = costs.FORMS[form]
    return {
        key: sp.Poly(sp.expand(expr.subs(at)), t).degree()
        for key, expr in (("flops", formula.flops), ("memory", formula.memory))
    }


def measure_scaling(
    overhead: Callable[[Callable[[], object], Mapping[str, Callable[[], object]]], tuple[Spread, float]],
    sweeps: Mapping[str, tuple[tuple[int, ...], Callable]] = SCALING_SWEEPS,
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """``{size: {"values": [...], form: {metric: [one value per point]}}}`` along ``sweeps`` (:data:`METRICS`).

    ``overhead(run, products)`` returns ``(Spread of t_products / t_run, fastest t_run)``
    (e.g. :func:`symbreak.yardsticks.paired_ratios` with the caller's rounds and
    timer); the fastest time gives the seconds per token.  Layer and tokens come
    from torch's global generator just before they are measured.
    """
    if not callable(overhead):
        raise TypeError(f"overhead: expected a callable (run, products) -> (Spread, seconds), got {overhead!r}")
    out: dict = {}
    for size, (values, shape) in sweeps.items():
        out[size] = {"values": list(values)} | {form: {k: [] for k in METRICS} for form in _forms(size)}
        for form in _forms(size):
            for v in values:
                n, d, m, rank = shape(v)
                layer, x = scaling_layer(form, d, m, rank), torch.randn(n, d)
                point = out[size][form]
                for pass_name, make, backward in (("forward", forward, False), ("backward", forward_backward, True)):
                    run = make(layer, x)
                    ratio, seconds = overhead(run, own_products(layer, n, backward=backward))
                    point[f"{pass_name}_s"].append(seconds / n)
                    point[f"own_{pass_name}"].append(ratio.median)
                point["peak_mib_per_1k"].append(peak_mib(forward_backward(layer, x)) / n * 1000)
    return out


def check_scaling(scaling: object) -> dict:
    """Check the shape of a scaling record (:func:`measure_scaling` along :data:`SCALING_SWEEPS`); return it."""
    if not isinstance(scaling, dict) or set(scaling) != set(SCALING_SWEEPS):
        raise ValueError(f"scaling: expected a dict with the sweeps {tuple(SCALING_SWEEPS)}, got {scaling!r:.80}")
    for size, (values, _) in SCALING_SWEEPS.items():
        entry = scaling[size]
        if entry.get("values") != list(values):
            raise ValueError(f"scaling[{size!r}]['values']: expected {list(values)}, got {entry.get('values')!r}")
        for form in _forms(size):
            metrics = entry.get(form)
            if not isinstance(metrics, dict) or set(metrics) != set(METRICS):
                raise ValueError(f"scaling[{size!r}][{form!r}]: expected the metrics {METRICS}, got {metrics!r:.80}")
            for key, series in metrics.items():
                if len(series) != len(values) or not all(isinstance(v, float) and v > 0 for v in series):
                    raise ValueError(
                        f"scaling[{size!r}][{form!r}][{key!r}]: expected {len(values)} positive floats, got {series!r}"
                    )
    return scaling
