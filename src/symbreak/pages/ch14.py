"""Chapter 14's tables, glued values and figures: the protocol, the forms, training, test errors, swap test.

Each ``glue_*`` function glues what one cell of the chapter shows and returns
the text that cell prints. The general pieces (:func:`protocol_values`,
:func:`glue_forms`, :func:`glue_loss_curves`, :func:`error_figure`,
:func:`checkpoint_rows`, :func:`glue_rankings`, :func:`swap_check_values`) take the
task names and formats as arguments, so that chapter 15 (:mod:`symbreak.pages.ch15`),
which runs the same protocol on one task, builds its tables and figures with them.
Nothing here computes a result: the numbers come from :mod:`symbreak.experiments`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from symbreak.activations import display_name
from symbreak.coarse import percent, percent_of, snap_log
from symbreak.experiments import (
    FORMS,
    Comparison,
    Result,
    SwapCheck,
    Task,
    budget_rows,
    form_verdicts,
    odd_target_parts,
    plain_budget,
    ranking,
    summarise,
    summary_rows,
)
from symbreak.pages.ch14_stats import family_styles
from symbreak.pages.ch14_wording import seed_list, task_seed
from symbreak.plotting import (
    figure,
    glue_figure,
    interval_dots,
    label_ends,
    legend_below,
    log_ticks,
    scientific,
)
from symbreak.plotting.curves import curve_panel
from symbreak.prose import glue_all, glue_table, listed

__all__ = [
    "SHORT",
    "FORMS_HEADER",
    "protocol_values",
    "glue_setup",
    "glue_forms",
    "sigma_groups",
    "family_chunks",
    "sigma_grid",
    "glue_loss_curves",
    "glue_training_losses",
    "error_figure",
    "glue_error_figure",
    "checkpoint_rows",
    "glue_rankings",
    "glue_test_errors",
    "swap_check_values",
    "glue_swap_check",
]

#: The short names of chapter 14's tasks in its glue keys (``best-teacher-final``, ``swap-range-odd``).
SHORT: dict[str, str] = {"bilinear teacher": "teacher", "odd target": "odd"}

#: The header of the forms table (:func:`glue_forms`).
FORMS_HEADER: list[str] = [
    "form",
    "width $m$",
    "parameters (block + skip)",
    "exchange",
    "inverse scaling, $\\alpha > 0$",
    "even block",
]

_KEPT = {True: "yes", False: "no", None: "—"}
_SETTLED = "bilinear (σ = id)"


def _points(comparison: Comparison) -> list[int]:
    if not isinstance(comparison, Comparison):
        raise TypeError(f"comparison: expected a Comparison, got {type(comparison).__name__}")
    return sorted(comparison.results)


def _group(form: str) -> str:
    """A form's group in the figures' rows: standard MLP, symmetric rank-1, bilinear, gated, symmetric rank R > 1."""
    if form not in FORMS:
        raise ValueError(f"forms: expected names from {list(FORMS)}, got {form!r}")
    kind, act, rank = FORMS[form]
    if kind == "gated":
        return "bilinear" if act == "identity" else "gated"
    return f"{kind} {rank}"


def sigma_groups(forms: Sequence[str]) -> dict[str, list[str]]:
    """The forms by activation σ, a panel each: ``{"σ = ReLU": [...], ...}``, a group per σ that two or more of
    ``forms`` share, in order, and a last one of the rest (``"σ = id, sigmoid, tanh"``); in a group the forms differ
    by family, so each has its own colour."""
    by_sigma: dict[str, list[str]] = {}
    for form in forms:
        if form not in FORMS:
            raise ValueError(f"forms: expected names from {list(FORMS)}, got {form!r}")
        by_sigma.setdefault(FORMS[form][1], []).append(form)
    groups = {f"σ = {display_name(act)}": members for act, members in by_sigma.items() if len(members) > 1}
    rest = {act: members for act, members in by_sigma.items() if len(members) == 1}
    if rest:
        names = ", ".join("id" if act == "identity" else display_name(act) for act in rest)
        groups[f"σ = {names}"] = [form for form in forms if FORMS[form][1] in rest]
    return groups


def family_chunks(forms: Sequence[str], most: int = 4) -> list[list[str]]:
    """``forms`` (in their order) cut into panels of at most ``most`` forms, a family's forms kept together where
    it fits: consecutive families share a panel while they fit in it; a family of more than ``most`` forms is cut."""
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise ValueError(f"most: expected an int >= 1, got {most!r}")
    families: list[list[str]] = []
    for form in forms:
        if families and _group(families[-1][-1]) == _group(form):
            families[-1].append(form)
        else:
            families.append([form])
    chunks: list[list[str]] = []
    for family in families:
        for i in range(0, len(family), most):
            piece = family[i : i + most]
            if chunks and len(chunks[-1]) + len(piece) <= most:
                chunks[-1].extend(piece)
            else:
                chunks.append(list(piece))
    return chunks


def _separators(forms: Sequence[str]) -> list[int]:
    """The rows at which a new group of forms begins (a thin line is drawn above each)."""
    return [i for i in range(1, len(forms)) if _group(forms[i]) != _group(forms[i - 1])]


def _close_below(fig, pad_pt: float = 4.0) -> None:
    """Move the subplots' bottom edge so that the lowest axes, with its tick labels and axis label, ends ``pad_pt``
    points above the figure's bottom edge, where :func:`~symbreak.plotting.legend_below` hangs its legend (no empty
    band between them).  For a figure that sets its own spacing (``subplots_adjust``); call it before
    :func:`~symbreak.plotting.label_ends`, whose spread depends on the axes' height."""
    if not (isinstance(pad_pt, (int, float)) and pad_pt >= 0):
        raise ValueError(f"pad_pt: expected a number of points >= 0, got {pad_pt!r}")
    if not fig.axes:
        raise ValueError("fig: expected a figure with axes, got none")
    renderer = fig.canvas.get_renderer()
    lowest_in = min(ax.get_tightbbox(renderer).y0 for ax in fig.axes) / fig.dpi
    shift = (lowest_in - pad_pt / 72) / fig.get_figheight()
    fig.subplots_adjust(bottom=fig.subplotpars.bottom - shift)


