"""The results of ``make bench``: their format and check, the targets, and the run recorded with the package.

``benchmarks/bench.py`` writes ``_build/bench/results.json`` in the format that
:func:`check_results` describes; :func:`reference_results` returns one such run,
shipped in ``symbreak/data/bench_reference.json``, which the cost chapter shows
as a dated record.  :data:`TARGET_RATIOS` are the package's goals for the ratio
of each layer to its own matrix products (:mod:`symbreak.yardsticks`).
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["FORMS", "PASSES", "TARGET_RATIOS", "ROW_KEYS", "TOP_KEYS", "check_results", "lowest_ratios"]
__all__ += ["reference_results"]

#: The forms of ``make bench`` (``full``: the packed full form, at its own sizes) and its two passes.
FORMS = ("kv", "rank1", "rankR", "gated", "full")
#: The two passes of ``make bench``: the forward pass, and the forward and backward passes together.
PASSES = ("forward", "forward+backward")
#: The lowest ratio to its own matrix products that each pass of every form but ``full`` aims at.
TARGET_RATIOS = {"forward": 0.95, "forward+backward": 0.90}
#: The positive numbers of one row: achieved GFLOP/s, matmul FLOPs per token of the pass, the two
#: ratios (the own-products one with its spread over interleaved rounds), the share of the machine's
#: peak, bytes of elementwise work per token, peak memory, and the pass's two lower bounds in ns per
#: token (its matmul FLOPs at the peak, its elementwise bytes at the copy bandwidth).
ROW_KEYS = (
    "gflops",
    "matmul_flops_per_token",
    "ratio_to_matmul",
    "ratio_to_own_products",
    "ratio_to_own_products_min",
    "ratio_to_own_products_max",
    "share_of_peak",
    "elementwise_bytes_per_token",
    "peak_mib",
    "matmul_ns",
    "elementwise_ns",
)
#: The positive numbers of the whole run: the plain matmul's and the peak GEMM's GFLOP/s, the copy bandwidth
#: in GB/s, and the full form's speed-ups over the per-unit contraction.
TOP_KEYS = (
    "matmul_gflops",
    "peak_gflops",
    "copy_gbs",
    "full_form_speedup_over_einsum",
    "packed_speedup_over_einsum",
)


def _positive(where: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{where}: expected a positive number, got {value!r}")


def check_results(results: dict) -> dict:
    """Check that ``results`` has the shape ``make bench`` writes; return it.

    ``{<TOP_KEYS>: number, "layers": [{"form", "pass", <ROW_KEYS>: number}, …],
    "config": {…}}`` with one row per form of :data:`FORMS` and pass of
    :data:`PASSES`, and the own-products median between its min and max.
    """
    if not isinstance(results, dict):
        raise TypeError(f"results: expected a dict, got {type(results).__name__}")
    missing = [k for k in (*TOP_KEYS, "layers", "config") if k not in results]
    if missing:
        raise ValueError(f"results: expected the keys {(*TOP_KEYS, 'layers', 'config')}, missing {missing}")
    for key in TOP_KEYS:
        _positive(f"results[{key!r}]", results[key])
    pairs = set()
    for row in results["layers"]:
        if not isinstance(row, dict) or row.get("form") not in FORMS or row.get("pass") not in PASSES:
            raise ValueError(f"results['layers']: expected form in {FORMS} and pass in {PASSES}, got {row!r}")
        where = f"results['layers'] {row['form']}/{row['pass']}"
        for key in ROW_KEYS:
            _positive(f"{where}: {key}", row.get(key))
        low, mid, high = (row[f"ratio_to_own_products{s}"] for s in ("_min", "", "_max"))
        if not low <= mid <= high:
            raise ValueError(f"{where}: expected min <= median <= max of the own-products ratio, got {low, mid, high}")
        pairs.add((row["form"], row["pass"]))
    expected = {(f, p) for f in FORMS for p in PASSES}
    if pairs != expected:
        raise ValueError(f"results['layers']: expected one row per form and pass, missing {sorted(expected - pairs)}")
    return results


def lowest_ratios(results: dict, key: str = "ratio_to_own_products") -> dict[str, float]:
    """The lowest ``key`` (a ratio of :data:`ROW_KEYS`) of the forms with targets (all but ``full``), per pass."""
    if key not in ROW_KEYS:
        raise ValueError(f"key: expected one of {ROW_KEYS}, got {key!r}")
    rows = [r for r in check_results(results)["layers"] if r["form"] != "full"]
    return {p: min(r[key] for r in rows if r["pass"] == p) for p in PASSES}


def reference_results() -> dict:
    """The results of one ``make bench`` run recorded with the package (``symbreak/data/bench_reference.json``).

    Its ``config`` says when, on which processor and with how many threads it
    was measured; the cost chapter shows it beside the reader's own numbers.
    """
    text = resources.files("symbreak").joinpath("data/bench_reference.json").read_text()
    return check_results(json.loads(text))
