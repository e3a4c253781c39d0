"""Chapter 12 (the invariant diagonal): its tables, glued values and figure, from results computed elsewhere.

Each function takes what the chapter's visible cells computed (decisions, runs, allowances, gaps)
and arranges it: a Markdown table glued under its name, a block of glued values, or the figure
glued as PNG, drawn from snapped data (:mod:`symbreak.coarse`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from symbreak.activations import REGISTRY, display_name
from symbreak.coarse import below_share, magnitude, percent, snap_log
from symbreak.decide import Decision
from symbreak.dynamics import History
from symbreak.pages.ch11 import student_name
from symbreak.pages.ch11_figures import student_styles
from symbreak.plotting import STYLE, figure, glue_figure, log_ticks, scientific
from symbreak.prose import glue_all, glue_table
from symbreak.report import below
from symbreak.symbolic import decision_text

__all__ = [
    "power_of_ten",
    "below_power",
    "gap_text",
    "glue_euler_registry_table",
    "glue_setting",
    "glue_gap_table",
    "glue_optimizer_gaps",
    "OPTIMIZERS",
    "optimizer_gap_line",
    "glue_converse",
    "glue_perturbed",
    "diagonal_gap_figure",
]

#: ``(colour, line style)`` of each layer drawn: its family's colour and its σ's line style (one source, chapter 11).
_STYLES = student_styles()
#: The marker of each layer the theorem keeps on the diagonal: its points on the figure's floor, and on its curve.
_MARKERS = {"symmetric ReLU": "o", "symmetric GELU": "s", "symmetric SiLU": "^", "bilinear": "D", "ReGLU": "v"}


def power_of_ten(value: float, name: str = "value") -> str:
    """``1e-12 → "$10^{-12}$"``: a stated power of ten in LaTeX; any other number raises ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name}: expected a real number > 0, got {value!r}")
    exponent = round(math.log10(value))
    if not math.isclose(value, 10.0**exponent, rel_tol=1e-12):
        raise ValueError(f"{name}: expected a power of ten, got {value!r}")
    return "$10^{" + str(exponent) + "}$"