def protocol_values(protocol: Mapping[str, object], task: Task, forms: Sequence[str]) -> dict[str, object]:
    """The glue values of the protocol on ``task``, for :func:`symbreak.prose.glue_all`.

    ``m0`` (reference width), ``lr``, ``steps``, ``early`` (first checkpoint),
    ``n-seeds``, ``seeds`` (:func:`seed_list`), ``n-train``, ``n-test``, ``d``, ``d-out``, ``budget`` (block
    parameters, :func:`plain_budget`) and ``n-forms``.
    """
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    missing = [k for k in ("reference_width", "lr", "steps", "checkpoints", "seeds") if k not in protocol]
    if missing:
        raise ValueError(f"protocol: expected the keys of experiments.PROTOCOL, got none for {missing}")
    return {
        "m0": protocol["reference_width"],
        "lr": (protocol["lr"], "g"),
        "steps": protocol["steps"],
        "early": protocol["checkpoints"][0],
        "n-seeds": len(protocol["seeds"]),
        "seeds": seed_list(protocol["seeds"]),
        "n-train": len(task.X_train),
        "n-test": len(task.X_test),
        "d": task.d,
        "d-out": task.d_out,
        "budget": plain_budget(task, protocol["reference_width"]),
        "n-forms": len(forms),
    }


def glue_setup(
    protocol: Mapping[str, object], tasks: Sequence[Task], forms: Sequence[str], floor: float, floor_samples: int
) -> str:
    """Glue the protocol, the tasks' sizes, the odd target's error ``floor`` and ``task-seed`` (:func:`task_seed`);
    return the tasks' description."""
    glue_all(
        protocol_values(protocol, tasks[0], forms)
        | {"odd-floor": (floor, ".3f"), "floor-samples": floor_samples, "teacher-units": odd_target_parts()[0].m}
        | {"task-seed": task_seed(tasks)}
    )
    lines = [
        f"{t.name}: {len(t.X_train)} training and {len(t.X_test)} test tokens, d = {t.d}, dₒᵤₜ = {t.d_out}"
        for t in tasks
    ]
    return "\n".join([*lines, f"odd target: floor of even block + affine map = {floor:.4f}"])


def glue_forms(results: Sequence[Result], task: Task, forms: Sequence[str], pad: int = 5) -> str:
    """Glue ``forms-table`` (width, parameters and kept symmetries of each form) and ``skip-parameters``.

    Returns one line per form with its width and parameter count, the count
    right-aligned in ``pad`` characters.
    """
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    rows = []
    for form, row in zip(forms, budget_rows(results, [task.name], forms), strict=True):
        verdicts = form_verdicts(form)
        rows.append(row + [_KEPT[verdicts[s]] for s in ("exchange", "scale_pos", "parity")])
    glue_table("forms-table", FORMS_HEADER, rows)
    glue_all({"skip-parameters": task.d * task.d_out + task.d_out})
    return "\n".join(f"{row[0]:>24}: m = {row[1]:>3}, parameters = {row[2]:>{pad}}" for row in rows)


