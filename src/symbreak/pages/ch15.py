"""Chapter 15's tables, glued values and figures on the digits, from the stored runs of ``make experiments-digits``.

Every number comes from the stored records (:func:`symbreak.experiments.sweep.load_small`
with :data:`~symbreak.experiments.sweep.DIGITS`) or from the digits splits they were
made on (:func:`symbreak.experiments.tasks.make_digits_split`, drawn again from the
same seeds); every verdict word from :mod:`symbreak.experiments.readings`.  Error
rates are shown in per cent and their differences in percentage points.  Each
``glue_*`` function glues what one cell of the chapter shows and returns the text
that cell prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from symbreak.coarse import PERCENT_SIGN, percent_of, snap_log
from symbreak.experiments import (
    DIGITS_STD_FLOOR,
    EXPLORATORY,
    PRIMARY,
    Result,
    Task,
    interval_text,
    pair_tests,
    summarise,
)
from symbreak.experiments.sweep import SMALL
from symbreak.experiments.tasks import DIGITS_IMAGES, make_digits_split
from symbreak.pages.ch14 import _close_below, _separators, family_chunks
from symbreak.pages.ch14 import glue_forms as _glue_forms
from symbreak.pages.ch14_stats import MLP_BEST, _cell, family_styles
from symbreak.pages.ch14_wording import phrase, seed_list
from symbreak.plotting import figure, glue_figure, interval_dots, label_ends, legend_below, log_ticks
from symbreak.plotting.curves import curve_panel
from symbreak.prose import all_or_count, glue_all, glue_table, listed

__all__ = [
    "TASK",
    "PERCENT",
    "first_split",
    "chosen_records",
    "at_lowest_rate",
    "stopped_phrases",
    "glue_setup",
    "glue_forms",
    "glue_training",
    "glue_curves",
    "glue_error_figure",
    "glue_comparisons",
]

#: The task's name in the records.
TASK = "digits"
#: How an error rate is shown: ``(format, scale, suffix)`` of :func:`symbreak.experiments.interval_text`.
PERCENT: tuple[str, float, str] = (".1f", 100.0, PERCENT_SIGN)
_SHAPE = ("n_train", "n_val", "n_test")


def first_split(protocol: Mapping[str, object]) -> Task:
    """The train/test task of the protocol's first seed (every seed's split has ``d = 64`` and 10 classes)."""
    missing = [k for k in (*_SHAPE, "seeds") if k not in protocol]
    if missing:
        raise ValueError(f"protocol: expected the keys of experiments.sweep.DIGITS, got none for {missing}")
    return make_digits_split(**{k: int(protocol[k]) for k in _SHAPE}, seed=protocol["seeds"][0])[0]


def chosen_records(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float]) -> list[Mapping]:
    """The records made at their ``(task, form)``'s chosen rate (:func:`symbreak.experiments.sweep.chosen_rates`)."""
    chosen = [r for r in records if rates[(r["task"], r["form"])] == r["learning_rate"]]
    if not chosen:
        raise ValueError("records: expected records at the chosen rates, got none")
    return chosen


def at_lowest_rate(
    records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], forms: Sequence[str]
) -> list[str]:
    """The forms of ``forms`` whose chosen rate is the lowest of the grid the records were made on: their best
    validation cross-entropy still falls at the grid's end, so a grid reaching lower could only lower it."""
    lowest = min(r["learning_rate"] for r in records)
    return [f for f in forms if rates[(TASK, f)] == lowest]


def _range(values: Sequence[float], fmt: str = "d", scale: int | float = 1) -> str:
    """``"low to high"`` of ``scale · values`` formatted by ``fmt``, or one number where both read the same."""
    low, high = scale * min(values), scale * max(values)
    return f"{low:{fmt}}" if f"{low:{fmt}}" == f"{high:{fmt}}" else f"{low:{fmt}} to {high:{fmt}}"


