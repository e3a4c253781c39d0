"""The four figures of chapter 11 (conservation laws): the charges in training, their drift against the step size,
under weight decay, and under other optimisers.

Each arranges results that the notebook's cells computed and glues the figure as PNG; figure data is snapped
(:mod:`symbreak.coarse`) so that the PNG does not depend on the last bits of the data.  The layers and charges are
named as :mod:`symbreak.pages.ch11`'s tables name them (:func:`~symbreak.pages.ch11.student_name`,
:func:`~symbreak.pages.ch11.shown`); the chapter imports both modules and calls these as ``ch11_figures.…_figure``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from symbreak.coarse import snap_log
from symbreak.dynamics import STUDENTS, History, StepSweep
from symbreak.pages.ch11 import law_cases, shown, student_name
from symbreak.plotting import (
    FAMILY_COLOURS,
    SIGMA_LINESTYLES,
    figure,
    glue_figure,
    label_ends,
    legend_below,
    loglog_curves,
)

__all__ = ["student_styles", "charges_figure", "drift_figure", "weight_decay_figure", "optimizer_figure"]

#: The two charges as figure titles (Matplotlib's mathtext, which has no ``\lVert``).
_PAIRS_FIG = {"qk": r"$\|q_j\|^2 - \|k_j\|^2$", "kv": r"$\|k_j\|^2 - \|v_j\|^2$"}


def student_styles() -> dict[str, tuple[str, object]]:
    """``{label: (colour, line style)}`` for the layers of :data:`~symbreak.dynamics.STUDENTS`: the family's colour
    (:data:`~symbreak.plotting.FAMILY_COLOURS`) and σ's line style (:data:`~symbreak.plotting.SIGMA_LINESTYLES`)."""
    styles = {}
    for label, (form, sigma) in STUDENTS.items():
        family = {"rank1": "bilinear" if sigma == "identity" else "symmetric", "gated": "gated", "kv": "kv"}[form]
        styles[label] = (FAMILY_COLOURS[family], SIGMA_LINESTYLES[sigma])
    return styles


def charges_figure(histories: Mapping[str, History], laws: Mapping[str, Mapping[str, bool]], *, lr: float) -> None:
    """Glue ``fig-charges-in-training``: ``max_j |c_j(t) − c_j(0)|`` of each charge against training time (log axis),
    one panel per charge, one line per layer in its family's colour and σ's line style (:func:`student_styles`),
    labelled at its end by its book name (:func:`student_name`), ", no law" where the theorem predicts none."""
    styles = student_styles()
    fig, axes = figure(nrows=2, width=7.4, height=6.6, sharex=True)
    fig.subplots_adjust(left=0.1, right=0.72, top=0.95, bottom=0.09, hspace=0.28)
    for ax, pair in zip(axes, ["qk", "kv"], strict=True):
        lines = {}
        for label, history in histories.items():
            if pair not in laws[label]:
                continue
            charge = history.as_tensor(pair)
            change = (charge[1:] - charge[0]).abs().amax(dim=1).numpy()
            colour, style = styles[label]
            (line,) = ax.plot(np.array(history.steps[1:]) * lr, snap_log(change), color=colour, ls=style, lw=1.5)
            lines[student_name(label) if laws[label][pair] else f"{student_name(label)}, no law"] = line
        ax.set_yscale("log")
        ax.set_title(f"charge {_PAIRS_FIG[pair]}", fontsize=10)
        ax.set_ylabel(r"largest $|c_j(t) - c_j(0)|$")
        label_ends(ax, lines)
    axes[-1].set_xlabel(r"training time $t = s\eta$")
    glue_figure("fig-charges-in-training", fig)


def _student_of(key: str) -> str | None:
    """The label of :data:`~symbreak.dynamics.STUDENTS` that a sweep key such as ``"SwiGLU, kv (law)"`` starts with,
    else ``None``."""
    return next((label for label in STUDENTS if key.startswith(label + ",")), None)


#: How the drift figure marks a charge the theorem protects (a solid line with discs) and one it does not (a dotted
#: line with open triangles); the colour is the layer's family (:func:`student_styles`).
_LAW_STYLES = {True: ("-", "o", "full"), False: (":", "^", "none")}