def below_power(value: float, bound: float) -> str:
    """``"$< 10^{-10}$"`` if ``value < bound``, else ``"$\\geq 10^{-10}$"``: a value against a stated power of ten.

    For rounding-sized values (bounds, floors, thresholds) whose own digits rounding may change:
    the cell names the stated ``bound`` (:func:`power_of_ten`), never the value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise TypeError(f"value: expected a real number, got {value!r}")
    relation = "<" if value < bound else r"\geq"
    return f"${relation} {power_of_ten(bound, 'bound')[1:]}"


def gap_text(gap: float) -> str:
    """The gap of a layer that leaves the diagonal, at three significant digits (``0.4012 → "0.401"``, ``0.4 → "0.4"``):
    one format for the table, the printed lines and the prose, so that they quote a gap alike."""
    return f"{gap:.3g}"


def glue_euler_registry_table(decisions: Mapping[str, Decision]) -> None:
    """Glue ``euler-registry-table``: per σ, the decision of ``zσ'(z) = σ(z)`` and the registry's positive homogeneity.

    ``decisions[name]`` is :func:`symbreak.symbolic.conservation.euler_decision`, one row per entry,
    in its order, σ by its display name; the last column reads :data:`symbreak.activations.REGISTRY`.
    """
    rows = [
        [display_name(name), decision_text(decision), "yes" if REGISTRY[name].is_positively_homogeneous else "no"]
        for name, decision in decisions.items()
    ]
    header = [r"$\sigma$", r"$z\,\sigma'(z) = \sigma(z)$ for all $z$", "positively homogeneous"]
    glue_table("euler-registry-table", header, rows)


def glue_setting(
    *, n: int, m: int, d: int, d_out: int, teacher_m: int, lr: float, weight_decay: float, steps: int
) -> None:
    """Glue the sizes and the settings of the runs.

    ``n``, ``m``, ``d``, ``d-out``, ``teacher-m``, ``lr``, ``wd`` (format ``g``) and ``steps``.
    """
    sizes = {"n": n, "m": m, "d": d, "d-out": d_out, "teacher-m": teacher_m, "lr": lr, "wd": weight_decay}
    glue_all({name: (value, "g") for name, value in sizes.items()} | {"steps": steps})


def glue_gap_table(
    runs: Mapping[str, History],
    allowance: Mapping[str, float],
    stays: Mapping[str, bool],
    *,
    stay_share: float,
    allowance_below: float,
) -> None:
    """Glue ``gap-table`` (its constant columns as ``gap-table-constants``), ``stay-share``, ``allowance-below``,
    ``leave-first-gap`` from runs started on the diagonal.

    Per layer: the theorem (``stays[label]``: it keeps ``q_j = k_j``), the largest gap over the
    run (for a layer that stays, the verdict against the stated ``stay_share`` of its allowance,
    never the rounding-sized gap itself), the rounding allowance
    (:func:`symbreak.dynamics.diagonal_gap_bound`) as the verdict against the stated power of ten
    ``allowance_below`` (``< 10^k``, or ``≥ 10^k``; never its measured digits), and
    whether the gap stayed within the allowance (✓ or ✗).  ``leave-first-gap`` is the smallest gap
    after the first step (not over the run) among the layers that leave; every gap as :func:`gap_text` writes it.
    """
    rows = []
    for label, history in runs.items():
        largest = max(history.gap)
        if stays[label]:
            shown = below_share(largest / allowance[label], stay_share, "the allowance")
        else:
            shown = gap_text(largest)
        within = "✓" if largest <= allowance[label] else "✗"
        theorem = "stays" if stays[label] else "leaves"
        rows.append([student_name(label), theorem, shown, below_power(allowance[label], allowance_below), within])
    header = ["layer", "theorem", r"$\max_t$ gap", "rounding allowance", "gap within the allowance"]
    glue_table("gap-table", header, rows, constants="gap-table-constants", among=header[3:4])
    leaving_first = [runs[label].gap[1] for label in runs if not stays[label]]
    glue_all(
        {
            "stay-share": percent(stay_share),
            "allowance-below": power_of_ten(allowance_below),
            "leave-first-gap": gap_text(min(leaving_first)),
        }
    )


def glue_optimizer_gaps(gaps: Mapping[tuple[str, str], float], *, stay_below: float, leaving: str = "SwiGLU") -> None:
    """Glue ``opt-stay-below`` (the stated threshold as a power of ten) and ``opt-leave-gap``.

    ``gaps[(optimizer, label)]`` is the largest gap of a run; ``opt-leave-gap`` is the smallest
    one of the layer ``leaving`` over the optimisers.
    """
    left = [gap for (_, label), gap in gaps.items() if label == leaving]
    if not left:
        raise ValueError(f"gaps: expected runs of {leaving!r}, got {sorted({label for _, label in gaps})}")
    glue_all({"opt-stay-below": power_of_ten(stay_below), "opt-leave-gap": gap_text(min(left))})


#: The book's name of each optimiser of :func:`symbreak.dynamics.train` that the chapter runs besides gradient descent.
OPTIMIZERS = {"momentum": "heavy ball", "adam": "Adam"}


def optimizer_gap_line(optimizer: str, label: str, gap: float, *, stay_below: float, leaving: str = "SwiGLU") -> str:
    """One printed line "optimiser, layer: largest gap …: verdict" with both by their book names.

    The verdict against the stated ``stay_below``: for the layer ``leaving`` that its gap is above it (it leaves the
    diagonal, its gap is glued in the prose), for the others that it is below (:func:`symbreak.report.below`); never
    a gap's digits.
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer: expected one of {list(OPTIMIZERS)}, got {optimizer!r}")
    what = f"{OPTIMIZERS[optimizer]}, {student_name(label)}: largest gap"
    if label == leaving:
        return f"{what} above {magnitude(stay_below)}: {gap > stay_below}"
    return below(gap, stay_below, what)


def glue_converse(gap: float, predicted: float, *, tolerance: float) -> None:
    """Glue the one-unit converse: ``converse-gap`` to three significant digits and the stated ``converse-tolerance``.

    The measured gap is quoted once; that it agrees with the proof's ``predicted`` gap, within the relative
    ``tolerance``, is the notebook's printed verdict (checked here too: a gap that disagrees raises ``ValueError``).
    """
    if not abs(gap - predicted) <= tolerance * abs(predicted):
        raise ValueError(f"gap: expected the predicted {predicted!r} within a relative {tolerance:g}, got {gap!r}")
    glue_all({"converse-gap": (gap, ".3g"), "converse-tolerance": scientific(tolerance, latex=True)})


def glue_perturbed(growth: Mapping[str, float], *, eps: float) -> None:
    """Glue ``eps`` and the growth of the gap over the runs started off the diagonal.

    ``growth-symmetric`` (symmetric SiLU), ``growth-reglu`` and ``growth-swiglu``, from ``growth[label]``.
    """
    glue_all(
        {
            "eps": power_of_ten(eps),
            "growth-symmetric": (growth["symmetric SiLU"], ".2f"),
            "growth-reglu": (growth["ReGLU"], ".2f"),
            "growth-swiglu": scientific(growth["SwiGLU"], digits=2, latex=True),
        }
    )


