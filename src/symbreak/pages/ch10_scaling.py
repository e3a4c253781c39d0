"""Chapter 10's scaling figure: the recorded growth of time, memory and overhead along batch, ``d``, ``m``, ``R``.

:func:`glue_scaling_figure` draws the ``"scaling"`` entry of the recorded
``make bench`` run (:mod:`symbreak.scaling`) as ``fig-cost-scaling`` and glues
the sizes its caption quotes; the numbers are a record, so the figure is the
same wherever the notebook runs.
"""

from __future__ import annotations

import numpy as np

from symbreak.costs import power_law_exponent
from symbreak.plotting import FAMILY_COLOURS, figure, glue_figure
from symbreak.prose import glue_all
from symbreak.scaling import SCALING_SWEEPS, check_scaling, formula_degrees

__all__ = ["SCALING_LABELS", "glue_scaling_figure", "scaling_reading"]

#: The forms of the scaling record by name, and their colours (one per family of forms).
SCALING_LABELS = {"kv": "standard MLP", "gated": "gated MLP", "rankR": "rank-$R$"}
_COLOURS = {"kv": FAMILY_COLOURS["kv"], "gated": FAMILY_COLOURS["gated"], "rankR": FAMILY_COLOURS["rank R"]}
_AXES = {"n": "batch $n$", "d": "$d$ ($m = 4d$)", "m": "$m$", "R": "$R$"}
#: " = " between a symbol and its value in prose, with no-break spaces: a line breaks neither before nor after it.
_EQUALS = "\u00a0=\u00a0"


def _reference(ax, values, last: float, degree: int) -> None:
    """A thin black dashed line of slope ``degree`` on log–log axes through ``(values[-1], last)`` (not grey: that
    is the standard MLP's family colour)."""
    xs = np.asarray(values, dtype=float)
    ax.plot(xs, last * (xs / xs[-1]) ** degree, color="black", linestyle="--", linewidth=0.8, zorder=0)


#: The fewest labelled ticks on each log axis of the figure, so that a reader can read a value between two of them.
MIN_LOG_LABELS = 3


def _ticks_125(ax) -> list[float]:
    """Label the log y axis of ``ax`` at the values 1, 2 and 5 times a power of ten, at least :data:`MIN_LOG_LABELS`
    of them: where fewer lie inside the limits, widen the limits to the nearest ones outside (in log distance), one
    at a time; only the powers of ten and the fives where more than seven.  Return the labelled values."""
    from matplotlib.ticker import NullFormatter

    lo, hi = sorted(ax.get_ylim())
    exponents = range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 2)
    candidates = [c * 10.0**k for k in exponents for c in (1, 2, 5)]
    inside = [v for v in candidates if lo <= v <= hi]
    below, above = [v for v in candidates if v < lo], [v for v in candidates if v > hi]
    while len(inside) < MIN_LOG_LABELS:
        if np.log(lo / below[-1]) <= np.log(above[0] / hi):
            inside.insert(0, below.pop())
        else:
            inside.append(above.pop(0))
    ax.set_ylim(min(lo, inside[0] / 1.08), max(hi, inside[-1] * 1.08))  # a labelled tick just inside the frame
    if len(inside) > 7:  # a span of three decades or more: the powers of ten and the fives
        inside = [v for v in inside if f"{v:e}"[0] in "15"]
    ax.set_yticks(inside, labels=[f"{v:g}" for v in inside])
    ax.yaxis.set_minor_formatter(NullFormatter())
    return inside


