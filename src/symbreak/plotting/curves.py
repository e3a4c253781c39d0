"""Curves against a numeric axis: log–log lines, a function of ``α`` on both sides of zero, a mean with a band (one
panel of small multiples: a few of them over the rest, faint), and labels written at the curves' ends in place of a
legend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch
from matplotlib.path import Path

from symbreak.plotting.style import _MARKERS, FAMILY_COLOURS, FAMILY_MARKERS, MIN_FONT_PT

__all__ = ["loglog_curves", "signed_alpha_curves", "mean_band", "spread_positions", "label_ends"]
__all__ += ["FAINT", "BAND_ALPHA", "curve_panel"]


def _positive_axis(name: str, values: Sequence[float]) -> np.ndarray:
    """The argument ``name`` as a non-empty 1-d float array of positive numbers, for a log axis."""
    xs = np.asarray(values, dtype=float)
    if xs.ndim != 1 or xs.size == 0 or not (xs > 0).all():
        raise ValueError(f"{name}: expected a non-empty 1-d sequence of positive numbers, got {values!r}")
    return xs


def _check_labels(name: str, labels: Mapping[str, object], curves: Mapping[str, object]) -> None:
    """Raise unless every key of the argument ``name`` is the label of one of ``curves``."""
    for label in labels:
        if label not in curves:
            raise ValueError(f"{name}: expected labels among {list(curves)}, got {label!r}")


def loglog_curves(
    ax,
    x: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    styles: Mapping[str, str] | None = None,
    colors: Mapping[str, str] | None = None,
    points: Mapping[str, tuple[float, float]] | None = None,
    right_axis: tuple[str, float] | None = None,
    legend_loc: str | None = "best",
    points_below: Sequence[str] = (),
) -> None:
    """One line per entry of ``curves`` (label → values at ``x``) on log–log axes, with a legend.

    Each curve gets its own marker unless ``styles`` gives it a line style
    (e.g. ``"--"`` for a reference line, drawn without markers); ``colors`` gives a curve its colour (a family's,
    :data:`~symbreak.plotting.FAMILY_COLOURS`), else it takes the next of the cycle (grey for a styled line).
    ``points`` adds labelled single points (label → ``(x, y)``), drawn as black stars, e.g.
    real models, each labelled above and to the left, or below and to the right for the labels of
    ``points_below`` (a point on a lower curve, whose label above would sit on the curves above it).
    ``right_axis = (label, factor)`` adds a right-hand axis that
    reads the left one multiplied by ``factor`` (e.g. bytes per number / 10⁹ for GB).
    ``legend_loc`` is passed to ``ax.legend(loc=…)``; ``None`` draws no legend (one for the figure instead).
    """
    xs = _positive_axis("x", x)
    styles = dict(styles or {})
    _check_labels("styles", styles, curves)
    colors = dict(colors or {})
    _check_labels("colors", colors, curves)
    for i, (label, values) in enumerate(curves.items()):
        ys = np.asarray(values, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError(f"curves[{label!r}]: expected {xs.size} values like x, got shape {ys.shape}")
        if not (ys > 0).all():
            raise ValueError(f"curves[{label!r}]: expected positive values for a log axis, got min {ys.min()}")
        if label in styles:
            ax.plot(xs, ys, styles[label], color=colors.get(label, "0.35"), lw=1.2, label=label)
        else:
            ax.plot(xs, ys, marker=_MARKERS[i % len(_MARKERS)], ms=4, lw=1.4, label=label, color=colors.get(label))
    _check_labels("points_below", dict.fromkeys(points_below), points or {})
    for label, (px, py) in (points or {}).items():
        if not (px > 0 and py > 0):
            raise ValueError(f"points[{label!r}]: expected positive coordinates, got {(px, py)}")
        ax.plot([px], [py], "*", color="black", ms=11, zorder=5)
        offset, align = ((8, -14), "left") if label in points_below else ((-6, 6), "right")
        ax.annotate(label, (px, py), xytext=offset, textcoords="offset points", ha=align, fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if right_axis is not None:
        right_label, factor = right_axis
        if not factor > 0:
            raise ValueError(f"right_axis: expected a positive factor, got {factor!r}")
        right = ax.secondary_yaxis("right", functions=(lambda v: v * factor, lambda v: v / factor))
        right.set_ylabel(right_label)
    if legend_loc is not None:
        ax.legend(fontsize=9, loc=legend_loc)


def signed_alpha_curves(
    axes: Sequence,
    magnitudes: Sequence[float],
    curves: Mapping[str, tuple[Sequence[float] | None, Sequence[float] | None]],
    *,
    ylabel: str,
    exact: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> None:
    """A function of ``α`` on both sides of zero: ``axes[0]`` shows ``α = −|α|``, ``axes[1]`` shows ``α = +|α|``.

    ``magnitudes`` are the values ``|α| > 0`` (log axis; the left panel runs
    from the largest ``|α|`` at its left edge, so ``α`` grows left to right in
    both panels, with tick labels of the signed ``α``).  ``curves`` maps a label
    to ``(values at −|α|, values at +|α|)``; a side given as None is not drawn
    (e.g. a function that is identically zero, which a log axis cannot show).
    ``exact`` adds, per label and side, a dashed horizontal line at a known
    value in the curve's colour.  Ticks sit at the powers of two in range.
    The y axis is logarithmic (share it with ``figure(..., sharey=True)``);
    the legend is drawn once, for the figure, below the panels (up to five
    columns).
    """
    axes = list(np.asarray(axes, dtype=object).ravel())
    if len(axes) != 2:
        raise ValueError(f"axes: expected 2 axes (α < 0, α > 0), got {len(axes)}")
    mags = _positive_axis("magnitudes", magnitudes)
    exact = dict(exact or {})
    _check_labels("exact", exact, curves)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, sides) in enumerate(curves.items()):
        if len(sides) != 2:
            raise ValueError(f"curves[{label!r}]: expected (values at −|α|, values at +|α|), got {len(sides)} entries")
        colour = colours[i % len(colours)]
        drawn = False
        for side, (ax, values) in enumerate(zip(axes, sides, strict=True)):
            if values is not None:
                ys = np.asarray(values, dtype=float)
                if ys.shape != mags.shape:
                    raise ValueError(f"curves[{label!r}]: expected {mags.size} values like magnitudes, got {ys.shape}")
                if not (ys > 0).all():
                    raise ValueError(f"curves[{label!r}]: expected positive values for a log axis, got min {ys.min()}")
                ax.plot(
                    mags,
                    ys,
                    marker=_MARKERS[i % len(_MARKERS)],
                    ms=3.5,
                    lw=1.3,
                    color=colour,
                    label=None if drawn else label,
                )
                drawn = True
            level = exact.get(label, (None, None))[side]
            if level is not None:
                # black and on top: a dashed line in the curve's own colour vanishes under the curve
                ax.axhline(level, color="black", ls=(0, (4, 3)), lw=0.9, zorder=3)
    for side, ax in enumerate(axes):
        ax.set_xscale("log")
        ax.set_yscale("log")
        powers = 2.0 ** np.arange(np.ceil(np.log2(mags.min())), np.floor(np.log2(mags.max())) + 1)
        ticks = powers if powers.size else mags[[0, -1]]
        sign = "−" if side == 0 else ""
        ax.set_xticks(ticks, [f"{sign}{_fraction_label(v)}" for v in ticks])
        ax.minorticks_off()
        ax.set_xlabel(r"$\alpha$")
    axes[0].invert_xaxis()
    axes[0].set_ylabel(ylabel)
    axes[0].set_title(r"$\alpha < 0$")
    axes[1].set_title(r"$\alpha > 0$")
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    columns = min(len(handles), 5) or 1
    axes[1].figure.legend(
        handles.values(), handles.keys(), fontsize=9, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=columns
    )


def _fraction_label(v: float) -> str:
    """``4`` → "4", ``0.25`` → "1/4": a number ``≥ 1`` as it is, a smaller one as a unit fraction ``1/(1/v)``."""
    return f"{v:g}" if v >= 1 else f"1/{1 / v:g}"


def mean_band(
    ax,
    x: Sequence[float],
    samples: np.ndarray,
    *,
    label: str,
    band: tuple[float, float] = (10.0, 90.0),
    marker: str = "o",
    linestyle: str = "-",
    color: str | None = None,
    alpha: float = 0.18,
) -> Line2D:
    """The mean of ``samples[i, :]`` against ``x[i]`` as a line, with a shaded band between two percentiles;
    returns the line (for :func:`label_ends`).

    ``samples`` has one row per ``x`` and one column per independent draw; the
    line is the row mean ``(1/n) Σ_s samples[i, s]`` and the band runs from the
    ``band[0]``-th to the ``band[1]``-th percentile of the row (default: the
    central 80 %), in the line's colour (``color``, else the next of the axes' cycle) at opacity ``alpha``.
    """
    xs = np.asarray(x, dtype=float)
    values = np.asarray(samples, dtype=float)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"x: expected a non-empty 1-d sequence, got shape {xs.shape}")
    if values.ndim != 2 or values.shape[0] != xs.size or values.shape[1] == 0:
        raise ValueError(f"samples: expected shape ({xs.size}, n) with n >= 1 draws, got {values.shape}")
    lo, hi = band
    if not 0 <= lo < hi <= 100:
        raise ValueError(f"band: expected percentiles 0 <= low < high <= 100, got {band!r}")
    if not (isinstance(alpha, (int, float)) and 0 < alpha <= 1):
        raise ValueError(f"alpha: expected an opacity in (0, 1], got {alpha!r}")
    colour = {} if color is None else {"color": color}
    (line,) = ax.plot(xs, values.mean(axis=1), marker=marker, ls=linestyle, ms=4, lw=1.4, label=label, **colour)
    low, high = np.percentile(values, [lo, hi], axis=1)
    ax.fill_between(xs, low, high, color=line.get_color(), alpha=alpha, lw=0)
    return line


#: The colour of the other curves drawn thin behind a panel's own (:func:`curve_panel`): faint on the light
#: page and, inverted, on the dark one, and far enough from the standard MLPs' grey that the two are not confused:
#: a contrast of 3:1 between them in both modes (a test).
FAINT = "0.88"
#: The line width of those faint curves, in points: well under a panel's own lines (1.6).
FAINT_LW = 0.6
#: The opacity of the seeds' band under a seed-mean line: light enough that every family colour keeps a contrast of
#: 3:1 over its own band, on the light page and through the dark-mode filter (a test).
BAND_ALPHA = 0.1


def curve_panel(ax, curves: Mapping[str, tuple], shown: Sequence[str], styles: Mapping[str, tuple]) -> dict:
    """One panel of small multiples: in ``ax``, each curve of ``shown`` as :func:`mean_band` (mean and 10th–90th
    percentile band, at opacity :data:`BAND_ALPHA`) in its colour and line style (``styles[label] = (colour, line
    style)``, e.g. a family's colour and σ's style; a family of ``style.FAMILY_MARKERS`` also gets its marker, spaced
    along the line), over the means of the other curves of ``curves``, thin and faint (:data:`FAINT`, ``FAINT_LW``
    points), the rest as a background; return ``{label: line}`` of the curves shown (for :func:`label_ends`).

    ``curves[label] = (x, samples)``, ``samples`` of shape ``(len(x), draws)``.
    """
    missing = [form for form in shown if form not in curves]
    if missing:
        raise ValueError(f"shown: expected labels among {list(curves)}, got {missing}")
    for label, (x, samples) in curves.items():
        if label not in shown:
            ax.plot(x, np.asarray(samples, dtype=float).mean(axis=1), color=FAINT, lw=FAINT_LW, zorder=0.9)
    markers = {FAMILY_COLOURS[family]: marker for family, marker in FAMILY_MARKERS.items()}
    lines = {}
    for label in shown:
        colour, style = styles[label]
        x, samples = curves[label]
        line = mean_band(ax, x, samples, label=label, marker="", linestyle=style, color=colour, alpha=BAND_ALPHA)
        line.set_linewidth(1.6)
        if colour in markers:  # a family told apart by a marker too: one every tenth of the line's length
            line.set(marker=markers[colour], markersize=3.5, markevery=0.1)
        lines[label] = line
    return lines


def spread_positions(positions: Sequence[float], gap: float, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """``positions`` moved as little as this simple rule does so that any two are at least ``gap`` apart, in their
    order, within ``[low, high]`` where there is room: a pass upwards pushes each above its lower neighbour, a pass
    downwards pulls them back under ``high``.  Returned in the order given (for labels at the ends of curves)."""
    p = np.asarray(positions, dtype=float)
    if p.ndim != 1 or not np.isfinite(p).all():
        raise ValueError(f"positions: expected a 1-d sequence of finite numbers, got {positions!r}")
    if not (isinstance(gap, (int, float)) and gap >= 0):
        raise ValueError(f"gap: expected a number >= 0, got {gap!r}")
    if not low < high:
        raise ValueError(f"low, high: expected low < high, got {low!r}, {high!r}")
    order = np.argsort(p, kind="stable")
    placed = np.clip(p[order], low, high)
    for i in range(1, placed.size):
        placed[i] = max(placed[i], placed[i - 1] + gap)
    if placed.size:
        placed[-1] = min(placed[-1], high)
    for i in range(placed.size - 2, -1, -1):
        placed[i] = min(placed[i], placed[i + 1] - gap)
    out = np.empty_like(placed)
    out[order] = placed
    return out


def label_ends(ax, labels: Mapping[str, object], *, gap_pt: float = MIN_FONT_PT + 2.0, hidden: str = "raise") -> None:
    """Write each label of ``labels`` (text → a ``Line2D`` of ``ax``) in its line's colour just right of the axes,
    level with the line's last point inside the axes and joined to it by a thin leader, the labels spread at least
    ``gap_pt`` points apart (:func:`spread_positions`): curves labelled directly, with no legend to decode.  (A line
    that leaves the panel, cut by the axes' limits, is labelled where it was last seen; one with no point inside the
    axes raises, or with ``hidden="skip"`` goes unlabelled, as it is not drawn.)

    Call it after the axes have their final size and limits (after any ``tight_layout``): the spread is worked out
    in the axes' height.
    """
    if not labels:
        raise ValueError("labels: expected at least one label → line, got none")
    if hidden not in ("raise", "skip"):
        raise ValueError(f"hidden: expected 'raise' or 'skip', got {hidden!r}")
    ends, colours, texts = [], [], []
    to_axes = ax.transAxes.inverted()
    (x_lo, x_hi), (y_lo, y_hi) = sorted(ax.get_xlim()), sorted(ax.get_ylim())  # settled before any mapping
    for text, line in labels.items():
        if not hasattr(line, "get_xydata"):
            raise TypeError(f"labels[{text!r}]: expected a Line2D of ax, got {type(line).__name__}")
        xy = np.asarray(line.get_xydata(), dtype=float)
        xy = xy[np.isfinite(xy).all(axis=1)]
        inside = (x_lo <= xy[:, 0]) & (xy[:, 0] <= x_hi) & (y_lo <= xy[:, 1]) & (xy[:, 1] <= y_hi)
        if not inside.any():
            if hidden == "skip":
                continue
            raise ValueError(f"labels[{text!r}]: expected a line with a finite point inside the axes, got none")
        ends.append(xy[inside][-1])
        colours.append(line.get_color())
        texts.append(text)
    if not ends:
        return  # every line off the panel (hidden="skip"): nothing drawn, nothing to name
    ends_axes = [to_axes.transform(ax.transData.transform(end)) for end in ends]
    height_pt = ax.get_position().height * ax.figure.get_figheight() * 72
    spread = spread_positions([y for _, y in ends_axes], gap_pt / height_pt)
    for text, (x_end, y_end), colour, y in zip(texts, ends_axes, colours, spread, strict=True):
        # the leader: level from the curve's end to just past the axes, then across to its label
        leader = Path([(x_end, y_end), (1.02, y_end), (1.07, y)])
        ax.add_artist(PathPatch(leader, fill=False, edgecolor=colour, lw=0.6, transform=ax.transAxes, clip_on=False))
        ax.text(1.08, y, text, transform=ax.transAxes, va="center", ha="left", fontsize=MIN_FONT_PT, color=colour)