def glue_setup(protocol: Mapping[str, object], records: Sequence[Mapping]) -> str:
    """Glue the digits protocol (sizes, grid, stopping rule, budget), the masked pixels and the stage's run time.

    Keys: ``side``, ``n-images``, ``d``, ``d-out``, ``m0``, ``budget``, ``n-seeds``, ``seeds`` (:func:`seed_list`),
    ``n-forms``, ``n-rates``, ``grid``, ``n-train``, ``n-val``, ``n-test``, ``max-steps``, ``eval-every``,
    ``patience``, ``patience-steps``,
    ``n-lowrank-forms`` (chapter 14's low-rank protocol), ``dropped-forms`` (its forms left out here),
    ``n-runs``, ``n-masked`` (range over the seeds), ``std-floor`` and ``stage-cpu`` (minutes).  Returns the sizes.
    """
    task = first_split(protocol)
    per_seed = {r["seed"]: r["masked_pixels"] for r in records}
    values: dict[str, object] = {k.replace("_", "-"): int(protocol[k]) for k in (*_SHAPE, "max_steps", "eval_every")}
    values |= {
        "side": 8,
        "n-images": DIGITS_IMAGES,
        "d": task.d,
        "d-out": task.d_out,
        "m0": int(protocol["reference_width"]),
        "budget": int(protocol["reference_width"]) * (task.d + task.d_out),
        "n-seeds": len(protocol["seeds"]),
        "seeds": seed_list(protocol["seeds"]),
        "n-forms": len(protocol["forms"]),
        "n-lowrank-forms": len(SMALL["forms"]),
        "dropped-forms": " and the ".join(f for f in SMALL["forms"] if f not in protocol["forms"]),
        "n-rates": len(protocol["learning_rates"]),
        "grid": ", ".join(f"{lr:g}" for lr in protocol["learning_rates"]),
        "patience": int(protocol["patience"]),
        "patience-steps": int(protocol["patience"]) * int(protocol["eval_every"]),
        "n-runs": len(records),
        "n-masked": _range(list(per_seed.values())),
        "std-floor": (DIGITS_STD_FLOOR, "g"),
        "stage-cpu": f"{sum(r['wall_s'] for r in records) / 60:.0f}",
    }
    glue_all(values)
    sizes = f"{values['n-train']} training, {values['n-val']} validation and {values['n-test']} test images"
    return f"{TASK}: {sizes} per seed,\n   d = {task.d}, {task.d_out} classes, {len(records)} stored runs"


def glue_forms(final: Sequence[Result], protocol: Mapping[str, object]) -> str:
    """Chapter 14's ``forms-table`` and ``skip-parameters`` on the digits (:func:`symbreak.pages.ch14.glue_forms`)."""
    return _glue_forms(final, first_split(protocol), list(protocol["forms"]), pad=6)


def stopped_phrases(stopped: int, total: int) -> tuple[str, str]:
    """How many of ``total`` runs stopped early and how many ran to the limit, as §15.3's sentence says them ("On the
    validation criterion … runs stopped before the limit …, and … ran to it"): ``("599 of the 600", "the other
    one")``, ``("all 600", "none")``, ``("none of the 600", "all")``."""
    rest = total - stopped
    ran = "none" if rest == 0 else "all" if stopped == 0 else "the other one" if rest == 1 else f"the other {rest:,}"
    return all_or_count(stopped, total), ran


