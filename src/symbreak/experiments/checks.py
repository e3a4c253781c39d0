"""Checks on a comparison's trained models (chapters 14–15): the swap test within rounding, parity, training errors.

The statements checked are ``thm-exchange`` (a block that keeps the exchange
``q_j ↔ k_j`` computes the same function after ``Q ↔ K``, so the two outputs
differ by rounding only) and ``prop-parity`` (negating a token negates both
factors exactly, so an even block gives ``B(−X) = B(X)`` bit for bit). The
measurements run on one torch thread by default, the thread count of the book's
``PROTOCOL``, so that their rounding is that of the stored outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from symbreak.experiments.runner import Result, exchanged, swap_rounding_ratio, training_error
from symbreak.experiments.seeds import PROTOCOL, Comparison, torch_threads
from symbreak.experiments.statistics import summarise
from symbreak.experiments.tables import exchange_groups, form_verdicts
from symbreak.experiments.tasks import Task
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

__all__ = ["SwapCheck", "swap_check", "swap_effects", "training_errors"]


@dataclass(frozen=True)
class SwapCheck:
    """What :func:`swap_check` measured on the trained blocks of a comparison.

    For a block ``B`` with query ``Q`` and key ``K``, ``B'`` is the block with
    ``Q ↔ K`` exchanged and its ratio is ``max |B'(X) − B(X)| / (β_B(X) + β_{B'}(X))``
    on the task's test tokens ``X`` (:func:`symbreak.experiments.runner.swap_rounding_ratio`).

    * ``n_symmetric`` — how many trained blocks keep the exchange symmetry, symmetrised controls excluded;
    * ``symmetric_ratio`` — the largest ratio of those (at most 1 by ``thm-exchange``);
    * ``n_controls``, ``controls_unchanged`` — how many trained blocks are symmetrised gated controls, and
      whether each computes, on the test tokens, the same floating-point numbers after ``Q ↔ K``
      (``prop-symmetrised-exchange``: the two products are swapped and added in one rounding);
    * ``gated_ratio`` — the smallest ratio of the gated blocks;
    * ``even`` — whether every block that is even by ``prop-parity`` has ``B(−X) = B(X)`` bit for bit;
    * ``largest_swap`` — the largest ``|err(swapped) − err(trained)|`` of an exchange-symmetric model
      after the last checkpoint.
    """

    n_symmetric: int
    symmetric_ratio: float
    gated_ratio: float
    even: bool
    n_controls: int
    controls_unchanged: bool
    largest_swap: float


def _tasks_by_name(comparison: Comparison, tasks: Sequence[Task]) -> dict[str, Task]:
    if not isinstance(comparison, Comparison):
        raise TypeError(f"comparison: expected a Comparison, got {type(comparison).__name__}")
    if isinstance(tasks, Task) or not all(isinstance(t, Task) for t in tasks):
        raise TypeError(f"tasks: expected a sequence of Task, got {tasks!r:.80}")
    by_name = {task.name: task for task in tasks}
    missing = sorted({key[0] for key in comparison.models} - set(by_name))
    if missing:
        raise ValueError(f"tasks: expected every task of the comparison, got none named {missing}")
    return by_name


def swap_check(comparison: Comparison, tasks: Sequence[Task], threads: int | None = PROTOCOL["threads"]) -> SwapCheck:
    """Exchange ``Q ↔ K`` in each trained block of ``comparison``; compare with the rounding bound (:class:`SwapCheck`).

    Each model is measured on the test tokens of its task in ``tasks``, under
    ``threads`` torch threads (:func:`torch_threads`). Which forms keep the
    exchange, and which are even, is decided by :func:`form_verdicts`.
    """
    by_name = _tasks_by_name(comparison, tasks)
    forms = list(dict.fromkeys(key[1] for key in comparison.models))
    symmetric, gated = exchange_groups(forms)
    if not symmetric or not gated:
        raise ValueError(f"comparison: expected exchange-symmetric and gated forms, got {forms}")
    even_forms = [f for f in forms if form_verdicts(f, ("parity",))["parity"]]
    with torch_threads(threads), torch.no_grad():
        ratios = {
            key: swap_rounding_ratio(model, by_name[key[0]].X_test)
            for key, model in comparison.models.items()
            if key[1] in symmetric + gated and not isinstance(model.block, SymmetrisedGatedMLP)
        }
        controls = [
            (model.block, by_name[key[0]].X_test)
            for key, model in comparison.models.items()
            if isinstance(model.block, SymmetrisedGatedMLP)
        ]
        controls_unchanged = all(torch.equal(exchanged(block)(X), block(X)) for block, X in controls)
        even = all(
            torch.equal(model.block(-by_name[key[0]].X_test), model.block(by_name[key[0]].X_test))
            for key, model in comparison.models.items()
            if key[1] in even_forms
        )
    final = comparison.results[max(comparison.results)]
    return SwapCheck(
        n_symmetric=sum(key[1] in symmetric for key in ratios),
        symmetric_ratio=max(r for key, r in ratios.items() if key[1] in symmetric),
        gated_ratio=min(r for key, r in ratios.items() if key[1] in gated),
        even=even,
        n_controls=len(controls),
        controls_unchanged=controls_unchanged,
        largest_swap=max(abs(r.swap_change) for r in final if r.form in symmetric),
    )


def swap_effects(results: Sequence[Result], task: str, forms: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``{form: (s̄, s̄ / ē)}``: the mean swap change ``s̄ = mean(err(swapped) − err(trained))`` over the seeds of
    ``form`` on ``task``, and its ratio to the form's mean test error ``ē`` (:func:`summarise`).
    """
    swap, test = summarise(results, "swap_change"), summarise(results)
    missing = [f for f in forms if (task, f) not in swap]
    if missing:
        raise ValueError(f"forms: expected forms with a swap test on {task!r}, got {missing} without one")
    return {f: (swap[(task, f)][0], swap[(task, f)][0] / test[(task, f)][0]) for f in forms}


def training_errors(
    comparison: Comparison, tasks: Sequence[Task], threads: int | None = PROTOCOL["threads"]
) -> dict[tuple[str, str, int], float]:
    """``{(task, form, seed): error}``: each trained model's error on its own training set (:func:`training_error`)."""
    by_name = _tasks_by_name(comparison, tasks)
    with torch_threads(threads):
        return {key: training_error(model, by_name[key[0]]) for key, model in comparison.models.items()}
