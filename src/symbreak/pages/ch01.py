"""Chapter 1's glued values and figures: the key–value memory's read-out and the chain of the derivation.

The chapter's checks stay in its notebook; this module only arranges what the
layers compute:

* :func:`readout_values` and :func:`glue_readout` — the coefficients ``σ(x·k_j)``
  of a key–value memory beside softmax weights over the same slots: their share
  of zeros, their sums per token, and the figure ``fig-kv-coefficients``;
* :func:`glue_chain_figure` — the figure ``fig-chain``, the forms of the book
  joined by the one change each step makes.
"""

from __future__ import annotations

import torch

from symbreak.plotting import chain_diagram, coefficient_bars, figure, glue_figure, legend_below
from symbreak.prose import glue_all

__all__ = ["readout_values", "glue_readout", "CHAIN", "glue_chain_figure"]

#: The forms of the derivation, ``(name, formula)``, and the change made between each two.  The
#: standard MLP is the static-query case of the symmetric form (``thm-static-query``) and the
#: static-key case of the gated form (``rem-static-key``); the last step puts σ on the query factor.
CHAIN = (
    [
        ("standard MLP", "$\\sigma(xK^\\top)V$\nstatic query of the symmetric form,\nstatic key of the gated form"),
        ("global query", r"$\sigma(xQK^\top)V$"),
        ("bilinear attention", r"$\sum_j \sigma(xQ_jK_j^\top x^\top)v_j$"),
        ("symmetric rank-1", r"$\sigma((xQ^\top)\odot(xK^\top))V$"),
        ("gated MLP", r"$(\sigma(xQ^\top)\odot(xK^\top))V$"),
    ],
    ["query $xQ$ from $x$", "a map per unit", r"$Q_jK_j^\top \to q_j^\top k_j$", r"σ onto the query factor $xQ^\top$"],
)


def _check_readout(relu_coefficients: object, softmax_weights: object) -> None:
    for name, value in (("relu_coefficients", relu_coefficients), ("softmax_weights", softmax_weights)):
        if not isinstance(value, torch.Tensor) or value.ndim != 2:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(f"{name}: expected a 2-d tensor (tokens, units), got {shape}")
    if relu_coefficients.shape != softmax_weights.shape:
        raise ValueError(
            "relu_coefficients, softmax_weights: expected the same shape (tokens, units), "
            f"got {tuple(relu_coefficients.shape)} and {tuple(softmax_weights.shape)}"
        )


def readout_values(relu_coefficients: torch.Tensor, softmax_weights: torch.Tensor) -> dict[str, object]:
    """The glue block of the read-out's caption, for :func:`symbreak.prose.glue_all`.

    ``kv-zero-fraction``: the share of coefficients ``σ(x·k_j)`` that are exactly
    zero (as a percentage); ``kv-relu-sums`` and ``kv-softmax-sums``: the sums
    ``Σ_j h_j(x)`` per token of the coefficients and of the softmax weights, to two decimals.
    """
    _check_readout(relu_coefficients, softmax_weights)
    return {
        "kv-zero-fraction": ((relu_coefficients == 0).float().mean().item(), ".0%"),
        "kv-relu-sums": ", ".join(f"{s:.2f}" for s in relu_coefficients.sum(-1).tolist()),
        "kv-softmax-sums": ", ".join(f"{s:.2f}" for s in softmax_weights.sum(-1).tolist()),
    }


def glue_readout(relu_coefficients: torch.Tensor, softmax_weights: torch.Tensor) -> None:
    """Glue :func:`readout_values` and the figure ``fig-kv-coefficients``: both read-outs as grouped bars per unit,
    one colour per token, named once in a legend below both panels; the units are numbered from 1, as in the book."""
    glue_all(readout_values(relu_coefficients, softmax_weights))
    fig, axes = figure(ncols=2, width=7.6, height=3.0)
    labels = [f"token {i + 1}" for i in range(relu_coefficients.shape[0])]
    relu_label, softmax_label = r"coefficient $\sigma(x\cdot k_j)$", r"weight $\mathrm{softmax}(xK^\top)_j$"
    coefficient_bars(axes[0], relu_coefficients.numpy(), labels, ylabel=relu_label, legend=False)
    axes[0].set_title("key–value memory, σ = ReLU")
    coefficient_bars(axes[1], softmax_weights.numpy(), labels, ylabel=softmax_label, legend=False)
    axes[1].set_title("softmax attention over the same slots")
    units = range(relu_coefficients.shape[1])
    for ax in axes:  # the book numbers the units j = 1, ..., m
        ax.set_xticks(list(units), [str(j + 1) for j in units])
    legend_below(fig, axes[0])  # the tokens once, for both panels, below them: over no bar
    glue_figure("fig-kv-coefficients", fig)


def glue_chain_figure(save_to: str | None = "figures/derivation-chain.png") -> None:
    """Glue the figure ``fig-chain`` (:data:`CHAIN` as a diagram); also write its PNG to ``save_to``.

    The default path, relative to the book's folder, is the copy that pages
    other than notebooks show.
    """
    fig, axes = figure(width=7.0, height=5.2)
    chain_diagram(axes[0], *CHAIN)
    glue_figure("fig-chain", fig, save_to=save_to)