def glue_training(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], forms: Sequence[str]) -> str:
    """Glue ``comparison-table`` (per form: the chosen η, median best step, seeds stopped early, training,
    validation and test error) and the phrases ``best-three``, ``at-edge``, ``stopped-early`` ("599 of the 600"),
    ``ran-to-limit`` ("the other one"; :func:`stopped_phrases`), ``best-step-range``
    (of the medians), ``train-range``, ``val-range``, and for the forms at the grid's lowest rate
    (:func:`at_lowest_rate`) ``lowest-rate``, ``n-at-lowest`` ("4 of the 12 forms", "all 12 forms"),
    ``n-at-lowest-count`` ("4", "all", "none": for "Of the 12 forms, 4 chose …") and ``at-lowest`` (their names,
    or "none"); return the forms best first."""
    chosen = chosen_records(records, rates)
    grid = sorted({r["learning_rate"] for r in records})
    final = [Result(**r["result"]) for r in chosen]
    test = summarise(final)

    def of(form: str, key: str) -> list:
        return [r[key] for r in chosen if r["form"] == form]

    rows = [
        [
            form,
            f"{rates[(TASK, form)]:g}",
            f"{int(np.median(of(form, 'best_step'))):,}",
            f"{sum(of(form, 'stopped_early'))}/{len(of(form, 'stopped_early'))}",
            percent_of(float(np.mean(of(form, "train_error")))),
            percent_of(float(np.mean(of(form, "validation_error")))),
            interval_text(*test[(TASK, form)][:2], *PERCENT),
        ]
        for form in forms
    ]
    header = ["form", "η (validation)", "median best step", "stopped early", "training error"]
    glue_table("comparison-table", [*header, "validation error", "test error ± 95 %"], rows)
    order = sorted(forms, key=lambda f: test[(TASK, f)][0])
    edge = [f for f in forms if rates[(TASK, f)] in (grid[0], grid[-1])]
    lowest = at_lowest_rate(records, rates, forms)
    stopped = sum(r["stopped_early"] for r in records)
    glue_all(
        {
            "best-three": listed(order[:3]),
            "at-edge": f"for {all_or_count(len(edge), len(forms))} forms" + (f" ({listed(edge)})" if edge else ""),
            "stopped-early": stopped_phrases(stopped, len(records))[0],
            "ran-to-limit": stopped_phrases(stopped, len(records))[1],
            "best-step-range": _range([int(np.median(of(f, "best_step"))) for f in forms], ","),
            "train-range": _range([np.mean(of(f, "train_error")) for f in forms], ".1f", 100.0),
            "val-range": _range([np.mean(of(f, "validation_error")) for f in forms], ".1f", 100.0),
            "lowest-rate": f"{grid[0]:g}",
            "n-at-lowest": f"{all_or_count(len(lowest), len(forms))} forms",
            "n-at-lowest-count": "none" if not lowest else "all" if len(lowest) == len(forms) else str(len(lowest)),
            "at-lowest": listed(lowest) if lowest else "none",
        }
    )
    return "best first: " + ", ".join(order)


