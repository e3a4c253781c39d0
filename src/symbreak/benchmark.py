"""Measuring what the forms cost: their layers, counted FLOPs and kept numbers, timed sweeps, ``make bench``.

The cost chapter checks the formulas of :mod:`symbreak.costs` against the layers
(:func:`count_costs`, :func:`kept_per_token`, :func:`counted_flops_sweep`) and
times their growth (:func:`time_growth`); ``benchmarks/bench.py`` runs
:func:`throughput` (each layer against its own matrix products, and against one
plain matmul of the same FLOP count) and :func:`roofline` (its share of the
machine's peak) at the sizes below, the chapter at smaller ones.  Timing functions take the timer
as an argument: the caller states the protocol, a test can pass a fake one.
:func:`reference_results` returns one recorded run, shipped with the package
(the record's format and the targets: :mod:`symbreak.benchrecord`).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
import torch

from symbreak import costs
from symbreak.benchrecord import FORMS as BENCH_FORMS
from symbreak.benchrecord import TARGET_RATIOS, check_results, lowest_ratios, reference_results
from symbreak.costs import FORMS, FULL_FEATURES, Form, evaluate, power_law_exponent, saved_per_token
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, GlobalQueryMLP, KeyValueMLP
from symbreak.timing import counted_flops, peak_mib
from symbreak.yardsticks import Spread, elementwise_bytes, own_products

__all__ = [
    "N",
    "D",
    "M",
    "RANK",
    "D_FULL",
    "M_FULL",
    "RATIO_REPEATS",
    "TARGET_RATIOS",
    "COST_FORMS",
    "formulas",
    "cost_layer",
    "cost_layers",
    "CostCount",
    "count_costs",
    "kept_per_token",
    "counted_flops_sweep",
    "growth_degrees",
    "GROWTH_SWEEPS",
    "GROWTH_FORMS",
    "Growth",
    "time_growth",
    "benchmark_layers",
    "throughput",
    "roofline",
    "BENCH_FORMS",
    "score_routes",
    "lowest_ratios",
    "matmul_flops",
    "forward",
    "forward_backward",
    "processor",
    "check_results",
    "reference_results",
]

#: The benchmark's sizes: batch ``N``, width ``D``, units ``M`` and terms ``RANK`` of the targets.
N, D, M, RANK = 4096, 256, 1024, 4
#: The full form's own sizes: width ``D_FULL`` and units ``M_FULL``.
D_FULL, M_FULL = 64, 256
#: Interleaved rounds per ratio in ``make bench``.
RATIO_REPEATS = 11


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
    raise ValueError(f"form: expected one of {BENCH_FORMS}, got {form!r}")


def matmul_flops(form: str, layer: torch.nn.Module, n: int) -> int:
    """Matmul FLOPs of one forward pass of ``layer`` on ``n`` tokens (2 per multiply–add).

    ``n`` times :func:`symbreak.costs.matmul_flops` at the layer's sizes; the
    benchmark's ``full`` is ``full_packed`` or ``full_features`` as ``layer.packed`` says.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    key, sizes = _cost_form(form, layer)
    return n * evaluate(costs.matmul_flops(key), **sizes)


def forward(layer: Callable[[torch.Tensor], object], x: torch.Tensor) -> Callable[[], object]:
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


#: The forms of the cost chapter, in its order: the keys of ``costs.FORMS`` and ``full_features``.
COST_FORMS = ("kv", "global_query", "rank1", "rankR", "gated", "full", "full_features", "full_packed")


def formulas(form: str) -> Form:
    """The cost formulas of ``form``: its :data:`symbreak.costs.FORMS` entry, or ``costs.FULL_FEATURES``."""
    if not isinstance(form, str):
        raise TypeError(f"form: expected a form name (str), got {type(form).__name__}")
    if form not in COST_FORMS:
        raise ValueError(f"form: expected one of {COST_FORMS}, got {form!r}")
    return FULL_FEATURES if form == "full_features" else FORMS[form]


