"""Marks for labelled items: bars, points against ``y = x``, annotated points, intervals and spectra."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from symbreak.plotting.style import _MARKERS

__all__ = ["coefficient_bars", "agreement_scatter", "annotated_points", "sorted_bars", "interval_dots", "spectra_strip"]


def coefficient_bars(
    ax,
    coefficients: np.ndarray,
    labels: Sequence[str],
    *,
    xlabel: str = "memory unit $j$",
    ylabel: str = "",
    legend: bool = True,
) -> None:
    """Grouped bars: ``coefficients[i, j]`` for input ``i`` (one colour per input, labelled ``labels[i]``) and unit
    ``j``.  With ``legend`` the axes get a legend of the inputs; without, the bars stay labelled for one legend of the
    figure (:func:`~symbreak.plotting.legend_below`), which covers none of them."""
    coefficients = np.asarray(coefficients)
    n, m = coefficients.shape
    width = 0.8 / n
    for i in range(n):
        ax.bar(np.arange(m) + (i - (n - 1) / 2) * width, coefficients[i], width=width, label=labels[i])
    ax.set_xticks(np.arange(m))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="black", lw=0.6)
    if legend:
        ax.legend(fontsize=9)


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
    ax.legend(fontsize=9)


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
        ax.annotate(label, (x, y), xytext=offset, textcoords="offset points", fontsize=9, ha=align)


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
        ax.legend(fontsize=9, loc="lower right")
    return list(order)


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
        ax.legend(fontsize=9)


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
