"""symbreak.pages.ch15: chapter 15's tables, glued values and figures, read from (tiny) stored digits runs."""

from __future__ import annotations

import numpy as np
import pytest

from figure_checks import clashes
from symbreak.experiments import EXPLORATORY, PRIMARY, Result, pair_tests
from symbreak.experiments.sweep import DIGITS, TINY_DIGITS, chosen_rates, load_small, results_at, run_small
from symbreak.pages import ch15
from symbreak.plotting.curves import FAINT
from test_pages_ch14 import swap_results, t_interval, table_rows  # the same table reader and t-interval

#: Every form of the book's digits protocol, tiny otherwise (seconds): enough for every table and verdict.
PAGE = {**TINY_DIGITS, "name": "digits-page", "forms": DIGITS["forms"], "max_steps": 10}
FORMS = list(PAGE["forms"])


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("digits-page")
    run_small(PAGE, folder, jobs=1, progress=False)
    return load_small(folder, PAGE)


@pytest.fixture(scope="module")
def rates(records):
    return chosen_rates(records)


def _results(shift: dict[str, float]) -> list[Result]:
    """Four seeds of every form with error rates 0.03 + a spread, plus ``shift[form]``."""
    spread = (0.0, 0.002, 0.004, 0.006)
    return [
        Result("digits", f, s, 17, 2820, 0.1, 0.03 + spread[s] + shift.get(f, 0.0), None)
        for f in FORMS
        for s in range(4)
    ]


def test_first_split_and_chosen_records(records, rates):
    task = ch15.first_split(DIGITS)
    assert (task.d, task.d_out, len(task.X_train), len(task.X_test)) == (64, 10, 600, 897)
    chosen = ch15.chosen_records(records, rates)
    assert len(chosen) == len(FORMS) * len(PAGE["seeds"])
    assert all(r["learning_rate"] == rates[("digits", r["form"])] for r in chosen)
    with pytest.raises(ValueError, match="protocol: expected the keys"):
        ch15.first_split({"seeds": (0,)})
    with pytest.raises(ValueError, match="records: expected records at the chosen rates"):
        ch15.chosen_records(records, {key: 1.0 for key in rates})


def test_glue_setup_glues_the_protocol_and_the_stage(glued, records):
    text = ch15.glue_setup(PAGE, records)
    expected = {"n-train": "60", "n-val": "30", "n-test": "40", "d": "64", "d-out": "10", "m0": "4"}
    expected |= {"budget": str(4 * (64 + 10)), "n-seeds": "2", "n-forms": "12", "n-rates": "2", "grid": "0.01, 0.03"}
    expected |= {"max-steps": "10", "eval-every": "5", "patience": "2", "patience-steps": "10", "n-runs": "48"}
    expected |= {"side": "8", "n-images": "1,797", "std-floor": "1", "n-lowrank-forms": "14"}
    expected |= {"dropped-forms": "MLP (ReLU) and the symmetric rank-4 (SiLU)", "seeds": "0 and 1"}
    assert {k: glued[k] for k in expected} == expected
    masked = sorted({r["masked_pixels"] for r in records})
    assert glued["n-masked"] == (f"{masked[0]}" if len(masked) == 1 else f"{masked[0]} to {masked[-1]}")
    assert glued["stage-cpu"] == f"{sum(r['wall_s'] for r in records) / 60:.0f}"
    assert text.splitlines()[0] == "digits: 60 training, 30 validation and 40 test images per seed,"


def test_glue_forms_is_chapter_14s_table_on_the_digits(glued, records, rates):
    ch15.glue_forms(results_at(records, rates), PAGE)
    rows = table_rows(glued["forms-table"])
    assert len(rows) == len(FORMS) and rows[FORMS.index("SwiGLU")][0] == "SwiGLU"
    assert glued["skip-parameters"] == "650"  # S is 10 × 64 and c has 10 entries


