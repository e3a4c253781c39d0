"""Chapter 15's tables, glued values and figures: the digits task, the forms, training, test errors, pairs, swap test.

The chapter runs chapter 14's protocol on one task, so its tables and figures
are built with the general pieces of :mod:`symbreak.pages.ch14` at the digits'
formats (error rates in per cent, differences in percentage points). Each
``glue_*`` function glues what one cell of the chapter shows and returns the
text that cell prints; :func:`glue_forms` is chapter 14's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symbreak.experiments import Comparison, Result, SwapCheck, Task, summarise, summary_rows
from symbreak.experiments import swap_effects as _swap_effects
from symbreak.pages.ch14 import (
    checkpoint_rows,
    error_figure,
    glue_forms,
    glue_rankings,
    glue_swap_rows,
    pair_rows,
    protocol_values,
    reading_lines,
    swap_check_values,
)
from symbreak.pages.ch14 import glue_loss_curves as _loss_curves
from symbreak.plotting import glue_figure
from symbreak.prose import glue_all, glue_table

__all__ = [
    "ERROR_FORMS",
    "glue_setup",
    "glue_forms",
    "glue_loss_curves",
    "glue_training",
    "glue_error_figure",
    "glue_test_errors",
    "glue_pairs",
    "glue_swap_check",
    "glue_swap_table",
]

#: The forms whose final mean test error rate the prose quotes, glued as ``err-<first word>`` (``err-mlp``, …).
ERROR_FORMS: tuple[str, ...] = ("MLP (GELU)", "bilinear (σ = id)", "SwiGLU", "symmetric (SiLU)")

_PERCENT = (".1f", 100.0, " %")


def glue_setup(protocol: Mapping[str, object], task: Task, forms: Sequence[str]) -> str:
    """Glue the protocol on the digits (:func:`~symbreak.pages.ch14.protocol_values`), the image side; return sizes."""
    glue_all(protocol_values(protocol, task, forms) | {"side": round(task.d**0.5)})
    sizes = f"{len(task.X_train)} training and {len(task.X_test)} test images"
    return f"{task.name}: {sizes},\n   d = {task.d}, {task.d_out} classes"


def glue_loss_curves(comparison: Comparison, task_name: str, forms: Sequence[str], checkpoint: int) -> None:
    """Glue ``fig-digits-curves``: the cross-entropy of every form against the Adam step (one panel, no title)."""
    _loss_curves(
        comparison,
        [task_name],
        forms,
        checkpoint,
        name="fig-digits-curves",
        ylabel="training loss (cross-entropy)",
        width=7.5,
        titles=False,
    )


def glue_training(
    final: Sequence[Result], train_errors: Mapping[object, float], task_name: str, forms: Sequence[str]
) -> str:
    """Glue ``train-loss-table``, ``largest-train-error`` (%), ``largest-train-loss``, ``n-models``; return the largest.

    ``train_errors`` are the models' errors on their training sets
    (:func:`symbreak.experiments.training_errors`).
    """
    errors = list(train_errors.values())
    if not errors:
        raise ValueError("train_errors: expected at least one model's training error, got none")
    largest_loss = max(mean for mean, _, _ in summarise(final, "train_loss").values())
    rows = summary_rows(final, [task_name], forms, field="train_loss", formats={task_name: (".2e", 1.0, "")})
    glue_table("train-loss-table", ["form", "training loss (cross-entropy)"], rows)
    glue_all(
        {
            "largest-train-error": (100 * max(errors), ".1f"),
            "largest-train-loss": (largest_loss, ".1e"),
            "n-models": len(errors),
        }
    )
    return (
        f"largest training error of {len(errors)} models: {100 * max(errors):.1f} %\n"
        f"largest mean training loss of a form: {largest_loss:.2e}"
    )


def glue_error_figure(comparison: Comparison, task_name: str, forms: Sequence[str]) -> None:
    """Glue ``fig-training-comparison-digits``: each form's test error rate (%) with its interval, per checkpoint."""
    fig, _ = error_figure(comparison, [task_name], forms, xlabel="test error rate (%)", scale=100.0, width=6.5)
    glue_figure("fig-training-comparison-digits", fig)


def glue_test_errors(comparison: Comparison, task_name: str, forms: Sequence[str]) -> str:
    """Glue ``comparison-table``, ``best-early``, ``best-final`` and the error rates ``err-*`` of :data:`ERROR_FORMS`.

    Returns each checkpoint's ranking, best first.
    """
    rows = checkpoint_rows(comparison, [task_name], forms, {task_name: _PERCENT})
    header = ["form", *[f"test error, {c} steps" for c in sorted(comparison.results)]]
    glue_table("comparison-table", header, rows)
    lines = glue_rankings(comparison, [task_name], forms, with_task=False)
    summary = summarise(comparison.results[max(comparison.results)])
    glue_all({f"err-{form.split()[0].lower()}": (100 * summary[(task_name, form)][0], ".1f") for form in ERROR_FORMS})
    return "\n".join(lines)


def glue_pairs(comparison: Comparison, task_name: str, pairs: Sequence[tuple[str, str]]) -> str:
    """Glue ``pairs-table``, the differences in percentage points; return each pair's reading per checkpoint."""
    header = ["pair", *[f"Δ test error (points), {c} steps" for c in sorted(comparison.results)]]
    glue_table("pairs-table", header, pair_rows(comparison, [task_name], pairs, fmt="+.1f", scale=100.0))
    return "\n".join(reading_lines(comparison, [task_name], pairs, with_task=False))


def glue_swap_check(check: SwapCheck, share: float) -> None:
    """Glue :func:`symbreak.pages.ch14.swap_check_values` and ``largest-symmetric-swap``."""
    glue_all(swap_check_values(check, share) | {"largest-symmetric-swap": (check.largest_swap, "g")})


def glue_swap_table(final: Sequence[Result], task_name: str, forms: Sequence[str]) -> str:
    """Glue ``swap-table`` (percentage points) and ``swap-range``, the gated forms' mean swap changes; return it."""
    formats = {task_name: ("+.1f", 100.0, " points")}
    gated = glue_swap_rows(final, [task_name], forms, formats, ["form", "swap change of the test error rate"])
    means = [100 * mean for mean, _ in _swap_effects(final, task_name, gated).values()]
    glue_all({"swap-range": f"{min(means):+.1f} to {max(means):+.1f}"})
    return f"gated swap changes: {min(means):+.1f} … {max(means):+.1f} percentage points"