def sigma_grid(
    task_names: Sequence[str],
    forms: Sequence[str],
    draw,
    *,
    xlabel: str,
    ylabel: str,
    width: float = 7.6,
    row_height: float = 1.75,
    **shared,
):
    """``(fig, axes, named)``: small multiples, a column per task, a row per σ (:func:`sigma_groups`), each panel drawn
    by ``draw(ax, task, members) → {form: line}`` and titled by σ (the task atop its column), room on the right for
    the names; ``named``: ``(axes, lines)`` of the right-hand column, for :func:`~symbreak.plotting.label_ends` once
    the limits are final.  ``shared``: ``sharex``/``sharey`` (default both ``True``)."""
    groups = sigma_groups(forms)
    rows, cols = len(groups), len(task_names)
    height = 0.95 + row_height * rows  # inches: a row of panels each with its title, the tasks atop, the x label
    shared = {"sharex": True, "sharey": True} | shared
    fig, axes = figure(ncols=cols, nrows=rows, width=width, height=height, **shared)
    fig.subplots_adjust(
        left=0.75 / width, right=1 - 1.9 / width, top=1 - 0.45 / height, bottom=0.5 / height, hspace=0.5, wspace=0.06
    )
    named = []
    for j, task in enumerate(task_names):
        for i, (title, members) in enumerate(groups.items()):
            ax = axes[i * cols + j]
            lines = draw(ax, task, members)
            ax.set_title(f"{task}\n{title}" if i == 0 else title)  # the task atop its column
            if j == cols - 1:
                named.append((ax, lines))
    for ax in axes[-cols:]:
        ax.set_xlabel(xlabel)
    fig.supylabel(ylabel, x=0.1 / width, ha="left")
    return fig, axes, named


def glue_loss_curves(
    comparison: Comparison,
    task_names: Sequence[str],
    forms: Sequence[str],
    checkpoint: int,
    *,
    name: str = "fig-training-curves",
    ylabel: str = "training loss (mean squared error)",
    width: float = 7.6,
) -> None:
    """Glue the figure ``name``: the training loss against the Adam step as small multiples (:func:`sigma_grid`),
    each panel's forms over the others, faint (:func:`~symbreak.plotting.curves.curve_panel`), each line named at its
    end in the right-hand column (:func:`~symbreak.plotting.label_ends`).  A line is the seed mean, the band the
    10th–90th percentile of the seeds, on four significant digits (:func:`snap_log`), in its family's colour and σ's
    line style (:func:`~symbreak.pages.ch14_stats.family_styles`); a dotted line marks ``checkpoint``."""
    _points(comparison)
    styles = family_styles(forms)
    curves = {}
    for (task, form), curve in comparison.curves.items():
        curves.setdefault(task, {})[form] = (range(1, curve.shape[1] + 1), snap_log(curve.T))

    def draw(ax, task: str, members: Sequence[str]) -> dict:
        lines = curve_panel(ax, {form: curves[task][form] for form in forms}, members, styles)
        ax.set_yscale("log")
        ax.axvline(checkpoint, color="0.5", lw=0.8, ls=":")
        return lines

    fig, axes, named = sigma_grid(task_names, forms, draw, xlabel="Adam step", ylabel=ylabel, width=width)
    log_ticks(axes[0])
    for ax, lines in named:
        label_ends(ax, lines)
    glue_figure(name, fig)


def glue_training_losses(
    final: Sequence[Result],
    decrease: Mapping[tuple[str, str], float],
    task_names: Sequence[str],
    forms: Sequence[str],
    fraction: float,
) -> str:
    """Glue ``train-loss-table`` and how much the loss still fell (``decrease-*``, ``decrease-id-*``); return that fall.

    ``decrease[(task, form)]`` is :func:`symbreak.experiments.final_decrease` of
    the form's curve over the last ``fraction`` of the steps: the ranges glued
    leave out the bilinear layer, which has settled and is glued on its own.
    """
    rows = summary_rows(final, task_names, forms, field="train_loss", formats={t: (".4f", 1.0, "") for t in task_names})
    glue_table("train-loss-table", ["form", *[f"{t}: training loss" for t in task_names]], rows)
    lines = []
    for task in task_names:
        values = {form: decrease[(task, form)] for form in forms}
        moving = [v for form, v in values.items() if form != _SETTLED]
        glue_all(
            {
                f"decrease-{SHORT[task]}": f"{percent_of(min(moving))} to {percent_of(max(moving))}",
                f"decrease-id-{SHORT[task]}": (100 * values[_SETTLED], ".2f"),
            }
        )
        lines.append(f"{task}: fall of the mean training loss, last {percent(fraction)} of the steps")
        lines += [f"   {form:>24}: {percent_of(v, '5.2f')}" for form, v in values.items()]
    return "\n".join(lines)


