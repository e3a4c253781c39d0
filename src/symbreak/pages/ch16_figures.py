"""The figure of chapter 16 (a language model): the forms' validation curves and their test losses with intervals.

It arranges the stored runs through :mod:`symbreak.language.compare`, as :mod:`symbreak.pages.ch16`'s tables do,
and glues the figure as PNG (the runs are stored, so the figure is the same on every processor); the chapter
imports both modules and calls it as ``ch16_figures.comparison_figure``.
"""

from __future__ import annotations

from collections.abc import Sequence

from symbreak.language import compare as C
from symbreak.language.protocol import BASELINE, Protocol
from symbreak.pages import ch16_wording as wording
from symbreak.plotting import (
    FAMILY_COLOURS,
    MIN_FONT_PT,
    SIGMA_LINESTYLES,
    figure,
    glue_figure,
    interval_dots,
    label_ends,
)
from symbreak.prose import glue_all

__all__ = ["family", "comparison_figure"]


def family(form) -> str:
    """The key of ``form``'s family in :data:`symbreak.plotting.FAMILY_COLOURS`."""
    if form.kind == "bilinear":
        return "symmetric"
    if form.kind == "gated" and form.activation == "identity":
        return "bilinear"
    return form.kind


def comparison_figure(records: list[dict], protocol: Protocol, start: int = 500) -> None:
    """Glue ``fig-lm-comparison``: mean validation curves from iteration ``start`` on (top; ``start`` glued as
    ``lm-curve-start`` for the caption), each named at its end (:func:`~symbreak.plotting.label_ends`, no legend over
    the curves), and the test losses with intervals (bottom).

    Colour by family (:data:`~symbreak.plotting.FAMILY_COLOURS`), line style by σ
    (:data:`~symbreak.plotting.SIGMA_LINESTYLES`), as in chapters 14 and 15.  A run beyond the axis is marked at its
    end on the row of its form's runs, labelled ``run <value>``; a mean beyond it, in the means' colour, on the
    interval's line, labelled ``mean <value>``."""
    curves = C.mean_curves(records, protocol)
    summaries = C.form_summaries(records, protocol)
    # one column at the width the book shows (7 in at the style's dpi), so the text is not scaled down
    fig, (left, right) = figure(1, 2, width=7.0, height=8.6, gridspec_kw={"height_ratios": [1.0, 1.05]})
    lines = {}
    for form in protocol.forms:
        its, mean = curves[form.key]
        keep = [i for i, it in enumerate(its) if it >= start]
        colour, dash = FAMILY_COLOURS[family(form)], SIGMA_LINESTYLES[form.activation]
        (lines[form.name],) = left.plot([its[i] for i in keep], [mean[i] for i in keep], color=colour, ls=dash, lw=1.5)
    left.set_xlabel("iteration")
    left.set_ylabel("validation loss (nats per character)")
    labels = [s.form.name for s in summaries]
    interval_dots(
        right,
        labels,
        {"test loss": ([s.test.mean for s in summaries], [s.test.half_width for s in summaries])},
        xlabel="test loss (nats per character)",
        legend=False,
    )
    runs = C.main_runs(records, protocol)
    seeds = [C.final_losses(runs[s.form.key], "test") for s in summaries]
    every = sorted(v for vs in seeds for v in vs)
    middle = every[len(every) // 2]
    high = max(v for v in every if v <= middle + 0.15) + 0.015  # the axis ends past the bulk of the runs
    low = every[0] - 0.015

    def beyond(y: float, text: str, colour: str, dy: float) -> None:  # past the axis: a marker at its end, labelled
        right.plot([high], [y], ">", color=colour, ms=6, clip_on=False)
        at = {"textcoords": "offset points", "ha": "right", "va": "center", "fontsize": 9, "color": colour}
        right.annotate(text, (high, y), xytext=(-7, dy), **at)

    for row, (vs, s) in enumerate(zip(seeds, summaries, strict=True)):
        inside = [v for v in vs if v <= high]
        right.plot(inside, [row + 0.22] * len(inside), "|", color="0.35", ms=6, mew=1.0)
        for v in (v for v in vs if v > high):  # a run: on the row of its form's runs, in grey
            beyond(row + 0.22, f"run {v:.2f}", "0.3", 0)
        if s.test.mean > high:  # the mean: on its interval's line, in the means' colour
            beyond(row, f"mean {wording.loss(s.test.mean)}", "C0", 8)
    right.set_xlim(low, high)
    for tick, s in zip(right.get_yticklabels(), summaries, strict=True):
        tick.set_color(FAMILY_COLOURS[family(s.form)] if s.form.kind != "kv" else "black")
    base = next(s for s in summaries if s.form.key == BASELINE)
    right.axvline(base.test.mean, color=FAMILY_COLOURS["kv"], lw=0.8, ls=":")
    fig.tight_layout()
    _room_for_labels(left, list(lines), right.get_position().x1)
    label_ends(left, lines)
    glue_figure("fig-lm-comparison", fig)
    glue_all({"lm-curve-start": start})


def _room_for_labels(ax, labels: Sequence[str], x_right: float) -> None:
    """Narrow ``ax`` from the right so that :func:`~symbreak.plotting.label_ends`' labels (which begin at 1.08 of
    its width) end at ``x_right`` (figure fraction), the right edge of the panel below."""
    renderer = ax.figure.canvas.get_renderer()
    texts = [ax.figure.text(0, 0, label, fontsize=MIN_FONT_PT) for label in labels]
    widest = max(t.get_window_extent(renderer).width for t in texts) / (ax.figure.dpi * ax.figure.get_figwidth())
    for t in texts:
        t.remove()
    box = ax.get_position()
    ax.set_position([box.x0, box.y0, (x_right - box.x0 - widest) / 1.08, box.height])