def _handle(label: str, marker: str | None = None) -> Line2D:
    """The legend entry of a layer: its colour, its line style, and its marker if it has one."""
    colour, ls = _STYLES[label]
    return Line2D([], [], color=colour, ls=ls, lw=1.5, marker=marker, ms=4.5, label=student_name(label))


def diagonal_gap_figure(
    runs: Mapping[str, History],
    allowance_below: float,
    perturbed: Mapping[str, History],
    *,
    lr: float,
    eps: float,
    leaving: tuple[str, ...] = ("GEGLU", "SwiGLU"),
) -> None:
    """Glue ``fig-diagonal-gap``: the gap over training time, started on the diagonal (left) and ``eps`` off it (right).

    Left: the runs of the layers ``leaving`` on a log axis with, dashed, the stated power of ten ``allowance_below``
    that every run's rounding allowance stays below (the table's verdict; the measured allowances are not drawn);
    under it a floor line "≈ 0" with the markers of every other run (:data:`_MARKERS`, staggered so that each is
    seen), whose gap stays below ``allowance_below`` at every step (else ``ValueError``), since a log axis cannot
    show 0.  Right: the runs ``perturbed``, each kept layer's curve with its markers, staggered along the curve.
    One legend below names every layer by its book name.
    """
    kept = [name for name in runs if name not in leaving]
    above = [name for name in kept if not max(runs[name].gap) < allowance_below]
    if above:
        raise ValueError(f"runs: expected the gaps of {above} below the stated {allowance_below:g} at every step")
    markers = {name: _MARKERS.get(name, "o") for name in [*kept, *perturbed] if name not in leaving}
    fig, (ax,) = figure(width=7.6, height=4.4)
    ax.remove()
    with plt.rc_context(STYLE):
        grid = fig.add_gridspec(2, 2, height_ratios=(5, 1), hspace=0.16, wspace=0.28)
        top, right = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[:, 1])
        floor = fig.add_subplot(grid[1, 0], sharex=top)
    for name in leaving:
        history = runs[name]
        time = np.array(history.steps[1:]) * lr
        shown = snap_log(history.gap[1:])  # four significant digits, as in every figure here
        top.plot(time, shown, lw=1.5, color=_STYLES[name][0], ls=_STYLES[name][1])
    ends = lr * np.array([min(runs[name].steps[1] for name in leaving), max(runs[name].steps[-1] for name in leaving)])
    bound = "stated bound on the allowance, " + power_of_ten(allowance_below)
    top.plot(ends, [allowance_below] * 2, "--", color="0.35", lw=1.2, label=bound)
    top.set_yscale("log")
    top.set_ylim(bottom=allowance_below / 3)  # the stated bound is the lowest value drawn: no tick meets the floor
    top.set_title(r"started on $\mathcal{D}$")
    top.set_ylabel(r"gap $\max_j \|q_j - k_j\|_\infty$")
    top.tick_params(labelbottom=False)
    spacing = (ends[1] - ends[0]) / 4  # four markers per kept layer, each layer shifted by its share of the spacing
    for i, name in enumerate(kept):
        times = ends[0] + spacing * (np.arange(4) + (i + 0.5) / len(kept))
        floor.plot(times, np.zeros(4), ls="none", marker=markers[name], ms=4.5, color=_STYLES[name][0])
    floor.set_ylim(-1, 1)
    floor.set_yticks([0], ["≈ 0"])
    floor.grid(False, axis="y")
    floor.set_xlabel(r"training time $t = s\eta$")
    for i, (name, history) in enumerate(perturbed.items()):
        colour, ls = _STYLES[name]
        marker = markers.get(name)
        every = (i * max(len(history.gap) // (8 * len(perturbed)), 1), max(len(history.gap) // 8, 1))
        right.plot(
            np.array(history.steps) * lr,
            snap_log(history.gap),
            lw=1.5,
            color=colour,
            ls=ls,
            marker=marker,
            ms=4.5,
            markevery=every,
        )
    right.set_yscale("log")
    right.set_title(rf"started $10^{{{round(math.log10(eps))}}}$ off $\mathcal{{D}}$")
    right.set_xlabel(r"training time $t = s\eta$")
    for ax in (top, right):
        log_ticks(ax, most=6)  # only ticks inside the limits: none under the floor's "≈ 0"
    handles = [_handle(name, markers.get(name)) for name in dict.fromkeys([*runs, *perturbed])]
    handles.append(top.get_lines()[-1])
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False)
    glue_figure("fig-diagonal-gap", fig)
