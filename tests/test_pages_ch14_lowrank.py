"""Chapter 14's low-rank page: the regime's numbers, baselines, tables and verdicts read from (tiny) stored runs."""

from __future__ import annotations

import numpy as np
import pytest

from symbreak.experiments import PRIMARY, Result, make_task, pair_tests
from symbreak.experiments.lowrank import LOWRANK_TASKS, least_squares_error
from symbreak.experiments.sweep import SMALL, TINY_SMALL, chosen_rates, load_small, results_at, run_small
from symbreak.pages import ch14_lowrank

#: Every form and task of the book's protocol, tiny otherwise (seconds): enough for every table and verdict.
PAGE = {
    **TINY_SMALL,
    "name": "small-page",
    "tasks": SMALL["tasks"],
    "forms": SMALL["forms"],
    "learning_rates": (1e-2, 3e-2),
    "max_steps": 10,
}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small-page")
    run_small(PAGE, folder, jobs=1, progress=False)
    return load_small(folder, PAGE)


def test_every_task_has_a_short_name():
    assert set(ch14_lowrank.SHORT) == set(LOWRANK_TASKS) and len(set(ch14_lowrank.SHORT.values())) == len(LOWRANK_TASKS)


def test_regime_values_of_the_book_protocol():
    v = ch14_lowrank.regime_values(SMALL)
    assert (v["lr-d"], v["lr-d-out"], v["lr-m0"], v["lr-m"]) == (16, 8, 8, 5)
    assert v["lr-block-params"] == 5 * (2 * 16 + 8) == 200 and v["lr-quadratic-dim"] == 8 * 16 * 17 // 2 == 1088
    assert v["lr-rank-bound"] == 10 < v["lr-d"] and v["lr-features"] == 1 + 16 + 136
    assert v["lr-m-rank4"] == round(8 * 24 / (8 * 16 + 8)) == 1 and v["lr-n-tasks"] == 2
    assert v["lr-patience-steps"] == SMALL["patience"] * SMALL["eval_every"]
    assert v["lr-seeds"] == "0–4"  # review 9: Remark 14.2 names its seeds
    assert "lr-d" in ch14_lowrank.glue_regime(SMALL)
    labels = [(label, r, m) for _, label, _, r, m in ch14_lowrank._floor_groups(SMALL)]
    assert labels[:2] == [
        ("floor of every standard MLP", 1, 8),
        ("floor of every rank-1, gated and symmetrised block", 2, 5),
    ]


def test_baselines_per_seed_and_their_glue(glued):
    found = ch14_lowrank.baselines(PAGE, "full-rank quadratic")
    assert all(len(v) == len(PAGE["seeds"]) for v in found.values())
    assert max(found["least squares [1, x, x_a x_b]"]) < 1e-20  # the target is quadratic and noise-free
    odd = ch14_lowrank.baselines(PAGE, "quadratic + odd")
    assert min(odd["least squares [1, x, x_a x_b]"]) > 1e-3  # its odd part tanh(x u) is not quadratic
    text = ch14_lowrank.glue_baselines(PAGE)
    assert "lr-ls-quadratic-quad: zero up to rounding" in text and "lr-ls-quadratic-odd: 0." in text
    assert "lr-floor-mlp-quad" in text and "lr-floor-gated-odd" in text and "lr-floor-rank4-quad" in text
    first_row = glued["lowrank-baselines-table"].splitlines()[2]
    # the quadratic task's least-squares errors (below 1e-20, asserted above) as a bound, not "0.000 (range …)"
    assert first_row.split(" | ")[3] == "<\u00a00.001 in every run"  # a no-break space after "<"
    labels = [row.split(" | ")[0].removeprefix("| ") for row in glued["lowrank-baselines-table"].splitlines()[2:]]
    # the features, r and m set as maths, as the prose sets them
    assert labels[0] == "least squares on $[1, x, x_a x_b]$ (training tokens), test error"
    assert labels[1] == "least squares on $[1, x]$ (training tokens), test error"
    # r and m in columns of their own, so that a label does not wrap around them (Table 14.8 in the PDF)
    rows = [[c.strip() for c in row.strip("|").split(" | ")] for row in glued["lowrank-baselines-table"].splitlines()]
    assert rows[0][:3] == ["quantity (relative to the target variance)", "$r$", "$m$"]
    assert [r[:3] for r in rows[5:]] == [
        ["floor of every standard MLP", "$1$", "$4$"],  # m0 = 4 here
        ["floor of every rank-1, gated and symmetrised block", "$2$", "$2$"],
        ["floor of the symmetric rank-4 (SiLU) block", "$8$", "$1$"],
    ]
    assert rows[2][1:3] == ["", ""] and " (range " not in glued["lowrank-baselines-table"]  # the caption says "range"


