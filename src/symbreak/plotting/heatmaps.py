"""Functions on a plane as figures: grids of heatmaps ``f(a, b)`` and labels in the quadrants of the plane."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from symbreak.plotting.style import STYLE

__all__ = ["heatmap_grid", "annotate_quadrants"]


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
