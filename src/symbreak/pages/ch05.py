"""What chapter 5 (the gated MLP) shows: its decision listing, tables, glued values and the coefficient figure.

Every function arranges results that the notebook's checks computed (or that the
package's registry, models and cost formulas hold); none computes mathematics.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp
import torch

from symbreak import symbolic
from symbreak.activations import REGISTRY, display_name
from symbreak.coarse import magnitude, percent_of
from symbreak.costs import MODELS, evaluate, parameters
from symbreak.decide import Decision
from symbreak.models import GLU_VARIANTS, hidden_width_llama
from symbreak.plotting import figure, formula_cell, glue_figure, heatmap_grid
from symbreak.prose import glue_all, glue_table, listed
from symbreak.symbolic.gated import GATES
from symbreak.symmetry import Change

__all__ = [
    "check_mapping",
    "same_keys",
    "SHOWN",
    "PUBLISHED",
    "ROUNDING_SIZED",
    "show_decisions",
    "show_gates",
    "show_placements",
    "show_fits",
    "show_glu_family",
    "show_llama7b_parameters",
    "show_published",
    "show_asymmetry",
    "figure_gated_vs_symmetric",
]

#: The activations of the coefficient figure and its table, with their labels.
SHOWN: dict[str, str] = {name: display_name(name) for name in ("identity", "relu", "gelu", "silu")}
#: The published blocks compared with ``GatedMLP`` (the last one, with gate and up swapped, is the control).
PUBLISHED: tuple[str, ...] = ("LLaMA (SwiGLU)", "T5 v1.1 (GEGLU)", "LLaMA, w1 and w3 swapped")


def check_mapping(name: str, value: object, value_type: type | tuple[type, ...]) -> Mapping:
    """``value`` itself if it is a non-empty mapping with values of ``value_type``, else a TypeError naming ``name``."""
    if not isinstance(value, Mapping) or not value:
        raise TypeError(f"{name}: expected a non-empty mapping, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(item, value_type):
            expected = (
                value_type.__name__ if isinstance(value_type, type) else " or ".join(t.__name__ for t in value_type)
            )
            raise TypeError(f"{name}[{key!r}]: expected a {expected}, got {type(item).__name__}")
    return value


def same_keys(**mappings: Mapping) -> list[str]:
    """The keys shared by all ``mappings`` (in the first one's order), or a ValueError naming the odd one."""
    (first_name, first), *rest = mappings.items()
    for name, mapping in rest:
        if set(mapping) != set(first):
            raise ValueError(f"{name}: expected the keys of {first_name}, {list(first)}, got {list(mapping)}")
    return list(first)


def show_decisions(decisions: Mapping[str, Decision]) -> None:
    """Print one verdict line: every σ decided, how many by a proof and how many by a rational counterexample.

    The points of the counterexamples are not listed: chapter 6's ``tbl-exchange-decisions`` shows them,
    with the value there, exact and as a decimal.  The verdict is ``True`` when no decision is undecided and
    every counterexample's point has rational coordinates.
    """
    decisions = check_mapping("decisions", decisions, Decision)
    proofs = sum(d.holds is True for d in decisions.values())
    refuted = [d for d in decisions.values() if d.holds is False]
    rational = all(d.witness and all(sp.sympify(v).is_Rational for v in d.witness.values()) for d in refuted)
    decided = proofs + len(refuted) == len(decisions) and rational
    print(f"every σ decided, {proofs} by a proof and {len(refuted)} by a counterexample at a rational point: {decided}")


def show_gates(factorised: Mapping[str, Decision], ranges: Mapping[str, tuple[float, float]]) -> None:
    """Glue the table ``gate-table`` of the registered σ and their gates ``s`` (``σ = z·s(z)``); print nothing.

    ``factorised[name]`` decides ``σ(z) − z·s(z) ≡ 0`` for the σ with ``σ(0) = 0``
    (the keys of :data:`symbreak.symbolic.gated.GATES`); ``ranges[name]`` is the
    gate's ``(min, max)`` on a sample of points.  The σ with ``σ(0) ≠ 0`` are
    listed with no gate.  Glues ``gates-in-unit-interval`` (the names whose
    sampled gate lies in ``[0, 1]``) and ``gates-without`` (the σ with ``σ(0) ≠ 0``).
    """
    factorised = check_mapping("factorised", factorised, Decision)
    ranges = check_mapping("ranges", ranges, tuple)
    if set(factorised) != set(GATES) or set(ranges) != set(GATES):
        raise ValueError(f"factorised, ranges: expected the activations {sorted(GATES)}, got {sorted(factorised)}")
    inside = [n for n in GATES if 0 <= ranges[n][0] and ranges[n][1] <= 1]
    without = [n for n in REGISTRY if n not in GATES]
    rows = []
    for name in REGISTRY:
        if name in GATES:
            low, high = ranges[name]
            verdict = "yes (proof)" if factorised[name].holds else f"no ({factorised[name].method})"
            inside_text = "yes" if name in inside else "no"
            rows.append([display_name(name), f"`{name}`", "yes", formula_cell(GATES[name]), verdict, inside_text])
        else:
            rows.append([display_name(name), f"`{name}`", "no", "—", "no gate exists", "—"])
    header = ["σ", "`activation`", "σ(0) = 0", "gate s(z)", "σ(z) = z·s(z)", "s(z) ∈ [0, 1]"]
    glue_table("gate-table", header, rows)
    glue_all(
        {
            "gates-in-unit-interval": listed([display_name(n) for n in inside]),
            "gates-outside": listed([display_name(n) for n in GATES if n not in inside]),
            "gates-without": listed([display_name(n) for n in without]),
        }
    )


def _names(names: list[str]) -> str:
    """The display names of ``names`` joined as prose: "A", "A and B", "A, B and C"."""
    shown = [display_name(n) for n in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def show_fits(fits: Mapping[str, Mapping[str, float]], tolerance: float = 1e-9) -> None:
    """Glue and print the verdicts of the fits of :func:`symbreak.symbolic.gated.even_unit_fit`.

    For every σ but ``relu``: whether the residual is at least the derived lower
    bound (less ``tolerance`` times the target's norm, a stated convention for the
    rounding of least squares), printed as one verdict line for all of them and glued in words
    (``fit-holds``), and the bound and the residual, each as a share of the target's norm
    (``fit-bound-<name>``, ``fit-residual-<name>``), so that the prose can say which is which; for
    ``relu``, the control, whether the residual is below ``tolerance`` times the target's norm
    (printed, and glued in words as ``fit-relu-exact``, a sentence of its own: capitalised, the prose adds the stop).
    """
    fits = check_mapping("fits", fits, Mapping)
    if "relu" not in fits or len(fits) < 2:
        raise ValueError(f"fits: expected 'relu' and at least one other activation, got {list(fits)}")
    values, holds = {}, {}
    for name, fit in fits.items():
        residual, bound, target = fit["residual"], fit["bound"], fit["target"]
        if name == "relu":
            exact = residual <= tolerance * target
        else:
            holds[name] = residual >= bound - tolerance * target
            values[f"fit-bound-{name}"] = (bound / target, ".1%")
            values[f"fit-residual-{name}"] = (residual / target, ".1%")
    failing = [n for n, h in holds.items() if not h]
    if not failing:
        values["fit-holds"] = "every residual respects its bound"
    else:
        values["fit-holds"] = f"the residual of {_names(failing)} falls below its bound"
    values["fit-relu-exact"] = "The ReLU control fits exactly" if exact else "The ReLU control does not fit exactly"
    shown = ", ".join(display_name(n, plain=True) for n in holds)
    print(f"{shown}: every residual at least its lower bound: {not failing}")
    print(f"ReLU: residual below {magnitude(tolerance)} of the target: {exact}")
    glue_all(values)


#: A largest relative difference below this is rounding-sized and printed as "below 10⁻¹⁴" (a convention).
ROUNDING_SIZED = 1e-14


_SHARES = "fraction of outputs beyond the rounding bound; largest difference / largest output:"


def _largest(change: Change) -> str:
    """A change's largest relative difference to two decimals, or "below 10⁻¹⁴" (:data:`ROUNDING_SIZED`)."""
    if change.largest < ROUNDING_SIZED:
        return f"below {magnitude(ROUNDING_SIZED)}"
    return f"{change.largest:.2f}"


def show_placements(changes: Mapping[str, Change]) -> None:
    """Print the shares of outputs beyond rounding (gated against symmetric, same weights) by variant.

    Each line names its two columns as the prose does, "outside" (the share) and "relative" (the largest
    difference over the largest output).

    Nothing is glued: the prose reads the printed lines, it does not repeat them.
    """
    changes = check_mapping("changes", changes, Change)
    if "Bilinear" not in changes or len(changes) < 2:
        raise ValueError(f"changes: expected the variant 'Bilinear' and at least one other, got {list(changes)}")
    print(_SHARES)
    for variant, change in changes.items():
        print(f"{variant:>8}: outside {percent_of(change.outside, '5.1f')}; relative {_largest(change)}")


def show_glu_family() -> None:
    """Glue the table of the GLU family (σ and its decided properties) and GELU-tanh's properties.

    The cells are :func:`symbreak.symbolic.activation_properties`, with ``σ(z)`` as
    :func:`symbreak.plotting.formula_cell` writes it.
    """
    header = ["variant", "σ", "`activation`", "σ(z)", "linear", "odd", "positively homogeneous"]
    rows = []
    for variant, name in GLU_VARIANTS.items():
        cells = symbolic.activation_properties(name)
        rows.append([variant, *cells[:2], formula_cell(REGISTRY[name].expr), *cells[3:]])
    glue_table("glu-family-table", header, rows)
    linear, odd, homogeneous = symbolic.activation_properties("gelu_tanh")[3:]
    glue_all({"gelu-tanh-properties": f"linear {linear}, odd {odd}, positively homogeneous {homogeneous}"})


def show_llama7b_parameters() -> None:
    """Glue LLaMA-7B's ``d``, its hidden width ``m`` and the parameters of its gated block over an ungated one.

    The ratio is :func:`symbreak.costs.parameters` of the gated form at ``(d, m)``
    over that of the standard MLP at width ``4d`` (``3md / (2 · 4d · d)``).  Nothing is printed: the prose
    quotes all three.
    """
    d = MODELS["LLaMA-7B"]["d"]
    m = hidden_width_llama(d)
    ratio = evaluate(parameters("gated"), d=d, m=m) / evaluate(parameters("kv"), d=d, m=4 * d)
    glue_all({"llama7b-d": d, "llama7b-m": m, "llama7b-param-ratio": (ratio, ".4f")})


def show_published(changes: Mapping[str, Change], m: int) -> None:
    """Glue the small LLaMA width ``m``; print, per block of :data:`PUBLISHED`, its share beyond rounding.

    Each :class:`~symbreak.symmetry.Change` has the published reference as
    ``before`` and the layer built by ``from_llama``/``from_t5`` as ``after``; a
    largest relative difference below :data:`ROUNDING_SIZED` is printed as such (rounding).
    """
    changes = check_mapping("changes", changes, Change)
    if set(changes) != set(PUBLISHED):
        raise ValueError(f"changes: expected the blocks {list(PUBLISHED)}, got {list(changes)}")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m: expected an int >= 1, got {m!r}")
    glue_all({"llama-small-m": m})  # the shares are printed, not glued: the prose does not repeat them
    print(_SHARES)
    for label, change in changes.items():
        print(f"{label:>25}: {percent_of(change.outside, '5.1f')}; {_largest(change)}")


def show_asymmetry(asymmetry: Mapping[str, tuple[float, float]], grid: torch.Tensor) -> None:
    """Glue the table of the largest antisymmetries of both coefficients and the grid size.

    ``asymmetry[name]`` is ``(max |σ(ab) − σ(ba)|, max |σ(a) b − σ(b) a|)`` over
    the grid, for the activations of :data:`SHOWN`.
    """
    asymmetry = check_mapping("asymmetry", asymmetry, tuple)
    if set(asymmetry) != set(SHOWN):
        raise ValueError(f"asymmetry: expected the activations {list(SHOWN)}, got {list(asymmetry)}")
    if not isinstance(grid, torch.Tensor):
        raise TypeError(f"grid: expected a torch.Tensor, got {type(grid).__name__}")
    rows = [[SHOWN[name], f"{f_asym:.4f}", f"{g_asym:.4f}"] for name, (f_asym, g_asym) in asymmetry.items()]
    header = ["σ", "symmetric coefficient", "gated coefficient"]  # the caption gives each formula: narrow on a phone
    glue_table("asymmetry-table", header, rows)
    glue_all({"grid-points": grid.numel()})


def figure_gated_vs_symmetric(maps: Mapping[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
    """Glue ``fig-gated-vs-symmetric``: per σ of :data:`SHOWN`, ``σ(ab)``, ``σ(a) b`` and ``σ(a) b − σ(b) a``.

    ``maps[name]`` is ``(σ(ab), σ(a) b)`` on the square grid of ``[−3, 3]²``
    with ``a`` along the columns; the transpose of a field is its mirror image.
    """
    maps = check_mapping("maps", maps, tuple)
    if list(maps) != list(SHOWN):
        raise ValueError(f"maps: expected the activations {list(SHOWN)} in this order, got {list(maps)}")
    fields = [[f.numpy(), g.numpy(), (g - g.T).numpy()] for f, g in maps.values()]
    titles = [
        [f"{label}: $\\sigma(ab)$", "$\\sigma(a)\\,b$", "$\\sigma(a)\\,b-\\sigma(b)\\,a$"]  # σ named once per row
        for label in SHOWN.values()
    ]
    fig, axes = figure(ncols=3, nrows=4, width=7.6, height=9.6, gridspec_kw={"wspace": 0.08, "hspace": 0.22})
    heatmap_grid(
        fig,
        axes,
        fields,
        titles,
        extent=(-3.0, 3.0, -3.0, 3.0),
        xlabel="query factor $a$",
        ylabel="key factor $b$",
        contour_levels=8,
        colorbar_label="coefficient of $v_j$",
        label_outer=True,
    )
    glue_figure("fig-gated-vs-symmetric", fig)
