"""Chapter 10's benchmark tables: ``make bench``'s sizes, the chapter's own timing and the recorded run.

This module only arranges what :mod:`symbreak.benchmark` measures and records:

* :func:`glue_bench_sizes` — the sizes ``make bench`` runs at;
* :func:`glue_throughput` — the chapter's own timing, ``tbl-bench-live``;
* :func:`glue_reference` — the recorded run, ``tbl-bench-record`` and ``tbl-bench-roofline``, and its summary.

Each table has one row group per form: the form's name in bold, then a row per pass.  Functions named
``glue_*`` glue their values (:func:`symbreak.prose.glue_all`) and return the lines the notebook prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from symbreak import benchmark
from symbreak.pages.ch10 import FORM_NAMES, _check_keys
from symbreak.prose import glue_all, glue_table

__all__ = ["BENCH_NAMES", "glue_bench_sizes", "glue_throughput", "glue_reference"]

#: The forms of ``make bench`` by name (its ``full`` is the packed full form).
BENCH_NAMES = {key: FORM_NAMES[key] for key in ("kv", "rank1", "rankR", "gated")} | {"full": FORM_NAMES["full_packed"]}


def _pass(row: Mapping[str, object]) -> str:
    """A benchmark row's pass as a table shows it: "forward + backward", spaced by no-break spaces (one line)."""
    return str(row["pass"]).replace("+", "\u00a0+\u00a0")


def _by_form(rows: Sequence[Mapping], cells: Callable[[Mapping], list[str]]) -> list[list[str]]:
    """Table rows of benchmark ``rows`` grouped by form: a bold row naming the form, then one row per pass.

    The first column is the pass, the others are ``cells(row)``; a form's name in a row of its own leaves
    the pass column wide enough for "forward + backward" on one line.
    """
    table: list[list[str]] = []
    for form in dict.fromkeys(r["form"] for r in rows):
        passes = [[_pass(r), *cells(r)] for r in rows if r["form"] == form]
        table += [[f"**{BENCH_NAMES[form]}**", *[""] * (len(passes[0]) - 1)], *passes]
    return table


#: The header of a column of min–max ranges; word joiners (U+2060) keep it from breaking after its dash.
_RANGE = "min\u2060–\u2060max"


def glue_bench_sizes() -> str:
    """Glue the sizes of ``make bench`` and return three lines that state them.

    ``bench-n`` (batch), ``bench-d``, ``bench-m``, ``bench-rank``, and the full
    form's ``bench-d-full``, ``bench-m-full``.
    """
    b = benchmark
    sizes = {"n": b.N, "d": b.D, "m": b.M, "rank": b.RANK, "d-full": b.D_FULL, "m-full": b.M_FULL}
    glue_all({f"bench-{key}": value for key, value in sizes.items()})
    return "\n".join(
        [
            f"make bench: batch {b.N}, d = {b.D}, m = {b.M},",
            f"            R = {b.RANK}",
            f"            full form d = {b.D_FULL}, m = {b.M_FULL}",
        ]
    )


def _own(row: Mapping) -> list[str]:
    """The own-products ratio of a row as two cells, the median and ``min–max``, two decimals."""
    low, mid, high = (row[f"ratio_to_own_products{s}"] for s in ("_min", "", "_max"))
    return [f"{mid:.2f}", f"{low:.2f}–{high:.2f}"]


def glue_throughput(rows: Sequence[Mapping], layers: Mapping[str, object], *, n: int, threads: int) -> str:
    """Glue the chapter's own timing of :func:`symbreak.benchmark.throughput` as ``bench-live-table``.

    Forms by name; GFLOP/s, the ratio to the layer's own products (median, and min–max),
    the ratio to one plain matmul and the peak memory.  The sizes are glued one
    number each, so that the caption sets their symbols as maths (a glued value in
    a caption is not parsed for maths): ``bench-live-n`` (batch), ``bench-live-d``,
    ``bench-live-m``, ``bench-live-rank``, the full form's ``bench-live-d-full`` and
    ``bench-live-m-full``, and ``bench-live-threads`` in words.  Returns the table's text.
    """
    _check_keys("layers", layers, ["kv", "rankR", "full"])
    kv, full = layers["kv"], layers["full"]
    on = "one thread" if threads == 1 else f"{threads} threads"
    sizes = {"n": n, "d": kv.d, "m": kv.m, "rank": layers["rankR"].rank, "d-full": full.d, "m-full": full.m}
    glue_all({f"bench-live-{key}": value for key, value in sizes.items()} | {"bench-live-threads": on})
    table = _by_form(
        rows,
        lambda r: [f"{r['gflops']:.1f}", *_own(r), f"{r['ratio_to_matmul']:.2f}", f"{r['peak_mib']:.2f}"],
    )
    header = ["pass", "GFLOP/s", "own products", _RANGE, "plain matmul", "peak MiB"]
    return glue_table("bench-live-table", header, table)


