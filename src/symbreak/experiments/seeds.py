"""Seeds trained together (chapters 14–15): batched training with checkpoints, the comparison and its protocol.

Every seed follows full-batch Adam on its own model alone step for step in
exact arithmetic; only the rounding of the batched kernels may differ.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from symbreak.experiments.models import Model, _form, make_model, plain_budget
from symbreak.experiments.runner import QUERY_KEY_BLOCKS, Result, _evaluate, relative_swap_change
from symbreak.experiments.tasks import Task

__all__ = ["PROTOCOL", "train_seeds", "torch_threads", "Comparison", "compare_seeds", "final_decrease"]


def _check_steps(steps: object, checkpoints: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps: expected an int >= 1, got {steps!r}")
    for c in checkpoints:
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= steps:
            raise ValueError(f"checkpoints: expected ints in [1, steps = {steps}], got {c!r}")
    return steps, tuple(sorted(set(checkpoints) | {steps}))


def train_seeds(
    task: Task,
    form: str,
    seeds: Sequence[int],
    *,
    budget: int,
    steps: int,
    lr: float,
    checkpoints: Sequence[int] = (),
) -> tuple[dict[int, list[Result]], np.ndarray, list[Model]]:
    """Train one model of ``form`` per seed, all seeds in one batched computation.

    The models are those of :func:`make_model` (same seeds, same
    initialisation); their parameters are stacked along a leading seed axis
    and evaluated with ``torch.vmap``.  The loss minimised is
    ``Σ_s L_s(θ_s)``, whose gradient with respect to ``θ_s`` is ``∇L_s(θ_s)``,
    and Adam acts entry by entry, so in exact arithmetic every seed follows
    full-batch Adam on its own model alone, step for step; only the rounding
    of the batched kernels may differ.

    Returns ``(results, losses, models)``: ``results[c]`` holds one
    :class:`Result` per seed measured after ``c`` steps, for every ``c`` in
    ``checkpoints`` and for ``c = steps``; ``losses[s, t]`` is seed ``s``'s
    training loss at step ``t``; ``models`` are the trained models.
    """
    steps, points = _check_steps(steps, checkpoints)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: expected at least one seed, got none")
    models = [make_model(form, task.d, task.d_out, budget, s) for s in seeds]
    init_swaps = [
        relative_swap_change(m.block, task.X_test) if isinstance(m.block, QUERY_KEY_BLOCKS) else None for m in models
    ]
    params, buffers = torch.func.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def forward(p: dict, b: dict, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(base, (p, b), (x,))

    def loss_of(out: torch.Tensor) -> torch.Tensor:
        if task.classification:
            return nn.functional.cross_entropy(out, task.Y_train.squeeze(-1))
        return ((out - task.Y_train) ** 2).mean()

    batched = torch.vmap(forward, in_dims=(0, 0, None))
    per_seed_loss = torch.vmap(loss_of)
    opt = torch.optim.Adam(list(params.values()), lr=lr)
    history = torch.empty(steps, len(seeds), dtype=torch.float64)
    results: dict[int, list[Result]] = {}
    for t in range(1, steps + 1):
        opt.zero_grad(set_to_none=True)
        losses = per_seed_loss(batched(params, buffers, task.X_train))
        losses.sum().backward()
        opt.step()
        history[t - 1] = losses.detach()
        if t in points:
            with torch.no_grad():
                for i, model in enumerate(models):
                    for name, p in model.named_parameters():
                        p.copy_(params[name][i])
            results[t] = [
                _evaluate(task, form, s, model, float(history[t - 1, i]), init_swaps[i])
                for i, (s, model) in enumerate(zip(seeds, models, strict=True))
            ]
    return results, history.T.numpy().copy(), models


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the ``with`` block under ``torch.set_num_threads(threads)``, restored afterwards; ``None`` changes nothing.

    The book's kernels are small: on one thread they are fastest, and on a
    busy machine several threads per process oversubscribe the cores, which
    slows them down many times over.
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads: expected None or an int >= 1, got {threads!r}")
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_seeds` measured.

    ``results[c]``: every (task, form, seed) :class:`Result` after ``c`` steps;
    ``curves[(task, form)]``: training losses, shape ``(seeds, steps)``;
    ``models[(task, form, seed)]``: the trained models; ``budgets[task]``: the
    parameter budget of the blocks on that task.
    """

    results: dict[int, list[Result]]
    curves: dict[tuple[str, str], np.ndarray]
    models: dict[tuple[str, str, int], Model]
    budgets: dict[str, int]


def compare_seeds(
    tasks: Sequence[Task],
    forms: Sequence[str],
    seeds: Sequence[int],
    *,
    reference_width: int,
    steps: int,
    lr: float,
    checkpoints: Sequence[int] = (),
    threads: int | None = None,
) -> Comparison:
    """Every (task, form) with all ``seeds`` trained together (:func:`train_seeds`).

    The budget on each task is :func:`plain_budget` (a standard MLP of width
    ``reference_width``).  ``threads`` sets ``torch.set_num_threads`` for the
    duration of the call (restored afterwards); ``None`` leaves it alone.
    """
    if len(seeds) < 2:
        raise ValueError(f"seeds: expected at least 2 seeds for an interval, got {len(seeds)}")
    for form in forms:
        _form(form)
    _, points = _check_steps(steps, checkpoints)
    with torch_threads(threads):
        results: dict[int, list[Result]] = {c: [] for c in points}
        curves, models, budgets = {}, {}, {}
        for task in tasks:
            budgets[task.name] = plain_budget(task, reference_width)
            for form in forms:
                res, losses, trained = train_seeds(
                    task, form, seeds, budget=budgets[task.name], steps=steps, lr=lr, checkpoints=checkpoints
                )
                for c in points:
                    results[c].extend(res[c])
                curves[(task.name, form)] = losses
                models.update({(task.name, form, s): m for s, m in zip(seeds, trained, strict=True)})
    return Comparison(results, curves, models, budgets)


def final_decrease(losses: np.ndarray, fraction: float = 0.1) -> float:
    """How much the seed-mean training loss ``L̄_t`` still fell over the last ``fraction`` of the steps.

    Returns ``(L̄_{T−k} − L̄_T) / L̄_{T−k}`` with ``T`` the number of steps and
    ``k = max(1, round(fraction · T))``: 0 on a plateau, 1 when the loss was
    still dropping to zero.
    """
    values = np.asarray(losses, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"losses: expected shape (seeds, steps) with steps >= 2, got {values.shape}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction: expected a number in (0, 1), got {fraction!r}")
    mean = values.mean(axis=0)
    k = max(1, round(fraction * mean.size))
    return float((mean[-1 - k] - mean[-1]) / mean[-1 - k])


#: The protocol of the book's comparison (chapter 14's first comparison), fixed once for every form and task:
#: plain-MLP reference width ``m₀`` of the budget (:func:`plain_budget`), full-batch Adam steps and learning
#: rate, the earlier checkpoint, the seeds, and one torch thread (small kernels; no oversubscription).
PROTOCOL: dict[str, object] = {
    "reference_width": 32,
    "steps": 200,
    "lr": 1e-2,
    "checkpoints": (50,),
    "seeds": (0, 1, 2, 3, 4),
    "threads": 1,
}
