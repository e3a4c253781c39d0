"""What chapter 7 (inverse scaling) shows: its layer and decision tables, glued values and the defect figure.

Every function arranges results that the notebook's checks computed (and the
registry's decided properties); none computes mathematics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

import numpy as np
import sympy as sp
from matplotlib.colors import to_rgba

from symbreak import symbolic
from symbreak.activations import REGISTRY, display_name
from symbreak.coarse import percent
from symbreak.decide import Decision
from symbreak.pages.ch05 import check_mapping
from symbreak.plotting import figure, glue_figure, scientific, signed_alpha_curves
from symbreak.prose import all_or_count, glue_all, glue_table
from symbreak.symmetry import Change
from symbreak.verdicts import GH_POINTS, SCALE_ALPHA

__all__ = [
    "LABELS",
    "ENDS",
    "LIMITS",
    "COINCIDE",
    "show_layer_table",
    "glue_reglu_exchange",
    "glue_decision_table",
    "glue_two_slope",
    "show_defects_at",
    "figure_scaling_defect",
    "show_limits",
    "glue_configuration",
    "factor_list",
    "unchanged_text",
    "slope_listing",
]

#: The activations of the layer table: the name of σ and of its gated variant.
LABELS: dict[str, tuple[str, str]] = {"relu": ("ReLU", "ReGLU"), "gelu": ("GELU", "GEGLU"), "silu": ("SiLU", "SwiGLU")}
#: The ends of the plotted range of ``α``, in the order of the glued values and of show_limits.
ENDS: tuple[str, ...] = ("-4", "-1/4", "1/4", "4")
#: The three limits of the gate temperature (``rem-gate-temperature``), by key.
LIMITS: dict[str, str] = {"minus": "α → −∞", "zero": "α → 0", "plus": "α → +∞"}
#: The quoted activations of the defect figure's prose.
_QUOTED = ("silu", "gelu", "tanh")
#: Curves of the defect figure that lie on another one at its scale (checked when drawn): curve → the one it is on.
COINCIDE: dict[str, str] = {"leaky_relu": "relu", "gelu_tanh": "gelu"}
#: How close two curves must be, relatively at every drawn point, to be said to coincide in the figure.
_COINCIDE_WITHIN = 0.05
#: The groups of :func:`symbreak.symbolic.scaling_group` in the book's notation (the theorem writes ``ℝ^×``).
_GROUPS_SHOWN = {r"\mathbb{R}\setminus\{0\}": r"\mathbb{R}^\times"}


def _exact_number(value: sp.Expr) -> str:
    """A rational with a terminating decimal expansion as that decimal (``9801/10000`` → "0.9801"), else LaTeX."""
    value = sp.nsimplify(value)
    if value.is_Rational and set(sp.factorint(value.q)) <= {2, 5}:
        return str(Decimal(int(value.p)) / Decimal(int(value.q)))
    return f"${sp.latex(value)}$"


def _signed(value: object) -> str:
    """A number as the book prints it: ``str`` of its sympy value, with a true minus (``-1/4`` → "−1/4")."""
    return str(sp.nsimplify(value)).replace("-", "−")


def factor_list(factors: Sequence[object]) -> str:
    """The factors ``α`` joined by commas, each with a true minus: ``[-2, -1, 1/2, 2]`` → "−2, −1, 1/2, 2"."""
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Sequence):
        raise TypeError(f"factors: expected a sequence of numbers, got {type(factors).__name__}")
    return ", ".join(_signed(a) for a in factors)


def unchanged_text(unchanged: Sequence[object]) -> str:
    """What a layer scaled by each factor did, in words: "unchanged within rounding only for α = −1", or "changed
    beyond rounding for every α" when ``unchanged`` (the factors under which it stayed within the bound) is empty."""
    if not unchanged:
        return "changed beyond rounding for every α"
    return f"unchanged within rounding only for α = {factor_list(unchanged)}"


def slope_listing(slopes: Mapping[str, tuple[object, object]]) -> str:
    """The two slopes ``(c₊, c₋)`` of each activation, by its book name: ``"ReLU 1, 0; |z| 1, −1"``."""
    slopes = check_mapping("slopes", slopes, tuple)
    return "; ".join(
        f"{display_name(n, plain=True)} {_signed(c_plus)}, {_signed(c_minus)}"
        for n, (c_plus, c_minus) in slopes.items()
    )