def _meets(row: Mapping) -> bool | None:
    """Whether a benchmark row's median own-products ratio meets its target; ``None`` for the full form."""
    if row["form"] == "full":
        return None
    return row["ratio_to_own_products"] >= benchmark.TARGET_RATIOS[row["pass"]]


def _target(row: Mapping) -> list[str]:
    """A benchmark row's target as two table cells: ``["0.95", "no"]``, ``["0.90", "yes"]``, or "—" twice."""
    meets = _meets(row)
    if meets is None:
        return ["—", "—"]
    return [f"{benchmark.TARGET_RATIOS[row['pass']]:.2f}", "yes" if meets else "no"]


def _shortfall(rows: Sequence[Mapping]) -> str:
    """How many passes of the forms with targets miss :data:`~symbreak.benchmark.TARGET_RATIOS`, as words."""
    targeted = [r for r in rows if r["form"] != "full"]
    missed = sum(not _meets(r) for r in targeted)
    if not missed:
        return f"every one of the {len(targeted)} passes meets its target"
    verb = "is below its" if missed == 1 else "are below their"
    return f"{missed} of the {len(targeted)} passes {verb} target"


def glue_reference(reference: dict) -> str:
    """Glue the recorded run of ``make bench`` (``bench-ref-*``): its two tables, configuration and summary numbers.

    ``bench-ref-table``: per form and pass, GFLOP/s, the share of the measured peak,
    the ratio to the layer's own products (median, and min–max), its target and whether the median meets it, the
    ratio to one plain matmul and the peak memory.  ``bench-ref-roofline``: each pass's two
    lower bounds per token (matmul FLOPs at the peak, elementwise bytes at the copy
    bandwidth) and which is larger.  ``bench-ref-low-fwd``, ``bench-ref-low-fwdbwd``:
    :func:`symbreak.benchmark.lowest_ratios`; ``bench-ref-shortfall`` counts the passes
    below :data:`~symbreak.benchmark.TARGET_RATIOS` (glued as ``bench-target-*``);
    ``bench-repeats`` is :data:`~symbreak.benchmark.RATIO_REPEATS`.  Returns the
    record's date with its peak, and the shortfall.
    """
    config = reference["config"]
    rows = benchmark.check_results(reference)["layers"]
    table = _by_form(
        rows,
        lambda r: (
            [f"{r['gflops']:.1f}", f"{r['share_of_peak']:.2f}", *_own(r), *_target(r)]
            + [f"{r['ratio_to_matmul']:.2f}", f"{r['peak_mib']:.1f}"]
        ),
    )
    header = ["pass", "GFLOP/s", "share of peak", "own products", _RANGE, "target", "met"]
    header += ["plain matmul", "peak MiB"]
    glue_table("bench-ref-table", header, table)
    bounds = _by_form(
        rows,
        lambda r: (
            [f"{r['matmul_ns']:,.0f}", f"{r['elementwise_ns']:,.0f}"]
            + [
                f"{r['elementwise_bytes_per_token'] / 1024:.1f}",
                "matmul" if r["matmul_ns"] >= r["elementwise_ns"] else "memory",
            ]
        ),
    )
    header = ["pass", "matmul bound (ns/token)", "memory bound (ns/token)", "elementwise KiB/token", "larger"]
    glue_table("bench-ref-roofline", header, bounds)
    lowest = benchmark.lowest_ratios(reference)
    shortfall = _shortfall(rows)
    glue_all(
        {
            "bench-ref-date": config["date"],
            "bench-ref-processor": config["processor"],
            "bench-ref-threads": config["threads"],
            "bench-ref-cpus": config["logical_cpus"],
            "bench-ref-torch": config["torch"],
            "bench-ref-matmul": (reference["matmul_gflops"], ".1f"),
            "bench-ref-peak": (reference["peak_gflops"], ".1f"),
            "bench-ref-copy": (reference["copy_gbs"], ".1f"),
            "bench-ref-low-fwd": (lowest["forward"], ".2f"),
            "bench-ref-low-fwdbwd": (lowest["forward+backward"], ".2f"),
            "bench-ref-shortfall": shortfall,
            "bench-ref-full": (reference["full_form_speedup_over_einsum"], ".1f"),
            "bench-ref-packed": (reference["packed_speedup_over_einsum"], ".1f"),
            "bench-target-fwd": (benchmark.TARGET_RATIOS["forward"], ".2f"),
            "bench-target-fwdbwd": (benchmark.TARGET_RATIOS["forward+backward"], ".2f"),
            "bench-repeats": (benchmark.RATIO_REPEATS, "d"),
        }
    )
    return "\n".join([f"recorded {config['date']}: peak {reference['peak_gflops']:.1f} GFLOP/s", shortfall])