def glue_curves(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], forms: Sequence[str]) -> None:
    """Glue ``fig-digits-curves``: the training (left) and the validation (right) cross-entropy at the chosen η
    against the step as small multiples, a row of panels per chosen η, largest first (the forms of one rate stop
    after similar numbers of steps, so each rate has a step axis of its own), cut into rows of at most four forms,
    a family's forms together (:func:`~symbreak.pages.ch14.family_chunks`); each panel shows its forms over the
    other forms of its rate, faint (:func:`~symbreak.plotting.curves.curve_panel`), each line named at its end in its
    row's right panel (:func:`~symbreak.plotting.label_ends`, no legend).

    A line is the mean over the seeds, the band their 10th–90th percentile (:func:`symbreak.plotting.mean_band`),
    up to the last measurement that every seed of the form reached (four significant digits, :func:`snap_log`);
    colour and line style as in every figure of Part V (:func:`~symbreak.pages.ch14_stats.family_styles`).
    """
    chosen = chosen_records(records, rates)
    by_rate: dict[float, list[str]] = {}
    for form in forms:
        by_rate.setdefault(rates[(TASK, form)], []).append(form)
    rows = [
        (rate, chunk) for rate, members in sorted(by_rate.items(), reverse=True) for chunk in family_chunks(members)
    ]
    height = 0.55 + 2.45 * len(rows)  # inches: a row of panels each, the titles and x labels
    fig, axes = figure(ncols=2, nrows=len(rows), width=7.6, height=height, sharey="col")
    fig.subplots_adjust(left=0.09, right=0.76, top=1 - 0.3 / height, bottom=0.5 / height, wspace=0.3, hspace=0.5)
    styles = family_styles(forms)
    curves: dict[tuple[int, str], tuple] = {}  # (column, form) → (steps, samples)
    for form in forms:
        runs = [r["curve"] for r in chosen if r["form"] == form]
        n = min(len(c) for c in runs)
        points = np.array([c[:n] for c in runs])  # (seeds, measurements, [step, train, validation])
        for column in (1, 2):
            curves[(column, form)] = (points[0, :, 0], snap_log(points[:, :, column].T))
    named = []
    for i, (rate, members) in enumerate(rows):
        for ax, column, title in zip(
            axes[2 * i : 2 * i + 2], (1, 2), ("training loss", "validation loss"), strict=True
        ):
            same_rate = {form: curves[(column, form)] for form in by_rate[rate]}
            lines = curve_panel(ax, same_rate, members, styles)
            ax.set(yscale="log", xlabel="Adam step", title=f"{title}, η = {rate:g}")
        named.append((ax, lines))  # the validation panel's lines
        axes[2 * i].set_ylabel("cross-entropy")
    for ax in axes:
        log_ticks(ax)
    for ax, lines in named:
        label_ends(ax, lines, hidden="skip")
    glue_figure("fig-digits-curves", fig)


def glue_error_figure(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], forms: Sequence[str]):
    """Glue ``fig-training-comparison-digits``; return ``(fig, axes)``.

    Top: each form's best validation cross-entropy, mean over the seeds, against η (its lowest point is the
    rate chosen), each line named at its end (:func:`~symbreak.plotting.label_ends`).  Bottom: the test and the
    validation error rate (%) at the chosen η, mean ± 95 % interval.
    """
    grid = sorted({r["learning_rate"] for r in records})
    by_rate: dict[tuple[str, float], list[float]] = {}
    for r in records:
        by_rate.setdefault((r["form"], r["learning_rate"]), []).append(r["validation"])
    fig, axes = figure(nrows=2, width=7.6, height=8.4, gridspec_kw={"height_ratios": [1, 1.3]})
    fig.subplots_adjust(left=0.22, right=0.77, top=0.98, bottom=0.075, hspace=0.22)
    lines = {}
    for form, (colour, style) in family_styles(forms).items():
        line = snap_log([np.mean(by_rate[(form, lr)]) for lr in grid])
        (lines[form],) = axes[0].plot(grid, line, color=colour, ls=style, marker="o", ms=3, lw=1)
    axes[0].set(xscale="log", xlabel="learning rate η", ylabel="best validation loss (cross-entropy)")
    axes[0].set_xticks(grid, [f"{lr:g}" for lr in grid])
    axes[0].minorticks_off()
    chosen = chosen_records(records, rates)
    final = [Result(**r["result"]) for r in chosen]
    validation = [replace(f, test_metric=r["validation_error"]) for f, r in zip(final, chosen, strict=True)]
    series = {}
    for label, results in (("test error", final), ("validation error", validation)):
        summary = summarise(results)
        series[label] = tuple(snap_log([100 * summary[(TASK, f)][i] for f in forms]) for i in (0, 1))
    interval_dots(
        axes[1], forms, series, xlabel="error rate at the chosen η (%)", separators=_separators(forms), legend=False
    )
    _close_below(fig)  # the legend right under the x label
    label_ends(axes[0], lines)
    legend_below(fig, axes[1], ncol=2, tight=False)
    glue_figure("fig-training-comparison-digits", fig)
    return fig, axes


def _stated(test) -> str:
    """``"GLU (sigmoid) better than bilinear (σ = id)"``, ``"GEGLU level with symmetrised (GELU)"``."""
    return f"{test.a} level with {test.b}" if test.word == "level" else f"{test.a} {test.word} than {test.b}"


