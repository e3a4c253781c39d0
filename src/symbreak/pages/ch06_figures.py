"""The three figures of chapter 6 (the exchange symmetry): where ReLU breaks it, how much each σ breaks it, and
how the breaking depends on the scale of the factors.

Each arranges results that the notebook's checks computed and glues the figure; :mod:`symbreak.pages.ch06`
re-exports them, so the chapter calls them as ``ch06.figure_…``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from symbreak.activations import display_name
from symbreak.coarse import snap_linear
from symbreak.models import GLU_VARIANTS
from symbreak.pages.ch05 import same_keys
from symbreak.plotting import (
    FAMILY_COLOURS,
    SIGMA_LINESTYLES,
    annotate_quadrants,
    figure,
    glue_figure,
    heatmap_grid,
    legend_below,
    sorted_bars,
)

__all__ = ["figure_relu_exchange", "figure_exchange_defects", "figure_defect_scale"]


def figure_relu_exchange(
    relu_defect: torch.Tensor, angles: torch.Tensor, changed: Sequence[float], angle_se: Sequence[float]
) -> None:
    """Glue ``fig-relu-exchange``: ReLU's defect on ``[−3, 3]²``, and the changed share of inputs against ``θ/π``.

    ``relu_defect`` is ``D_ReLU(a, b)`` on the square grid (``a`` along the
    columns); ``changed`` and ``angle_se`` are the measured shares and their
    binomial standard errors at ``angles`` (radians), drawn with five of them.
    The map's title takes two lines, no wider than the map (its colour bar is
    beside it); the right panel's legend sits at the lower right, off the points.
    """
    if not isinstance(relu_defect, torch.Tensor) or relu_defect.ndim != 2:
        raise TypeError(f"relu_defect: expected a 2-d torch.Tensor, got {type(relu_defect).__name__}")
    if not len(angles) == len(changed) == len(angle_se):
        counts = (len(angles), len(changed), len(angle_se))
        raise ValueError(f"angles, changed, angle_se: expected one value per angle each, got {counts}")
    fig, axes = figure(ncols=2, width=7.6, height=3.6, gridspec_kw={"wspace": 0.45})
    extent = (-3.0, 3.0, -3.0, 3.0)
    title = "σ = ReLU\n" r"$D = \sigma(a)\,b - \sigma(b)\,a$"  # two lines: no wider than the map
    heatmap_grid(
        fig,
        axes[:1],
        relu_defect.numpy()[None, None],
        [[title]],
        extent=extent,
        xlabel="query factor $a$",
        ylabel="key factor $b$",
        diagonal=False,
        contour_levels=8,
        colorbar_label=r"$D_{\mathrm{ReLU}}(a, b)$",
    )
    quadrant_labels = {(1, 1): "$D = 0$", (-1, -1): "$D = 0$"}
    quadrant_labels |= {(1, -1): "$D = ab < 0$", (-1, 1): "$D = -ab > 0$"}
    annotate_quadrants(axes[0], quadrant_labels, extent)
    ratio = (angles / math.pi).numpy()
    axes[1].plot(ratio, ratio, color="0.35", lw=1.2, label=r"prediction $\theta/\pi$")
    bars = [5 * s for s in angle_se]
    label = "measured, ± 5 s.e."
    axes[1].errorbar(ratio, changed, yerr=bars, fmt="o", color="black", ms=4, capsize=3, label=label)
    axes[1].set_xlabel(r"angle $\theta$ between $q_1$ and $k_1$, in units of $\pi$")
    axes[1].set_ylabel("fraction of inputs changed")
    axes[1].set_title("one ReGLU unit, Gaussian inputs")
    axes[1].legend(fontsize=9, loc="lower right")  # the points run from the lower left to the upper right
    glue_figure("fig-relu-exchange", fig)


#: The two panels of ``fig-exchange-defects``: x label, bar label, point label and title.
_DEFECT_PANELS = (
    (
        r"$\Delta_\sigma = \mathbb{E}[D_\sigma(a,b)^2]$, $a, b \sim N(0,1)$",
        r"$2(\mathbb{E}[\sigma^2] - \mathbb{E}[z\sigma]^2)$",
        "Monte Carlo, ± 5 s.e.",
        "mean-square exchange defect of a unit",
    ),
    (
        r"$\Delta_\sigma / \mathbb{E}[\sigma^2] = 2(1 - \kappa_\sigma^2)$",
        r"prediction $2(1 - \kappa_\sigma^2)$",
        "gated layer, squared change, ± 5 s.e.",
        "scale-free: relative to the coefficient's size",
    ),
)


def figure_exchange_defects(unit: Sequence[Mapping[str, float]], layer: Sequence[Mapping[str, float]]) -> None:
    """Glue ``fig-exchange-defects``: ``Δ_σ`` with its Monte Carlo estimate, and ``Δ_σ/E[σ²]`` with the layer's ``R̂``.

    ``unit`` is ``(Δ_σ, Monte Carlo estimate, its standard error)`` and ``layer``
    is ``(Δ_σ/E[σ²], R̂, its standard error)``, each a mapping by σ (registry names); points carry
    five standard errors, and the axis names each σ as the book does (:func:`~symbreak.activations.display_name`).
    """
    fig, axes = figure(nrows=2, width=7.0, height=7.6, gridspec_kw={"hspace": 0.45})
    for ax, name, values, labels in zip(axes, ("unit", "layer"), (unit, layer), _DEFECT_PANELS, strict=True):
        if len(values) != 3:
            raise ValueError(f"{name}: expected (bars, points, standard errors), got {len(values)} items")
        bars, points, errors = values
        same_keys(bars=bars, points=points, errors=errors)
        xlabel, bar_label, point_label, title = labels
        shown = {n: display_name(n) for n in bars}  # the book's names on the axis, not the registry's keys
        sorted_bars(
            ax,
            {shown[n]: v for n, v in bars.items()},
            points={shown[n]: v for n, v in points.items()},
            point_errors={shown[n]: 5 * s for n, s in errors.items()},
            xlabel=xlabel,
            bar_label=bar_label,
            point_label=point_label,
        )
        ax.set_title(title)
    glue_figure("fig-exchange-defects", fig)


#: The GLU variants drawn: all of the gated family, so one colour, each in its σ's line style.
_VARIANTS = ("ReGLU", "SwiGLU", "GEGLU", "GLU")
#: The reference lines of ``fig-defect-scale`` (the limits, and unit scale): thin, grey and solid, under the curves,
#: so that they are not read as the dashed or dotted line styles of the variants.
_REFERENCE = {"color": "0.45", "lw": 0.8, "ls": "-", "zorder": 1.5}
#: The height of a limit's label in ``fig-defect-scale``, with its gap to the line, in units of ``r_σ`` (about 14 pt).
_LABEL_HEIGHT = 0.15
#: The size of a limit's label in points: the figure is shown a little narrower than its 7 inches on a desktop
#: column, and a 9-point label came out at about 8 points there.
_LABEL_PT = 10
#: How far below a limit a curve may start and still count as starting on its line (in units of ``r_σ``).
_ON_LINE = 1e-6


def figure_defect_scale(
    scales: Sequence[float], ratios: Mapping[str, Sequence[float]], limits: Mapping[str, float]
) -> None:
    """Glue ``fig-defect-scale``: ``r_σ(s)`` against the factor scale ``s`` (log axis), one line per GLU variant.

    ``ratios`` maps activation names of the GLU family to their ratios at
    ``scales``; ``limits`` maps a label to a limiting value, drawn as a thin grey
    solid line (as is unit scale, vertically), named at the left edge above the line, or below it where a
    curve starts on it or just above it; the legend is below the axes.  The ratios are
    snapped to multiples of 10⁻⁶, so that rounding differences do not change
    the image.
    """
    variants = {name: variant for variant, name in GLU_VARIANTS.items() if variant in _VARIANTS}
    unknown = [n for n in ratios if n not in variants]
    if unknown:
        raise ValueError(f"ratios: expected activations of {sorted(variants)}, got {unknown}")
    xs = np.asarray([float(v) for v in scales])
    if xs.ndim != 1 or not (xs > 0).all():
        raise ValueError(f"scales: expected positive numbers, got {list(scales)}")
    fig, axes = figure(width=7.0, height=4.2)
    ax = axes[0]
    starts = []
    for name, values in ratios.items():
        ys = snap_linear(values, 1e-6)
        if ys.shape != xs.shape:
            raise ValueError(f"ratios[{name!r}]: expected {xs.size} values like scales, got shape {ys.shape}")
        variant = variants[name]
        ax.plot(
            xs,
            ys,
            color=FAMILY_COLOURS["gated"],
            ls=SIGMA_LINESTYLES[name],
            lw=1.8,
            label=f"{variant} ({display_name(name)})",
        )
        starts.append(float(ys[0]))
    bottom, top = -0.05, 2.1
    for label, value in limits.items():
        level = float(value)
        ax.axhline(level, **_REFERENCE)
        # each limit named at the left edge above its line, or below it where a curve starts just above the line
        # (within a label's height), which would run through the label; the axis makes room for the labels
        # a curve that starts on the line (ReGLU's at 1) counts too: a label above would sit on that curve
        below = any(-_ON_LINE <= start - level <= _LABEL_HEIGHT for start in starts)
        if below:
            bottom = min(bottom, level - 1.3 * _LABEL_HEIGHT)
        else:
            top = max(top, level + 1.3 * _LABEL_HEIGHT)
        offset, va = ((2, -5), "top") if below else ((2, 5), "bottom")
        ax.annotate(
            label, (xs[0], level), xytext=offset, textcoords="offset points", va=va, fontsize=_LABEL_PT, color="0.3"
        )
    ax.axvline(1.0, **_REFERENCE)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(r"factor scale $s$: $a, b \sim N(0, s^2)$")
    ax.set_ylabel(r"$r_\sigma(s)$")  # the symbol only: its definition is in the caption
    ax.set_ylim(bottom, top)
    ax.set_title("relative exchange defect of a gated unit against the scale of its factors")
    legend_below(fig, ax, ncol=len(ratios))  # one row under the axes, where it covers no line
    glue_figure("fig-defect-scale", fig)