def error_figure(
    comparison: Comparison,
    task_names: Sequence[str],
    forms: Sequence[str],
    *,
    xlabel: str = "test error (MSE / variance)",
    scale: float = 1.0,
    width: float = 7.6,
):
    """``(fig, axes)``: each form's mean test error (times ``scale``) with its 95 % interval, one panel per task.

    One marker per checkpoint (:func:`symbreak.plotting.interval_dots`), on four
    significant digits (:func:`snap_log`); thin lines separate the groups of forms.
    """
    summaries = {c: summarise(comparison.results[c]) for c in _points(comparison)}
    extra = {"sharey": True} if len(task_names) > 1 else {}
    fig, axes = figure(ncols=len(task_names), width=width, height=4.2, **extra)
    for ax, task in zip(axes, task_names, strict=True):
        series = {
            f"after {c} steps": (
                snap_log([scale * summaries[c][(task, f)][0] for f in forms]),
                snap_log([scale * summaries[c][(task, f)][1] for f in forms]),
            )
            for c in sorted(summaries)
        }
        interval_dots(ax, forms, series, xlabel=xlabel, separators=_separators(forms), legend=False)
        ax.set_title(task)
    return fig, axes


def glue_error_figure(comparison: Comparison, task_names: Sequence[str], forms: Sequence[str], floor: float) -> None:
    """Glue ``fig-training-comparison`` (:func:`error_figure`), with the odd target's ``floor`` on the last panel."""
    fig, axes = error_figure(comparison, task_names, forms)
    axes[-1].axvline(snap_log([floor])[0], color="0.3", ls="--", lw=1.0, label="floor: even block + affine")
    legend_below(fig, axes[-1])
    glue_figure("fig-training-comparison", fig)


def checkpoint_rows(
    comparison: Comparison,
    task_names: Sequence[str],
    forms: Sequence[str],
    formats: Mapping[str, tuple[str, float, str]],
    field: str = "test_metric",
) -> list[list[str]]:
    """One row per form: its name, then ``mean ± half-width`` of ``field`` for each task and each checkpoint."""
    points = _points(comparison)
    by_point = {
        c: summary_rows(comparison.results[c], task_names, forms, field=field, formats=dict(formats)) for c in points
    }
    return [
        [form, *[by_point[c][i][1 + t] for t in range(len(task_names)) for c in points]] for i, form in enumerate(forms)
    ]


def glue_rankings(
    comparison: Comparison, task_names: Sequence[str], forms: Sequence[str], with_task: bool = True
) -> list[str]:
    """Glue the three best forms ``best-<task>-<early|final>`` (``best-<early|final>`` without the task) as a sentence
    lists them (``"a, b and c"``); return
    each ranking, best first, under a heading per task and checkpoint (:func:`symbreak.experiments.ranking`)."""
    points = _points(comparison)
    lines = []
    for task in task_names:
        for c in points:
            best = ranking(comparison.results[c], task, forms)
            when = "final" if c == points[-1] else "early"
            glue_all({f"best-{SHORT[task]}-{when}" if with_task else f"best-{when}": listed(best[:3])})
            heading = f"{task}, {c} steps" if with_task else f"{c} steps"
            lines += [f"{heading}, best first:", "   " + "\n   ".join(best)]
    return lines


def glue_test_errors(comparison: Comparison, task_names: Sequence[str], forms: Sequence[str]) -> str:
    """Glue ``comparison-table`` and :func:`glue_rankings`; return the rankings."""
    points = _points(comparison)
    rows = checkpoint_rows(comparison, task_names, forms, {t: (".3f", 1.0, "") for t in task_names})
    glue_table("comparison-table", ["form", *[f"{t}, {c} steps" for t in task_names for c in points]], rows)
    return "\n".join(glue_rankings(comparison, task_names, forms))


def swap_check_values(check: SwapCheck, share: float) -> dict[str, object]:
    """The glue values of a :class:`SwapCheck` with the stated ``share`` of the bound: ``n-symmetric-blocks``,
    ``symmetric-share`` and ``gated-ratio``."""
    if not isinstance(check, SwapCheck):
        raise TypeError(f"check: expected a SwapCheck, got {type(check).__name__}")
    return {
        "n-symmetric-blocks": check.n_symmetric,
        "symmetric-share": percent(share),
        "gated-ratio": scientific(check.gated_ratio, digits=2, latex=True),
    }


def glue_swap_check(check: SwapCheck, share: float, swap_below: float) -> None:
    """Glue :func:`swap_check_values` and ``swap-below``, the stated threshold ``swap_below`` as a power of ten."""
    if not swap_below > 0:
        raise ValueError(f"swap_below: expected a threshold > 0, got {swap_below!r}")
    glue_all(swap_check_values(check, share) | {"swap-below": f"$10^{{{round(math.log10(swap_below))}}}$"})
