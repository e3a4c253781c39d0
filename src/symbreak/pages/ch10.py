"""Chapter 10's tables, glued values, printed lines and figure: what the forms cost, counted and timed.

The chapter's checks and experiments stay in its notebook; this module only
arranges what :mod:`symbreak.costs`, :mod:`symbreak.benchmark` and
:mod:`symbreak.timing` compute:

* :func:`glue_cost_tables` — the formulas of every form (``cost-table-storage``, ``cost-table-flops``);
* :func:`glue_count_table` and :func:`glue_memory_table` — the formulas beside the layers' counts;
* :func:`glue_degree_table` — the degrees of the formulas and the fitted slopes of the counted FLOPs;
* :func:`glue_growth_figure` — the timed growth (``fig-cost-growth``) and its slopes;
* the benchmark's tables, ``make bench``, are :mod:`symbreak.pages.ch10_bench`'s;
* :func:`glue_full_counts` and :func:`glue_route_table` — the three routes of the full form (a table of their times).

Functions named ``glue_*`` glue their values (:func:`symbreak.prose.glue_all`)
and return the lines the notebook prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp

from symbreak import benchmark, costs
from symbreak.plotting import FAMILY_COLOURS, figure, glue_figure, legend_below, log_ticks, loglog_curves
from symbreak.prose import glue_all, glue_table
from symbreak.symbolic import decimal_latex

__all__ = [
    "FORM_NAMES",
    "glue_cost_tables",
    "glue_count_table",
    "glue_memory_table",
    "glue_degree_table",
    "glue_growth_figure",
    "growth_values",
    "glue_full_counts",
    "glue_route_table",
]

#: The row name of every form of :data:`symbreak.benchmark.COST_FORMS` in the chapter's tables.
FORM_NAMES = {
    "kv": "standard MLP",
    "global_query": "global query",
    "rank1": "symmetric rank-1",
    "rankR": "rank-$R$",
    "gated": "gated MLP",
    "full": "full, maps $Q_j, K_j$",
    "full_features": "full, $W_j$ over $x\\otimes x$",
    "full_packed": "full, packed $\\mathrm{sym}(W_j)$",
}
#: The curves of the growth figure: form → legend label.
_GROWTH_LABELS = {"kv": "standard MLP", "gated": "gated MLP", "rankR": "rank-$R$", "full_packed": "full, packed"}
#: Each curve of the growth figure in its family's colour (the full form with the symmetric ones).
_GROWTH_COLOURS = {
    _GROWTH_LABELS["kv"]: FAMILY_COLOURS["kv"],
    _GROWTH_LABELS["gated"]: FAMILY_COLOURS["gated"],
    _GROWTH_LABELS["rankR"]: FAMILY_COLOURS["rank R"],
    _GROWTH_LABELS["full_packed"]: FAMILY_COLOURS["symmetric"],
}


def _sweep_sizes() -> dict[str, int]:
    """The sizes the growth sweeps hold fixed, read from :data:`symbreak.benchmark.GROWTH_SWEEPS`."""
    sweeps = benchmark.GROWTH_SWEEPS
    d_first = sweeps["d"][0][0]
    m_d, _, _ = sweeps["m"][1](sweeps["m"][0][0])
    R_d, R_m, _ = sweeps["R"][1](sweeps["R"][0][0])
    return {"d-ratio": sweeps["d"][1](d_first)[1] // d_first, "m-d": m_d, "R-d": R_d, "R-m": R_m}


def _growth_axes() -> dict[str, str]:
    """The x-axis labels of ``fig-cost-growth``, with the fixed sizes of each sweep."""
    fixed = _sweep_sizes()
    return {
        "d": f"model width $d$ ($m = {fixed['d-ratio']}d$)",
        "m": f"units $m$ ($d = {fixed['m-d']}$)",
        "R": f"terms $R$ ($d = {fixed['R-d']}$, $m = {fixed['R-m']}$)",
    }


def _check_keys(name: str, value: object, keys: Sequence[str]) -> None:
    """``value`` must be a mapping that holds every one of ``keys``."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}: expected a mapping, got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{name}: expected the keys {list(keys)}, got {list(value)} (missing {missing})")


def _latex(expr: sp.Expr) -> str:
    """A formula, factored, as inline LaTeX (``d_out`` written ``d_{\\mathrm{out}}`` by :func:`decimal_latex`), and
    a denominator on the line: ``m(d² + d + 2d_out)/2``, since an inline ``\\frac`` sets its numerator too small to
    read in a table cell."""
    factored = sp.factor(expr)
    numerator, denominator = sp.fraction(factored)
    if denominator == 1:  # printed as factored (rebuilding it from sp.fraction would distribute a factor 2)
        return "$" + decimal_latex(factored) + "$"
    text = decimal_latex(numerator)
    if isinstance(numerator, sp.Add):
        text = rf"\left({text}\right)"
    return "$" + text + "/" + decimal_latex(denominator) + "$"