def glue_scaling_figure(reference: dict) -> str:
    """Glue ``fig-cost-scaling`` from ``reference["scaling"]`` and the fixed sizes of its sweeps (``scaling-*``).

    Rows: microseconds per token of forward+backward, peak MiB per 1,000 tokens of
    forward+backward, and the ratio to the layer's own products (solid:
    forward+backward, dashed: forward); columns: the sweeps of
    :data:`symbreak.scaling.SCALING_SWEEPS`.  Thin black dashed lines have the slope
    of the FLOP formula (top) and of the kept numbers (middle) in the swept size,
    through the last point of the rank-``R`` form; every log axis labels at least
    :data:`MIN_LOG_LABELS` values.  Returns the record's rounds per point.
    """
    if not isinstance(reference, dict) or "scaling" not in reference:
        raise ValueError("reference: expected a recorded make bench run with a 'scaling' entry")
    scaling = check_scaling(reference["scaling"])
    fig, axes = figure(ncols=4, nrows=3, width=7.0, height=7.0, gridspec_kw={"wspace": 0.55, "hspace": 0.45})
    grid = axes.reshape(3, 4)
    for col, size in enumerate(SCALING_SWEEPS):
        values = scaling[size]["values"]
        forms = [f for f in SCALING_LABELS if f in scaling[size]]
        for form in forms:
            series, colour = scaling[size][form], _COLOURS[form]
            style = {"color": colour, "marker": "o", "markersize": 3.5, "linewidth": 1.4}
            grid[0, col].plot(values, 1e6 * np.asarray(series["backward_s"]), **style, label=SCALING_LABELS[form])
            grid[1, col].plot(values, series["peak_mib_per_1k"], **style)
            grid[2, col].plot(values, series["own_backward"], **style)
            grid[2, col].plot(values, series["own_forward"], **(style | {"linestyle": "--", "marker": "s"}))
        last = scaling[size]["rankR"]
        degrees = formula_degrees(size, "rankR")
        _reference(grid[0, col], values, 1e6 * last["backward_s"][-1], degrees["flops"])
        _reference(grid[1, col], values, last["peak_mib_per_1k"][-1], degrees["memory"])
        for row in range(3):
            ax = grid[row, col]
            ax.set_xscale("log", base=2)
            if row < 2:
                ax.set_yscale("log")
            # every other value labelled where five would crowd a narrow panel; no minor tick labels
            shown = values[::2] if len(values) > 4 else values
            if len(values) > 4:
                ax.set_xmargin(0.1)  # room to spare: the first x label clear of the lowest y label
            ax.set_xticks(shown, labels=[str(v) if v < 1000 else f"{v // 1024}k" for v in shown])
            ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)
            if row < 2:
                _ticks_125(ax)
        grid[2, col].set_xlabel(_AXES[size])
        grid[2, col].set_ylim(0.0, 1.25)
        grid[2, col].set_yticks([0.0, 0.5, 1.0], labels=["0", "0.5", "1"])  # "0.00" met the first batch size
        grid[2, col].axhline(1.0, color="black", linestyle=":", linewidth=0.8, zorder=0)
    grid[0, 0].set_ylabel("µs per token, fwd+bwd")
    grid[1, 0].set_ylabel("peak MiB per 1,000 tokens")
    grid[2, 0].set_ylabel("own products / layer")
    handles, labels = grid[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 1.0))
    glue_figure("fig-cost-scaling", fig)
    glue_all({"scaling-reading": scaling_reading(scaling)})
    fixed = {size: SCALING_SWEEPS[size][1](SCALING_SWEEPS[size][0][0]) for size in SCALING_SWEEPS}
    rounds = reference["config"]["scaling_rounds"]
    glue_all(
        {
            "scaling-n-d": fixed["n"][1],
            "scaling-n-m": fixed["n"][2],
            "scaling-n-R": fixed["n"][3],
            "scaling-batch": fixed["d"][0],
            "scaling-R": fixed["d"][3],
            "scaling-m-d": fixed["m"][1],
            "scaling-R-m": fixed["R"][2],
            "scaling-rounds": rounds,
        }
    )
    return f"{rounds} interleaved rounds per point"


def scaling_reading(scaling: dict) -> str:
    """The paragraph that reads the scaling record: fitted slopes of time against ``d``, and the overhead's extremes.

    Every number comes from ``scaling`` (:func:`symbreak.scaling.check_scaling`'s format).
    """
    scaling = check_scaling(scaling)
    d_values = scaling["d"]["values"]
    slopes = ", ".join(
        f"{power_law_exponent(d_values, scaling['d'][f]['backward_s']):.2f} ({SCALING_LABELS[f]})"
        for f in SCALING_LABELS
    )
    degree = formula_degrees("d", "rankR")["flops"]
    points = [
        (ratio, f, size, v)
        for size in SCALING_SWEEPS
        for f in SCALING_LABELS
        if f in scaling[size]
        for ratio, v in zip(scaling[size][f]["own_backward"], scaling[size]["values"], strict=True)
    ]
    low, high = min(points), max(points)
    r_values = scaling["R"]["values"]
    r_ratio = scaling["R"]["rankR"]["own_backward"]
    return (
        f"*Reading the record.* Against $d$ (with $m = 4d$) the time per token of forward and backward grows with "
        f"fitted slopes {slopes}, against the FLOP formula's {degree}. Over all points the ratio of forward and "
        f"backward to the layer's own products lies between {low[0]:.2f} ({SCALING_LABELS[low[1]]} at "
        f"{_AXES[low[2]].split(' (')[0]}{_EQUALS}{low[3]:,}) and {high[0]:.2f} ({SCALING_LABELS[high[1]]} at "
        f"{_AXES[high[2]].split(' (')[0]}{_EQUALS}{high[3]:,}); along $R$ the rank-$R$ form's goes from "
        f"{r_ratio[0]:.2f} at $R${_EQUALS}{r_values[0]:,} to {r_ratio[-1]:.2f} at $R${_EQUALS}{r_values[-1]:,}. "
        "These are one run's medians on a shared "
        "machine, so differences of a few hundredths between neighbouring points are noise."
    )