def cost_layer(form: str, d: int, m: int, rank: int, activation: str | None = None) -> torch.nn.Module:
    """The package's layer that evaluates ``form`` with width ``d``, ``m`` units and ``d_out = d``.

    ``kv``: ``σ(x Kᵀ) V``; ``global_query``: ``σ(x Q Kᵀ) V``; ``rank1``, ``rankR``
    and ``full``: ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V`` with ``R = 1``, ``rank`` and ``d``
    (the full form by its maps ``Q_j, K_j``); ``gated``: ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``;
    ``full_features`` and ``full_packed``: ``Σ_j σ(x W_j xᵀ) v_j`` over ``x ⊗ x``,
    unpacked or packed.  ``rank`` is used by ``rankR`` only; ``activation=None``
    is the layer's default.  The weights come from torch's global generator.
    """
    formulas(form)  # checks the name
    kw = {} if activation is None else {"activation": activation}
    if form == "kv":
        return KeyValueMLP(d, m, **kw)
    if form == "global_query":
        return GlobalQueryMLP(d, m, **kw)
    if form in ("rank1", "rankR", "full"):
        return BilinearMLP(d, m, rank={"rank1": 1, "rankR": rank, "full": d}[form], **kw)
    if form == "gated":
        return GatedMLP(d, m, **kw)
    return FullBilinearMLP(d, m, packed=form == "full_packed", **kw)


def cost_layers(d: int, m: int, rank: int, activation: str | None = None) -> dict[str, torch.nn.Module]:
    """:func:`cost_layer` of every form of :data:`COST_FORMS`, built in that order."""
    return {form: cost_layer(form, d, m, rank, activation) for form in COST_FORMS}


def _check_layers(layers: object) -> None:
    if not isinstance(layers, Mapping):
        raise TypeError(f"layers: expected a mapping of form names to layers, got {type(layers).__name__}")


def _sizes(form: str, layer: torch.nn.Module) -> dict[str, int]:
    """The sizes at which ``form``'s formulas describe ``layer`` (``R`` only where the formula has it)."""
    sizes = {"d": layer.d, "m": layer.m, "d_out": layer.d_out}
    return {**sizes, "R": layer.rank} if form == "rankR" else sizes


@dataclass(frozen=True)
class CostCount:
    """One form's formulas at its layer's sizes (``parameters``, ``matmul_flops`` and ``memory`` per token)
    beside the numbers in the layer's parameter tensors (``stored``) and its FLOPs per token (``counted``)."""

    parameters: int
    stored: int
    matmul_flops: int
    counted: int
    memory: int


def count_costs(layers: Mapping[str, torch.nn.Module], x: torch.Tensor) -> dict[str, CostCount]:
    """:class:`CostCount` of every ``form → layer`` in ``layers``, the FLOPs counted on one forward pass of ``x``."""
    _check_layers(layers)
    if not isinstance(x, torch.Tensor) or x.ndim != 2:
        raise ValueError(f"x: expected a 2-d tensor (n, d) of tokens, got {getattr(x, 'shape', type(x).__name__)}")
    counts = {}
    for form, layer in layers.items():
        formula, sizes = formulas(form), _sizes(form, layer)
        counts[form] = CostCount(
            parameters=evaluate(formula.parameters, **sizes),
            stored=sum(p.numel() for p in layer.parameters()),
            matmul_flops=evaluate(formula.matmul_flops, **sizes),
            counted=counted_flops(lambda layer=layer: layer(x), x.shape[0]),
            memory=evaluate(formula.memory, **sizes),
        )
    return counts


def kept_per_token(layers: Mapping[str, torch.nn.Module], x: torch.Tensor) -> dict[str, float]:
    """Numbers per token that each layer keeps for the backward pass of ``layer(x)`` (``costs.saved_per_token``)."""
    _check_layers(layers)
    return {form: saved_per_token(layer, x) for form, layer in layers.items()}


def counted_flops_sweep(widths: Sequence[int], units_per_width: int, rank: int) -> dict[str, list[int]]:
    """Matrix-product FLOPs per token counted in every form's layer at ``d = w``, ``m = units_per_width · w``.

    For each width all layers of :func:`cost_layers` are built first, then each
    evaluates one random token (both from torch's global generator).
    """
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or not widths:
        raise TypeError(f"widths: expected a non-empty sequence of ints, got {widths!r}")
    counted: dict[str, list[int]] = {form: [] for form in COST_FORMS}
    for w in widths:
        for form, layer in cost_layers(w, units_per_width * w, rank).items():
            counted[form].append(counted_flops(forward(layer, torch.randn(1, w)), 1))
    return counted


