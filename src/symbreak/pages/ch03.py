"""Chapter 3's tables, glued values and figure: the gauge in floating point and what the full form costs.

The chapter's checks and its gauge-rounding measurement stay in its notebook;
this module only arranges the results and the formulas of :mod:`symbreak.costs`:

* :func:`expressivity_table` — the route of each part of ``prop-bilinear-expressivity`` per activation;
* :func:`gauge_rounding_table` — the measured band per condition number and precision;
* :func:`configuration_values` — the configured sizes the prose quotes;
* :func:`cost_formulas` — the parameters, FLOPs and memory of every form, as LaTeX;
* :func:`cost_models` — the table of the full form at the sizes of real models;
* :func:`llama_texts` — the LLaMA-7B numbers the prose quotes;
* :func:`full_form_cost_figure` — the forms' costs against the width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import sympy as sp
from matplotlib.figure import Figure

from symbreak import costs
from symbreak.activations import display_name
from symbreak.plotting import figure, loglog_curves

__all__ = [
    "FORM_NAMES",
    "expressivity_table",
    "gauge_rounding_table",
    "gauge_grid_values",
    "configuration_values",
    "scaling_alpha_values",
    "cost_formulas",
    "cost_models",
    "llama_texts",
    "full_form_cost_figure",
]

#: The name of each form of :data:`symbreak.costs.FORMS` in the chapter's tables, in their order.
FORM_NAMES: dict[str, str] = {
    "kv": "standard MLP",
    "global_query": "global query",
    "rank1": "symmetric rank-1",
    "rankR": "rank-$R$",
    "gated": "gated MLP",
    "full": "full bilinear attention",
    "full_packed": "full, packed $\\mathrm{sym}(W_j)$",
}

_MARK = {True: "✓", False: "✗", None: "—"}

#: Bytes per stored number for the gigabyte columns (16-bit weights), and bytes per GB.
_BYTES, _GB = 2, 1e9
#: The unit after a gigabyte count in a table cell, joined to the number by a no-break space ("0.27 GB" is never
#: split over two lines, as it was at 1280 px).
_GB_UNIT = "\u00a0GB"


#: How the chapter names each route of ``symbreak.symbolic.bilinear.expressivity_routes``.
_ROUTES = {"parity": "parity", "homogeneity": "homogeneity", "growth": "growth", "poles": "poles", None: "—"}


def expressivity_table(routes: Mapping[str, Mapping[str, object]]) -> tuple[list[str], list[list[str]]]:
    """``(header, rows)`` of tbl-bilinear-expressivity: per activation, the route of items 1 and 2 and the facts used.

    ``routes[name]`` is :func:`symbreak.symbolic.bilinear.expressivity_routes` of the activation ``name``.
    """
    if not isinstance(routes, Mapping) or not routes:
        raise ValueError(f"routes: expected a non-empty mapping activation → routes, got {routes!r}")
    header = ["$\\sigma$", "item 1 by", "item 2 by", "$\\sigma$ even", "$\\lim \\sigma(s)/s$, $s \\to \\pm\\infty$"]
    rows = []
    for name, r in routes.items():
        if not isinstance(r, Mapping) or not {"memory_not_bilinear", "bilinear_not_memory"} <= set(r):
            raise ValueError(f"routes[{name!r}]: expected the dict of expressivity_routes, got {r!r}")
        plus, minus = r["growth"]
        limits = f"${sp.latex(plus)}$, ${sp.latex(-minus)}$"
        even = "yes" if r["even_sigma"].holds else "no"
        rows.append(
            [display_name(name), _ROUTES[r["memory_not_bilinear"]], _ROUTES[r["bilinear_not_memory"]], even, limits]
        )
    return header, rows


#: A precision as the book names it.
_PRECISIONS = {"torch.float64": "float64", "torch.float32": "float32"}


def _check_in_band(in_band: object) -> None:
    if not isinstance(in_band, Mapping) or not in_band:
        raise ValueError(f"in_band: expected a non-empty mapping dtype → {{exponent: bool}}, got {in_band!r}")
    for dtype, measured in in_band.items():
        if not isinstance(measured, Mapping) or not measured or not all(isinstance(v, bool) for v in measured.values()):
            raise ValueError(f"in_band[{dtype}]: expected a non-empty mapping exponent → bool, got {measured!r}")


def gauge_grid_values(in_band: Mapping[object, Mapping[int, bool]]) -> dict[str, str]:
    """The glue block of the condition numbers measured per precision, for the caption of tbl-gauge-rounding
    (``gauge-grid-float64``: ``"every second power of ten from $10^{0}$ to $10^{12}$"``, ``gauge-grid-float32``),
    ``in_band`` as for :func:`gauge_rounding_table`; a grid with no single step lists its powers."""
    _check_in_band(in_band)
    values = {}
    for dtype, measured in in_band.items():
        exponents = sorted(measured)
        steps = {b - a for a, b in zip(exponents[:-1], exponents[1:], strict=True)}
        if len(exponents) > 2 and steps in ({1}, {2}):
            every = "every" if steps == {1} else "every second"
            text = f"{every} power of ten from $10^{{{exponents[0]}}}$ to $10^{{{exponents[-1]}}}$"
        else:
            text = ", ".join(f"$10^{{{e}}}$" for e in exponents)
        values[f"gauge-grid-{_PRECISIONS.get(str(dtype), str(dtype))}"] = text
    return values


def gauge_rounding_table(in_band: Mapping[object, Mapping[int, bool]], exponents: range = range(0, 13)):
    """``(header, rows)`` of tbl-gauge-rounding: one row per ``κ(A) = 10^e``, one column per precision.

    ``in_band[dtype][e]`` says whether the measured change at ``κ(A) = 10^e`` lay in
    the band; a cell is ✓ (in it), ✗ (not) or — (``e`` not measured for that precision).
    """
    _check_in_band(in_band)
    header = [r"$\kappa(A)$", *(_PRECISIONS.get(str(t), str(t)) for t in in_band)]
    rows = [[f"$10^{{{e}}}$", *(_MARK[in_band[t].get(e)] for t in in_band)] for e in exponents]
    return header, rows


def configuration_values(d: int, m: int, tokens: int, draws: int, band: int) -> dict[str, object]:
    """The glue block of the configured sizes: ``ch3-d``, ``ch3-m``, ``ch3-tokens``, ``gauge-draws``, ``gauge-band``.

    ``d`` and ``m`` are the layers' width and units, ``tokens`` the number of random tokens, ``draws``
    the random ``A`` per condition number and ``band`` the factor of the measured band.
    """
    values = {"ch3-d": d, "ch3-m": m, "ch3-tokens": tokens, "gauge-draws": draws, "gauge-band": band}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")
    return {name: (value, "d") for name, value in values.items()}


def scaling_alpha_values(exact: float, rounded: float) -> dict[str, str]:
    """The glue block of the two inverse-scaling factors: ``scale-exact-alpha`` (``$2^{e}$``), ``scale-rounded-alpha``.

    ``exact`` is a power of two (its scaling is exact in floating point), ``rounded`` a
    positive number that is not one; both are glued in LaTeX, for ``{glue:md}`…:myst```.
    """
    for name, value in (("exact", exact), ("rounded", rounded)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise ValueError(f"{name}: expected a finite real number > 0, got {value!r}")
    if math.frexp(exact)[0] != 0.5:
        raise ValueError(f"exact: expected a power of two, got {exact!r}")
    if math.frexp(rounded)[0] == 0.5:
        raise ValueError(f"rounded: expected a number that is not a power of two, got {rounded!r}")
    return {"scale-exact-alpha": f"$2^{{{math.frexp(exact)[1] - 1}}}$", "scale-rounded-alpha": f"${rounded:g}$"}


def cost_formulas() -> tuple[list[str], list[list[str]]]:
    """``(header, rows)`` of the cost table: per form, its parameters, FLOPs per token and memory, as LaTeX.

    The form's name keeps its hyphens unbroken (U+2011): ``"symmetric rank‑1"``.
    """
    symbol_names = {costs.d_out: r"d_{\mathrm{out}}"}
    rows = []
    for form, name in FORM_NAMES.items():
        formulas = (costs.parameters(form), costs.flops(form), costs.memory(form))
        # a non-breaking hyphen (U+2011, as in chapter 8's tables): "symmetric rank-1" is not split after "rank-"
        label = name.replace("-", "\u2011")
        rows.append([label, *(f"${sp.latex(f, symbol_names=symbol_names)}$" for f in formulas)])
    return ["form", "parameters", "FLOPs per token", "hidden numbers per token"], rows


def _count(model: str, kind: str, form: str) -> int:
    """``kind`` (``"parameters"``, ``"flops"`` or ``"memory"``) of ``form`` at the sizes of ``model``."""
    return costs.evaluate(getattr(costs, kind)(form), **costs.MODELS[model])


def _parameters(model: str) -> tuple[int, int, int]:
    """Parameters of ``model``'s own layer, of the full form and of the packed full form at its sizes."""
    return tuple(_count(model, "parameters", f) for f in (costs.MODEL_FORMS[model], "full", "full_packed"))


