"""Chapter 14's low-rank comparison, read from the stored runs of ``make experiments-small``: tables, glue, figure.

Every task of the protocol has its own tables and phrases, named by its short name in
:data:`SHORT` (``lowrank-table-quad``, ``lr-p1-odd``); the primary family is Holm-adjusted
over every task and pair together.

Every number comes from the stored records (:func:`symbreak.experiments.sweep.load_small`)
or from the targets they were made on (:func:`symbreak.experiments.lowrank.make_lowrank_task`,
drawn again from the same seeds); every verdict word from :mod:`symbreak.experiments.readings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from symbreak.coarse import percent_of, snap_log
from symbreak.experiments import (
    Result,
    Task,
    interval_text,
    summarise,
    width_for_budget,
)
from symbreak.experiments.lowrank import block_floor, least_squares_error, make_lowrank_task, tanh_second_moment
from symbreak.experiments.sweep import chosen_rates, projections, results_at
from symbreak.pages.ch14 import _separators, sigma_grid
from symbreak.pages.ch14_stats import family_styles, glue_families
from symbreak.pages.ch14_wording import per_task, seed_list, task_said
from symbreak.plotting import figure, glue_figure, interval_dots, label_ends, legend_below
from symbreak.plotting.curves import FAINT
from symbreak.prose import all_or_count, glue_all, glue_table, listed

__all__ = [
    "SHORT",
    "OFF_SCALE",
    "regime_values",
    "baselines",
    "glue_convex",
    "glue_regime",
    "glue_baselines",
    "glue_lowrank",
    "glue_removed_spread",
    "lowrank_figure",
    "off_panel",
]


#: The top of the validation panels of :func:`lowrank_figure` (relative error, linear axis): a rate whose mean lies
#: above it (the runs that diverged, or ended further from the target than the mean) is off the panel.
OFF_SCALE = 1.3

#: The step of the labelled ticks of those panels.
TICK_STEP = 0.2

#: The short name of each low-rank task, the suffix of its glue keys and tables.
SHORT: dict[str, str] = {"full-rank quadratic": "quad", "quadratic + odd": "odd"}


def _shape(protocol: Mapping[str, object]) -> dict[str, int]:
    return {k: int(protocol[k]) for k in ("d", "d_out", "n_train", "n_val", "n_test")}


def regime_values(protocol: Mapping[str, object]) -> dict[str, object]:
    """The configured values of the low-rank protocol and the regime's numbers (a three-matrix block's ``m(2d + d_out)``
    parameters against the ``d_out d(d+1)/2`` dimensions of the quadratic maps)."""
    d, d_out, m0 = int(protocol["d"]), int(protocol["d_out"]), int(protocol["reference_width"])
    budget = m0 * (d + d_out)
    m = width_for_budget("SwiGLU", d, d_out, budget)
    return {
        "lr-d": d,
        "lr-d-out": d_out,
        "lr-m0": m0,
        "lr-budget": budget,
        "lr-m": m,
        "lr-block-params": m * (2 * d + d_out),  # Q, K (m × d each) and V (m × d_out)
        "lr-quadratic-dim": d_out * d * (d + 1) // 2,
        "lr-rank-bound": 2 * m,
        "lr-mlp-rank-bound": m0,
        "lr-features": 1 + d + d * (d + 1) // 2,
        "lr-affine-features": 1 + d,
        "lr-n-train": int(protocol["n_train"]),
        "lr-n-val": int(protocol["n_val"]),
        "lr-n-test": int(protocol["n_test"]),
        "lr-n-seeds": len(protocol["seeds"]),
        "lr-seeds": seed_list(protocol["seeds"]),
        "lr-n-forms": len(protocol["forms"]),
        "lr-n-tasks": len(protocol["tasks"]),
        "lr-m-rank4": width_for_budget("symmetric rank-4 (SiLU)", d, d_out, budget),
        "lr-grid": ", ".join(f"{lr:g}" for lr in protocol["learning_rates"]),
        "lr-n-rates": len(protocol["learning_rates"]),
        "lr-off-scale": f"{OFF_SCALE:g}",
        "lr-max-steps": int(protocol["max_steps"]),
        "lr-eval-every": int(protocol["eval_every"]),
        "lr-patience": int(protocol["patience"]),
        "lr-patience-steps": int(protocol["patience"]) * int(protocol["eval_every"]),
    }


def glue_regime(protocol: Mapping[str, object]) -> str:
    """Glue :func:`regime_values`; return them one per line."""
    values = regime_values(protocol)
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())


def baselines(protocol: Mapping[str, object], task: str) -> dict[str, list[float]]:
    """Per seed: the least-squares test errors (quadratic, affine), the share of the target's variance in its odd
    part (mean over outputs, exact) and every form's floor (``thm-lowrank-floor``)."""
    d, d_out, m0 = int(protocol["d"]), int(protocol["d_out"]), int(protocol["reference_width"])
    out: dict[str, list[float]] = {"least squares [1, x, x_a x_b]": [], "least squares [1, x]": [], "odd share": []}
    for seed in protocol["seeds"]:
        test, _, target = make_lowrank_task(task, seed=seed, **_shape(protocol))
        odd = [target.odd**2 * tanh_second_moment(float(u)) for u in torch.linalg.norm(target.U, dim=0)]
        out["odd share"].append(float(np.mean(np.asarray(odd) / target.s.numpy() ** 2)))
        out["least squares [1, x, x_a x_b]"].append(least_squares_error(test, quadratic=True))
        out["least squares [1, x]"].append(least_squares_error(test, quadratic=False))
        for form in protocol["forms"]:
            m = width_for_budget(form, d, d_out, m0 * (d + d_out))
            out.setdefault(form, []).append(block_floor(target, projections(form), m))
    return out


