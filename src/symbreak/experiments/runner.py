"""Measuring one trained model (E5): the test metric, the swap test and its baselines, rounding ratio, training error.

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
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP
from symbreak.symmetry import exchange

__all__ = ["Result", "swap_rounding_ratio", "training_error", "exchanged", "relative_swap_change"]

#: The blocks with a query ``Q`` and a key ``K`` that the swap test exchanges.
QUERY_KEY_BLOCKS = (BilinearMLP, GatedMLP, SymmetrisedGatedMLP)


def exchanged(block: FeedForward) -> FeedForward:
    """The block with ``Q ↔ K`` exchanged (:func:`symbreak.symmetry.exchange`, and the symmetrised gated control)."""
    if isinstance(block, SymmetrisedGatedMLP):
        new = copy.deepcopy(block)
        with torch.no_grad():
            new.Q.copy_(block.K)
            new.K.copy_(block.Q)
        return new
    return exchange(block)


def relative_swap_change(block: FeedForward, X: torch.Tensor) -> float:
    """``‖B'(X) − B(X)‖_F / ‖B(X)‖_F``: the relative change of the block's output on ``X`` under ``Q ↔ K``."""
    if not isinstance(block, QUERY_KEY_BLOCKS):
        raise TypeError(f"block: expected a block with Q and K, got {type(block).__name__}")
    with torch.no_grad():
        out = block(X)
        return float(torch.linalg.norm(exchanged(block)(X) - out) / torch.linalg.norm(out))


def _metric(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, classification: bool) -> float:
    """Test error rate (classification) or MSE relative to the target variance (regression)."""
    with torch.no_grad():
        out = model(X)
        if classification:
            return float((out.argmax(-1) != Y.squeeze(-1)).double().mean())
        return float(((out - Y) ** 2).mean() / Y.var())


@dataclass(frozen=True)
class Result:
    """One trained model: its test metric, the swap test and the swap test's baselines.

    ``swap_change``: ``metric(swapped) − metric(trained)``; ``swap_relative``: the trained block's
    :func:`relative_swap_change` on the test tokens, ``init_swap_relative`` the same for the untrained block
    of the same seed (``None`` for the standard MLP, which has no query); ``skip_metric``: the test metric of the
    trained model with its block removed (the skip path alone).
    """

    task: str
    form: str
    seed: int
    width: int
    parameters: int
    train_loss: float
    test_metric: float
    swap_change: float | None
    swap_relative: float | None = None
    init_swap_relative: float | None = None
    skip_metric: float | None = None


def _evaluate(
    task: Task, form: str, seed: int, model: Model, train_loss: float, init_swap: float | None = None
) -> Result:
    """The :class:`Result` of a trained ``model``: its test metric, the swap test and the error of its skip path.

    The swap test exchanges ``Q ↔ K`` in the trained block and reports the
    change of the test metric, ``metric(swapped) − metric(trained)``, and the
    block's relative output change (``None`` for the standard MLP, which has no
    query); ``init_swap`` is the relative change of the untrained block.
    """
    metric = _metric(model, task.X_test, task.Y_test, task.classification)
    swap = relative = None
    if isinstance(model.block, QUERY_KEY_BLOCKS):
        swapped = copy.deepcopy(model)
        swapped.block = exchanged(model.block)
        swap = _metric(swapped, task.X_test, task.Y_test, task.classification) - metric
        relative = relative_swap_change(model.block, task.X_test)
    skip = _metric(model.skip, task.X_test, task.Y_test, task.classification)
    n_params = sum(p.numel() for p in model.parameters())
    return Result(task.name, form, seed, model.block.m, n_params, train_loss, metric, swap, relative, init_swap, skip)


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