def _gb(count: int) -> float:
    return _BYTES * count / _GB


def _ratio(numerator: int, denominator: int) -> str:
    """``numerator / denominator`` with thousands separators: as an integer where it is one, else to one decimal
    (``768.5``, never ``768`` by rounding half to even)."""
    whole, rest = divmod(numerator, denominator)
    return f"{whole:,}" if rest == 0 else f"{numerator / denominator:,.1f}"


def _own_gb(count: int) -> str:
    """The published layer's gigabytes to two significant digits, without e-notation (``0.27``, ``0.0094``)."""
    value = _gb(count)
    return f"{value:.{max(2, 1 - math.floor(math.log10(value)))}f}"


def cost_models() -> tuple[list[str], list[list[str]]]:
    """``(header, rows)`` of the real-model table: sizes, own layer, full form, packed form, each with its GB at two
    bytes per number in parentheses, and the ratio full / own layer (one decimal where it is not an integer).  A
    model's name keeps its hyphens unbroken (U+2011): "LLaMA‑7B" had broken after "LLaMA-" on a phone."""
    rows = []
    for model, sizes in costs.MODELS.items():
        own, full, packed = _parameters(model)
        rows.append(
            [
                model.replace("-", "\u2011"),
                f"{sizes['d']:,}, {sizes['m']:,}",
                f"{costs.latex_count(own)} ({_own_gb(own)}{_GB_UNIT})",
                f"{costs.latex_count(full)} ({_gb(full):,.1f}{_GB_UNIT})",
                f"{costs.latex_count(packed)} ({_gb(packed):,.1f}{_GB_UNIT})",
                _ratio(full, own),
            ]
        )
    return ["model", "$d$, $m$", "its layer", "full form", "full, packed", "full / its layer"], rows