def _mean_text(values: Sequence[float]) -> str:
    """``"0.102 (0.095–0.112)"``: the mean and, in brackets, the range; ``"< 0.001 in every run"`` when every value
    rounds to zero."""
    v = np.asarray(values)
    if f"{np.abs(v).max():.3f}" == "0.000":
        return "< 0.001 in every run"
    return f"{v.mean():.3f} ({v.min():.3f}–{v.max():.3f})"


def _floor_groups(protocol: Mapping[str, object]) -> list[tuple[str, str, list[str], int, int]]:
    """``(key, row label, forms, r, m)`` for every distinct ``(r, m)`` of the protocol's blocks, in the forms' order
    (``"floor of every standard MLP"``; ``r`` and ``m`` go to columns of their own)."""
    d, d_out, m0 = int(protocol["d"]), int(protocol["d_out"]), int(protocol["reference_width"])
    groups: dict[tuple[int, int], list[str]] = {}
    for form in protocol["forms"]:
        groups.setdefault((projections(form), width_for_budget(form, d, d_out, m0 * (d + d_out))), []).append(form)
    out = []
    for (r, m), forms in groups.items():
        key = {1: "mlp", 2: "gated"}.get(r, f"rank{r // 2}")
        who = {1: "every standard MLP", 2: "every rank-1, gated and symmetrised block"}.get(
            r, f"the {listed(forms)} block"
        )
        out.append((key, f"floor of {who}", forms, r, m))
    return out


def glue_baselines(protocol: Mapping[str, object]) -> str:
    """Glue ``lowrank-baselines-table`` (a column per task) and, per task, the least-squares errors and the floors
    as text (``lr-ls-quadratic-<short>``, ``lr-floor-<group>-<short>``); return them."""
    tasks = list(protocol["tasks"])
    found = {task: baselines(protocol, task) for task in tasks}
    groups = _floor_groups(protocol)
    rows = [
        ["least squares on $[1, x, x_a x_b]$ (training tokens), test error", "", ""]
        + [_mean_text(found[t]["least squares [1, x, x_a x_b]"]) for t in tasks],
        ["least squares on $[1, x]$ (training tokens), test error", "", ""]
        + [_mean_text(found[t]["least squares [1, x]"]) for t in tasks],
        ["share of the variance in the odd part", "", ""] + [_mean_text(found[t]["odd share"]) for t in tasks],
    ]
    rows += [
        [label, f"${r}$", f"${m}$"] + [_mean_text(found[t][forms[0]]) for t in tasks]
        for _, label, forms, r, m in groups
    ]
    glue_table("lowrank-baselines-table", ["quantity (relative to the target variance)", "$r$", "$m$", *tasks], rows)
    values = {}
    for task in tasks:
        ls_q, sfx = found[task]["least squares [1, x, x_a x_b]"], SHORT[task]
        values[f"lr-ls-quadratic-{sfx}"] = "zero up to rounding" if max(ls_q) < 1e-20 else f"{float(np.mean(ls_q)):.3f}"
        values[f"lr-ls-affine-{sfx}"] = f"{float(np.mean(found[task]['least squares [1, x]'])):.3f}"
        values[f"lr-odd-share-{sfx}"] = percent_of(float(np.mean(found[task]["odd share"])))
        for key, _, forms, _, _ in groups:
            values[f"lr-floor-{key}-{sfx}"] = f"{float(np.mean(found[task][forms[0]])):.3f}"
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())


