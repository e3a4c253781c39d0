"""Verdict words from the statistics (chapters 14–15): the primary comparisons Holm-corrected, the rest exploratory.

A comparison of two forms ``a, b`` on a task is Welch's interval and test of
``Δ = v̄_a − v̄_b`` over their seeds (:func:`symbreak.experiments.statistics.welch`).
Its word is :func:`~symbreak.experiments.statistics.reading` of the p-value:
``"better"`` (``a`` lower), ``"worse"`` or ``"level"``.  For a *primary* family,
named before any result, the p-values are Holm-adjusted over the whole family
(every task and pair at once); an *exploratory* comparison reads its own p-value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symbreak.experiments.runner import Result
from symbreak.experiments.statistics import holm, reading, welch

__all__ = ["PairTest", "pair_tests", "words_of", "better_than_all"]


@dataclass(frozen=True)
class PairTest:
    """One comparison ``a − b`` of ``field`` on ``task``: Welch's ``difference ± half_width``, its ``p_value``,
    the Holm-adjusted ``p_adjusted`` (``None`` for an exploratory comparison) and the verdict ``word``."""

    task: str
    a: str
    b: str
    difference: float
    half_width: float
    p_value: float
    p_adjusted: float | None
    word: str


def _values(results: Sequence[Result], task: str, form: str, field: str) -> list[float]:
    values = [getattr(r, field) for r in results if r.task == task and r.form == form]
    if len(values) < 2 or any(v is None for v in values):
        raise ValueError(f"results: expected at least 2 values of {field!r} for ({task!r}, {form!r}), got {values}")
    return values


def pair_tests(
    results: Sequence[Result],
    tasks: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    *,
    corrected: bool,
    field: str = "test_metric",
    second: str | None = None,
    alpha: float = 0.05,
) -> list[PairTest]:
    """Every ``(task, (a, b))`` compared, task by task in the order given (:class:`PairTest`).

    With ``corrected`` the family is every task and pair together, Holm-adjusted;
    otherwise each p-value is read alone (exploratory).  ``second`` names another
    field of ``b`` to compare with ``field`` of ``a`` (the swap test compares a
    form's relative change after training with the same form's at initialisation).
    """
    if isinstance(tasks, str) or not tasks or not pairs:
        raise ValueError(f"tasks, pairs: expected non-empty sequences, got {tasks!r} and {pairs!r}")
    keys = [(task, a, b) for task in tasks for a, b in pairs]
    tests = [
        welch(_values(results, t, a, field), _values(results, t, b, second or field), level=1 - alpha)
        for t, a, b in keys
    ]
    adjusted = holm([w.p_value for w in tests]) if corrected else [None] * len(tests)
    return [
        PairTest(
            t,
            a,
            b,
            w.difference,
            w.half_width,
            w.p_value,
            q,
            reading(w.difference, w.p_value if q is None else q, alpha),
        )
        for (t, a, b), w, q in zip(keys, tests, adjusted, strict=True)
    ]


def words_of(tests: Sequence[PairTest], task: str) -> dict[tuple[str, str], str]:
    """``{(a, b): word}`` of the comparisons on ``task``."""
    found = {(t.a, t.b): t.word for t in tests if t.task == task}
    if not found:
        raise ValueError(f"task: expected a task of the tests, got {task!r}")
    return found


def better_than_all(
    results: Sequence[Result], task: str, form: str, others: Sequence[str], alpha: float = 0.05
) -> tuple[bool, list[str]]:
    """``(every, not_better)``: whether ``form`` is better than each of ``others`` on ``task``, and those it is not.

    "Better than all" is an intersection of one-sided claims: it is accepted only
    if every comparison's own Welch test rejects at ``alpha`` with ``a`` lower, so
    the claim as a whole errs with probability at most ``alpha`` without any
    correction for multiplicity (an intersection–union test).
    """
    if form in others:
        raise ValueError(f"others: expected forms other than {form!r}, got it among them")
    tests = pair_tests(results, [task], [(form, o) for o in others], corrected=False, alpha=alpha)
    failed = [t.b for t in tests if t.word != "better"]
    return not failed, failed
