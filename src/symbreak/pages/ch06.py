"""What chapter 6 (the exchange symmetry) shows: its decision and defect tables, glued values and three figures.

Every function arranges results that the notebook's checks computed; none
computes mathematics.  The verdict line of the decisions is chapter 5's
(:func:`symbreak.pages.ch05.show_decisions`); the three figures are drawn in
:mod:`symbreak.pages.ch06_figures` and re-exported here.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence

import sympy as sp

from symbreak import symbolic
from symbreak.activations import GELU_TANH_COEFF, REGISTRY, display_name
from symbreak.decide import Decision
from symbreak.models import GLU_VARIANTS
from symbreak.numerics import ELEMENTWISE_ULPS
from symbreak.pages.ch05 import check_mapping, same_keys, show_decisions
from symbreak.pages.ch06_figures import figure_defect_scale, figure_exchange_defects, figure_relu_exchange
from symbreak.plotting import (
    scientific,
)
from symbreak.prose import glue_all, glue_table
from symbreak.verdicts import GH_POINTS, Measurement, measure

__all__ = [
    "show_decisions",
    "glue_decision_table",
    "glue_layer_table",
    "closed_form_defects",
    "term_lines",
    "limit_lines",
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


def _fixed(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` decimals, or ``"0"`` if it is exactly zero (as for the identity, whose every
    sample of ``D_σ`` is 0): a column of zeros would claim a precision that a zero does not need."""
    return "0" if value == 0 else f"{value:.{decimals}f}"


def _decimal(value: sp.Rational) -> str:
    """A rational with a terminating decimal expansion, written out in full (``44715/10⁶`` → ``0.044715``)."""
    digits = 0
    while (value * 10**digits).q != 1:
        digits += 1
        if digits > 30:
            raise ValueError(f"value: expected a terminating decimal, got {value}")
    return f"{float(value):.{digits}f}"


def _gelu_tanh_exact(defect_expr: sp.Expr, decision: Decision) -> str:
    """The exact cell of GELU (tanh) in ``tbl-exchange-decisions``: its value at the witness ``(1, −1)`` written
    with the activation's defining constant, ``−tanh(√(2/π)(1 + 0.044715))``, instead of sympy's
    ``−tanh(1.044715·√2/√π)``, which reads like a rounding; checked equal to the defect at the witness."""
    a, b = sp.symbols("a b", real=True)
    if decision.witness != {a: 1, b: -1}:
        raise ValueError(f"decision: expected the witness a = 1, b = −1 for GELU (tanh), got {decision.witness}")
    shown = -sp.tanh(sp.sqrt(2 / sp.pi) * (1 + GELU_TANH_COEFF))
    if sp.simplify(defect_expr.subs(decision.witness) - shown) != 0:
        raise ValueError("GELU (tanh): the written form differs from the defect at the witness")
    return rf"$-\tanh\big(\sqrt{{2/\pi}}\,(1 + {_decimal(GELU_TANH_COEFF)})\big)$"


def glue_decision_table(decisions: Mapping[str, Decision]) -> None:
    """Glue ``exchange-decision-table`` (per σ, ``D_σ ≡ 0``, the witness and ``D_σ`` there, exact and as a decimal),
    ``decision-digits``, the decimal's significant digits (:data:`symbreak.symbolic.cells.SHOWN_DIGITS`), and
    ``gelu-tanh-coefficient``, GELU (tanh)'s defining constant, which its exact cell shows as it is defined."""
    header = ["σ", r"$D_\sigma \equiv 0$", "witness", r"$D_\sigma$ there, exact", r"$D_\sigma$ there, decimal"]
    rows = []
    for name, decision in check_mapping("decisions", decisions, Decision).items():
        defect_expr = symbolic.exchange_unit_difference(name)[0]
        cells = symbolic.counterexample_cells(defect_expr, decision)
        if name == "gelu_tanh" and decision.holds is False:
            cells[2] = _gelu_tanh_exact(defect_expr, decision)
        rows.append([display_name(name), *cells])
    glue_table("exchange-decision-table", header, rows)
    glue_all({"decision-digits": symbolic.SHOWN_DIGITS, "gelu-tanh-coefficient": _decimal(GELU_TANH_COEFF)})