def _selected(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float], key: str) -> dict:
    """``{(task, form): [the record's key per seed]}`` at the chosen rates."""
    out: dict[tuple[str, str], list] = {}
    for r in records:
        if rates[(r["task"], r["form"])] == r["learning_rate"]:
            out.setdefault((r["task"], r["form"]), []).append(r[key])
    return out


def glue_lowrank(records: Sequence[Mapping], protocol: Mapping[str, object]) -> str:
    """Glue a comparison table per task (``lowrank-table-<short>``), the primary (Holm over every task and pair) and
    exploratory tables and their verdict phrases (:func:`~symbreak.pages.ch14_stats.glue_families`); return them."""
    forms, tasks = list(protocol["forms"]), list(protocol["tasks"])
    rates = chosen_rates(records)
    final = results_at(records, rates)
    summary = summarise(final)
    best, early = _selected(records, rates, "best_step"), _selected(records, rates, "stopped_early")
    header = ["form", "$m$", "η (validation)", "median best step", "stopped early", "test error ± 95 %", "floor"]
    values: dict[str, object] = {"lr-n-runs": len(records)}
    edge: dict[str, list[str]] = {}
    gaps = []
    grid = (min(protocol["learning_rates"]), max(protocol["learning_rates"]))
    for task in tasks:
        floors, sfx = baselines(protocol, task), SHORT[task]
        rows = []
        for form in forms:
            mean, half, _ = summary[(task, form)]
            rows.append(
                [
                    form,
                    str(next(r.width for r in final if r.form == form)),
                    f"{rates[(task, form)]:g}",
                    f"{int(np.median(best[(task, form)])):,}",
                    f"{sum(early[(task, form)])}/{len(early[(task, form)])}",
                    interval_text(mean, half),
                    f"{np.mean(floors[form]):.3f}",
                ]
            )
        glue_table(f"lowrank-table-{sfx}", header, rows)
        gap = [summary[(task, f)][0] - float(np.mean(floors[f])) for f in forms]
        values[f"lr-gap-min-{sfx}"] = f"{min(gap):.2f}"
        gaps.append(values[f"lr-gap-min-{sfx}"])
        values[f"lr-best-three-{sfx}"] = listed(sorted(forms, key=lambda f: summary[(task, f)][0])[:3])
        train = [float(np.mean([r.train_loss for r in final if r.form == f and r.task == task])) for f in forms]
        values[f"lr-train-range-{sfx}"] = f"{min(train):.2f} and {max(train):.2f}"
        edge[task] = [f for f in forms if rates[(task, f)] in grid]
    tests, explore, _ = glue_families(final, tasks, {t: SHORT[t] for t in tasks}, tables="lowrank-", keys="lr-")
    values["lr-gap-min"] = per_task(gaps, [f"on {task_said(t)}" for t in tasks])
    at_edge = [f"{listed(fs)} on {task_said(t)}" for t, fs in edge.items() if fs]
    count = f"for {sum(map(len, edge.values()))} of the {len(forms) * len(tasks)} forms and tasks"
    values["lr-at-edge"] = count + (f" ({'; '.join(at_edge)})" if at_edge else "")
    values["lr-stopped-early"] = f"{sum(r['stopped_early'] for r in records)} of {len(records)}"
    chosen = [r for r in records if rates[(r["task"], r["form"])] == r["learning_rate"]]
    values["lr-chosen-stopped-early"] = f"{sum(r['stopped_early'] for r in chosen)} of {len(chosen)}"
    values["lr-stage-cpu"] = f"{sum(r['wall_s'] for r in records) / 60:.0f}"
    glue_all(values)
    lines = [f"{t.task}: {t.a} − {t.b}: {t.word}" for t in tests] + ["exploratory:"]
    return "\n".join(lines + [f"   {t.task}: {t.a} − {t.b}: {t.word}" for t in explore])