def growth_degrees(form: str, units_per_width: int = 4, rank: int = 4) -> tuple[int, ...]:
    """Degrees of ``form``'s formulas: parameters in ``d``, ``m``, ``R``; FLOPs in ``d``, ``m``, ``R``; FLOPs in ``d``.

    The last is the degree in ``d`` of the FLOPs at ``m = units_per_width · d``,
    ``d_out = d``, ``R = rank``: how the form grows with the model.
    """
    formula = formulas(form)
    degrees = [_degree(expr, s) for expr in (formula.parameters, formula.flops) for s in (costs.d, costs.m, costs.R)]
    return (
        *degrees,
        _degree(formula.flops.subs({costs.m: units_per_width * costs.d, costs.d_out: costs.d, costs.R: rank}), costs.d),
    )


def _degree(expr: sp.Expr, symbol: sp.Symbol) -> int:
    return sp.Poly(sp.expand(expr), symbol).degree()


#: The sweeps of the cost chapter's growth figure: size → (its values, value → ``(d, m, R)``).
GROWTH_SWEEPS: dict[str, tuple[tuple[int, ...], Callable]] = {
    "d": ((16, 32, 64, 128), lambda v: (v, 4 * v, 4)),
    "m": ((64, 128, 256, 512, 1024), lambda v: (64, v, 4)),
    "R": ((1, 2, 4, 8, 16), lambda v: (64, 256, v)),
}
#: The forms timed in every sweep (only the rank-R form in the sweep over R).
GROWTH_FORMS = ("kv", "gated", "rankR", "full_packed")


@dataclass(frozen=True)
class Growth:
    """Forward time per token along :data:`GROWTH_SWEEPS`, keyed by ``(size, form)``."""

    seconds: dict[tuple[str, str], list[float]]
    #: the degree of the form's FLOP formula in the swept size, the other sizes as in the sweep
    degrees: dict[tuple[str, str], int]
    #: the least-squares slope of log time against log size (``costs.power_law_exponent``)
    slopes: dict[tuple[str, str], float]