def test_glue_training_table_and_phrases(glued, records, rates):
    text = ch15.glue_training(records, rates, FORMS)
    header = table_rows("x\n-\n" + glued["comparison-table"].splitlines()[0])[0]
    assert header == ["form", "η (validation)", "median best step", "stopped early", "training error"] + [
        "validation error",
        "test error\u00a0±\u00a095\u00a0%",
    ]
    chosen = [r for r in ch15.chosen_records(records, rates) if r["form"] == "SwiGLU"]
    mean, half = t_interval([r["result"]["test_metric"] for r in chosen])
    row = table_rows(glued["comparison-table"])[FORMS.index("SwiGLU")]
    assert row[1] == f"{rates[('digits', 'SwiGLU')]:g}"
    assert row[-1] == f"{100 * mean:.1f}\u00a0±\u00a0{100 * half:.1f}\u00a0%"
    assert row[3] == f"{sum(r['stopped_early'] for r in chosen)}/2"
    assert row[5] == f"{100 * np.mean([r['validation_error'] for r in chosen]):.1f}\u00a0%"
    order = text.removeprefix("best first: ").split(", ")
    assert sorted(order) == sorted(FORMS) and glued["best-three"] == f"{order[0]}, {order[1]} and {order[2]}"
    # a grid of two rates has only ends; the forms listed as a sentence lists them
    assert glued["at-edge"] == f"for all 12 forms ({', '.join(FORMS[:-1])} and {FORMS[-1]})"
    assert sum(r["stopped_early"] for r in records) == 0  # the synthetic runs all run to the limit
    assert (glued["stopped-early"], glued["ran-to-limit"]) == ("none of the 48", "all")
    medians = [
        int(np.median([r["best_step"] for r in ch15.chosen_records(records, rates) if r["form"] == f])) for f in FORMS
    ]
    low, high = min(medians), max(medians)
    assert glued["best-step-range"] == (f"{low:,}" if low == high else f"{low:,} to {high:,}")
    # the forms at the grid's lowest rate, named for the caveat of §15.3 and §15.5
    lowest = [f for f in FORMS if rates[("digits", f)] == 0.01]
    assert ch15.at_lowest_rate(records, rates, FORMS) == lowest and glued["lowest-rate"] == "0.01"
    expected = {0: "none of the 12 forms", 12: "all 12 forms"}.get(len(lowest), f"{len(lowest)} of the 12 forms")
    assert glued["n-at-lowest"] == expected
    # "Of the 12 forms, 4 chose …": the count alone, for a sentence that names the forms first
    count = {0: "none", 12: "all"}.get(len(lowest), str(len(lowest)))
    assert glued["n-at-lowest-count"] == count
    assert glued["at-lowest"] == (ch15.listed(lowest) if lowest else "none")


def test_the_curves_have_rows_per_chosen_rate_each_line_named_once(glued, records, rates):
    """Fig. 15.1: rows of panels (training, validation) per chosen η, largest first, at most four forms to a row, a
    family's forms together (ch14.family_chunks); each form drawn in one row only, over its rate's other forms
    (faint), named once at its end in the row's right panel, no two names nor a name and a panel overlapping."""
    from symbreak.pages import ch14

    ch15.glue_curves(records, rates, FORMS)
    fig = glued["fig-digits-curves"]
    chosen = sorted({rates[("digits", f)] for f in FORMS}, reverse=True)
    expected = [
        (rate, chunk)
        for rate in chosen
        for chunk in ch14.family_chunks([f for f in FORMS if rates[("digits", f)] == rate])
    ]
    assert len(fig.axes) == 2 * len(expected) and all(len(chunk) <= 4 for _, chunk in expected)
    drawn = []
    for i, (rate, members) in enumerate(expected):
        same_rate = [f for f in FORMS if rates[("digits", f)] == rate]
        train, val = fig.axes[2 * i : 2 * i + 2]
        assert [train.get_title(), val.get_title()] == [
            f"training loss, η = {rate:g}",
            f"validation loss, η = {rate:g}",
        ]
        for ax in (train, val):
            own = [line.get_label() for line in ax.lines if line.get_color() != FAINT]
            faint = [line for line in ax.lines if line.get_color() == FAINT]
            assert ax.get_yscale() == "log" and own == members and len(faint) == len(same_rate) - len(members)
        assert sorted(t.get_text() for t in val.texts) == sorted(members) and not train.texts
        assert all(ax.get_legend() is None for ax in (train, val))
        drawn += members
    assert sorted(drawn) == sorted(FORMS)
    assert clashes(fig, pad_pt=0) == []


def test_the_figures(glued, records, rates):
    fig, axes = ch15.glue_error_figure(records, rates, FORMS)
    assert glued["fig-training-comparison-digits"] is fig and len(axes[0].lines) == len(FORMS)
    assert axes[0].get_xscale() == "log" and axes[1].get_xlabel() == "error rate at the chosen η (%)"
    means = axes[1].containers[0].lines[0].get_xdata()  # the test error rates, in per cent
    final = results_at(records, rates)
    expected = [100 * np.mean([r.test_metric for r in final if r.form == f]) for f in FORMS]
    assert np.allclose(means, expected, rtol=1e-3)