def drift_figure(sweeps: Mapping[str, StepSweep]) -> None:
    """Glue ``fig-drift-vs-step``: the drift after one step and over a fixed time against ``η``.

    Each layer in its family's colour (:func:`student_styles`; a key that names no layer, the colour cycle's), a
    protected charge solid with discs and an unprotected one dotted with open triangles (:data:`_LAW_STYLES`).  The
    dashed slope-2 and slope-1 reference lines start a third below the first ``(law)`` case, so that both stay
    visible.
    """
    law, _ = law_cases(sweeps)
    lrs = next(iter(sweeps.values())).lrs
    styles = student_styles()
    colours = {shown(k): styles[label][0] for k in sweeps if (label := _student_of(k)) is not None}
    protected = {shown(k): k in law for k in sweeps}
    fig, axes = figure(ncols=2, width=7.6, height=3.9)
    shift = 1 / 3  # the reference lines run below the data, so that both stay visible
    # title, drift, the reference line (name, values from the first law case), step in the y label
    panels = [
        ("one step", "one_step", "slope 2", lambda y, lr: shift * y * (lr / lrs[0]) ** 2, "1"),
        (r"fixed training time $S\eta$", "fixed_time", "slope 1", lambda y, lr: shift * y * lr / lrs[0], "S"),
    ]
    for ax, (title, attr, name, line, end) in zip(axes, panels, strict=True):
        # drawn at four significant digits: the pixels of a PNG follow the last bits of its data
        drawn = {shown(k): snap_log(getattr(v, attr)) for k, v in sweeps.items()}
        reference = {name: [line(drawn[shown(law[0])][0], lr) for lr in lrs]}
        ylabel = rf"$\max_j\,|c_j({end}) - c_j(0)|$"
        loglog_curves(
            ax,
            lrs,
            {**drawn, **reference},
            styles={name: "--"},
            colors=colours,
            xlabel=r"step size $\eta$",
            ylabel=ylabel,
        )
        for curve in ax.get_lines():
            if curve.get_label() in protected:
                style, marker, fill = _LAW_STYLES[protected[curve.get_label()]]
                curve.set(linestyle=style, marker=marker, fillstyle=fill)
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()
    labels[-1] = "slope 2 (left), slope 1 (right)"  # both reference lines are drawn dashed grey
    for ax in axes:
        ax.get_legend().remove()
    order = [*range(len(law)), len(labels) - 1, *range(len(law), len(labels) - 1)]  # column 1: laws and slopes
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    glue_figure("fig-drift-vs-step", fig)


def weight_decay_figure(decays: Mapping[tuple[str, str], History], *, weight_decay: float, lr: float) -> None:
    """Glue ``fig-weight-decay``: ``|c_j(t)|`` on a log scale per run ``(label, pair)``, and ``|c_j(0)| e^{−2λt}``."""
    fig, axes = figure(ncols=2, width=7.6, height=3.4, sharey=True)
    for ax, ((label, pair), history) in zip(axes, decays.items(), strict=True):
        t = np.array([s * lr for s in history.steps])
        charge = history.as_tensor(pair)
        for j in range(charge.shape[1]):
            snapped = snap_log(charge[:, j].abs().numpy())  # four significant digits
            (line,) = ax.plot(t, snapped, lw=1.4, label=f"unit {j + 1}")
            ax.plot(
                t,
                snap_log(abs(charge[0, j].item()) * np.exp(-2 * weight_decay * t)),
                "--",
                color=line.get_color(),
                lw=0.9,
            )
        ax.set_yscale("log")
        ax.set_title(shown(f"{label}, {pair}"))
        ax.set_xlabel(r"training time $t = s\eta$")
    axes[0].set_ylabel(r"$|c_j(t)|$")
    axes[0].legend(fontsize=9)
    fig.tight_layout()
    glue_figure("fig-weight-decay", fig)


def optimizer_figure(drifts: Mapping[str, Sequence[float]], steps: Sequence[int]) -> None:
    """Glue ``fig-optimizer-drift``: the drift against the number of steps ``S``, one curve per optimiser.

    The dashed slope −1 line runs through the first point of the first optimiser (gradient descent).
    """
    fig, axes = figure(width=6.4, height=4.0)
    snapped = {k: snap_log(v) for k, v in drifts.items()}  # four significant digits
    first = next(iter(snapped))
    reference = {"slope −1": [snapped[first][0] * steps[0] / s for s in steps]}
    loglog_curves(
        axes[0],
        steps,
        {**snapped, **reference},
        styles={"slope −1": "--"},
        xlabel=r"steps $S$ over the fixed duration",
        ylabel=r"$\max_j\,|c^{qk}_j(S) - c^{qk}_j(0)|$",
        legend_loc=None,
    )
    legend_below(fig, axes[0], ncol=3)  # inside the axes it covered the gradient-descent curve
    glue_figure("fig-optimizer-drift", fig)
