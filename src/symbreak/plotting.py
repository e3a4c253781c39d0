"""One figure style for the book, and the recurring figure kinds.

This module draws numbers handed to it; it never sees a layer.  Figures go
into the book through :func:`glue_figure`, which stores a PNG under a name for
a captioned ``{glue:figure}`` and shows the same PNG to a reader running the
notebook, without a ``<Figure …>`` text repr.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = [
    "STYLE",
    "PNG",
    "figure",
    "glue_figure",
    "coefficient_bars",
    "chain_diagram",
    "heatmap_grid",
    "markdown_table",
    "loglog_curves",
    "agreement_scatter",
    "annotated_points",
    "mean_band",
    "sorted_bars",
    "annotate_quadrants",
    "signed_alpha_curves",
    "interval_dots",
    "spectra_strip",
    "scientific",
]

#: rcParams used for every figure of the book.
STYLE: dict[str, object] = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "image.cmap": "RdBu_r",
    "svg.hashsalt": "symbreak",
}


class PNG:
    """A rendered figure: PNG bytes with a short, stable text repr."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name

    def _repr_png_(self) -> bytes:
        return self.data

    def __repr__(self) -> str:
        return f"[figure {self.name}]"


def figure(
    ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6, **kwargs
) -> tuple[Figure, np.ndarray]:
    """A new figure in the book's style; ``axes`` is always an array."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)
    return fig, axes.ravel()


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    with plt.rc_context(STYLE):
        fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def glue_figure(name: str, fig: Figure, save_to: str | Path | None = None) -> None:
    """Glue ``fig`` as a PNG under ``name`` (for ``{glue:figure}``) and display it in Jupyter.

    The notebook cell calling this should carry the ``remove-output`` tag, so
    the book shows the figure once, in its captioned ``{glue:figure}``.  With
    ``save_to``, the PNG is also written there (only when its bytes changed),
    for pages that are not notebooks and so cannot paste a glued figure.
    """
    from IPython.display import display
    from myst_nb import glue

    png = PNG(_png(fig), name)
    if save_to is not None:
        path = Path(save_to)
        if not path.exists() or path.read_bytes() != png.data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png.data)
    glue(name, png, display=False)
    display(png)


def coefficient_bars(
    ax, coefficients: np.ndarray, labels: Sequence[str], *, xlabel: str = "memory unit $j$", ylabel: str = ""
) -> None:
    """Grouped bars: ``coefficients[i, j]`` for input ``i`` (one colour per input) and unit ``j``."""
    coefficients = np.asarray(coefficients)
    n, m = coefficients.shape
    width = 0.8 / n
    for i in range(n):
        ax.bar(np.arange(m) + (i - (n - 1) / 2) * width, coefficients[i], width=width, label=labels[i])
    ax.set_xticks(np.arange(m))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(fontsize=8)


def chain_diagram(ax, stages: Sequence[tuple[str, str]], steps: Sequence[str]) -> None:
    """A top-to-bottom chain of stages ``(title, formula)`` joined by arrows labelled ``steps``."""
    n = len(stages)
    if len(steps) != n - 1:
        raise ValueError(f"steps: expected {n - 1} labels for {n} stages, got {len(steps)}")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, n - 0.5)
    ax.invert_yaxis()
    ax.axis("off")
    box = {"boxstyle": "round,pad=0.45", "fc": "#eef3fb", "ec": "#4a6fa5"}
    for i, (title, formula) in enumerate(stages):
        ax.text(0.2, i, title, ha="center", va="center", fontsize=11, weight="bold", bbox=box)
        ax.text(0.42, i, formula, ha="left", va="center", fontsize=12)
    for i, label in enumerate(steps):
        ax.annotate("", xy=(0.2, i + 0.72), xytext=(0.2, i + 0.28), arrowprops={"arrowstyle": "->", "lw": 1.4})
        ax.text(0.23, i + 0.5, label, ha="left", va="center", fontsize=9.5, style="italic", color="#444444")


def heatmap_grid(
    fig: Figure,
    axes: Sequence,
    fields: np.ndarray,
    titles: Sequence[Sequence[str]],
    *,
    extent: tuple[float, float, float, float],
    xlabel: str,
    ylabel: str,
    diagonal: bool = True,
    contour_levels: int = 9,
    colorbar_label: str = "",
    label_outer: bool = False,
) -> None:
    """Heatmaps of functions ``f(a, b)`` on a grid, one panel per ``fields[r, c]``, rows sharing a colour scale.

    ``fields`` has shape ``(rows, cols, ny, nx)``; ``fields[r, c][i, j]`` is the
    value at ``a = linspace(extent[0], extent[1], nx)[j]`` (horizontal axis) and
    ``b = linspace(extent[2], extent[3], ny)[i]`` (vertical axis).  ``axes``
    holds ``rows · cols`` axes in row-major order (as :func:`figure` returns
    them).  The colour scale of row ``r`` is symmetric about zero,
    ``[−M_r, M_r]`` with ``M_r = max |fields[r]|`` (blue negative, red
    positive), with one colour bar per row; ``contour_levels`` equally spaced
    contours inside ``(−M_r, M_r)`` are drawn in black (negative ones dashed,
    0 disables them), and with ``diagonal`` the mirror line ``a = b`` is dotted.
    Every panel gets ``xlabel`` and ``ylabel``; with ``label_outer`` only the
    bottom row gets ``xlabel`` and x tick labels, and only the first column
    ``ylabel`` and y tick labels (for panels that share their axes).
    """
    fields = np.asarray(fields, dtype=float)
    if fields.ndim != 4:
        raise ValueError(f"fields: expected a 4-d array (rows, cols, ny, nx), got shape {fields.shape}")
    rows, cols, ny, nx = fields.shape
    axes = list(np.asarray(axes, dtype=object).ravel())
    if len(axes) != rows * cols:
        raise ValueError(f"axes: expected rows·cols = {rows * cols} axes, got {len(axes)}")
    if len(titles) != rows or any(len(t) != cols for t in titles):
        raise ValueError(f"titles: expected {rows} rows of {cols} strings, got {[len(t) for t in titles]}")
    if len(extent) != 4:
        raise ValueError(f"extent: expected (a_min, a_max, b_min, b_max), got {extent!r}")
    if isinstance(contour_levels, bool) or not isinstance(contour_levels, int) or contour_levels < 0:
        raise ValueError(f"contour_levels: expected an int >= 0, got {contour_levels!r}")
    a = np.linspace(extent[0], extent[1], nx)
    b = np.linspace(extent[2], extent[3], ny)
    for r in range(rows):
        scale = float(np.abs(fields[r]).max()) or 1.0
        levels = np.linspace(-scale, scale, contour_levels + 2)[1:-1]
        image = None
        for c in range(cols):
            ax = axes[r * cols + c]
            image = ax.imshow(
                fields[r, c],
                origin="lower",
                extent=extent,
                cmap=STYLE["image.cmap"],
                vmin=-scale,
                vmax=scale,
                interpolation="nearest",
                aspect="equal",
            )
            if contour_levels and np.ptp(fields[r, c]) > 0:
                ax.contour(a, b, fields[r, c], levels=levels, colors="black", linewidths=0.5)
            if diagonal:
                lo, hi = max(extent[0], extent[2]), min(extent[1], extent[3])
                ax.plot([lo, hi], [lo, hi], color="black", lw=1.0, ls=":")
            ax.set_title(titles[r][c])
            if not label_outer or r == rows - 1:
                ax.set_xlabel(xlabel)
            else:
                ax.tick_params(labelbottom=False)
            if not label_outer or c == 0:
                ax.set_ylabel(ylabel)
            else:
                ax.tick_params(labelleft=False)
            ax.grid(False)
        fig.colorbar(image, ax=axes[r * cols : (r + 1) * cols], shrink=0.9, label=colorbar_label)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown pipe table (for :func:`symbreak.prose.glue_text` and ``{glue:md}``).

    Every cell is a string; a ``|`` inside a cell is escaped as ``\\|``.
    """
    if isinstance(header, str) or not header or not all(isinstance(h, str) for h in header):
        raise TypeError(f"header: expected a non-empty sequence of str, got {header!r}")
    n = len(header)
    for i, r in enumerate(rows):
        if isinstance(r, str) or len(r) != n:
            raise ValueError(f"rows[{i}]: expected {n} cells like the header, got {r!r}")
        if not all(isinstance(cell, str) for cell in r):
            raise TypeError(f"rows[{i}]: expected str cells, got {[type(cell).__name__ for cell in r]}")

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "|".join(["---"] * n) + "|", *(line(r) for r in rows)])


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def loglog_curves(
    ax,
    x: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    styles: Mapping[str, str] | None = None,
    points: Mapping[str, tuple[float, float]] | None = None,
    right_axis: tuple[str, float] | None = None,
    legend_loc: str = "best",
) -> None:
    """One line per entry of ``curves`` (label → values at ``x``) on log–log axes, with a legend.

    Each curve gets its own marker unless ``styles`` gives it a line style
    (e.g. ``"--"`` for a reference line, drawn without markers).  ``points``
    adds labelled single points (label → ``(x, y)``), drawn as black stars, e.g.
    real models.  ``right_axis = (label, factor)`` adds a right-hand axis that
    reads the left one multiplied by ``factor`` (e.g. bytes per number / 10⁹ for GB).
    ``legend_loc`` is passed to ``ax.legend(loc=…)``.
    """
    xs = np.asarray(x, dtype=float)
    if xs.ndim != 1 or xs.size == 0 or not (xs > 0).all():
        raise ValueError(f"x: expected a non-empty 1-d sequence of positive numbers, got {x!r}")
    styles = dict(styles or {})
    for label in styles:
        if label not in curves:
            raise ValueError(f"styles: expected labels among {list(curves)}, got {label!r}")
    for i, (label, values) in enumerate(curves.items()):
        ys = np.asarray(values, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError(f"curves[{label!r}]: expected {xs.size} values like x, got shape {ys.shape}")
        if not (ys > 0).all():
            raise ValueError(f"curves[{label!r}]: expected positive values for a log axis, got min {ys.min()}")
        if label in styles:
            ax.plot(xs, ys, styles[label], color="0.35", lw=1.2, label=label)
        else:
            ax.plot(xs, ys, marker=_MARKERS[i % len(_MARKERS)], ms=4, lw=1.4, label=label)
    for label, (px, py) in (points or {}).items():
        if not (px > 0 and py > 0):
            raise ValueError(f"points[{label!r}]: expected positive coordinates, got {(px, py)}")
        ax.plot([px], [py], "*", color="black", ms=11, zorder=5)
        ax.annotate(label, (px, py), xytext=(-6, 6), textcoords="offset points", ha="right", fontsize=8.5)
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
    ax.legend(fontsize=8, loc=legend_loc)


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
    mags = np.asarray(magnitudes, dtype=float)
    if mags.ndim != 1 or mags.size == 0 or not (mags > 0).all():
        raise ValueError(f"magnitudes: expected a non-empty 1-d sequence of positive numbers, got {magnitudes!r}")
    exact = dict(exact or {})
    for label in exact:
        if label not in curves:
            raise ValueError(f"exact: expected labels among {list(curves)}, got {label!r}")
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


def agreement_scatter(
    ax,
    pairs: Sequence[tuple[np.ndarray, np.ndarray]],
    labels: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
) -> None:
    """Two computations of the same numbers against each other: ``b`` over ``a`` for each pair, and the line ``b = a``.

    They agree when every point lies on the line.  One colour and legend entry per pair.
    """
    if len(pairs) != len(labels):
        raise ValueError(f"labels: expected one label per pair ({len(pairs)}), got {len(labels)}")
    low, high = np.inf, -np.inf
    for (a, b), label in zip(pairs, labels, strict=True):
        a, b = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float))
        if a.shape != b.shape:
            raise ValueError(f"pairs: expected arrays of equal size in each pair, got {a.size} and {b.size}")
        ax.scatter(a, b, s=9, alpha=0.6, label=label)
        low, high = min(low, a.min(), b.min()), max(high, a.max(), b.max())
    ax.plot([low, high], [low, high], color="black", lw=0.8, label="$y = x$")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=8)