def show_layer_table(changes: Mapping[tuple[str, sp.Expr], Change], agreeing: int, kept_fraction: float) -> None:
    """Glue ``layer-table`` (✓, or ✗ and the relative change, per layer and ``α``) and a summary of the cells.

    ``changes[(label, α)]`` compares a layer with its inverse scaling by ``α``;
    ``agreeing`` is the number of cells that agree with their prediction and
    ``kept_fraction`` the stated share of the bound that kept cells stay within.  The least change of a broken
    cell is glued (``broken-min-change``) for the prose, not printed; the count of agreeing cells
    (``agreeing-cells``) reads "all 42" or "41 of the 42" (:func:`symbreak.prose.all_or_count`), words to stand
    inside a sentence, never a numeral to open one.
    """
    changes = check_mapping("changes", changes, Change)
    labels = list(dict.fromkeys(label for label, _ in changes))
    alphas = list(dict.fromkeys(alpha for _, alpha in changes))
    if len(changes) != len(labels) * len(alphas):
        raise ValueError(f"changes: expected every pair of {labels} and {alphas}, got {list(changes)}")
    rows = [
        [label, *("✓" if changes[label, a].within else f"✗ {changes[label, a].relative:.2f}" for a in alphas)]
        for label in labels
    ]
    glue_table("layer-table", ["layer", *(f"$\\alpha = {sp.latex(a)}$" for a in alphas)], rows)
    broken = [change.relative for change in changes.values() if not change.within]
    if not broken:
        raise ValueError("changes: expected at least one cell outside the rounding bound, got none")
    glue_all(
        {
            "kept-fraction": percent(kept_fraction),
            "broken-min-change": (min(broken), ".2f"),
            "agreeing-cells": all_or_count(agreeing, len(changes)),
        }
    )


def glue_reglu_exchange(decision: Decision, swapped_change: float) -> None:
    """Glue ReLU's exchange counterexample (its point and ``D`` there, in LaTeX) and ReGLU's relative change."""
    if not isinstance(decision, Decision) or decision.holds is not False:
        raise ValueError(f"decision: expected a counterexample Decision, got {decision!r}")
    point = [f"${sp.latex(s)} = {sp.latex(v)}$" for s, v in decision.witness.items()]
    glue_all(
        {
            "relu-exchange-witness": ", ".join(point),
            "relu-exchange-value": f"${sp.latex(decision.value)}$",
            "reglu-exchange-change": (swapped_change, ".2f"),
        }
    )


def glue_decision_table(
    decisions: Mapping[str, Sequence[Decision]], groups: Mapping[str, str], smooth: Sequence[str]
) -> None:
    """Glue ``decision-table`` (every α > 0, every α < 0, α = −1, α = 2, ``σ'(0±)``, ``G_σ``) and two counts.

    ``decisions[name]`` holds the four decisions in that order and ``groups[name]``
    the group ``G_σ`` in LaTeX (:func:`symbreak.symbolic.scaling.scaling_group`, shown as the theorem writes
    it, ``ℝ^×`` for ``ℝ∖{0}``); a row is named by σ's display name and its decisions are
    :func:`symbreak.symbolic.decision_text`; ``halfline-count`` counts the positively homogeneous σ of the registry and
    ``smooth-count`` the names in ``smooth``.
    """
    decisions, groups = check_mapping("decisions", decisions, (list, tuple)), check_mapping("groups", groups, str)
    if set(groups) != set(decisions):
        raise ValueError(f"groups: expected the keys of decisions, {list(decisions)}, got {list(groups)}")
    rows = []
    for name, row in decisions.items():
        if len(row) != 4 or not all(isinstance(d, Decision) for d in row):
            raise ValueError(f"decisions[{name!r}]: expected four Decisions, got {row!r}")
        right, left = symbolic.one_sided_derivatives(name)
        derivatives = f"${sp.latex(right)}$, ${sp.latex(left)}$"
        group = _GROUPS_SHOWN.get(groups[name], groups[name])
        rows.append([display_name(name), *(symbolic.decision_text(d) for d in row), derivatives, f"${group}$"])
    header = ["σ", "every $\\alpha > 0$", "every $\\alpha < 0$", "$\\alpha = -1$", "$\\alpha = 2$"]
    header += ["$\\sigma'(0^+)$, $\\sigma'(0^-)$", "$G_\\sigma$"]
    glue_table("decision-table", header, rows)
    halfline = [s for s in REGISTRY.values() if s.is_positively_homogeneous]
    glue_all({"halfline-count": len(halfline), "smooth-count": len(smooth)})