def glue_removed_spread(final: Sequence[Result], prefix: str = "lr-", form: str = "GLU (sigmoid)") -> str:
    """Glue ``<prefix>glu-removed`` (``"2.48 to 31.96"``: the range over every seed and task of ``form``'s test error
    with its block removed), ``<prefix>glu-removed-runs`` (``"all 10"``, ``"3 of the 10"``: how many of those runs are
    above 1, the error of predicting the mean) and ``<prefix>glu-swap-gap`` (``"9 %"``: the largest relative difference
    of a run's swapped error from its block-removed one, rounded up to a whole percent); return them.

    Why the swap test's last two columns are large for the sigmoid GLU: not one run, but its skip path alone
    on every run."""
    runs = [r for r in final if r.form == form and r.swap_change is not None and r.skip_metric is not None]
    if not runs:
        raise ValueError(f"final: expected runs of {form!r} with a swap test, got none")
    removed = [r.skip_metric for r in runs]
    gap = max(abs((r.test_metric + r.swap_change) / r.skip_metric - 1) for r in runs)
    values = {
        f"{prefix}glu-removed": f"{min(removed):.2f} to {max(removed):.2f}",
        f"{prefix}glu-removed-runs": all_or_count(sum(v > 1 for v in removed), len(removed)),
        f"{prefix}glu-swap-gap": percent_of(np.ceil(round(100 * gap, 6)) / 100, ".0f"),  # an upper bound; 8.000…01 is 8
    }
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())


def lowrank_figure(records: Sequence[Mapping], protocol: Mapping[str, object], name: str = "fig-lowrank"):
    """Glue two figures; return ``((fig, axes), (fig, axes))`` of them.

    ``name``: the mean best validation error against η as small multiples (:func:`~symbreak.pages.ch14.sigma_grid`),
    a column per task and a row per σ, each panel's forms over the others, faint, each line named at its end in the
    right-hand column; values above :data:`OFF_SCALE` off the panels.  ``name + "-errors"``: a column per task, the
    test error at the chosen η with its 95 % interval beside the form's floor (a square, no interval), thin lines
    between the families as in Fig. 14.2, the legend under the x label; a ring marks each validation line's lowest
    point, the rate chosen.
    """
    forms, tasks = list(protocol["forms"]), list(protocol["tasks"])
    grid = list(protocol["learning_rates"])
    val: dict[tuple[str, str], dict[float, list[float]]] = {}
    for r in records:
        val.setdefault((r["task"], r["form"]), {}).setdefault(r["learning_rate"], []).append(r["validation"])
    means = {key: snap_log([np.mean(by[lr]) for lr in grid]) for key, by in val.items()}
    styles = family_styles(forms)
    lowest = min(float(np.mean(v)) for by in val.values() for v in by.values())
    bottom = float(np.floor(round(lowest / TICK_STEP, 6)) * TICK_STEP)  # the tick at or below the lowest mean
    chosen = chosen_rates(records)

    def draw(ax, task: str, members: Sequence[str]) -> dict:
        for form in forms:
            if form not in members:
                ax.plot(grid, means[(task, form)], color=FAINT, lw=0.8, zorder=0.9)
        lines = {}
        for form in members:
            colour, ls = styles[form]
            (lines[form],) = ax.plot(grid, means[(task, form)], color=colour, ls=ls, marker="o", ms=3, lw=1.4)
            at = grid.index(chosen[(task, form)])  # the chosen rate, the line's lowest point: a ring around it
            ax.plot(grid[at], means[(task, form)][at], "o", ms=8, mfc="none", mec=colour, mew=1.2, label="_chosen")
        ax.set(xscale="log", ylim=(bottom, OFF_SCALE))
        ax.set_yticks(np.round(np.arange(bottom, OFF_SCALE + 1e-9, TICK_STEP), 6))
        return lines

    fig, axes, named = sigma_grid(
        tasks, forms, draw, xlabel="learning rate η", ylabel="best validation error", row_height=1.35
    )
    for ax in axes:  # a tick at every rate of the grid, a label at the powers of ten (all seven meet in a panel)
        ax.set_xticks(grid, [f"{lr:g}" if f"{lr:g}".strip("0.") == "1" else "" for lr in grid])
        ax.minorticks_off()
    for ax, lines in named:
        label_ends(ax, lines, hidden="skip")
    glue_figure(name, fig)
    glue_all({"lr-off-panel": off_panel(means, grid, tasks, forms)})
    return (fig, axes), _errors_figure(records, protocol, f"{name}-errors")