#: Decimals of the gated form's relative change in ``tbl-exchange-layers`` and the prose: four, so that two
#: activations whose changes agree to three (sigmoid 1.2212, |z| 1.2208) are not read as a copied cell; the change
#: is a float64 ratio of norms, the same to far more digits in every numeric environment.
_CHANGE_DECIMALS = 4


def glue_layer_table(rank1: Mapping[str, Measurement], gated: Mapping[str, Measurement]) -> None:
    """Glue ``exchange-layer-table`` (both forms under ``Q ↔ K``) and the gated form's smallest and largest change.

    The keys are registered activations; the extremes are over the nonlinear ones.
    """
    names = same_keys(
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
    """LaTeX of ``Δ_σ = value`` for each σ of ``closed_forms`` (registry name → sympy value), one per line, aligned
    at ``=`` and ended by commas: on one line the four did not fit a phone's width.

    σ is named as the proposition names it (``Δ_id``, ``Δ_ReLU``, ``Δ_{leaky ReLU}``, ``Δ_{|·|}``), any other
    activation by its book name (:func:`~symbreak.activations.display_name`), never by its registry key.
    """
    if not isinstance(closed_forms, Mapping) or not closed_forms:
        raise TypeError(f"closed_forms: expected a non-empty mapping, got {type(closed_forms).__name__}")
    parts = []
    for name, value in closed_forms.items():
        subscript = _DEFECT_SUBSCRIPTS.get(name) or r"\text{" + display_name(name, plain=True) + "}"
        parts.append(rf"\Delta_{{{subscript}}} &= {sp.latex(sp.sympify(value))}")
    return r"\begin{aligned}" + r",\\ ".join(parts) + r"\end{aligned}"


def term_lines(left: str, expr: sp.Expr) -> str:
    """LaTeX of ``left = expr`` with one term of the sum ``expr`` per line, in sympy's order and with its signs, aligned
    after ``=``: on one line, ``f'(x) - f(x) = …`` of the exchange check did not fit a phone's width."""
    if not isinstance(left, str) or not isinstance(expr, sp.Expr):
        raise TypeError(
            f"left, expr: expected a str and a sympy expression, got {type(left).__name__}, {type(expr).__name__}"
        )
    first, *rest = expr.as_ordered_terms()
    lines = [sp.latex(first)]
    for term in rest:
        text = sp.latex(term)
        lines.append(rf"\quad - {text[1:].lstrip()}" if text.startswith("-") else rf"\quad + {text}")
    return r"\begin{aligned}" + left + " &= " + r"\\ &".join(lines) + r"\end{aligned}"


def limit_lines(limits: Mapping[str, object]) -> str:
    """LaTeX of the limits of ``prop-exchange-defect-scale``, one per line (``case: value``), aligned at the colon:
    on one line the four did not fit a phone's width."""
    if not isinstance(limits, Mapping) or not limits:
        raise TypeError(f"limits: expected a non-empty mapping, got {type(limits).__name__}")
    lines = [rf"\text{{{case}}} &: {sp.latex(sp.sympify(value))}" for case, value in limits.items()]
    return r"\begin{aligned}" + r"\\ ".join(lines) + r"\end{aligned}"


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
    names = same_keys(
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
    """Glue the input count and the squared relative changes ``R̂`` of ``|z|`` and tanh, as the bottom panel of
    ``fig-exchange-defects`` draws them (the figure shows them all).

    ``measured[name]`` is the squared relative change ``R̂`` of the gated layer
    under ``Q ↔ K``, ``measured_se`` its standard error and ``relative`` the
    prediction; all three must name the same activations.
    """
    same_keys(measured=measured, measured_se=measured_se, relative=relative)
    glue_all(
        {
            "n-layer-inputs": n_layer,
            "abs-layer-squared-change": (measured["abs"], ".4f"),
            "abs-layer-squared-change-se": (measured_se["abs"], ".4f"),
            "tanh-layer-squared-change": (measured["tanh"], ".4f"),
        }
    )


def glue_glu_order(by_defect: Sequence[str]) -> None:
    """Glue ``glu-order``: the GLU family's variants (with σ) in the given order, least broken first."""
    variants = {name: variant for variant, name in GLU_VARIANTS.items()}
    if set(by_defect) != set(variants):
        raise ValueError(f"by_defect: expected the GLU family's activations {list(variants)}, got {list(by_defect)}")
    glue_all({"glu-order": ", ".join(f"{variants[n]} ({display_name(n)})" for n in by_defect)})


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