def glue_two_slope(exact: Mapping[str, sp.Expr], quadrature_tolerance: float) -> None:
    """Glue the exact defects ``(c₊ − c₋)²`` of the two-slope activations and the stated quadrature tolerance.

    ``two-slope-exact`` reads "1 for ReLU, 0.9801 for leaky ReLU and 4 for :math:`|z|`": a rational that has
    a finite decimal expansion is written as that decimal, and σ by its display name.
    """
    exact = check_mapping("exact", exact, sp.Expr)
    parts = [f"{_exact_number(v)} for {display_name(n)}" for n, v in exact.items()]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    glue_all(
        {
            "two-slope-exact": listed,
            "quadrature-tolerance": scientific(quadrature_tolerance, latex=True),
        }
    )


def _defects_at(curves: Mapping[str, tuple[list[float] | None, list[float] | None]]) -> dict[str, dict[str, float]]:
    """The defect at the four ends of the range, ``α = −4, −1/4, 1/4, 4``, of every σ drawn on both sides."""
    check_mapping("curves", curves, tuple)
    return {
        name: dict(zip(ENDS, (neg[-1], neg[0], pos[0], pos[-1]), strict=True))
        for name, (neg, pos) in curves.items()
        if pos is not None
    }


def show_defects_at(grid: np.ndarray, curves: Mapping[str, tuple[list[float] | None, list[float] | None]]) -> None:
    """Glue the number of factors per side and the defects of SiLU, GELU and tanh at the ends.

    ``curves[name]`` is ``(D at −|α|, D at |α|)`` over ``grid`` (``|α|``
    increasing), ``None`` for a side that is identically zero.
    """
    defects_at = _defects_at(curves)
    missing = [n for n in _QUOTED if n not in defects_at]
    if missing:
        raise ValueError(f"curves: expected both sides of {list(_QUOTED)}, got none for {missing}")
    values = {f"defect-{n}-{key.replace('/', 'over')}": (v, ".4f") for n in _QUOTED for key, v in defects_at[n].items()}
    glue_all({"grid-points": len(grid)} | values)


def figure_scaling_defect(
    grid: np.ndarray,
    curves: Mapping[str, tuple[list[float] | None, list[float] | None]],
    exact: Mapping[str, sp.Expr],
) -> None:
    """Glue ``fig-scaling-defect``: ``D(α)`` of every σ for ``α < 0`` and ``α > 0``, exact two-slope levels dashed.

    The legend names σ by its display name; a curve of :data:`COINCIDE` is named "… ≈ …" after the one it lies
    on, which is checked: within 5 % of it at every drawn point (else ``ValueError``); the curve it lies on is
    drawn over it and its own markers are larger, so that both stay visible.
    """
    check_mapping("curves", curves, tuple)
    exact = check_mapping("exact", exact, sp.Expr)
    labels = {}
    for name in curves:
        labels[name] = display_name(name)
        other = COINCIDE.get(name)
        if other in curves:
            for mine, theirs in zip(curves[name], curves[other], strict=True):
                if (mine is None) != (theirs is None) or (
                    mine is not None and np.max(np.abs(np.divide(mine, theirs) - 1)) > _COINCIDE_WITHIN
                ):
                    raise ValueError(f"curves: expected {name!r} to lie on {other!r} within 5 %, it does not")
            labels[name] = f"{display_name(name)} ≈ {display_name(other)}"
    fig, axes = figure(ncols=2, width=7.6, height=3.4, sharey=True)
    signed_alpha_curves(
        axes,
        grid,
        {labels[name]: sides for name, sides in curves.items()},
        ylabel=r"defect $D(\alpha)$",
        exact={labels[name]: (float(value), None) for name, value in exact.items()},
    )
    pairs = [(labels[name], labels[other]) for name, other in COINCIDE.items() if name in curves and other in curves]
    _both_visible(pairs, axes, fig.legends)
    glue_figure("fig-scaling-defect", fig)


#: The drawing order of a curve that another lies on: above the curves (2) and below the reference lines (3).
_OVER = 2.5
#: How a curve that lies on another is drawn, under it, so that it shows at display size (a 360 px phone column
#: too, where the default 3.5-pt markers are about 2 px): hollow markers well larger than the default 3.5 pt
#: around the other curve's, and a broad, pale band of its colour along the other curve's line.
_UNDER_MARKER = 9.0
_UNDER_EDGE = 1.5
_UNDER_LINE = 4.5
_UNDER_ALPHA = 0.4


