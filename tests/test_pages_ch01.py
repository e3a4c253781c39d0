"""Chapter 1's page module (``symbreak.pages.ch01``): the read-out's glue block and the two figures."""

from __future__ import annotations

import pytest
import torch

from figure_checks import clashes
from symbreak import prose
from symbreak.pages import ch01


def test_readout_values_counts_zeros_and_sums_per_token(glued):
    # 8 of the 12 coefficients are exactly zero; the sums per token are 1.75, 0 and 3
    relu = torch.tensor([[0.0, 1.5, 0.0, 0.25], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 1.0, 0.0]])
    scores = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    softmax = torch.exp(scores) / torch.exp(scores).sum(-1, keepdim=True)
    values = ch01.readout_values(relu, softmax)
    assert values["kv-zero-fraction"] == (pytest.approx(8 / 12), ".0%")
    assert values["kv-relu-sums"] == "1.75, 0.00, 3.00"
    assert values["kv-softmax-sums"] == "1.00, 1.00, 1.00"
    prose.glue_all(values)
    assert glued["kv-zero-fraction"] == "67\u00a0%"


def test_glue_readout_glues_the_caption_values_and_one_bar_per_token_and_unit(glued):
    relu = torch.relu(torch.randn(3, 10, generator=torch.Generator().manual_seed(2)))
    softmax = torch.softmax(torch.randn(3, 10, generator=torch.Generator().manual_seed(3)), dim=-1)
    ch01.glue_readout(relu, softmax)
    assert {"kv-zero-fraction", "kv-relu-sums", "kv-softmax-sums", "fig-kv-coefficients"} <= set(glued)
    fig = glued["fig-kv-coefficients"]
    assert glued.saved["fig-kv-coefficients"] is None
    left, right = fig.axes
    assert left.get_title() == "key–value memory, σ = ReLU"
    assert right.get_title() == "softmax attention over the same slots"
    assert len(left.patches) == len(right.patches) == 3 * 10
    heights = sorted(round(p.get_height(), 6) for p in right.patches)
    assert heights == sorted(round(v, 6) for v in softmax.flatten().tolist())


def test_glue_chain_figure_shows_every_stage_and_step(glued):
    ch01.glue_chain_figure()
    fig = glued["fig-chain"]
    assert glued.saved["fig-chain"] == "figures/derivation-chain.png"
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    for name in ("standard MLP", "global query", "bilinear attention", "symmetric rank-1", "gated MLP"):
        assert name in texts
    assert "σ onto the query factor" in texts
    assert "static query of the symmetric form" in texts and "static key of the gated form" in texts


@pytest.mark.parametrize(
    ("relu", "softmax", "match"),
    [
        (torch.zeros(4), torch.zeros(1, 4), r"relu_coefficients: expected a 2-d tensor \(tokens, units\), got \(4,\)"),
        (torch.zeros(1, 4), [[0.25] * 4], "softmax_weights: expected a 2-d tensor .*, got list"),
        (torch.zeros(2, 4), torch.zeros(3, 4), r"expected the same shape .*got \(2, 4\) and \(3, 4\)"),
    ],
)
def test_readout_values_rejects_bad_input(relu, softmax, match):
    with pytest.raises(ValueError, match=match):
        ch01.readout_values(relu, softmax)


def test_the_read_out_figure_names_the_tokens_once_below_both_panels_over_no_bar(glued):
    """Fig. 1.1's legend is the figure's, below both panels (x labels included), and nothing clashes: no legend or
    label over a bar, no two texts meeting (the legend inside a panel covered bars)."""
    memory = torch.nn.functional.relu(torch.randn(3, 10, generator=torch.Generator().manual_seed(0)))
    softmax = torch.softmax(torch.randn(3, 10, generator=torch.Generator().manual_seed(1)), dim=-1)
    ch01.glue_readout(memory, softmax)
    fig = glued["fig-kv-coefficients"]
    assert [ax.get_legend() for ax in fig.axes] == [None, None]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["token 1", "token 2", "token 3"]
    assert clashes(fig) == []
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent().y1 < min(ax.get_tightbbox(renderer).y0 for ax in fig.axes)


def test_the_read_out_figure_numbers_the_units_from_one(glued):
    """Fig. 1.1's x-axis numbers the memory units j = 1, ..., m, as the book does, not from 0."""
    memory = torch.nn.functional.relu(torch.randn(3, 10, generator=torch.Generator().manual_seed(0)))
    softmax = torch.softmax(torch.randn(3, 10, generator=torch.Generator().manual_seed(1)), dim=-1)
    ch01.glue_readout(memory, softmax)
    for ax in glued["fig-kv-coefficients"].axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(j) for j in range(1, 11)]
        assert ax.get_xlabel() == "memory unit $j$"