def llama_texts() -> dict[str, str]:
    """The glue block of the prose on real models: sizes (``llama-d`` …), counts, ratios and GB (all text).

    Sizes of LLaMA-7B and T5-base; ``llama-full-maps`` (``2md²``, the maps without
    the values) and ``llama-gated`` (the SwiGLU layer) as maths, ``$3.69 \\cdot 10^{11}$``, as the table
    typesets them (the prose quotes them with ``:myst``); the ratios full / SwiGLU and packed / SwiGLU; GB at two
    bytes per number, with the table's precision; and ``llama-<form>-<flops|memory>`` (maths) for the full, packed
    full and gated forms.
    """
    llama, t5_relu, t5_glu = (costs.MODELS[k] for k in ("LLaMA-7B", "T5-base (ReLU)", "T5-base (GLU variants)"))
    params = {form: _count("LLaMA-7B", "parameters", form) for form in ("gated", "full", "full_packed")}
    maps = costs.evaluate(costs.map_parameters("full"), **llama)
    texts = {
        "llama-d": f"{llama['d']:,}",
        "llama-m": f"{llama['m']:,}",
        "t5-d": f"{t5_relu['d']:,}",
        "t5-m-relu": f"{t5_relu['m']:,}",
        "t5-m-glu": f"{t5_glu['m']:,}",
        "llama-full-maps": costs.latex_count(maps),
        "llama-gated": costs.latex_count(params["gated"]),
        "llama-ratio": f"{params['full'] / params['gated']:,.0f}",
        "llama-full-gb": f"{_gb(params['full']):,.1f}",
        "llama-gated-gb": f"{_gb(params['gated']):.2f}",
        "llama-packed-gb": f"{_gb(params['full_packed']):,.1f}",
        "llama-packed-ratio": f"{params['full_packed'] / params['gated']:,.0f}",
    }
    for kind in ("flops", "memory"):
        for form in ("full", "full_packed", "gated"):
            value = _count("LLaMA-7B", kind, form)
            texts[f"llama-{form.replace('_', '-')}-{kind}"] = costs.latex_count(value)
    return texts


