"""The format, targets and recorded run of ``make bench`` (``symbreak.benchrecord``)."""

from __future__ import annotations

import copy

import pytest

from symbreak import benchrecord as BR


def _results() -> dict:
    rows = []
    for i, (form, pass_name) in enumerate((f, p) for f in BR.FORMS for p in BR.PASSES):
        row = {key: 1.0 + i for key in BR.ROW_KEYS} | {"form": form, "pass": pass_name}
        row |= {"ratio_to_own_products_min": 0.5, "ratio_to_own_products": 0.5 + i / 100}
        rows.append(row | {"ratio_to_own_products_max": 0.9})
    return {key: 2.0 for key in BR.TOP_KEYS} | {"layers": rows, "config": {}}


def test_check_results_accepts_the_format_and_lowest_ratios_leave_out_the_full_form():
    results = _results()
    assert BR.check_results(results) is results
    # rows 0..7 are kv, rank1, rankR, gated (forward, forward+backward): the lowest are rows 0 and 1
    assert BR.lowest_ratios(results) == {"forward": 0.5, "forward+backward": 0.51}
    for row in results["layers"]:
        if row["form"] != "full":
            row["ratio_to_own_products"] = 0.8
    results["layers"][-1]["ratio_to_own_products"] = 0.6  # the full form's row does not count
    assert BR.lowest_ratios(results) == {"forward": 0.8, "forward+backward": 0.8}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("peak_gflops"), "missing \\['peak_gflops'\\]"),
        (lambda r: r.__setitem__("copy_gbs", 0.0), "results\\['copy_gbs'\\]: expected a positive number, got 0.0"),
        (lambda r: r["layers"].pop(), "one row per form and pass, missing \\[\\('full', 'forward\\+backward'\\)\\]"),
        (lambda r: r["layers"][3].pop("share_of_peak"), "rank1/forward\\+backward: share_of_peak"),
        (lambda r: r["layers"][0].__setitem__("ratio_to_own_products_max", 0.1), "min <= median <= max"),
        (lambda r: r["layers"][0].__setitem__("form", "dense"), "expected form in"),
    ],
)
def test_check_results_names_what_is_wrong(change, message):
    results = copy.deepcopy(_results())
    change(results)
    with pytest.raises(ValueError, match=message):
        BR.check_results(results)
    with pytest.raises(TypeError, match="results: expected a dict, got list"):
        BR.check_results([])


def test_targets_are_ratios_below_one_for_both_passes():
    assert set(BR.TARGET_RATIOS) == set(BR.PASSES)
    assert all(0 < t <= 1 for t in BR.TARGET_RATIOS.values())
