"""Chapter 9's glued values, tables and figures: the rank-R form, its reach, cost and gated version.

The chapter's checks stay in its notebook; this module only arranges what
:mod:`symbreak.approximation`, :mod:`symbreak.costs` and the layers compute:

* :func:`inertia_table` — the eigenvalue counts of the units of rank-``R`` layers;
* :func:`best_terms_table` and :func:`descent_values` — the best ``R`` terms
  against the eigenvalue formula and against gradient descent;
* :func:`family_values` and :func:`error_figure` — the
  error of the best ``R`` terms for three families of forms (``fig-rank-R-error``);
* :func:`breakeven_values` and :func:`cost_figure` — the rank at which the
  rank-``R`` form costs as much as the packed full form (``fig-rank-R-cost``);
* :func:`gated_change_values` — the output changes of the gated rank-``R`` layer;
* :func:`sizes_values` — the sizes of a check, as its code cell set them;
* :func:`matrix_verdict` — a check's verdict line with its matrix typeset.

Functions ending in ``_values`` return a glue block for
:func:`symbreak.prose.glue_all`, ``_listing`` printed text, ``_figure`` a figure
for :func:`symbreak.plotting.glue_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp
import torch
from IPython.display import Math
from matplotlib.figure import Figure

from symbreak import costs
from symbreak.numerics import EIGH_GROWTH
from symbreak.pages.ch04 import descent_range
from symbreak.plotting import FAMILY_COLOURS, figure, legend_below, loglog_curves, mean_band, scientific
from symbreak.report import stacked

__all__ = [
    "FAMILIES",
    "inertia_table",
    "VANISHED",
    "best_terms_table",
    "descent_values",
    "family_values",
    "error_figure",
    "breakeven_values",
    "cost_figure",
    "gated_change_values",
    "sizes_values",
    "matrix_verdict",
]

#: The families of :func:`symbreak.approximation.random_forms`, by the short names of their glue keys.
FAMILIES = {"gauss": "Gaussian", "definite": "positive definite", "planted": "planted rank 4 + noise"}
_YES_NO = {True: "yes", False: "no"}
#: The numbers of terms the listing of the families shows.
SHOWN_RANKS = (1, 2, 4, 8, 12, 16, 20, 24, 32)


def inertia_table(inertia: Mapping[int, tuple[bool, torch.Tensor]]) -> tuple[list[str], list[list[str]]]:
    """The table ``rr-inertia-table``, one row per rank ``R``: ``p = n = R`` in every unit, zeros, smallest non-zero.

    ``inertia[R] = (exact, ratio)``: ``exact`` says whether every unit has
    ``p = n = R``; ``ratio`` holds every unit's eigenvalues over its threshold
    ``τ_j``, so that ``|ratio| ≤ 1`` counts as zero.  The row says whether every
    eigenvalue counted as zero is below ``τ_j/10`` (or that there is none) and
    gives the smallest ``|ratio|`` counted as non-zero to two digits.
    """
    if not inertia:
        raise ValueError("inertia: expected at least one rank, got none")
    rows = []
    for R, (exact, ratio) in inertia.items():
        size = ratio.abs()
        zeros, nonzero = size[size <= 1], size[size > 1].min()
        zero = _YES_NO[bool((zeros < 0.1).all())] if zeros.numel() else "none ($2R = d$)"
        rows.append([str(R), _YES_NO[bool(exact)], zero, scientific(float(nonzero), digits=2, latex=True)])
    header = ["$R$", "$p = n = R$ in every unit", r"every zero $< \tau_j/10$", r"smallest non-zero $/\,\tau_j$"]
    return header, rows


#: Below this a relative error of the best ``R`` terms counts as vanished: where it is zero, the formula takes the
#: square root of a rounding error (about 1e-8) and the reached error is of that size or below, far under this.
VANISHED = 1e-6


def best_terms_table(
    reached: torch.Tensor, formula: torch.Tensor, vanished: float = VANISHED
) -> tuple[list[str], list[list[str]]]:
    """The table ``rr-best-table``, one row per ``R = 1, 2, …``: the error of ``best_rank_R`` and of the formula.

    ``reached`` and ``formula`` are the relative errors for every ``R``, shown to three significant digits, and as
    "< 10⁻⁶" (``vanished``) where they are below it: the digits of a vanished error are rounding, and differ
    between processors.
    """
    if reached.shape != formula.shape:
        raise ValueError(f"reached: expected the shape of formula {tuple(formula.shape)}, got {tuple(reached.shape)}")
    if isinstance(vanished, bool) or not isinstance(vanished, float) or not 0 < vanished < 1:
        raise ValueError(f"vanished: expected a float in (0, 1), got {vanished!r}")

    floor = "$< " + scientific(vanished, latex=True).strip("$") + "$"

    def cell(value: torch.Tensor) -> str:
        return f"{float(value):#.3g}" if float(value) >= vanished else floor

    header = ["$R$", "reached by `best_rank_R`", "eigenvalue formula"]
    rows = [[str(R), cell(a), cell(b)] for R, (a, b) in enumerate(zip(reached, formula, strict=True), start=1)]
    return header, rows


def descent_values(
    descended: torch.Tensor, formula: torch.Tensor, rank: int, lr: float = 0.05, steps: int = 600
) -> dict[str, tuple[float, str] | str]:
    """The glue block ``rr-descent-range`` (the words of :func:`symbreak.pages.ch04.descent_range` for the errors
    after descent against the minimum at ``rank``, three significant digits) and the configuration.

    The configuration: ``rr-descent-starts`` (one start per entry of ``descended``), ``rr-descent-lr``,
    ``rr-descent-steps``, and ``rr-eigh-growth`` (the convention ``p(d)/d`` of
    :func:`~symbreak.numerics.eigh_backward_error`).
    """
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= len(formula):
        raise ValueError(f"rank: expected an int in [1, {len(formula)}], got {rank!r}")
    return {
        "rr-descent-range": descent_range(descended, formula[rank - 1].item()),
        "rr-descent-starts": (descended.numel(), "d"),
        "rr-descent-lr": (lr, "g"),
        "rr-descent-steps": (steps, "d"),
        "rr-eigh-growth": (EIGH_GROWTH, "d"),
    }


def family_values(
    curves: Mapping[str, torch.Tensor], needed: Mapping[str, torch.Tensor], d: int, draws: int
) -> dict[str, tuple[float, str]]:
    """The glue block ``rr-fam-*``, ``rr-*-need-*`` and the mean errors ``rr-<family>-R<R>`` the prose quotes.

    Sizes and counts as integers; the share of Gaussian draws that need exactly
    ``d/2`` terms as a percentage; the mean errors at ``R = 1, 8, 16`` (Gaussian),
    ``16, 24`` (positive definite) and ``4`` (planted) to three decimals.
    """
    missing = set(FAMILIES.values()) - set(curves) | set(FAMILIES.values()) - set(needed)
    if missing:
        raise ValueError(f"curves, needed: expected the families {list(FAMILIES.values())}, missing {sorted(missing)}")
    gauss = needed[FAMILIES["gauss"]]
    values = {
        "rr-fam-d": (d, "d"),
        "rr-fam-half": (d // 2, "d"),
        "rr-fam-draws": (draws, "d"),
        "rr-gauss-need-min": (gauss.min().item(), "d"),
        "rr-gauss-need-max": (gauss.max().item(), "d"),
        "rr-gauss-need-half-share": ((gauss == d // 2).float().mean().item(), ".0%"),
        "rr-definite-need-min": (needed[FAMILIES["definite"]].min().item(), "d"),
        "rr-planted-need-min": (needed[FAMILIES["planted"]].min().item(), "d"),
    }
    for key, R in (("gauss", 1), ("gauss", 8), ("gauss", 16), ("definite", 16), ("definite", 24), ("planted", 4)):
        values[f"rr-{key}-R{R}"] = (curves[FAMILIES[key]][R - 1].mean().item(), ".3f")
    return values


def error_figure(curves: Mapping[str, torch.Tensor], needed: Mapping[str, torch.Tensor], d: int) -> Figure:
    """fig-rank-R-error: the error of the best ``R`` terms per family (mean, 10–90 % band), and ``max(p, n)``.

    Dotted lines at ``R = d/4``, ``d/2`` and ``d``; the right panel counts the
    Gaussian draws by the number of terms an exact score needs.
    """
    fig, axes = figure(ncols=2, width=7.6, height=3.6, gridspec_kw={"width_ratios": [1.6, 1.0]})
    ranks = list(range(1, d + 1))
    for (name, curve), marker in zip(curves.items(), ("o", "s", "^"), strict=True):
        mean_band(axes[0], ranks, curve.numpy(), label=name, marker=marker)
    for position, text in ((d / 4, "$d/4$"), (d / 2, "$d/2$"), (d, "$d$")):
        axes[0].axvline(position, color="0.35", ls=":", lw=1.0)
        axes[0].text(position, 1.02, text, ha="center", va="bottom", fontsize=9, color="0.25")
    axes[0].set_xlabel("number of terms $R$")
    axes[0].set_ylabel(r"relative error of the best $R$ terms")
    axes[0].set_ylim(0, 1)
    axes[0].legend(fontsize=9, loc="upper right")
    counts = torch.bincount(needed[FAMILIES["gauss"]], minlength=d + 1)
    axes[1].bar(range(d + 1), counts.numpy(), color="C0", width=0.8)
    axes[1].set_xlim(d / 2 - 3.5, d / 2 + 6.5)
    axes[1].set_xlabel(r"terms needed for an exact score, $\max(p, n)$")
    axes[1].set_ylabel("Gaussian draws")
    return fig


def breakeven_values(at_params: float, at_flops: float, sizes: Mapping[str, int]) -> dict[str, tuple[float, str]]:
    """The glue block ``rr-breakeven-*-llama`` (two decimals) and ``rr-llama-d``, ``-m``, ``-half`` (``d/2``).

    ``at_params`` and ``at_flops`` are the break-even ranks at the model's ``sizes``
    (``costs.MODELS`` entry with ``d`` and ``m``); thousands are grouped.
    """
    return {
        "rr-breakeven-params-llama": (at_params, ",.2f"),
        "rr-breakeven-flops-llama": (at_flops, ",.2f"),
        "rr-llama-d": (sizes["d"], ","),
        "rr-llama-m": (sizes["m"], ","),
        "rr-llama-half": (sizes["d"] // 2, ","),
    }


def cost_figure(at_params: float, at_flops: float, sizes: Mapping[str, int]) -> Figure:
    """fig-rank-R-cost: parameters (left) and FLOPs per token (right) of the rank-``R`` form against ``R = 1 … 4096``.

    Against the full form (the rank-``R`` family's limit ``R = d``, in its colour, dotted and dashed) and the gated
    MLP (in the gated family's colour) at the model's
    ``sizes`` (``d_out = d``), from :mod:`symbreak.costs`; a star at the break-even
    rank ``at_params`` (left) or ``at_flops`` (right).
    """
    rank_values = [2**k for k in range(13)]
    fig, axes = figure(ncols=2, width=7.6, height=3.4)
    at = {"d": sizes["d"], "m": sizes["m"]}
    panels = (
        (axes[0], costs.parameters, "parameters per layer", at_params),
        (axes[1], costs.flops, "FLOPs per token", at_flops),
    )
    for ax, kind, ylabel, breakeven in panels:
        packed = costs.evaluate(kind("full_packed"), **at)
        curves = {
            "rank-$R$ form": [costs.evaluate(kind("rankR"), R=R, **at) for R in rank_values],
            "full form": [costs.evaluate(kind("full"), **at)] * len(rank_values),
            "full, packed $\\mathrm{sym}(W_j)$": [packed] * len(rank_values),
            "gated MLP": [costs.evaluate(kind("gated"), **at)] * len(rank_values),
        }
        loglog_curves(
            ax,
            rank_values,
            curves,
            xlabel="number of terms $R$",
            ylabel=ylabel,
            styles={"full form": ":", "full, packed $\\mathrm{sym}(W_j)$": "--", "gated MLP": "-."},
            colors=dict(zip(curves, [FAMILY_COLOURS["rank R"]] * 3 + [FAMILY_COLOURS["gated"]], strict=True)),
            points={"break-even": (breakeven, packed)},
            legend_loc=None,
        )
        (label,) = (text for text in ax.texts if text.get_text() == "break-even")
        label.xyann = (-8, 9)  # above the star and its line, not on them
    legend_below(fig, list(axes), ncol=4)  # below both panels: inside either, it covered the curves
    return fig


def gated_change_values(changes: Mapping[str, float]) -> dict[str, tuple[float, str]]:
    """The glue block ``rr-gated-gauge``, ``rr-gated-exchange`` and ``rr-symmetric-tied``, two decimals.

    ``changes`` holds the three relative output changes in that order: the gauge
    ``A = 2I`` and the exchange of the gated SiLU layer, and the symmetric rank-3
    form against the symmetric rank-1 layer with the same tied units.
    """
    keys = ("rr-gated-gauge", "rr-gated-exchange", "rr-symmetric-tied")
    if len(changes) != len(keys):
        raise ValueError(f"changes: expected {len(keys)} changes (gauge, exchange, tied), got {len(changes)}")
    return {key: (change, ".2f") for key, change in zip(keys, changes.values(), strict=True)}


def sizes_values(prefix: str, **sizes: int) -> dict[str, tuple[int, str]]:
    """The glue block ``<prefix>-<name>`` of a check's sizes (``d``, ``m``, ``R``, …), as integers.

    The notebook passes the sizes of the objects its code cell built (``layer.d``,
    ``W.shape[0]``), so that the prose quotes them instead of typing them.  Raises
    ``ValueError`` for an empty ``prefix`` or no sizes, ``TypeError`` for a size
    that is not an int.
    """
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix: expected a non-empty str, got {prefix!r}")
    if not sizes:
        raise ValueError("sizes: expected at least one size, got none")
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return {f"{prefix}-{name.replace('_', '-')}": (value, "d") for name, value in sizes.items()}


def matrix_verdict(what: str, matrix: sp.Matrix, verdict: bool, *, then: str | None = None) -> Math:
    """A verdict line "what A: verdict" for display, with the matrix typeset (a printed one would be a Python list).

    ``what`` is LaTeX, ending where the matrix goes (``r"h_j \text{ unchanged by } A ="``); ``verdict`` is a bool.
    With ``then`` (LaTeX, ``"A ="``), ``what`` stands on a line of its own and ``then``, the matrix and the verdict
    on an indented second line, so that a long statement fits a phone's column.
    """
    if not isinstance(matrix, sp.MatrixBase):
        raise TypeError(f"matrix: expected a sympy Matrix, got {type(matrix).__name__}")
    if not isinstance(verdict, bool):
        raise TypeError(f"verdict: expected a bool, got {type(verdict).__name__}")
    if then is not None and not isinstance(then, str):
        raise TypeError(f"then: expected a str of LaTeX or None, got {type(then).__name__}")
    shown = rf"{sp.latex(matrix)}:\ \text{{{verdict}}}"
    return Math(rf"{what} {shown}" if then is None else stacked(what, [f"{then} {shown}"]))