#: The stars of fig-full-form-cost: ``(form at LLaMA-7B's sizes, label, offset in points, alignment)``.  The full
#: form's star lies just under the two full curves, so its label goes above and left of them; the SwiGLU star lies on
#: the lowest curves, so its label goes below and right of them, in two lines that end inside the axes (one line ran
#: into the right-hand axis's tick labels).
_STARS = (
    ("full", "LLaMA-7B, full form", (-9.0, 9.0), ("right", "bottom")),
    ("gated", "LLaMA-7B,\nSwiGLU", (9.0, -7.0), ("left", "top")),
)


def _stars(ax, kind) -> None:
    """The ``_STARS`` on ``ax``: black stars at LLaMA-7B's width and ``kind`` (parameters or FLOPs), labelled."""
    llama = costs.MODELS["LLaMA-7B"]
    for form, label, offset, (ha, va) in _STARS:
        xy = (llama["d"], costs.evaluate(kind(form), **llama))
        ax.plot(*xy, "*", color="black", ms=11, zorder=5)
        ax.annotate(label, xy, xytext=offset, textcoords="offset points", ha=ha, va=va, fontsize=9, linespacing=1.1)


def full_form_cost_figure() -> Figure:
    """fig-full-form-cost: parameters (top, with GB) and FLOPs (bottom) of five forms against ``d``, ``m = 4d``.

    Each panel has LLaMA-7B's SwiGLU layer and full form as labelled stars (``_STARS``) and a legend at the lower
    right, where no curve runs.
    """
    widths = [2**k for k in range(4, 15)]
    curves = {
        "standard MLP": "kv",
        "gated = symmetric rank-1": "gated",
        "rank-$R$, $R = 8$": "rankR",
        "full, packed": "full_packed",
        "full": "full",
    }
    fig, axes = figure(nrows=2, width=6.4, height=8.0, layout="constrained")
    panels = (
        (axes[0], costs.parameters, "parameters per layer", ("GB at 2 bytes per number", 2e-9)),
        (axes[1], costs.flops, "FLOPs per token", None),
    )
    for ax, kind, ylabel, right in panels:
        loglog_curves(
            ax,
            widths,
            {
                label: costs.sweep(kind(form), widths, rank=8 if form == "rankR" else None)
                for label, form in curves.items()
            },
            xlabel="model width $d$ (with $m = 4d$)",
            ylabel=ylabel,
            right_axis=right,
            legend_loc="lower right",
        )
        _stars(ax, kind)
    return fig