def off_panel(means: Mapping[tuple[str, str], Sequence[float]], grid: Sequence[float], tasks, forms) -> str:
    """The means above :data:`OFF_SCALE`, said once per form where every task has the same: ``"symmetric rank-4
    (SiLU) at η = 0.3 and 1, on both tasks"``; ``"none"`` where every mean is on the panels."""
    found: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for form in forms:
        for task in tasks:
            rates = tuple(f"{lr:g}" for lr, v in zip(grid, means[(task, form)], strict=True) if v > OFF_SCALE)
            if rates:
                found.setdefault((form, rates), []).append(task)
    said = [
        f"{form} at η\u00a0=\u00a0{listed(list(rates))}, "  # no line starts with "= 0.3" (no-break spaces)
        + (
            f"on {'both' if len(tasks) == 2 else 'all'} tasks"
            if len(on) == len(tasks) > 1
            else f"on {listed([task_said(t) for t in on])}"
        )
        for (form, rates), on in found.items()
    ]
    return "; ".join(said) if said else "none"


def _errors_figure(records: Sequence[Mapping], protocol: Mapping[str, object], name: str):
    """Glue ``name`` (the second figure of :func:`lowrank_figure`); return ``(fig, axes)``."""
    forms, tasks = list(protocol["forms"]), list(protocol["tasks"])
    summary = summarise(results_at(records, chosen_rates(records)))
    fig, axes = figure(ncols=len(tasks), width=3.8 * len(tasks), height=4.6, sharey=True)
    for dots, task in zip(axes, tasks, strict=True):
        floors = baselines(protocol, task)
        series = {
            "test error at the chosen η": (
                snap_log([summary[(task, f)][0] for f in forms]),
                snap_log([summary[(task, f)][1] for f in forms]),
            ),
        }
        xlabel = "test error (MSE / variance)"
        interval_dots(dots, forms, series, xlabel=xlabel, separators=_separators(forms), legend=False)
        floor = snap_log([float(np.mean(floors[f])) for f in forms])  # a floor has no interval: a marker alone
        dots.plot(floor, np.arange(len(forms)), "s", color="C1", ms=4.5, ls="none", label="floor of the block")
        dots.set_title(task)
    legend_below(fig, axes[0] if len(tasks) == 1 else list(axes), ncol=2)
    glue_figure(name, fig)
    return fig, axes


def glue_convex(tasks: Sequence[Task], final: Sequence[Result], form: str = "bilinear (σ = id)") -> str:
    """Glue ``cv-ls-teacher`` and ``cv-ls-odd`` (least squares on ``[1, x, x_a x_b]`` on the first comparison's
    tasks) and ``cv-match``: whether they equal ``form``'s mean test errors to three decimals; return them."""
    summary = summarise(final)
    values, same = {}, []
    for task, key in zip(tasks, ("cv-ls-teacher", "cv-ls-odd"), strict=True):
        ls = least_squares_error(task)
        values[key] = f"{ls:.3f}"
        same.append(f"{ls:.3f}" == f"{summary[(task.name, form)][0]:.3f}")
    values["cv-match"] = "the same to three decimals as" if all(same) else "not the same to three decimals as"
    glue_all(values)
    return "\n".join(f"{k}: {v}" for k, v in values.items())