def glue_cost_tables() -> str:
    """Glue the formulas of every form: ``cost-table-storage`` (parameters, kept per token), ``cost-table-flops``.

    The second table's last column is :func:`symbreak.costs.matmul_flops`, the
    FLOPs that the package's layer spends in matrix products.  Returns a line saying how many.
    """
    storage, arithmetic = [], []
    for key, name in FORM_NAMES.items():
        form = benchmark.formulas(key)
        storage.append([name, _latex(form.parameters), _latex(form.memory)])
        arithmetic.append([name, _latex(form.flops), _latex(costs.matmul_flops(key))])
    glue_table("cost-table-storage", ["form", "parameters per layer", "kept per token"], storage)
    glue_table("cost-table-flops", ["form", "FLOPs per token", "in matrix products"], arithmetic)
    return f"cost tables: {len(storage)} forms × 4 formulas"


def glue_count_table(counts: Mapping[str, benchmark.CostCount]) -> None:
    """Glue ``cost-count-table``: per form by its name, the parameter formula beside the stored count and the
    matrix-product FLOPs formula beside the count of ``FlopCounterMode`` (:func:`symbreak.benchmark.count_costs`)."""
    _check_keys("counts", counts, [])
    if not all(isinstance(c, benchmark.CostCount) for c in counts.values()):
        raise TypeError(f"counts: expected CostCount values (benchmark.count_costs), got {counts!r}")
    rows = [
        [FORM_NAMES[key], f"{c.parameters:,}", f"{c.stored:,}", f"{c.matmul_flops:,}", f"{c.counted:,}"]
        for key, c in counts.items()
    ]
    header = ["form", "parameters: formula", "stored", "matmul FLOPs: formula", "counted"]
    glue_table("cost-count-table", header, rows)


def glue_memory_table(
    counts: Mapping[str, benchmark.CostCount], kept: Mapping[str, Mapping[str, float]], *, d: int, m: int, R: int
) -> None:
    """Glue ``cost-memory-table`` (the memory formula beside every measured column) and ``cost-check-d/m/R``.

    ``kept`` maps a column title (``"SiLU"``) to the numbers per token that each
    form's layer keeps (:func:`symbreak.benchmark.kept_per_token`).
    """
    _check_keys("counts", counts, [])
    if not isinstance(kept, Mapping) or not kept:
        raise TypeError(f"kept: expected a non-empty mapping of column titles to measurements, got {kept!r}")
    for title, column in kept.items():
        if set(column) != set(counts):
            raise ValueError(f"kept[{title!r}]: expected the forms {sorted(counts)}, got {sorted(column)}")
    rows = [
        [FORM_NAMES[key], f"{c.memory}", *(f"{column[key]:g}" for column in kept.values())] for key, c in counts.items()
    ]
    header = ["form", "formula", *(f"kept, {title}" for title in kept)]
    glue_table("cost-memory-table", header, rows)
    glue_all({"cost-check-d": (d, "d"), "cost-check-m": (m, "d"), "cost-check-R": (R, "d")})


def glue_degree_table(slopes: Mapping[str, float], *, units_per_width: int, rank: int) -> None:
    """Glue ``cost-degree-table`` (:func:`symbreak.benchmark.growth_degrees` and the fitted slopes of counted FLOPs).

    Each heading is one formula, from "deg_d P" (the degree of the parameters P in d) to "deg_R F" (of the FLOPs
    per token F in R), which a PDF column does not wrap.
    Also ``cost-slope-packed`` and ``cost-slope-kv``, the slopes of the packed
    full form and of the standard MLP.
    """
    _check_keys("slopes", slopes, list(FORM_NAMES))
    rows = []
    for key, name in FORM_NAMES.items():
        degrees = benchmark.growth_degrees(key, units_per_width=units_per_width, rank=rank)
        rows.append([name, *(str(g) for g in degrees), f"{slopes[key]:.2f}"])
    # P the parameters, F the FLOPs per token (the caption says so): one formula a heading, which does not wrap
    heads = [rf"$\deg_{s} {q}$" for q in "PF" for s in "dmR"]
    header = ["form", *heads, r"$\deg_d F$ at $m = 4d$", "counted, fitted slope"]
    glue_table("cost-degree-table", header, rows)
    glue_all({"cost-slope-packed": (slopes["full_packed"], ".2f"), "cost-slope-kv": (slopes["kv"], ".2f")})


#: The line style of the reference line of each degree in Fig. 10.1 (the figure's one legend names each once).
_SLOPE_STYLES = {1: ":", 2: "--"}
#: The reference lines are thin and in the text's colour, so that none reads as a form's curve (the standard MLP's
#: family colour is a grey).
_GUIDE = {"color": "black", "linewidth": 0.8}


