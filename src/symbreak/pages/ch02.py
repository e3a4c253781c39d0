"""Chapter 2's glued values and figures: the cost of a global query map and its absorption.

The chapter's checks stay in its notebook; this module only arranges what
:mod:`symbreak.costs`, :mod:`symbreak.symbolic` and the layers compute:

* :func:`llama_costs` — the key–value memory and the
  global-query layer at the sizes of a LLaMA-7B feed-forward layer (glued into the prose);
* :func:`overhead_values` — the relative overhead at
  ``m = 4d`` and at the sizes of the real models of :data:`symbreak.costs.MODELS`;
* :func:`overhead_figure` and :func:`absorption_figure` — the chapter's two figures.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
import torch
from matplotlib.figure import Figure

from symbreak import costs, symbolic
from symbreak.layers import GlobalQueryMLP
from symbreak.plotting import agreement_scatter, annotated_points, figure

__all__ = [
    "llama_costs",
    "model_overheads",
    "overhead_values",
    "overhead_figure",
    "absorption_figure",
]

#: The model whose feed-forward sizes the chapter borrows.
LLAMA = "LLaMA-7B"


def _counts(sizes: dict[str, int]) -> tuple[int, int]:
    """Parameters of the key–value memory and of the global-query layer at ``sizes``."""
    return (
        costs.evaluate(costs.parameters("kv"), **sizes),
        costs.evaluate(costs.parameters("global_query"), **sizes),
    )


def llama_costs() -> dict[str, object]:
    """The glue block ``gq-llama-*`` for :func:`symbreak.prose.glue_all`: LLaMA-7B's sizes and counts.

    ``gq-llama-d``, ``gq-llama-m`` (the sizes), ``gq-llama-kv`` and ``gq-llama-gq``
    (parameters of the two forms), ``gq-llama-extra`` (the ``d²`` extra parameters),
    ``gq-llama-overhead`` (their share of the memory's), ``gq-llama-extra-flops`` and
    ``gq-llama-flops-overhead`` (extra FLOPs per token and their share), all from
    :func:`symbreak.costs.overhead` evaluated at ``d``, ``m`` and ``d_out = d``.
    """
    sizes = costs.MODELS[LLAMA]
    extra = costs.overhead("global_query", base="kv")
    kv, gq = _counts(sizes)
    extra_flops = costs.evaluate(extra["flops"], **sizes)
    kv_flops = costs.evaluate(costs.flops("kv"), **sizes)
    return {
        "gq-llama-d": sizes["d"],
        "gq-llama-m": sizes["m"],
        "gq-llama-kv": kv,
        "gq-llama-gq": gq,
        "gq-llama-extra": costs.evaluate(extra["parameters"], **sizes),
        "gq-llama-overhead": ((gq - kv) / kv, ".1%"),
        "gq-llama-extra-flops": extra_flops,
        "gq-llama-flops-overhead": (extra_flops / kv_flops, ".1%"),
    }


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
    """The glue block ``gq-overhead-4d`` (``of_ratio`` at ``ρ = 4``, as a percentage) and ``gq-model-overheads``.

    ``of_ratio`` is the relative overhead as a function of ``ρ = m/d``
    (:func:`symbreak.costs.at_ratio`); the models' overheads come from
    :func:`model_overheads`, as ``"LLaMA-7B 18.6%, …"``.
    """
    at_four = float(_of_ratio(of_ratio)(4))
    listed = ", ".join(f"{name} {share:.1%}" for name, (_, share) in model_overheads().items())
    return {"gq-overhead-4d": (at_four, ".1%"), "gq-model-overheads": listed}


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
    annotated_points(
        axes[0],
        [ratio for ratio, _ in models.values()],
        [100 * share for _, share in models.values()],
        list(models),
        # LLaMA-7B and T5-base (GLU variants) nearly coincide: one label above the pair, one below it, both to
        # the left, where the curve is far; T5-base (ReLU) to the right of its point
        offsets=[(-7, 6), (8, 4), (-7, -14)],
        aligns=["right", "left", "right"],
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
    tokens.  Left: ``σ(xQKᵀ)_j`` against ``σ(xK'ᵀ)_j``.  Right: for rank 4, the first output
    entry along ``x + tn`` for a row ``n`` of the null basis and for a column of ``Q``.
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
    fig, axes = figure(ncols=2, width=7.6, height=3.3, gridspec_kw={"wspace": 0.4})
    agreement_scatter(
        axes[0],
        pairs,
        [f"rank $Q$ = {rank}" for rank in wide],
        xlabel=r"$\sigma(xQK^\top)_j$, global query",
        ylabel=r"$\sigma(xK'^\top)_j$, absorbed keys",
    )
    axes[0].set_title("24 tokens × 32 units")
    axes[1].plot(t.numpy(), along_null[:, 0].numpy(), label="$n$ with $nQ = 0$")
    axes[1].plot(t.numpy(), along_seen[:, 0].numpy(), label=r"$n$ along a column of $Q$")
    axes[1].set_xlabel(r"step $t$ along a unit direction $n$")
    axes[1].set_ylabel(r"first output entry at $x + tn$")
    axes[1].set_title("rank $Q$ = 4: blind and seen")
    axes[1].legend(fontsize=9)
    return fig