def test_glue_comparisons_reads_the_holm_family(glued):
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    level = _results({})
    text = ch15.glue_comparisons(level)
    assert glued["primary-summary"] == f"no measurable difference in any of the {len(primary)} primary comparisons"
    assert (
        glued["p1"] == "level for all three"
        and glued["p2"] == "level against all three"
        and glued["control"] == "level for both"
    )
    assert glued["n-primary"] == str(len(primary)) and glued["glu-vs-bilinear"] == "level"
    assert glued["symmetrised-vs-symmetric"] == "level for both"
    better = _results({"SwiGLU": -0.02})  # SwiGLU far below every other form
    glued.clear()  # the fixture keeps the first value glued under a name
    text = ch15.glue_comparisons(better)
    for t in pair_tests(better, ["digits"], primary, corrected=True):
        assert f"   {t.a} − {t.b}: {t.word}" in text
    assert glued["p1"] == "level for ReGLU and GEGLU but better for SwiGLU"  # grouped by the word
    assert glued["p2"] == "level against ReGLU and GEGLU but worse against SwiGLU"
    assert glued["primary-summary"].startswith("a measurable difference in 3 of the 8 primary comparisons (")
    assert "SwiGLU better than symmetric (SiLU)" in glued["primary-summary"]
    assert glued["symmetrised-vs-symmetric"] == "level for both"  # SwiGLU is in none of these pairs
    rows = table_rows(glued["exploratory-table"])
    assert len(rows) == len(EXPLORATORY) and rows[0][0] == "GLU (sigmoid) − bilinear (σ = id)"
    assert glued["edge-won"] == glued["edge-open"] == "none"  # no form named at an end of the grid
    assert table_rows(glued["primary-table"])[2][1].startswith(
        "−2.000\u00a0±\u00a0"
    )  # in percentage points, three decimals, with a minus sign


def test_edge_readings_include_the_standard_mlp_with_another_form_at_the_grid_end(glued):
    """Review: the standard GELU MLP level with the sigmoid GLU, both at the grid's lowest rate, was missing from the
    comparisons that a lower grid might change (the chapter's opener quotes it)."""
    level = _results({"MLP (GELU)": -0.02})  # the standard MLP far below every other form: better than each
    ch15.glue_comparisons(level, edge=["MLP (GELU)", "GLU (sigmoid)"])
    assert "MLP (GELU) better than GLU (sigmoid)" in glued["edge-open"].split("; ")
    assert "MLP (GELU)" not in glued["edge-won"]  # its wins over the other forms are said by mlp-best
    glued.clear()
    ch15.glue_comparisons(level, edge=["GLU (sigmoid)"])  # the standard MLP not at the end: none of its comparisons
    assert "MLP (GELU)" not in glued["edge-open"] + glued["edge-won"]


def test_the_swap_table_puts_the_percent_in_the_header(glued):
    from symbreak.pages import ch14_stats

    final = swap_results(["digits"], FORMS, n_seeds=4)
    ch14_stats.glue_swap_baselines(final, ["digits"], FORMS, error_format=ch15.PERCENT)
    # one task: the verdict does not name it
    expected = "the change is larger after training than at initialisation only for tanh gating"
    assert glued["swap-verdict"] == expected
    header = glued["swap-table"].splitlines()[0]
    assert "error (%)" in header and "error, block removed (%)" in header
    rows = table_rows(glued["swap-table"])
    assert rows and all("%" not in cell for row in rows for cell in row[3:])


def test_edge_readings_keep_what_a_form_at_the_grids_end_wins():
    """A form chosen at the grid's end has errors that a grid reaching further could only improve: a comparison it
    wins stands, one it draws or loses may not, and so may one between two such forms (the caveat of §15.3 and
    §15.5)."""
    shift = {"GLU (sigmoid)": -0.02, "symmetrised (GELU)": 0.02, "MLP (GELU)": -0.02}
    tests = pair_tests(_results(shift), ["digits"], [*EXPLORATORY, ("MLP (GELU)", "GLU (sigmoid)")], corrected=False)
    edge = ["GLU (sigmoid)", "symmetrised (GELU)", "MLP (GELU)"]
    won, undecided = ch15.edge_readings(tests, edge)
    assert won == ["GLU (sigmoid) better than bilinear (σ = id)"]
    assert undecided == [
        "symmetrised (GELU) worse than symmetric (GELU)",
        "MLP (GELU) level with GLU (sigmoid)",
    ]
    assert ch15.edge_readings(tests, []) == ([], [])
    # a gated form ahead of its control at the edge: the control's loss may not stand
    (control,) = pair_tests(_results({"GEGLU": -0.02}), ["digits"], [("GEGLU", "symmetrised (GELU)")], corrected=False)
    assert ch15.edge_readings([control], ["symmetrised (GELU)"]) == ([], ["GEGLU better than symmetrised (GELU)"])


def test_stopped_phrases_name_the_runs_that_ran_to_the_limit():
    """Review: "599 of 600 runs stopped …, the rest ran to it" (the rest being one run)."""
    assert ch15.stopped_phrases(599, 600) == ("599 of the 600", "the other one")
    assert ch15.stopped_phrases(590, 600) == ("590 of the 600", "the other 10")
    assert ch15.stopped_phrases(600, 600) == ("all 600", "none")
    assert ch15.stopped_phrases(0, 600) == ("none of the 600", "all")
    with pytest.raises(ValueError, match="part: expected a count from 0 to 600"):
        ch15.stopped_phrases(601, 600)
