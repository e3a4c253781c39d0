"""What chapter 6 (the exchange symmetry) shows: its decision and defect tables, glued values and three figures.

Every function arranges results that the notebook's checks computed; none
computes mathematics.  The verdict line of the decisions is chapter 5's
(:func:`symbreak.pages.ch05.show_decisions`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence

import numpy as np
import sympy as sp
import torch

from symbreak import symbolic
from symbreak.activations import REGISTRY, display_name
from symbreak.coarse import snap_linear
from symbreak.decide import Decision
from symbreak.models import GLU_VARIANTS
from symbreak.numerics import ELEMENTWISE_ULPS
from symbreak.pages.ch05 import check_mapping, show_decisions
from symbreak.plotting import (
    FAMILY_COLOURS,
    SIGMA_LINESTYLES,
    annotate_quadrants,
    figure,
    glue_figure,
    heatmap_grid,
    legend_below,
    scientific,
    sorted_bars,
)
from symbreak.prose import glue_all, glue_table
from symbreak.verdicts import GH_POINTS, Measurement, measure

__all__ = [
    "show_decisions",
    "glue_decision_table",
    "glue_layer_table",
    "closed_form_defects",
    "glue_relu_broken",
    "glue_quadrature_tolerance",
    "show_angles",
    "figure_relu_exchange",
    "show_defect_table",
    "show_layer_change",
    "glue_glu_order",
    "figure_exchange_defects",
    "measure_sizes",
    "glue_configuration",
    "glue_scale_ratios",
    "figure_defect_scale",
]

_YES_NO = {True: "yes", False: "no"}


def _same_keys(**mappings: Mapping) -> list[str]:
    """The keys shared by all ``mappings`` (in the first one's order), or a ValueError naming the odd one."""
    (first_name, first), *rest = mappings.items()
    for name, mapping in rest:
        if set(mapping) != set(first):
            raise ValueError(f"{name}: expected the keys of {first_name}, {list(first)}, got {list(mapping)}")
    return list(first)


def _fixed(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` decimals, or ``"0"`` if it is exactly zero (as for the identity, whose every
    sample of ``D_σ`` is 0): a column of zeros would claim a precision that a zero does not need."""
    return "0" if value == 0 else f"{value:.{decimals}f}"


def glue_decision_table(decisions: Mapping[str, Decision]) -> None:
    """Glue ``exchange-decision-table`` (per σ, ``D_σ ≡ 0``, the witness and ``D_σ`` there, exact and as a decimal)
    and ``decision-digits``, the decimal's significant digits (:data:`symbreak.symbolic.cells.SHOWN_DIGITS`)."""
    header = ["σ", r"$D_\sigma \equiv 0$", "witness", r"$D_\sigma$ there, exact", r"$D_\sigma$ there, decimal"]
    rows = []
    for name, decision in check_mapping("decisions", decisions, Decision).items():
        defect_expr = symbolic.exchange_unit_difference(name)[0]
        rows.append([display_name(name), *symbolic.counterexample_cells(defect_expr, decision)])
    glue_table("exchange-decision-table", header, rows)
    glue_all({"decision-digits": symbolic.SHOWN_DIGITS})


#: Decimals of the gated form's relative change in ``tbl-exchange-layers`` and the prose: four, so that two
#: activations whose changes agree to three (sigmoid 1.2212, |z| 1.2208) are not read as a copied cell; the change
#: is a float64 ratio of norms, the same to far more digits in every numeric environment.
_CHANGE_DECIMALS = 4


def glue_layer_table(rank1: Mapping[str, Measurement], gated: Mapping[str, Measurement]) -> None:
    """Glue ``exchange-layer-table`` (both forms under ``Q ↔ K``) and the gated form's smallest and largest change.

    The keys are registered activations; the extremes are over the nonlinear ones.
    """
    names = _same_keys(
        rank1=check_mapping("rank1", rank1, Measurement), gated=check_mapping("gated", gated, Measurement)
    )
    header = ["σ", "symmetric: within rounding", "gated: relative change", "gated: within rounding"]
    rows = [
        [
            display_name(n),
            _YES_NO[rank1[n].within_rounding],
            f"{gated[n].change:.{_CHANGE_DECIMALS}f}",
            _YES_NO[gated[n].within_rounding],
        ]
        for n in names
    ]
    glue_table("exchange-layer-table", header, rows)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"gated: expected registered activations as keys, got {unknown}")
    nonlinear = [gated[n].change for n in names if not REGISTRY[n].is_linear]
    if not nonlinear:
        raise ValueError(f"gated: expected at least one nonlinear σ, got {names}")
    shown = f".{_CHANGE_DECIMALS}f"
    glue_all({"gated-smallest-change": (min(nonlinear), shown), "gated-largest-change": (max(nonlinear), shown)})


#: The subscript of ``Δ`` for an activation, as ``prop-exchange-defect`` writes it; others by their book name.
_DEFECT_SUBSCRIPTS = {
    "identity": r"\mathrm{id}",
    "relu": r"\mathrm{ReLU}",
    "leaky_relu": r"\text{leaky ReLU}",
    "abs": r"\lvert\cdot\rvert",
}


def closed_form_defects(closed_forms: Mapping[str, object]) -> str:
    """LaTeX of ``Δ_σ = value`` for each σ of ``closed_forms`` (registry name → sympy value), joined by commas.

    σ is named as the proposition names it (``Δ_id``, ``Δ_ReLU``, ``Δ_{leaky ReLU}``, ``Δ_{|·|}``), any other
    activation by its book name (:func:`~symbreak.activations.display_name`), never by its registry key.
    """
    if not isinstance(closed_forms, Mapping) or not closed_forms:
        raise TypeError(f"closed_forms: expected a non-empty mapping, got {type(closed_forms).__name__}")
    parts = []
    for name, value in closed_forms.items():
        subscript = _DEFECT_SUBSCRIPTS.get(name) or r"\text{" + display_name(name, plain=True) + "}"
        parts.append(rf"\Delta_{{{subscript}}} = {sp.latex(sp.sympify(value))}")
    return r",\quad ".join(parts)


def glue_relu_broken(broken: float, standard_error: float, n_pairs: int) -> None:
    """Glue the share of Gaussian pairs on which ReLU's defect is non-zero, its standard error and the pair count."""
    glue_all({"relu-broken-fraction": (broken, ".4f"), "relu-broken-se": (standard_error, ".4f"), "n-pairs": n_pairs})


def glue_quadrature_tolerance(tolerance: float) -> None:
    """Glue ``gelu-quadrature-tolerance``: the stated bound on the GELU quadrature's error, in LaTeX."""
    glue_all({"gelu-quadrature-tolerance": scientific(tolerance, latex=True)})


def show_angles(predicted: Sequence[float], changed: Sequence[float], n_inputs: int) -> None:
    """Glue the number of inputs per angle (the shares per angle are shown in the figure, not printed)."""
    if len(predicted) != len(changed) or not predicted:
        raise ValueError(
            f"predicted, changed: expected as many values of each, got {len(predicted)} and {len(changed)}"
        )
    glue_all({"n-inputs": n_inputs})


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


def show_defect_table(
    defects: Mapping[str, float],
    exact: Mapping[str, object],
    monte_carlo: Mapping[str, float],
    mc_se: Mapping[str, float],
    relative: Mapping[str, float],
    within: Mapping[str, bool],
) -> None:
    """Glue ``defect-table`` (``Δ_σ``, how computed, Monte Carlo, ``Δ_σ/E[σ²]``) and the quoted values.

    Rows are sorted by ``Δ_σ``; ``exact[name]`` is the closed form or None
    (quadrature).
    """
    names = _same_keys(
        defects=defects, exact=exact, monte_carlo=monte_carlo, mc_se=mc_se, relative=relative, within=within
    )
    rows = []
    for n in sorted(names, key=defects.get):
        method = "exact" if exact[n] is not None else "quadrature"
        estimate = f"{_fixed(monte_carlo[n], 6)} ± {_fixed(mc_se[n], 6)}"
        rows.append(
            [display_name(n), _fixed(defects[n], 6), method, estimate, _fixed(relative[n], 4), _YES_NO[within[n]]]
        )
    header = ["σ", r"$\Delta_\sigma$", "computed", "Monte Carlo ± standard error"]
    header += [r"$\Delta_\sigma / \mathbb{E}[\sigma^2]$", "within 5 standard errors"]
    glue_table("defect-table", header, rows)
    quoted = {f"defect-{n}": (defects[n], ".4f") for n in ("silu", "gelu", "tanh", "softplus")}
    quoted |= {f"relative-{n}": (relative[n], ".4f") for n in ("sigmoid", "silu", "softplus")}
    glue_all(quoted | {"defect-sigmoid": (defects["sigmoid"], ".4f")})


def show_layer_change(
    measured: Mapping[str, float], measured_se: Mapping[str, float], relative: Mapping[str, float], n_layer: int
) -> None:
    """Glue the input count and the relative changes ``√R̂`` of ``|z|`` and tanh (the figure shows them all).

    ``measured[name]`` is the squared relative change ``R̂`` of the gated layer
    under ``Q ↔ K``, ``measured_se`` its standard error and ``relative`` the
    prediction; all three must name the same activations.
    """
    _same_keys(measured=measured, measured_se=measured_se, relative=relative)
    glue_all(
        {
            "n-layer-inputs": n_layer,
            "abs-layer-change": (math.sqrt(measured["abs"]), ".4f"),
            "tanh-layer-change": (math.sqrt(measured["tanh"]), ".4f"),
        }
    )


def glue_glu_order(by_defect: Sequence[str]) -> None:
    """Glue ``glu-order``: the GLU family's variants (with σ) in the given order, least broken first."""
    variants = {name: variant for variant, name in GLU_VARIANTS.items()}
    if set(by_defect) != set(variants):
        raise ValueError(f"by_defect: expected the GLU family's activations {list(variants)}, got {list(by_defect)}")
    glue_all({"glu-order": ", ".join(f"{variants[n]} ({display_name(n)})" for n in by_defect)})


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
        _same_keys(bars=bars, points=points, errors=errors)
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


def measure_sizes() -> dict[str, int]:
    """The defaults of :func:`symbreak.verdicts.measure`, ``ELEMENTWISE_ULPS`` and ``GH_POINTS``, by glue name.

    ``measure-d``, ``measure-m``, ``measure-n`` (the layer's sizes and input count of
    the standard check), ``elementwise-ulps`` (the assumed accuracy of torch's σ) and
    ``gh-points`` (the nodes of the Gauss–Hermite quadrature of ``exchange_defect``).
    """
    defaults = inspect.signature(measure).parameters
    sizes = {f"measure-{key}": defaults[key].default for key in ("d", "m", "n")}
    return sizes | {"elementwise-ulps": ELEMENTWISE_ULPS, "gh-points": GH_POINTS}


def glue_configuration(config: Mapping[str, int], tail: float, n_activations: int) -> None:
    """Glue the configured sizes ``config`` (name → int) and the tail ``P(|N(0,1)| > 5)`` alone and times ``n``.

    ``tail`` is the probability that one Monte Carlo estimate misses by more than
    five standard errors; ``n_activations`` estimates miss together at most
    ``n_activations · tail`` (the union bound).
    """
    if not 0 < tail < 1:
        raise ValueError(f"tail: expected a probability in (0, 1), got {tail!r}")
    for name, value in config.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"config[{name!r}]: expected an int, got {type(value).__name__}")
    glue_all(dict(config))
    glue_all(
        {
            "tail-5se": scientific(tail, digits=2, latex=True),
            "tail-5se-all": scientific(n_activations * tail, digits=2, latex=True),
        }
    )


def glue_scale_ratios(scales: Sequence[float], ratios: Mapping[str, Sequence[float]], quoted: Sequence[float]) -> None:
    """Glue the grid of factor scales (ends, count) and ``r_σ(s)`` at each ``s`` of ``quoted`` (grid points).

    The glue names are ``ratio-<σ>-<i>`` for the ``i``-th quoted scale, and
    ``scale-min``, ``scale-max``, ``n-scales``.
    """
    grid = [float(v) for v in scales]
    for name, values in ratios.items():
        if len(values) != len(grid):
            raise ValueError(f"ratios[{name!r}]: expected {len(grid)} values, one per scale, got {len(values)}")
    missing = [q for q in quoted if float(q) not in grid]
    if missing:
        raise ValueError(f"quoted: expected scales of the grid, got {missing}")
    glue_all({"n-scales": len(grid), "scale-min": (min(grid), "g"), "scale-max": (max(grid), "g")})
    glue_all(
        {
            f"ratio-{name}-{i}": (values[grid.index(float(q))], ".3f")
            for name, values in ratios.items()
            for i, q in enumerate(quoted)
        }
    )


#: The GLU variants drawn: all of the gated family, so one colour, each in its σ's line style.
_VARIANTS = ("ReGLU", "SwiGLU", "GEGLU", "GLU")
#: The reference lines of ``fig-defect-scale`` (the limits, and unit scale): thin, grey and solid, under the curves,
#: so that they are not read as the dashed or dotted line styles of the variants.
_REFERENCE = {"color": "0.45", "lw": 0.8, "ls": "-", "zorder": 1.5}
#: The height of a limit's label in ``fig-defect-scale``, with its gap to the line, in units of ``r_σ`` (about 14 pt).
_LABEL_HEIGHT = 0.15


def figure_defect_scale(
    scales: Sequence[float], ratios: Mapping[str, Sequence[float]], limits: Mapping[str, float]
) -> None:
    """Glue ``fig-defect-scale``: ``r_σ(s)`` against the factor scale ``s`` (log axis), one line per GLU variant.

    ``ratios`` maps activation names of the GLU family to their ratios at
    ``scales``; ``limits`` maps a label to a limiting value, drawn as a thin grey
    solid line (as is unit scale, vertically), named at the left edge above the line, or below it where a
    curve starts just above it; the legend is below the axes.  The ratios are
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
        below = any(0 < start - level <= _LABEL_HEIGHT for start in starts)
        if below:
            bottom = min(bottom, level - 1.3 * _LABEL_HEIGHT)
        else:
            top = max(top, level + 1.3 * _LABEL_HEIGHT)
        offset, va = ((2, -4), "top") if below else ((2, 4), "bottom")
        ax.annotate(label, (xs[0], level), xytext=offset, textcoords="offset points", va=va, fontsize=9, color="0.3")
    ax.axvline(1.0, **_REFERENCE)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(r"factor scale $s$: $a, b \sim N(0, s^2)$")
    ax.set_ylabel(r"$r_\sigma(s) = \mathbb{E}[D_\sigma^2] / \mathbb{E}[(\sigma(a)\,b)^2]$")
    ax.set_ylim(bottom, top)
    ax.set_title("relative exchange defect of a gated unit against the scale of its factors")
    legend_below(fig, ax, ncol=len(ratios))  # one row under the axes, where it covers no line
    glue_figure("fig-defect-scale", fig)