def _draw_under(line) -> None:
    """Restyle ``line`` (a curve or its legend handle) as the curve underneath: hollow, large markers, a pale band."""
    colour = to_rgba(line.get_color())
    line.set(
        color=(*colour[:3], _UNDER_ALPHA),
        linewidth=_UNDER_LINE,
        markersize=_UNDER_MARKER,
        markerfacecolor="none",
        markeredgecolor=colour,
        markeredgewidth=_UNDER_EDGE,
    )


def _both_visible(pairs: Sequence[tuple[str, str]], axes: Sequence, legends: Sequence) -> None:
    """For each ``(under, over)`` pair of labels of curves that coincide (:data:`COINCIDE`), draw ``over`` on top
    and ``under`` beneath it with large hollow markers and a pale band along the line (:func:`_draw_under`), on every
    panel and in the legend, so that neither hides the other at display size: ReLU sat entirely under leaky ReLU,
    and 6.5-pt markers were about 4 px on a phone.  A curve is found by the colour and marker of its labelled line,
    which its line on the other panel shares."""

    def style(label: str) -> set[tuple[object, str]]:
        return {
            (line.get_color(), line.get_marker()) for ax in axes for line in ax.get_lines() if line.get_label() == label
        }

    for under, over in pairs:
        under_style, over_style = style(under), style(over)
        for ax in axes:
            for line in ax.get_lines():
                if (line.get_color(), line.get_marker()) in over_style:
                    line.set_zorder(_OVER)
                elif (line.get_color(), line.get_marker()) in under_style:
                    _draw_under(line)
        for legend in legends:
            for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
                if text.get_text() == under:
                    _draw_under(handle)


def show_limits(
    limits: Mapping[tuple[str, str], float],
    curves: Mapping[str, tuple[list[float] | None, list[float] | None]],
    *,
    within: float,
) -> None:
    """Glue the limiting defects ``limit-<σ>-<key>`` and ``limit-within``; print two verdicts against the plotted ends.

    ``limits[(name, key)]`` is the limit of ``D(α)`` for the key of :data:`LIMITS`.  The verdicts: at ``|α| = 4``
    every σ's defect lies within the stated ``within`` of its limit as ``α → ±∞``; and its limit as ``α → 0`` lies
    between its defects at ``α = −1/4`` and ``α = 1/4``.  The values are glued for the prose, not printed.
    """
    check_mapping("limits", limits, float)
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not within > 0:
        raise ValueError(f"within: expected a real number > 0, got {within!r}")
    names = list(dict.fromkeys(name for name, _ in limits))
    if set(limits) != {(n, k) for n in names for k in LIMITS}:
        raise ValueError(f"limits: expected the keys {list(LIMITS)} for each of {names}, got {list(limits)}")
    glue_all({f"limit-{name}-{key}": (value, ".4f") for (name, key), value in limits.items()})
    glue_all({"limit-within": (within, "g")})
    ends = _defects_at(curves)
    near = all(
        abs(ends[n]["-4"] - limits[n, "minus"]) < within and abs(ends[n]["4"] - limits[n, "plus"]) < within
        for n in names
    )
    between = all(
        min(ends[n]["-1/4"], ends[n]["1/4"]) < limits[n, "zero"] < max(ends[n]["-1/4"], ends[n]["1/4"]) for n in names
    )
    shown = " and ".join(display_name(n, plain=True) for n in names)
    print(f"{shown}, at α = ±4: D within {within:g} of its limit as α → ±∞: {near}")
    print(f"{shown}: the limit as α → 0 lies between D(−1/4) and D(1/4): {between}")


def glue_configuration(config: Mapping[str, int], alphas: Sequence[sp.Expr], single: Sequence[sp.Expr]) -> None:
    """Glue the sizes ``config`` (name → int), the factor lists ``alpha-list``, ``single-list`` and two constants.

    The constants are ``scale-alpha``, the factor of the package's standard
    inverse-scaling check (:data:`symbreak.verdicts.SCALE_ALPHA`), and ``gh-points``, the
    nodes of its Gauss–Hermite quadrature (:data:`symbreak.verdicts.GH_POINTS`).
    """
    for name, value in config.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"config[{name!r}]: expected an int, got {type(value).__name__}")
    lists = {"alpha-list": ("alphas", alphas), "single-list": ("single", single)}
    for argument, values in lists.values():
        if not values:
            raise ValueError(f"{argument}: expected at least one factor, got none")
    glue_all(dict(config) | {"scale-alpha": (SCALE_ALPHA, "g"), "gh-points": GH_POINTS})
    glue_all(
        {key: "$" + ", ".join(sp.latex(sp.nsimplify(a)) for a in values) + "$" for key, (_, values) in lists.items()}
    )