def test_the_verdicts_are_those_of_the_holm_corrected_family_over_both_tasks(glued, records):
    text = ch14_lowrank.glue_lowrank(records, PAGE)
    final = results_at(records, chosen_rates(records))
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    tests = pair_tests(final, list(PAGE["tasks"]), primary, corrected=True)
    assert len(tests) == 2 * len(primary)
    for t in tests:
        assert f"{t.task}: {t.a} − {t.b}: {t.word}" in text
        assert t.word in ("better", "worse", "level")
    assert glued["lowrank-table-quad"].splitlines()[0].startswith("| form | $m$ | η (validation) |")
    # the least gap to the floor, said once when both tasks have the same
    gaps = [glued[f"lr-gap-min-{s}"] for s in ("quad", "odd")]
    assert glued["lr-gap-min"] == (
        f"{gaps[0]} on both tasks"
        if gaps[0] == gaps[1]
        else f"{gaps[0]} on the full-rank quadratic task and {gaps[1]} on the quadratic + odd task"
    )
    for form in ("glu", "tanh"):
        words = [glued[f"lr-{form}-vs-bilinear-{s}"] for s in ("quad", "odd")]
        assert glued[f"lr-{form}-vs-bilinear"] in (
            f"{words[0]} on both tasks",
            f"{words[0]} on the full-rank quadratic task and {words[1]} on the quadratic + odd task",
        )
    # a grid of two rates has only ends: every form on each task, the forms grouped by task
    forms = list(PAGE["forms"])
    assert glued["lr-at-edge"] == (
        f"for {2 * len(forms)} of the {2 * len(forms)} forms and tasks ("
        f"{', '.join(forms[:-1])} and {forms[-1]} on the full-rank quadratic task; "
        f"{', '.join(forms[:-1])} and {forms[-1]} on the quadratic + odd task)"
    )
    best = glued["lr-best-three-quad"]
    assert best.count(", ") == 1 and best.count(" and ") >= 1  # "a, b and c"


