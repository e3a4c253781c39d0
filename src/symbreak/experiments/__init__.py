"""The parameter-matched comparison of the forms (E5): tasks, models, runner, checks and statistics.

Every model is ``f(x) = x Sᵀ + c + block(x)``: the **same** affine skip path
``S ∈ R^{d_out×d}``, ``c ∈ R^{d_out}`` for every form, plus the form's block,
whose hidden width is matched to a common parameter budget.  Training is
full-batch Adam for a fixed number of steps from a seeded initialisation: the
same configuration gives the same numbers, bit for bit.

This package re-exports every public name of its modules, which import only
:mod:`symbreak.layers`, :mod:`symbreak.symmetry`, :mod:`symbreak.numerics`,
:mod:`symbreak.verdicts` and, of each other, only the modules listed above them:

* :mod:`.tasks` — ``TASKS``, ``Task``, ``make_task``, the digits' dropped pixels, the digits split of a seed
  (``make_digits_split``) and the odd target's parts and error floor;
* :mod:`.models` — ``FORMS``, ``PRIMARY``, ``EXPLORATORY``, ``MATCHED_PAIRS``, ``Model``, ``make_model`` and the
  widths at a common budget;
* :mod:`.runner` — measuring one trained model: ``Result``, the swap test (``exchanged``,
  ``relative_swap_change``), its rounding ratio and the training error;
* :mod:`.statistics` — ``summarise``, ``welch_difference`` and ``ranking`` over seeds; standard errors
  of a mean, a proportion and a ratio of sums (the delta method);
* :mod:`.seeds` — seeds trained together: ``train_seeds``, ``compare_seeds``, ``Comparison``,
  ``torch_threads``, ``final_decrease`` and the book's ``PROTOCOL``;
* :mod:`.readings` — verdict words from the statistics: ``pair_tests`` (``PairTest``; primary families
  Holm-corrected), ``words_of``, ``better_than_all``;
* :mod:`.tables` — table text: ``interval_text``, ``summary_rows``, ``budget_rows``, ``difference_rows``,
  ``pair_readings``, ``form_verdicts``, ``symmetrised_keeps``, ``exchange_groups``;
* :mod:`.checks` — the checks on a comparison's trained models: ``swap_check`` (``SwapCheck``),
  ``swap_effects``, ``training_errors``;
* :mod:`.lowrank` — the low-rank task of chapter 14: ``LOWRANK_TASKS``, ``make_lowrank_task``, its floor
  (``rank_floor``, ``span_floor``, ``block_floor``, ``second_chaos``) and ``least_squares_error``;
* :mod:`.records` — run records on disk: ``write_record`` (atomic JSON), ``versions``, ``commit``, ``digest``;
* :mod:`.digits` — the digits runs of chapter 15: a trained block's checks within rounding (``run_checks``) and
  the swap check over stored runs (``stored_swap_check``);
* :mod:`.sweep` — ``make experiments-small`` and ``make experiments-digits``: the resumable small-task sweeps
  through joblib (``SMALL``, ``DIGITS``, ``run_small``, ``load_small``, ``chosen_rates``, ``results_at``); imported
  by name, not re-exported here, as are the helpers of :mod:`.records` and :mod:`.digits`.
"""

from __future__ import annotations

from symbreak.experiments.checks import SwapCheck, swap_check, swap_effects, training_errors
from symbreak.experiments.lowrank import (
    LOWRANK_TASKS,
    block_floor,
    least_squares_error,
    make_lowrank_task,
    rank_floor,
    second_chaos,
    span_floor,
)
from symbreak.experiments.models import (
    EXPLORATORY,
    FORMS,
    MATCHED_PAIRS,
    PRIMARY,
    Model,
    make_model,
    plain_budget,
    width_for_budget,
)
from symbreak.experiments.readings import PairTest, better_than_all, pair_tests, words_of
from symbreak.experiments.runner import Result, exchanged, relative_swap_change, swap_rounding_ratio, training_error
from symbreak.experiments.seeds import PROTOCOL, Comparison, compare_seeds, final_decrease, torch_threads, train_seeds
from symbreak.experiments.statistics import (
    Welch,
    binomial_standard_error,
    holm,
    mean_standard_error,
    ranking,
    ratio_standard_error,
    reading,
    summarise,
    welch,
    welch_difference,
)
from symbreak.experiments.tables import (
    budget_rows,
    difference_rows,
    exchange_groups,
    form_verdicts,
    interval_text,
    pair_readings,
    summary_rows,
    symmetrised_keeps,
)
from symbreak.experiments.tasks import (
    DIGITS_STD_FLOOR,
    TASKS,
    Task,
    digits_dropped,
    make_digits_split,
    make_task,
    odd_target_floor,
    odd_target_parts,
)

__all__ = [
    "LOWRANK_TASKS",
    "make_lowrank_task",
    "rank_floor",
    "span_floor",
    "block_floor",
    "second_chaos",
    "least_squares_error",
    "FORMS",
    "PRIMARY",
    "EXPLORATORY",
    "MATCHED_PAIRS",
    "PairTest",
    "pair_tests",
    "words_of",
    "better_than_all",
    "exchanged",
    "relative_swap_change",
    "symmetrised_keeps",
    "DIGITS_STD_FLOOR",
    "digits_dropped",
    "make_digits_split",
    "TASKS",
    "Task",
    "Model",
    "Result",
    "width_for_budget",
    "make_task",
    "make_model",
    "summarise",
    "plain_budget",
    "train_seeds",
    "Comparison",
    "compare_seeds",
    "torch_threads",
    "final_decrease",
    "swap_rounding_ratio",
    "interval_text",
    "summary_rows",
    "budget_rows",
    "PROTOCOL",
    "welch_difference",
    "Welch",
    "welch",
    "holm",
    "reading",
    "ranking",
    "difference_rows",
    "pair_readings",
    "form_verdicts",
    "exchange_groups",
    "odd_target_parts",
    "odd_target_floor",
    "training_error",
    "SwapCheck",
    "swap_check",
    "swap_effects",
    "training_errors",
    "mean_standard_error",
    "binomial_standard_error",
    "ratio_standard_error",
]
