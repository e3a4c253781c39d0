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