def glue_growth_figure(growth: benchmark.Growth) -> str:
    """Glue ``fig-cost-growth``: time per token in µs against ``d``, ``m`` and ``R``, with thin black lines of the
    formulas' slopes.

    Each panel draws a thin black line per degree among its curves, through the last
    point of the first curve of that degree.  Returns one line per curve: its
    fitted slope and its degree.
    """
    if not isinstance(growth, benchmark.Growth):
        raise TypeError(f"growth: expected a symbreak.benchmark.Growth, got {type(growth).__name__}")
    slopes, degrees = growth.slopes, growth.degrees
    lines = [
        f"{_GROWTH_LABELS[f].replace('$', ''):<13} vs {s}: slope {slopes[s, f]:.2f}, degree {degrees[s, f]}"
        for s, f in growth.seconds
    ]
    fig, axes = figure(ncols=3, width=7.6, height=3.4, gridspec_kw={"wspace": 0.6})
    axis_labels = _growth_axes()
    for ax, (size, (values, _)) in zip(axes, benchmark.GROWTH_SWEEPS.items(), strict=True):
        keys = [(s, form) for s, form in growth.seconds if s == size]
        # in µs per token, as the scaling figure (fig-cost-scaling) gives its times
        curves = {_GROWTH_LABELS[form]: [1e6 * t for t in growth.seconds[s, form]] for s, form in keys}
        styles = {}
        for key in keys:  # one reference line per degree
            degree, times = growth.degrees[key], [1e6 * t for t in growth.seconds[key]]
            reference = f"slope {degree}"
            if reference not in curves:
                curves[reference] = [times[-1] * (v / values[-1]) ** degree for v in values]
                styles[reference] = _SLOPE_STYLES.get(degree, "-.")  # one style per degree, in every panel
        loglog_curves(
            ax,
            values,
            curves,
            xlabel=axis_labels[size],
            ylabel="µs per token",
            styles=styles,
            colors={k: v for k, v in _GROWTH_COLOURS.items() if k in curves},
            legend_loc=None,
        )
        for line in ax.get_lines():
            if line.get_label() in styles:
                line.set(**_GUIDE)
        ax.set_xticks(values, labels=[str(v) for v in values])
        ax.tick_params(axis="x", which="minor", labelbottom=False)
        log_ticks(ax)  # "2", "5", "10" µs, not "2×10⁰"
    legend_below(fig, list(axes), ncol=4, tight=False)
    glue_figure("fig-cost-growth", fig)
    return "\n".join(lines)


def growth_values(n_tokens: int, repeats: int) -> dict[str, int]:
    """The glue block of the growth measurement's configuration: tokens, repeats and the fixed sizes of the sweeps.

    ``growth-tokens``, ``growth-repeats``; ``growth-m-d`` (``d`` in the sweep over ``m``), ``growth-R-d`` and
    ``growth-R-m`` (``d``, ``m`` in the sweep over ``R``), read from :data:`symbreak.benchmark.GROWTH_SWEEPS`.
    """
    for name, value in (("n_tokens", n_tokens), ("repeats", repeats)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    fixed = _sweep_sizes()
    return {
        "growth-tokens": n_tokens,
        "growth-repeats": repeats,
        "growth-m-d": fixed["m-d"],
        "growth-R-d": fixed["R-d"],
        "growth-R-m": fixed["R-m"],
    }


def glue_full_counts(flops: Mapping[str, int], stored: Mapping[str, int], share: sp.Expr) -> str:
    """Glue the full form's counts per route (``full-einsum-flops``, ``full-features-flops``, ``full-packed-flops``).

    ``flops`` are the matrix-product FLOPs per token of the routes of
    :func:`symbreak.benchmark.score_routes`; ``stored`` the score parameters
    ``{"unpacked", "packed"}``, whose ratio is glued as ``full-packed-share``;
    ``share`` is the ratio of the two formulas.  Returns the lines that state them.
    """
    _check_keys("flops", flops, ["per-unit einsum", "x ⊗ x features", "packed features"])
    _check_keys("stored", stored, ["unpacked", "packed"])
    glue_all(
        {
            "full-einsum-flops": flops["per-unit einsum"],
            "full-features-flops": flops["x ⊗ x features"],
            "full-packed-flops": flops["packed features"],
            "full-packed-share": (stored["packed"] / stored["unpacked"], ".3f"),
        }
    )
    return "\n".join(
        [
            *(f"{name:<16} matmul FLOPs per token: {count:>7,}" for name, count in flops.items()),
            f"score parameters: unpacked {stored['unpacked']:,},",
            f"                  packed {stored['packed']:,}",
            f"packed / unpacked = {share}",
        ]
    )


#: The route names of :func:`symbreak.benchmark.score_routes` as the route table shows them.
_ROUTE_LABELS = {"x ⊗ x features": "$x\\otimes x$ features"}


def glue_route_table(seconds: Mapping[str, float]) -> str:
    """Glue ``cost-route-table``: a row per route of the full form, its time in ms and its speed relative to the
    per-unit einsum; return the table's Markdown.  The routes of :func:`symbreak.benchmark.score_routes` are named
    there in plain text; the table writes ``x ⊗ x`` as maths, as the cost tables do."""
    _check_keys("seconds", seconds, ["per-unit einsum"])
    einsum = seconds["per-unit einsum"]
    rows = [[_ROUTE_LABELS.get(name, name), f"{s * 1e3:.3f}", f"{einsum / s:.2f}×"] for name, s in seconds.items()]
    return glue_table("cost-route-table", ["route", "time (ms)", "speed relative to the per-unit einsum"], rows)