def test_the_figures_have_a_column_per_task(records):
    """Fig. 14.3: a column per task, a row per σ (ch14.sigma_groups), each panel with a line per form (its group's in
    colour, the others faint), the right-hand column's named at their ends; the errors figure a panel per task."""
    from figure_checks import clashes
    from symbreak.pages import ch14

    (fig, axes), (errors, dots) = ch14_lowrank.lowrank_figure(records, PAGE, name="fig-test")
    groups = ch14.sigma_groups(list(PAGE["forms"]))
    n = len(PAGE["tasks"])
    assert len(axes) == n * len(groups) and len(dots) == n
    rates = chosen_rates(records)
    for i, members in enumerate(groups.values()):
        right = axes[i * n + n - 1]
        assert {t.get_text() for t in right.texts} <= set(members)  # a line off the panel (diverged) goes unnamed
        for j, task in enumerate(PAGE["tasks"]):
            ax = axes[i * n + j]
            rings = [line for line in ax.lines if line.get_label() == "_chosen"]
            assert len(ax.lines) == len(PAGE["forms"]) + len(members) and len(rings) == len(members)
            # each ring on its line's lowest point, at the rate chosen on validation
            assert sorted(float(r.get_xdata()[0]) for r in rings) == sorted(rates[(task, f)] for f in members)
    # a linear axis from the tick below the lowest mean up to OFF_SCALE, ticks every TICK_STEP
    low, high = axes[0].get_ylim()
    assert axes[0].get_yscale() == "linear" and high == ch14_lowrank.OFF_SCALE
    assert np.allclose(np.diff(axes[0].get_yticks()), ch14_lowrank.TICK_STEP) and axes[0].get_yticks()[0] == low
    assert clashes(fig, pad_pt=0) == []
    # the errors figure: a floor is a marker without an interval, and thin lines separate the families
    assert all(not line.get_label().startswith("_") or line.get_marker() != "s" for line in dots[0].lines)
    floors = [line for line in dots[0].lines if line.get_label() == "floor of the block"]
    assert len(floors) == 1 and floors[0].get_linestyle() == "None"
    assert len(dots[0].containers) == 1  # one error bar series: the test error
    assert len([line for line in dots[0].lines if list(line.get_xdata()) == [0, 1]]) == len(
        ch14._separators(PAGE["forms"])
    )


def test_off_panel_names_the_means_above_the_scale():
    grid, tasks = [0.1, 1.0], ["full-rank quadratic", "quadratic + odd"]
    means = {(t, "a"): [0.8, 5.0] for t in tasks} | {(t, "b"): [0.8, 0.9] for t in tasks}
    assert ch14_lowrank.off_panel(means, grid, tasks, ["a", "b"]) == "a at η\u00a0=\u00a01, on both tasks"
    means[(tasks[1], "b")] = [2.0, 3.0]
    said = ch14_lowrank.off_panel(means, grid, tasks, ["a", "b"])
    assert said == "a at η\u00a0=\u00a01, on both tasks; b at η\u00a0=\u00a00.1 and 1, on the quadratic + odd task"
    assert ch14_lowrank.off_panel({(t, "b"): [0.8, 0.9] for t in tasks}, grid, tasks, ["b"]) == "none"


def test_glue_removed_spread_reads_every_run_of_the_form(glued):
    """Tables 14.13/14.14: the sigmoid GLU's large swapped and block-removed means come from every run, not one."""
    runs = [
        Result(t, "GLU (sigmoid)", s, 5, 0, 0.0, 0.7, sw, skip_metric=sk)
        for t, s, sw, sk in [("q", 0, 2.0, 2.5), ("q", 1, 30.0, 32.0), ("o", 0, 4.0, 4.8)]
    ]
    runs.append(Result("q", "SwiGLU", 0, 5, 0, 0.0, 0.7, 90.0, skip_metric=1.0))  # another form
    ch14_lowrank.glue_removed_spread(runs)
    assert glued["lr-glu-removed"] == "2.50 to 32.00" and glued["lr-glu-removed-runs"] == "all 3"
    assert glued["lr-glu-swap-gap"] == "8\u00a0%"  # |30.7 / 32 − 1| = 4.1 %, |2.7 / 2.5 − 1| = 8 %, |4.7 / 4.8 − 1|
    with pytest.raises(ValueError, match="GLU"):
        ch14_lowrank.glue_removed_spread(runs[-1:])


def test_glue_convex_compares_least_squares_with_the_bilinear_rows():
    tasks = [make_task("bilinear teacher"), make_task("odd target")]
    rows = [
        Result(t.name, "bilinear (σ = id)", s, 19, 0, 0.0, least_squares_error(t) + 1e-6 * s, None)
        for t in tasks
        for s in (0, 1)
    ]
    assert "cv-match: the same to three decimals as" in ch14_lowrank.glue_convex(tasks, rows)
    rows = [r if r.seed else Result(**{**r.__dict__, "test_metric": r.test_metric + 0.1}) for r in rows]
    assert "not the same" in ch14_lowrank.glue_convex(tasks, rows)
