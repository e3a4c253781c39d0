"""Measuring one trained model (E5): the test metric, the swap test, its rounding ratio and the training error.

The models are trained by :mod:`symbreak.experiments.seeds` (full-batch Adam
for a fixed number of steps from a seeded initialisation, all seeds of a form
together); this module measures each trained model the same way.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from symbreak.experiments.models import Model
from symbreak.experiments.tasks import Task
from symbreak.layers import BilinearMLP, GatedMLP
from symbreak.symmetry import exchange

__all__ = ["Result", "swap_rounding_ratio", "training_error"]


def _metric(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, classification: bool) -> float:
    """Test error rate (classification) or MSE relative to the target variance (regression)."""
    with torch.no_grad():
        out = model(X)
        if classification:
            return float((out.argmax(-1) != Y.squeeze(-1)).double().mean())
        return float(((out - Y) ** 2).mean() / Y.var())


@dataclass(frozen=True)
class Result:
    """One trained model: its test metric, and the swap test."""

    task: str
    form: str
    seed: int
    width: int
    parameters: int
    train_loss: float
    test_metric: float
    swap_change: float | None


def _evaluate(task: Task, form: str, seed: int, model: Model, train_loss: float) -> Result:
    """The :class:`Result` of a trained ``model``: its test metric and the swap test.

    The swap test exchanges ``Q ↔ K`` in the trained block and reports the
    change of the test metric, ``metric(swapped) − metric(trained)`` (``None``
    for the plain MLP, which has no query).
    """
    metric = _metric(model, task.X_test, task.Y_test, task.classification)
    swap = None
    if isinstance(model.block, (BilinearMLP, GatedMLP)):
        swapped = copy.deepcopy(model)
        swapped.block = exchange(model.block)
        swap = _metric(swapped, task.X_test, task.Y_test, task.classification) - metric
    n_params = sum(p.numel() for p in model.parameters())
    return Result(task.name, form, seed, model.block.m, n_params, train_loss, metric, swap)


def swap_rounding_ratio(model: Model, X: torch.Tensor) -> float:
    """``max |g(X) − f(X)| / (β_f(X) + β_g(X))`` for the block ``f`` of ``model`` and its exchange ``g``.

    ``β`` is :func:`symbreak.numerics.forward_error_bound`.  When ``f`` is
    exchange-symmetric the two compute the same exact function, so the ratio is
    at most 1 (``thm-exchange``); a ratio above 1 means the exchange changed the
    function.
    """
    from symbreak.numerics import forward_error_bound

    if not isinstance(model, Model) or not isinstance(model.block, (BilinearMLP, GatedMLP)):
        raise TypeError(f"model: expected a Model with a BilinearMLP or GatedMLP block, got {type(model).__name__}")
    swapped = exchange(model.block)
    with torch.no_grad():
        difference = (swapped(X) - model.block(X)).abs()
    bound = forward_error_bound(model.block, X) + forward_error_bound(swapped, X)
    return float((difference / bound).max())


def training_error(model: Model, task: Task) -> float:
    """The model's error on its own training set, measured as the test metric is (error rate or MSE / variance)."""
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a Model, got {type(model).__name__}")
    if not isinstance(task, Task):
        raise TypeError(f"task: expected a Task, got {type(task).__name__}")
    return _metric(model, task.X_train, task.Y_train, task.classification)
