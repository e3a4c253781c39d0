"""Chapter 10's benchmark tables (``symbreak.pages.ch10_bench``): one row group per form, a row per pass."""

from __future__ import annotations

import copy

import pytest

from symbreak import benchmark
from symbreak.pages import ch10_bench
from test_pages_ch10 import _rows


def test_bench_sizes(glued):
    text = ch10_bench.glue_bench_sizes()
    assert glued["bench-n"] == f"{benchmark.N:,}" and glued["bench-m-full"] == f"{benchmark.M_FULL:,}"
    assert text.splitlines()[0] == f"make bench: batch {benchmark.N}, d = {benchmark.D}, m = {benchmark.M},"


class _Layer:
    def __init__(self, d, m, rank=None):
        self.d, self.m, self.rank = d, m, rank


def _row(form, pass_name, **values):
    row = {"form": form, "pass": pass_name, "gflops": 12.345, "ratio_to_matmul": 0.5, "peak_mib": 1.0}
    row |= {"ratio_to_own_products": 0.8, "ratio_to_own_products_min": 0.75, "ratio_to_own_products_max": 0.9}
    return row | values


def test_throughput_glue_names_the_forms_and_gives_the_spread(glued):
    rows = [_row("rankR", "forward")]
    layers = {"kv": _Layer(64, 256), "rankR": _Layer(64, 256, 4), "full": _Layer(16, 64)}
    ch10_bench.glue_throughput(rows, layers, n=512, threads=1)
    sizes = {key: glued[f"bench-live-{key}"] for key in ("n", "d", "m", "rank", "d-full", "m-full", "threads")}
    # one number each, for a caption that sets d, m, R as maths around them
    assert sizes == {
        "n": "512",
        "d": "64",
        "m": "256",
        "rank": "4",
        "d-full": "16",
        "m-full": "64",
        "threads": "one thread",
    }
    assert "bench-live-sizes" not in glued
    assert _rows(glued["bench-live-table"]) == [
        ["**rank-$R$**", "", "", "", "", ""],  # the form in a row of its own, then one row per pass
        ["forward", "12.3", "0.80", "0.75–0.90", "0.50", "1.00"],
    ]
    with pytest.raises(ValueError, match=r"layers: expected the keys \['kv', 'rankR', 'full'\]"):
        ch10_bench.glue_throughput(rows, {"kv": _Layer(1, 1)}, n=1, threads=1)


def test_reference_glue_and_lines(glued):
    reference = copy.deepcopy(benchmark.reference_results())
    for i, row in enumerate(reference["layers"]):  # the lowest own-products ratios of the four vector forms: 0.6, 0.7
        ratio = 0.1 if row["form"] == "full" else (0.6 if i == 2 else 0.7 if i == 5 else 0.96)
        row |= {"ratio_to_own_products": ratio, "ratio_to_own_products_min": ratio / 2}
        row |= {"ratio_to_own_products_max": 1.0, "matmul_ns": 2.0, "elementwise_ns": 1.0 if i else 3.0}
    lines = ch10_bench.glue_reference(reference).splitlines()
    assert lines[1] == glued["bench-ref-shortfall"] == "2 of the 8 passes are below their target"
    assert (glued["bench-ref-low-fwd"], glued["bench-ref-low-fwdbwd"]) == ("0.60", "0.70")
    rows = _rows(glued["bench-ref-table"])  # per form: its name in bold, then forward, forward + backward
    names = ["standard MLP", "symmetric rank-1", "rank-$R$", "gated MLP", "full, packed $\\mathrm{sym}(W_j)$"]
    assert [r[0] for r in rows[::3]] == [f"**{name}**" for name in names]
    assert all(r[1:] == [""] * 8 for r in rows[::3])
    assert [r[0] for r in rows[1:3]] == ["forward", "forward\u00a0+\u00a0backward"]  # spaced, on one line
    assert rows[-1][3:7] == ["0.10", "0.05–1.00", "—", "—"]  # the full form has no target
    passes = [r for i, r in enumerate(rows[:9]) if i % 3]  # the six passes of the first three forms
    assert [r[5:7] for r in passes] == [["0.95", "yes"], ["0.90", "yes"], ["0.95", "no"], ["0.90", "yes"]] + [
        ["0.95", "yes"],
        ["0.90", "no"],
    ]
    bounds = _rows(glued["bench-ref-roofline"])
    assert [r[-1] for r in bounds[1:3]] == ["memory", "matmul"]
    assert glued["bench-ref-date"] == reference["config"]["date"]
    assert (glued["bench-target-fwd"], glued["bench-target-fwdbwd"], glued["bench-repeats"]) == ("0.95", "0.90", "11")
    for r in reference["layers"]:
        r |= {"ratio_to_own_products": 0.99, "ratio_to_own_products_max": 1.0}
    assert ch10_bench.glue_reference(reference).splitlines()[1] == "every one of the 8 passes meets its target"
    reference["layers"][0]["ratio_to_own_products"] = 0.5
    assert ch10_bench.glue_reference(reference).splitlines()[1] == "1 of the 8 passes is below its target"