def time_growth(timer: Callable[[Callable[[], object]], float], n_tokens: int = 256) -> Growth:
    """Time the forward pass of :data:`GROWTH_FORMS` along :data:`GROWTH_SWEEPS` on ``n_tokens`` random tokens.

    ``timer(run)`` returns seconds per call (e.g. ``best_time``); each layer and
    its tokens come from torch's global generator just before they are timed.
    A curve's degree is that of ``costs.flops`` in the swept size ``t``.
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError(f"n_tokens: expected an int >= 1, got {n_tokens!r}")
    if not callable(timer):
        raise TypeError(f"timer: expected a callable run -> seconds, got {type(timer).__name__}")
    t = sp.Symbol("t", positive=True)
    seconds, degrees, slopes = {}, {}, {}
    for size, (values, shape) in GROWTH_SWEEPS.items():
        for form in GROWTH_FORMS if size != "R" else ("rankR",):
            times = []
            for v in values:
                w, units, r = shape(v)
                layer, tokens = cost_layer(form, w, units, r), torch.randn(n_tokens, w)
                times.append(timer(forward(layer, tokens)) / n_tokens)
            at = dict(zip((costs.d, costs.m, costs.R), shape(t), strict=True))
            seconds[size, form] = times
            degrees[size, form] = _degree(formulas(form).flops.subs({**at, costs.d_out: at[costs.d]}), t)
            slopes[size, form] = power_law_exponent(values, times)
    return Growth(seconds, degrees, slopes)


def benchmark_layers(
    d: int = D, m: int = M, rank: int = RANK, d_full: int = D_FULL, m_full: int = M_FULL
) -> dict[str, torch.nn.Module]:
    """The layers that ``make bench`` times, built in this order from torch's global generator.

    ``kv`` (ReLU), ``rank1``, ``rankR`` (``R = rank``) and ``gated`` (SiLU) at
    width ``d`` with ``m`` units; ``full``: the packed full form (SiLU) at ``d_full``, ``m_full``.
    """
    return {
        "kv": KeyValueMLP(d, m, activation="relu"),
        "rank1": BilinearMLP(d, m, rank=1, activation="silu"),
        "rankR": BilinearMLP(d, m, rank=rank, activation="silu"),
        "gated": GatedMLP(d, m, activation="silu"),
        "full": FullBilinearMLP(d_full, m_full, activation="silu", packed=True),
    }


def _yardstick_width(layer: torch.nn.Module) -> int:
    """The inner width ``k`` of the yardstick: the layer's input width, or the full form's number of features."""
    if isinstance(layer, FullBilinearMLP):
        return layer.d * (layer.d + 1) // 2 if layer.packed else layer.d**2
    return layer.d


def throughput(
    layers: Mapping[str, torch.nn.Module],
    n: int,
    ratio: Callable[..., tuple[float, float]],
    overhead: Callable[[Callable[[], object], Mapping[str, Callable[[], object]]], tuple[Spread, float]],
) -> list[dict]:
    """The rows of ``make bench``: every layer's forward and forward+backward pass on ``n`` random tokens.

    ``ratio(run, n, flops, k, backward=…)`` returns ``(t_matmul / t_run, t_run)``
    against one plain matmul of the same FLOPs (:func:`symbreak.timing.matmul_ratio`);
    ``overhead(run, products)`` returns ``(Spread of t_products / t_run, t_run)``
    against the layer's own products (:func:`symbreak.yardsticks.own_products`,
    :func:`~symbreak.yardsticks.paired_ratios`).  A row has the keys ``"form"``, ``"pass"``,
    ``"gflops"``, ``"matmul_flops_per_token"``, ``"ratio_to_matmul"``, ``"ratio_to_own_products"`` (the
    median) with ``"ratio_to_own_products_min"`` and ``"ratio_to_own_products_max"``,
    ``"elementwise_bytes_per_token"`` and ``"peak_mib"``; GFLOP/s counting the pass's matmul FLOPs
    (3× the forward's for forward+backward) at the faster of the two timings of the layer.  The tokens of
    each layer come from torch's global generator, before its yardsticks.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    _check_layers(layers)
    rows = []
    for form, layer in layers.items():
        tokens = torch.randn(n, layer.d)
        flops, k = matmul_flops(form, layer, n), _yardstick_width(layer)
        for pass_name, make, factor in (("forward", forward, 1), ("forward+backward", forward_backward, 3)):
            run = make(layer, tokens)
            r, seconds = ratio(run, n, flops, k, backward=factor == 3)
            own, own_seconds = overhead(run, own_products(layer, n, backward=factor == 3))
            rows.append(
                {
                    "form": form,
                    "pass": pass_name,
                    "gflops": factor * flops / min(seconds, own_seconds) / 1e9,
                    "matmul_flops_per_token": float(factor * flops // n),
                    "ratio_to_matmul": r,
                    "ratio_to_own_products": own.median,
                    "ratio_to_own_products_min": own.min,
                    "ratio_to_own_products_max": own.max,
                    "elementwise_bytes_per_token": float(elementwise_bytes(run, n)),
                    "peak_mib": peak_mib(run),
                }
            )
    return rows


def roofline(rows: Sequence[Mapping], peak_gflops: float, copy_gbs: float) -> list[dict]:
    """``rows`` of :func:`throughput`, each with ``share_of_peak`` and the two lower bounds of its time per token.

    ``share_of_peak`` is the row's GFLOP/s over ``peak_gflops``
    (:func:`symbreak.yardsticks.peak_gflops`); ``matmul_ns`` is the pass's
    matmul FLOPs per token at that peak and ``elementwise_ns`` its elementwise
    bytes per token at ``copy_gbs`` (:func:`~symbreak.yardsticks.copy_bandwidth`),
    both in nanoseconds per token: the larger says which bound the pass is nearer to.
    """
    for name, value in (("peak_gflops", peak_gflops), ("copy_gbs", copy_gbs)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"{name}: expected a positive number, got {value!r}")
    return [
        {
            **row,
            "share_of_peak": row["gflops"] / peak_gflops,
            "matmul_ns": row["matmul_flops_per_token"] / peak_gflops,
            "elementwise_ns": row["elementwise_bytes_per_token"] / copy_gbs,
        }
        for row in rows
    ]


def score_routes(unpacked: FullBilinearMLP, packed: FullBilinearMLP, x: torch.Tensor) -> dict[str, Callable]:
    """Three no-grad closures computing the full form's scores ``s_j = x W_j xᵀ`` of ``x``, by name.

    ``"per-unit einsum"`` (``unpacked.scores_einsum``), ``"x ⊗ x features"``
    (``unpacked.scores``) and ``"packed features"`` (``packed.scores``).
    """
    for name, layer, want in (("unpacked", unpacked, False), ("packed", packed, True)):
        if not isinstance(layer, FullBilinearMLP) or layer.packed is not want:
            raise TypeError(f"{name}: expected a FullBilinearMLP with packed={want}, got {layer!r}")
    routes = {
        "per-unit einsum": unpacked.scores_einsum,
        "x ⊗ x features": unpacked.scores,
        "packed features": packed.scores,
    }
    return {name: forward(fn, x) for name, fn in routes.items()}
