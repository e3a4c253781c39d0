"""symbreak.language.compare on real runs of a small protocol: summaries, primary contrasts with Holm, Shazeer.

The runs are trained (three forms, two rates, three seeds of a one-layer
model: seconds); every statistic is checked against an independent
computation: scipy's ``ttest_ind(equal_var=False)`` for Welch, Python's
:mod:`statistics` and scipy's ``t`` for the intervals, and Holm's
adjustment worked out by hand for the family.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import replace

import pytest
from scipy import stats

from conftest import chosen_test_losses, swept_records
from symbreak.language import compare as C
from symbreak.language.protocol import FORMS, TINY, Contrast, Stage
from symbreak.language.reference import NANOGPT_BABY, SHAZEER_BASELINE, SHAZEER_TABLE_1
from symbreak.language.results import best_learning_rates

SMALL = replace(
    TINY,
    name="tiny-compare",
    forms=tuple(f for f in FORMS if f.key in ("mlp-relu", "mlp-gelu", "swiglu")),
    main=Stage(seeds=(0, 1, 2), iterations=6),
)
CONTRASTS = (
    Contrast("A", "swiglu", "mlp-gelu", "gated vs plain"),
    Contrast("B", "mlp-relu", "mlp-gelu", "ReLU vs GELU"),
)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return swept_records(SMALL, tmp_path_factory.mktemp("compare"))


def _test_losses(records, key):
    return chosen_test_losses(records, SMALL, key)


def test_main_runs_are_the_chosen_rate_by_seed(records):
    runs = C.main_runs(records, SMALL)
    assert list(runs) == ["mlp-gelu", "mlp-relu", "swiglu"]
    chosen = best_learning_rates([r for r in records if r["stage"] == "lr-sweep"], SMALL)
    for key, rs in runs.items():
        assert [r["seed"] for r in rs] == [0, 1, 2] and {r["learning_rate"] for r in rs} == {chosen[key]}


def test_form_summaries_against_statistics_and_scipy(records):
    rows = {s.form.key: s for s in C.form_summaries(records, SMALL)}
    base = _test_losses(records, "mlp-gelu")
    for key, row in rows.items():
        test = _test_losses(records, key)
        assert row.n == 3 and row.test.mean == pytest.approx(statistics.fmean(test), rel=1e-14)
        half = stats.t.ppf(0.975, 2) * statistics.stdev(test) / math.sqrt(3)
        assert row.test.half_width == pytest.approx(half, rel=1e-12)
        if key == "mlp-gelu":
            assert row.versus_baseline is None and row.reading is None
            continue
        ref = stats.ttest_ind(test, base, equal_var=False)
        assert row.versus_baseline.p_value == pytest.approx(ref.pvalue, rel=1e-10)
        expected = "level" if ref.pvalue >= 0.05 else ("better" if ref.statistic < 0 else "worse")
        assert row.reading == expected


def test_primary_contrasts_are_holm_adjusted(records):
    results = C.primary_results(records, SMALL, CONTRASTS)
    raw = [
        stats.ttest_ind(_test_losses(records, c.a), _test_losses(records, c.b), equal_var=False).pvalue
        for c in CONTRASTS
    ]
    small, large = sorted(raw)
    by_hand = {small: min(1.0, 2 * small), large: max(min(1.0, 2 * small), large)}  # m = 2
    for result, p in zip(results, raw, strict=True):
        assert result.welch.p_value == pytest.approx(p, rel=1e-10)
        assert result.p_holm == pytest.approx(by_hand[p], rel=1e-10)
        assert result.reading == (
            "level" if result.p_holm >= 0.05 else "better" if result.welch.difference < 0 else "worse"
        )


def test_sweep_grid_and_curves(records):
    grid = C.sweep_grid(records, SMALL)
    for key, row in grid.items():
        assert list(row) == list(SMALL.lr_sweep.learning_rates)
        best = best_learning_rates([r for r in records if r["stage"] == "lr-sweep"], SMALL)[key]
        assert min(row, key=row.get) == best
    curves = C.mean_curves(records, SMALL)
    iterations, mean = curves["swiglu"]
    runs = C.main_runs(records, SMALL)["swiglu"]
    assert iterations == runs[0]["curve"]["iteration"]
    assert mean[-1] == pytest.approx(statistics.fmean(r["curve"]["validation"][-1] for r in runs), rel=1e-14)


def test_shazeer_rows_follow_his_table(records):
    rows = C.shazeer_rows(records, SMALL)
    assert [r.row.name for r in rows] == [r.name for r in SHAZEER_TABLE_1]
    assert rows[0].agreement == "baseline" and rows[0].row is SHAZEER_BASELINE
    by_name = {r.row.name: r for r in rows}
    assert by_name["FFN_Swish"].agreement == "not run here"  # no plain SiLU MLP in the book
    assert by_name["FFN_GLU"].agreement == "not run here"  # not in this small protocol
    gelu = by_name["FFN_GELU"]
    assert gelu.his_difference == pytest.approx(1.983 - 1.997) and gelu.his_reading == "better"
    ref = stats.ttest_ind(_test_losses(records, "mlp-gelu"), _test_losses(records, "mlp-relu"), equal_var=False)
    assert gelu.our_difference.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert gelu.agreement == {"level": "level here", "better": "agrees", "worse": "disagrees"}[gelu.our_reading]


def test_the_quoted_references_are_the_sources_numbers():
    """nanoGPT's README: 'a loss of only 1.88'; Shazeer (2020), Table 1 at 65,536 steps: ReLU 1.997, GLU 1.982,
    Bilinear 1.960, GEGLU lowest."""
    assert NANOGPT_BABY.validation_loss == 1.88 and NANOGPT_BABY.n_embd == 128 and NANOGPT_BABY.iterations == 2000
    values = {r.name: r.steps_65k for r in SHAZEER_TABLE_1}
    assert values["FFN_ReLU (baseline)"] == 1.997 and values["FFN_GLU"] == 1.982 and values["FFN_Bilinear"] == 1.960
    assert min(values, key=values.get) == "FFN_GEGLU"


def test_incomplete_or_bad_input_is_refused(records):
    with pytest.raises(ValueError, match="missing 1, e.g. main/"):
        C.main_runs(
            [r for r in records if not (r["stage"] == "main" and r["seed"] == 2 and r["form_key"] == "swiglu")], SMALL
        )
    with pytest.raises(TypeError, match="protocol: expected a Protocol"):
        C.main_runs(records, "baby-gpt")
    with pytest.raises(TypeError, match="records: expected a list of stored results"):
        C.form_summaries("results/", SMALL)
    with pytest.raises(ValueError, match="field: expected 'validation' or 'test'"):
        C.final_losses([], "train")
    with pytest.raises(ValueError, match="expected the form 'mlp-relu'"):
        C.shazeer_rows(records, replace(SMALL, forms=tuple(f for f in SMALL.forms if f.key != "mlp-relu")))
    diverged = json.loads(json.dumps(records[0]))
    diverged["final"]["test"] = None
    assert C.final_losses([diverged], "test") == [math.inf]


def test_the_intro_quotes_the_same_table():
    """The intro's table of Shazeer's Table 1 and symbreak.language.reference hold the same numbers (one source)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "book" / "intro.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[1][:1].isdigit():
            rows[cells[0]] = (float(cells[1]), float(cells[2]))
    quoted = {
        r.name.removeprefix("FFN_").removesuffix(" (baseline)"): (r.steps_65k, r.steps_524k) for r in SHAZEER_TABLE_1
    }
    assert rows == quoted