def edge_readings(tests: Sequence, edge: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(won, open)``: the comparisons of ``tests`` with a form of ``edge`` (chosen at the end of the grid, its
    errors an upper bound on what a grid reaching further would give) on one side only, split into those it wins,
    which stand however far it might improve, and those it draws or loses, which might change; a comparison of two
    forms of ``edge`` is open.  Each as :func:`_stated` words it."""
    won, undecided = [], []
    for t in tests:
        if t.a not in edge and t.b not in edge:
            continue
        ahead = t.a if t.word == "better" else t.b if t.word == "worse" else None
        alone = (t.a in edge) != (t.b in edge)
        (won if alone and ahead in edge else undecided).append(_stated(t))
    return won, undecided


def glue_comparisons(final: Sequence[Result], edge: Sequence[str] = ()) -> str:
    """Glue ``primary-table`` (Holm over the primary pairs of :data:`~symbreak.experiments.PRIMARY`),
    ``exploratory-table``, ``n-primary``, the phrases ``p1``, ``p2``, ``control``, ``<form>-vs-bilinear``,
    ``symmetrised-vs-symmetric`` and ``primary-summary`` (what came out, in words), and, for the forms ``edge`` chosen
    at an end of the grid, ``edge-won`` and ``edge-open`` (:func:`edge_readings` of the primary and exploratory
    comparisons and, where it is in ``edge``, the standard GELU MLP's with the others there, "none" where empty);
    return every verdict."""
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    found = {}
    for key, pairs, corrected in (("primary", primary, True), ("exploratory", EXPLORATORY, False)):
        found[key] = pair_tests(final, [TASK], pairs, corrected=corrected)
        header = ["pair", "Δ ± 95 % (points)", "p (Holm)" if corrected else "p", "verdict"]
        glue_table(f"{key}-table", header, [[f"{t.a} − {t.b}", *_cell(t, "+.3f", 100.0)] for t in found[key]])
    tests = found["primary"]

    def words(family: str) -> str:
        said = {
            (f"against {t.b}" if family == "P2" else f"for {t.a}"): t.word
            for t in tests
            if (t.a, t.b) in PRIMARY[family]
        }
        return phrase(said)

    measured = [f"{t.a} {t.word} than {t.b}" for t in tests if t.word != "level"]
    values: dict[str, object] = {"n-primary": len(tests)} | {family.lower(): words(family) for family in PRIMARY}
    explore = found["exploratory"]
    values |= {f"{t.a.split()[0].lower()}-vs-bilinear": t.word for t in explore if t.b == "bilinear (σ = id)"}
    values["symmetrised-vs-symmetric"] = phrase(
        {f"for {t.a}": t.word for t in explore if t.a.startswith("symmetrised")}
    )
    counted = f"{len(measured)} of the {len(tests)} primary comparisons"
    values["primary-summary"] = (
        f"no measurable difference in any of the {len(tests)} primary comparisons"
        if not measured
        else f"a measurable difference in {counted} ({'; '.join(measured)})"
    )
    # the comparisons of ch14_stats.glue_mlp_best between two forms of ``edge`` (those with the others it states)
    others = [f for f in edge if f != MLP_BEST] if MLP_BEST in edge else []
    best = pair_tests(final, [TASK], [(MLP_BEST, f) for f in others], corrected=False) if others else []
    won, undecided = edge_readings([*tests, *explore, *best], edge)
    values |= {"edge-won": "; ".join(won) or "none", "edge-open": "; ".join(undecided) or "none"}
    glue_all(values)
    lines = [f"primary (Holm over {len(tests)}):", *[f"   {t.a} − {t.b}: {t.word}" for t in tests], "exploratory:"]
    return "\n".join(lines + [f"   {t.a} − {t.b}: {t.word}" for t in found["exploratory"]])
