"""Chapter 15's tables, glued values and figures: the digits task, the forms, training, test errors, pairs, swap test.

The chapter runs chapter 14's protocol on one task, so its tables and figures
are built with the general pieces of :mod:`symbreak.pages.ch14` at the digits'
formats (error rates in per cent, differences in percentage points). Each
``glue_*`` function glues what one cell of the chapter shows and returns the
text that cell prints; :func:`glue_forms` is chapter 14's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symbreak.experiments import (
    DIGITS_STD_FLOOR,
    Comparison,
    Result,
    SwapCheck,
    Task,
    digits_dropped,
    summarise,
)
from symbreak.pages.ch14 import (
    checkpoint_rows,
    error_figure,
    glue_forms,
    glue_rankings,
    protocol_values,
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
    "glue_swap_check",
]

#: The forms whose final mean test error rate the prose quotes, glued as ``err-<first word>`` (``err-mlp``, …).
ERROR_FORMS: tuple[str, ...] = ("MLP (GELU)", "bilinear (σ = id)", "SwiGLU", "symmetric (SiLU)")

_PERCENT = (".1f", 100.0, " %")


def glue_setup(protocol: Mapping[str, object], task: Task, forms: Sequence[str]) -> str:
    """Glue the protocol on the digits (:func:`~symbreak.pages.ch14.protocol_values`), the image side, the pixels
    dropped and floored by the standardisation (:func:`symbreak.experiments.digits_dropped`); return sizes."""
    dropped, floored = digits_dropped()
    extra = {"side": 8, "n-dropped": dropped, "n-floored": floored, "std-floor": (DIGITS_STD_FLOOR, "g")}
    glue_all(protocol_values(protocol, task, forms) | extra)
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
    final: Sequence[Result],
    train_errors: Mapping[object, float],
    task_name: str,
    forms: Sequence[str],
    loss_bound: float,
) -> str:
    """Glue ``largest-train-error`` (%), ``n-models`` and ``train-loss-bound``; return the two verdict lines.

    ``train_errors`` are the models' errors on their training sets
    (:func:`symbreak.experiments.training_errors`).  The training losses
    themselves (about 1e-3 after the classifier has fitted its training set)
    differ between numeric environments in their leading digit, so only the
    verdict "every form's mean training loss is below ``loss_bound``" is shown.
    """
    errors = list(train_errors.values())
    if not errors:
        raise ValueError("train_errors: expected at least one model's training error, got none")
    if not loss_bound > 0:
        raise ValueError(f"loss_bound: expected a positive bound, got {loss_bound!r}")
    largest_loss = max(mean for (task, form), (mean, _, _) in summarise(final, "train_loss").items() if form in forms)
    glue_all(
        {
            "largest-train-error": (100 * max(errors), ".1f"),
            "train-loss-bound": (loss_bound, ".0e"),
            "n-models": len(errors),
        }
    )
    return (
        f"largest training error of {len(errors)} models: {100 * max(errors):.1f} %\n"
        f"every form's mean training loss below {loss_bound:.0e}: {largest_loss < loss_bound}"
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


def glue_swap_check(check: SwapCheck, share: float) -> None:
    """Glue :func:`symbreak.pages.ch14.swap_check_values` and ``largest-symmetric-swap``."""
    glue_all(swap_check_values(check, share) | {"largest-symmetric-swap": (check.largest_swap, "g")})