def mean_band(
    ax,
    x: Sequence[float],
    samples: np.ndarray,
    *,
    label: str,
    band: tuple[float, float] = (10.0, 90.0),
    marker: str = "o",
    linestyle: str = "-",
) -> None:
    """The mean of ``samples[i, :]`` against ``x[i]`` as a line, with a shaded band between two percentiles.

    ``samples`` has one row per ``x`` and one column per independent draw; the
    line is the row mean ``(1/n) Σ_s samples[i, s]`` and the band runs from the
    ``band[0]``-th to the ``band[1]``-th percentile of the row (default: the
    central 80 %).
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
    (line,) = ax.plot(xs, values.mean(axis=1), marker=marker, ls=linestyle, ms=4, lw=1.4, label=label)
    low, high = np.percentile(values, [lo, hi], axis=1)
    ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.18, lw=0)


def annotated_points(
    ax,
    xs: Sequence[float],
    ys: Sequence[float],
    labels: Sequence[str],
    offsets: Sequence[tuple[float, float]] | None = None,
    aligns: Sequence[str] | None = None,
) -> None:
    """Marked points ``(xs[i], ys[i])``, each with its label written beside it.

    ``offsets[i]`` is the label's displacement in points (default ``(6, 4)``) and
    ``aligns[i]`` its horizontal alignment, ``"left"`` (default) or ``"right"``
    (the label ends at the offset), to keep close labels apart.
    """
    n = len(xs)
    if len(ys) != n or len(labels) != n:
        raise ValueError(f"ys, labels: expected {n} entries like xs, got {len(ys)} and {len(labels)}")
    if offsets is None:
        offsets = [(6.0, 4.0)] * n
    if len(offsets) != n:
        raise ValueError(f"offsets: expected {n} entries like xs, got {len(offsets)}")
    if aligns is None:
        aligns = ["left"] * n
    if len(aligns) != n or any(a not in ("left", "right") for a in aligns):
        raise ValueError(f"aligns: expected {n} entries, each 'left' or 'right', got {list(aligns)!r}")
    ax.scatter(xs, ys, color="black", s=18, zorder=3)
    for x, y, label, offset, align in zip(xs, ys, labels, offsets, aligns, strict=True):
        ax.annotate(label, (x, y), xytext=offset, textcoords="offset points", fontsize=8.5, ha=align)


def sorted_bars(
    ax,
    values: Mapping[str, float],
    *,
    xlabel: str,
    errors: Mapping[str, float] | None = None,
    order: Sequence[str] | None = None,
    points: Mapping[str, float] | None = None,
    point_errors: Mapping[str, float] | None = None,
    bar_label: str = "",
    point_label: str = "",
) -> list[str]:
    """Horizontal bars of ``values`` (label → number), largest at the top; returns the order drawn, top first.

    ``order`` fixes the order instead (e.g. to match another panel).  ``errors``
    adds error bars ``± errors[label]`` to the bars; ``points`` adds a black
    marker per label (e.g. a measurement), with ``± point_errors[label]``.
    ``bar_label`` and ``point_label`` name the two in a legend (none if both are empty).
    """
    if not values:
        raise ValueError("values: expected at least one label → number, got an empty mapping")
    labels = list(values)
    if order is None:
        order = sorted(labels, key=lambda k: values[k], reverse=True)
    elif sorted(order) != sorted(labels):
        raise ValueError(f"order: expected a permutation of {labels}, got {list(order)}")
    for name, extra in (("errors", errors), ("points", points), ("point_errors", point_errors)):
        if extra is not None and not set(extra) <= set(labels):
            raise ValueError(f"{name}: expected labels among {labels}, got {sorted(set(extra) - set(labels))}")
    if point_errors is not None and points is None:
        raise ValueError("point_errors: expected together with points, got points = None")
    y = np.arange(len(order))[::-1]
    widths = [values[k] for k in order]
    xerr = None if errors is None else [errors.get(k, 0.0) for k in order]
    ax.barh(y, widths, xerr=xerr, color="#8fb0d8", ecolor="black", capsize=3, label=bar_label or None)
    if points is not None:
        shown = [k for k in order if k in points]
        py = [y[order.index(k)] for k in shown]
        pe = None if point_errors is None else [point_errors.get(k, 0.0) for k in shown]
        ax.errorbar(
            [points[k] for k in shown],
            py,
            xerr=pe,
            fmt="o",
            color="black",
            ms=4,
            capsize=3,
            label=point_label or None,
        )
    ax.set_yticks(y)
    ax.set_yticklabels(order)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if bar_label or point_label:
        ax.legend(fontsize=8, loc="lower right")
    return list(order)


def annotate_quadrants(ax, labels: Mapping[tuple[int, int], str], extent: tuple[float, float, float, float]) -> None:
    """Write ``labels[(sign a, sign b)]`` inside each quadrant of ``extent``; draw the lines ``a = 0`` and ``b = 0``.

    ``extent = (a_min, a_max, b_min, b_max)`` must contain the origin; the keys are
    sign pairs from ``{1, −1}²`` (horizontal axis ``a`` first).
    """
    if len(extent) != 4:
        raise ValueError(f"extent: expected (a_min, a_max, b_min, b_max), got {extent!r}")
    a_min, a_max, b_min, b_max = extent
    if not (a_min < 0 < a_max and b_min < 0 < b_max):
        raise ValueError(f"extent: expected a box around the origin, got {extent!r}")
    for key in labels:
        if key not in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            raise ValueError(f"labels: expected sign pairs (±1, ±1) as keys, got {key!r}")
    ax.axhline(0, color="black", lw=1.0)
    ax.axvline(0, color="black", lw=1.0)
    box = {"boxstyle": "round,pad=0.25", "fc": "white", "ec": "0.6", "alpha": 0.9}
    for (sa, sb), text in labels.items():
        ax.text(
            (a_max if sa > 0 else a_min) / 2,
            (b_max if sb > 0 else b_min) / 2,
            text,
            ha="center",
            va="center",
            fontsize=9,
            bbox=box,
        )


def interval_dots(
    ax,
    labels: Sequence[str],
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    xlabel: str,
    separators: Sequence[int] = (),
    legend: bool = True,
) -> None:
    """Means with intervals, one row per label (first label at the top), one marker per series.

    ``series`` maps a series name to ``(means, half_widths)``, one entry per
    label; each mean is drawn as a marker with the bar ``mean ± half_width``
    (a NaN half-width draws no bar).  Several series of the same row are
    offset slightly in height.  ``separators`` draws a thin line above the row
    of each given index, to group the rows.
    """
    n = len(labels)
    if n == 0 or isinstance(labels, str):
        raise ValueError(f"labels: expected a non-empty sequence of row labels, got {labels!r}")
    if not series:
        raise ValueError("series: expected at least one series, got none")
    for i in separators:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 < i < n:
            raise ValueError(f"separators: expected row indices in [1, {n}), got {i!r}")
    k = len(series)
    offsets = (np.arange(k) - (k - 1) / 2) * min(0.25, 0.6 / k)
    rows = np.arange(n)
    for s, (name, (means, halves)) in enumerate(series.items()):
        mu = np.asarray(means, dtype=float)
        hw = np.asarray(halves, dtype=float)
        if mu.shape != (n,) or hw.shape != (n,):
            raise ValueError(f"series[{name!r}]: expected {n} means and {n} half-widths, got {mu.shape}, {hw.shape}")
        if (hw < 0).any():
            raise ValueError(f"series[{name!r}]: expected half-widths >= 0, got min {np.nanmin(hw)}")
        ax.errorbar(
            mu,
            rows + offsets[s],
            xerr=np.nan_to_num(hw),
            fmt=_MARKERS[s % len(_MARKERS)],
            ms=4.5,
            capsize=2.5,
            lw=1.2,
            label=name,
        )
    for i in separators:
        ax.axhline(i - 0.5, color="0.6", lw=0.6)
    ax.set_yticks(rows, list(labels))
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    if legend and k > 1:
        ax.legend(fontsize=8)


def spectra_strip(ax, spectra: Mapping[str, tuple[np.ndarray, float]], *, xlabel: str = r"$|\lambda_i|$") -> None:
    """One row per entry of ``spectra`` (label → ``(eigenvalues, τ)``): the ``|λ_i|`` on a log axis against ``τ``.

    Points with ``|λ_i| ≤ τ`` (the near-zero eigenvalues that are counted) are
    filled red circles, the others open grey circles; ``τ`` is a short red
    bar across the row.  Exact zeros are drawn at the left edge of the axis
    (a tenth of the smallest non-zero value or threshold shown).  The first
    row is at the top.
    """
    if not spectra:
        raise ValueError("spectra: expected at least one (eigenvalues, threshold) entry, got none")
    rows = []
    for label, (eigenvalues, threshold) in spectra.items():
        values = np.abs(np.asarray(eigenvalues, dtype=float).ravel())
        if values.size == 0:
            raise ValueError(f"spectra[{label!r}]: expected at least one eigenvalue, got none")
        if not threshold > 0:
            raise ValueError(f"spectra[{label!r}]: expected a positive threshold, got {threshold!r}")
        rows.append((label, values, float(threshold)))
    smallest = min(min(v[v > 0].min() if (v > 0).any() else t, t) for _, v, t in rows)
    floor = smallest / 10
    for r, (_, values, threshold) in enumerate(rows):
        shown = np.maximum(values, floor)
        small = values <= threshold
        y = np.full(values.size, float(r))
        ax.scatter(shown[small], y[small], s=16, color="#c0392b", zorder=3)
        ax.scatter(shown[~small], y[~small], s=16, facecolors="none", edgecolors="0.35", zorder=3)
        ax.plot([threshold, threshold], [r - 0.35, r + 0.35], color="#c0392b", lw=1.6)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)), [label for label, _, _ in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)


def scientific(value: float, *, latex: bool = False) -> str:
    """``value`` to one significant digit in scientific notation, for table cells and prose.

    ``"3e-16"`` (Python's ``.0e`` format), or ``"$3 \\times 10^{-16}$"`` with
    ``latex`` (for :func:`symbreak.prose.glue_text`); zero is ``"0"``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"value: expected a real number, got {type(value).__name__}")
    if not np.isfinite(value):
        raise ValueError(f"value: expected a finite number, got {value!r}")
    if value == 0:
        return "0"
    if not latex:
        return f"{float(value):.0e}"
    mantissa, exponent = f"{float(value):.0e}".split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"
