"""Chapter 2's glued values and figures: the cost of a global query map and its absorption.

The chapter's checks stay in its notebook; this module only arranges what
:mod:`symbreak.costs`, :mod:`symbreak.symbolic` and the layers compute:

* :func:`llama_costs` — the key–value memory and the
  global-query layer at the sizes of a LLaMA-7B feed-forward layer (glued into the prose);
* :func:`overhead_values` — the relative overhead at ``m = 4d`` (and :func:`model_overheads` at the sizes of the
  real models of :data:`symbreak.costs.MODELS`, which label the points of the figure);
* :func:`overhead_figure` and :func:`absorption_figure` — the chapter's two figures;
* :func:`overhead_math`, :func:`ratio_math` and :func:`singular_math` — the displayed formulas of the checks
  (the overhead of a global query, at ``m = ρd``, and a singular ``Q`` with its null basis ``N``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
import torch
from IPython.display import Math
from matplotlib.figure import Figure

from symbreak import costs, symbolic
from symbreak.coarse import percent_of
from symbreak.layers import GlobalQueryMLP
from symbreak.plotting import STYLE, agreement_scatter, figure, legend_below

__all__ = [
    "llama_costs",
    "model_overheads",
    "overhead_values",
    "overhead_figure",
    "absorption_figure",
    "overhead_math",
    "ratio_math",
    "singular_math",
]

#: The model whose feed-forward sizes the chapter borrows.
LLAMA = "LLaMA-7B"


def _math_size(name: str, value: int) -> str:
    """``("m", 11008) → "$m = 11{,}008$"``: a size and its value in one piece of maths, so no line breaks inside."""
    return f"${name} = {value:,}$".replace(",", "{,}")


def _counts(sizes: dict[str, int]) -> tuple[int, int]:
    """Parameters of the key–value memory and of the global-query layer at ``sizes``."""
    return (
        costs.evaluate(costs.parameters("kv"), **sizes),
        costs.evaluate(costs.parameters("global_query"), **sizes),
    )


def llama_costs() -> dict[str, object]:
    """The glue block ``gq-llama-*`` for :func:`symbreak.prose.glue_all`: LLaMA-7B's sizes and counts.

    ``gq-llama-d``, ``gq-llama-m`` (the sizes, as maths: ``$d = 4{,}096$``), ``gq-llama-kv`` and ``gq-llama-gq``
    (parameters of the two forms), ``gq-llama-extra`` (the ``d²`` extra parameters),
    ``gq-llama-overhead`` (their share of the memory's), ``gq-llama-extra-flops`` and
    ``gq-llama-flops-overhead`` (extra FLOPs per token and their share), all from
    :func:`symbreak.costs.overhead` evaluated at ``d``, ``m`` and ``d_out = d``; the shares as ``"18.6 %"``.
    """
    sizes = costs.MODELS[LLAMA]
    extra = costs.overhead("global_query", base="kv")
    kv, gq = _counts(sizes)
    extra_flops = costs.evaluate(extra["flops"], **sizes)
    kv_flops = costs.evaluate(costs.flops("kv"), **sizes)
    return {
        "gq-llama-d": _math_size("d", sizes["d"]),
        "gq-llama-m": _math_size("m", sizes["m"]),
        "gq-llama-kv": kv,
        "gq-llama-gq": gq,
        "gq-llama-extra": costs.evaluate(extra["parameters"], **sizes),
        "gq-llama-overhead": percent_of((gq - kv) / kv),
        "gq-llama-extra-flops": extra_flops,
        "gq-llama-flops-overhead": percent_of(extra_flops / kv_flops),
    }


def overhead_math(extra: dict[str, sp.Expr]) -> Math:
    """The overhead of :func:`symbreak.costs.overhead` (keys ``parameters``, ``flops``, ``relative``) as three
    aligned lines: ``Δ parameters``, ``Δ FLOPs per token`` and ``relative``."""
    if not isinstance(extra, dict) or not {"parameters", "flops", "relative"} <= set(extra):
        got = sorted(extra) if isinstance(extra, dict) else type(extra).__name__
        raise ValueError(f"extra: expected the dict of costs.overhead (parameters, flops, relative), got {got}")
    lines = [
        rf"\Delta\,\text{{parameters}} &= {symbolic.decimal_latex(extra['parameters'])}",
        rf"\Delta\,\text{{FLOPs per token}} &= {symbolic.decimal_latex(extra['flops'])}",
        rf"\text{{relative}} &= {symbolic.decimal_latex(extra['relative'])}",
    ]
    return Math(r"\begin{aligned}" + r",\\".join(lines) + r"\end{aligned}")


def ratio_math(of_ratio: sp.Expr) -> Math:
    """The relative overhead at ``d_out = d`` and ``m = ρd`` (:func:`symbreak.costs.at_ratio`), as one formula."""
    _of_ratio(of_ratio)
    return Math(rf"d_{{\mathrm{{out}}}} = d,\ m = \rho d: \quad \text{{relative}} = {symbolic.decimal_latex(of_ratio)}")


def singular_math(Q: sp.Matrix, N: sp.Matrix) -> Math:
    """A singular query map ``Q`` and the basis ``N`` of its left null space, as two aligned matrices."""
    for name, value in (("Q", Q), ("N", N)):
        if not isinstance(value, sp.MatrixBase):
            raise TypeError(f"{name}: expected a sympy Matrix, got {type(value).__name__}")
    return Math(
        rf"\begin{{aligned}} Q &= {symbolic.decimal_latex(Q)},\\"
        rf"N &= {symbolic.decimal_latex(N)} \end{{aligned}}"
    )


def model_overheads() -> dict[str, tuple[float, float]]:
    """Model name → ``(m/d, extra parameters / parameters of the memory)`` for every model of ``costs.MODELS``."""
    extra = costs.overhead("global_query", base="kv")["parameters"]
    return {
        name: (
            sizes["m"] / sizes["d"],
            costs.evaluate(extra, **sizes) / costs.evaluate(costs.parameters("kv"), **sizes),
        )
        for name, sizes in costs.MODELS.items()
    }


def _of_ratio(of_ratio: sp.Expr):
    """``of_ratio`` (a formula in ``costs.rho`` alone) as a numpy function of ``ρ``."""
    if not isinstance(of_ratio, sp.Expr) or of_ratio.free_symbols - {costs.rho}:
        given = sorted(map(str, of_ratio.free_symbols)) if isinstance(of_ratio, sp.Expr) else type(of_ratio).__name__
        raise ValueError(f"of_ratio: expected a sympy formula in costs.rho alone, got {given}")
    return sp.lambdify(costs.rho, of_ratio)


def overhead_values(of_ratio: sp.Expr) -> dict[str, object]:
    """The glue block ``gq-overhead-4d``: ``of_ratio`` at ``ρ = 4`` as a percentage, ``"12.5 %"``.

    ``of_ratio`` is the relative overhead as a function of ``ρ = m/d``
    (:func:`symbreak.costs.at_ratio`); the real models' overheads label their points in the figure.
    """
    return {"gq-overhead-4d": percent_of(float(_of_ratio(of_ratio)(4)))}


def _label_groups(points: dict[str, tuple[float, float]]) -> list[list[str]]:
    """The names of ``points`` (name → ``(m/d, share)``) in groups whose markers would overlap on the figure's axes
    (``m/d`` within 5 % of an octave, shares within one percentage point): each group gets one label."""
    groups: list[list[str]] = []
    for name, (ratio, share) in points.items():
        for group in groups:
            other_ratio, other_share = points[group[0]]
            if abs(np.log2(ratio / other_ratio)) < 0.05 and abs(share - other_share) < 0.01:
                group.append(name)
                break
        else:
            groups.append([name])
    return groups


def overhead_figure(of_ratio: sp.Expr) -> Figure:
    """fig-query-overhead: the relative overhead against ``m/d`` from 1 to 16, with the real models marked."""
    curve = _of_ratio(of_ratio)
    ratios = np.geomspace(1, 16, 50)
    models = model_overheads()
    fig, axes = figure(width=5.6, height=3.4)
    label = r"$d^2 / (md + m d_{\mathrm{out}})$ with $d_{\mathrm{out}} = d$"
    axes[0].plot(ratios, 100 * curve(ratios), color="C0", label=label)
    axes[0].set_xscale("log", base=2)
    axes[0].set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    axes[0].scatter(
        [ratio for ratio, _ in models.values()],
        [100 * share for _, share in models.values()],
        color="black",
        s=18,
        zorder=3,
    )
    for group in _label_groups(models):
        text = "\n".join(f"{name} {percent_of(models[name][1])}" for name in group)
        ratio, share = np.mean([models[name] for name in group], axis=0)
        if len(group) == 1:  # right of its point, above the curve, which falls to the right
            axes[0].annotate(text, (ratio, 100 * share), xytext=(8, 4), textcoords="offset points", fontsize=9)
        else:  # points that coincide: one label for them all, below the curve at the left, with a leader
            axes[0].text(0.03, 0.05, text, transform=axes[0].transAxes, fontsize=9, va="bottom")
            leader = {"arrowstyle": "-", "color": "0.3", "lw": 0.7, "shrinkA": 0, "shrinkB": 4}
            axes[0].annotate(
                "", (ratio, 100 * share), xytext=(0.2, 0.185), textcoords="axes fraction", arrowprops=leader
            )
    axes[0].set_xlabel("units per input dimension $m/d$")
    axes[0].set_ylabel("extra parameters (%)")
    axes[0].set_ylim(0, 55)
    axes[0].legend(loc="upper right", fontsize=9)
    return fig


def absorption_figure(generator: torch.Generator) -> Figure:
    """fig-query-absorbed: coefficients with the query map against the absorbed keys, and a blind direction.

    Three ``GlobalQueryMLP`` (``d = 8``, ``m = 32``, σ = SiLU) with the integer query maps
    of rank 8, 4 and 1 of :func:`symbreak.symbolic.singular_query` (seed = rank) scaled by
    1/16, and keys and values drawn from ``generator`` (in that order of ranks), then 24
    tokens.  Top, one panel per rank: ``σ(xQKᵀ)_j`` against ``σ(xK'ᵀ)_j``.  Bottom: for rank 4, the first
    output entry along ``x + tn`` for a row ``n`` of the null basis and for a column of ``Q``.
    """
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator, got {type(generator).__name__}")
    singular = {r: symbolic.singular_query(d=8, r=r, seed=r) for r in (8, 4, 1)}
    wide = {
        r: GlobalQueryMLP.from_weights(
            torch.from_numpy(np.array(Q, dtype=float)) / 16,
            *torch.randn(2, 32, 8, generator=generator),
            "silu",
        )
        for r, (Q, _) in singular.items()
    }
    tokens = torch.randn(24, 8, generator=generator)
    with torch.no_grad():
        pairs = [(w.hidden(tokens).numpy(), w.absorbed().hidden(tokens).numpy()) for w in wide.values()]
    # for rank 4: a row of N (n Q = 0) and a column of Q ((n Q)_j = ‖n‖² ≠ 0)
    null_direction = torch.from_numpy(np.array(singular[4][1].row(0), dtype=float)).ravel()
    seen_direction = wide[4].Q[:, wide[4].Q.norm(dim=0).argmax()]
    t = torch.linspace(-3, 3, 61)[:, None]
    with torch.no_grad():
        along_null = wide[4](tokens[0] + t * null_direction / null_direction.norm())
        along_seen = wide[4](tokens[0] + t * seen_direction / seen_direction.norm())
    # top: one panel per rank, each on its own scale (on one, the small coefficients of rank 1 hid under the
    # others at the origin); bottom: the blind and the seen direction
    fig, grid = figure(ncols=3, nrows=2, width=7.6, height=5.2, gridspec_kw={"wspace": 0.45, "hspace": 0.55})
    for ax in grid[3:]:
        ax.remove()
    with plt.rc_context(STYLE):  # the book's style, as figure() gives its axes
        axes = [*grid[:3], fig.add_subplot(grid[0].get_gridspec()[1, :])]
    for ax, rank, pair in zip(axes[:3], wide, pairs, strict=True):
        agreement_scatter(ax, [pair], [f"rank {rank}"], xlabel="", ylabel="")
        ax.get_legend().remove()  # the panel's title names the rank; the caption, the line y = x
        ax.set_title(f"rank $Q$ = {rank}")
    axes[0].set_ylabel(r"$\sigma(xK'^\top)_j$, absorbed keys")
    axes[1].set_xlabel(r"$\sigma(xQK^\top)_j$, global query (24 tokens × 32 units)")
    axes[3].plot(t.numpy(), along_null[:, 0].numpy(), label="$n$ with $nQ = 0$")
    axes[3].plot(t.numpy(), along_seen[:, 0].numpy(), label=r"$n$ with $nQ \neq 0$")
    axes[3].set_xlabel(r"step $t$ along a unit direction $n$")
    axes[3].set_ylabel(r"first output entry at $x + tn$")
    axes[3].set_title(r"rank $Q$ = 4: a direction with $nQ = 0$ and one with $nQ \neq 0$")
    legend_below(fig, axes[3], ncol=2, tight=False)  # below the panel: inside, a curve may run under it
    return fig
