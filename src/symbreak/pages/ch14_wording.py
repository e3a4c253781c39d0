"""Chapters 14–15's verdicts in words: readings grouped by form (``"better against ReGLU and GEGLU but level against
SwiGLU"``), per task and over tasks, the tasks as a sentence names them, and a
protocol's seeds (:func:`seed_list`, :func:`task_seed`).

The words themselves (``better``, ``level``, ``worse``, …) come from :mod:`symbreak.pages.ch14_stats`, which glues
the sentences these functions make.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symbreak.experiments import Task, make_task
from symbreak.prose import listed

__all__ = [
    "phrase",
    "TASK_SAID",
    "task_said",
    "per_task",
    "only_for",
    "over_tasks",
    "seed_list",
    "TASK_SEED",
    "task_seed",
]


def seed_list(seeds: Sequence[int]) -> str:
    """A protocol's seeds as a sentence names them: ``"0–4"`` for three or more consecutive integers, else a list
    (``"0 and 1"``, ``"0, 2 and 5"``)."""
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds: expected a non-empty sequence of int, got {seeds!r}")
    if len(seeds) >= 3 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}–{seeds[-1]}"
    return listed([str(s) for s in seeds])


#: The seed from which :func:`~symbreak.experiments.make_task`, called without one, draws the tokens and the teacher.
TASK_SEED: int = make_task.__kwdefaults__["seed"]


def task_seed(tasks: Sequence[Task]) -> int:
    """:data:`TASK_SEED`, the seed that drew the data and the teacher of every one of ``tasks`` (the same for every
    seed of a protocol, which draws the initialisation only); refuses tasks that :func:`make_task` does not give
    from it."""
    drawn = [make_task(t.name, n_train=len(t.X_train), n_test=len(t.X_test), d=t.d, seed=TASK_SEED) for t in tasks]
    if not all(t.X_train.equal(u.X_train) and t.Y_train.equal(u.Y_train) for t, u in zip(tasks, drawn, strict=True)):
        raise ValueError(f"tasks: expected make_task's tasks from seed {TASK_SEED}, got others")
    return TASK_SEED


def phrase(words: Mapping[str, str]) -> str:
    """``"worse for all three"`` when every key has the same word, else the keys grouped by their word, in the
    order each word first appears: ``"better against ReGLU and GEGLU but level against SwiGLU"``.

    The keys carry their preposition (``"for ReGLU"``, ``"against SwiGLU"``); a group keeps its first key's, and the
    uniform case too (``"level against all three"``).  Groups are separated by semicolons when one of them lists
    three or more forms, else by commas, and two groups by "but" (``"level for ReGLU, SwiGLU and GLU (sigmoid) but
    larger for tanh gating"``, ``"level for ReGLU; larger for SwiGLU and GLU (sigmoid); smaller for GEGLU"``).
    """
    if not words:
        raise ValueError("words: expected at least one form's word, got none")
    values = list(words.values())
    if len(set(values)) == 1:
        count = {1: "the one", 2: "both", 3: "all three"}.get(len(values), f"all {len(values)}")
        return f"{values[0]} {next(iter(words)).split()[0]} {count}"
    groups: dict[str, list[tuple[str, str]]] = {}
    for key, word in words.items():
        preposition, _, form = key.partition(" ")
        groups.setdefault(word, []).append((preposition, form))
    parts = [f"{word} {keys[0][0]} {listed([form for _, form in keys])}" for word, keys in groups.items()]
    if len(parts) == 2:  # no comma, which a sentence listing several such readings would use to separate them
        return " but ".join(parts)
    return ("; " if any(len(keys) > 2 for keys in groups.values()) else ", ").join(parts)


#: How a sentence names each task of chapters 14 and 15 (any other task: "the <name> task").
TASK_SAID: dict[str, str] = {
    "bilinear teacher": "the bilinear teacher",
    "odd target": "the odd target",
    "full-rank quadratic": "the full-rank quadratic task",
    "quadratic + odd": "the quadratic + odd task",
    "digits": "the digits",
}


def task_said(task: str) -> str:
    """How a sentence names ``task`` (:data:`TASK_SAID`)."""
    return TASK_SAID.get(task, f"the {task} task")


def per_task(values: Sequence[str], places: Sequence[str]) -> str:
    """One reading per task in words: ``"level on both tasks"`` where every value is the same, else
    ``"worse on the first task and level on the second"`` (``places``: ``"on the first task"``, ``"on the second"``),
    a reading of several groups after its place: ``"worse on the first task and on the second better for GEGLU but
    level for SwiGLU"``.
    """
    if len(values) != len(places) or not values:
        raise ValueError(f"values: expected one per place of {list(places)}, got {list(values)!r}")
    if len(set(values)) == 1 and len(values) > 1:
        return f"{values[0]} on {'both' if len(values) == 2 else f'all {len(values)}'} tasks"
    # a reading of several groups ("better against ReGLU but level against SwiGLU") after its place, so that the
    # place is not read as the last group's alone
    several = (" but ", ", ", "; ")
    pairs = zip(values, places, strict=True)
    return listed([f"{place} {v}" if any(s in v for s in several) else f"{v} {place}" for v, place in pairs])


def only_for(found: Sequence[tuple[str, str]], task_names: Sequence[str]) -> str:
    """``"only for tanh gating, on the bilinear teacher and the odd target"``: the forms of the ``(form, task)``
    pairs ``found``, each with the tasks it was found on (none named when there is one task)."""
    if not found:
        raise ValueError("found: expected at least one (form, task), got none")
    by_form: dict[str, list[str]] = {}
    for form, task in found:
        by_form.setdefault(form, []).append(task_said(task))
    if len(task_names) == 1:
        return "only for " + listed(list(by_form))
    if len(by_form) == 1:
        form, tasks = next(iter(by_form.items()))
        return f"only for {form}, on {listed(tasks)}"
    return "only for " + listed([f"{form} (on {listed(tasks)})" for form, tasks in by_form.items()])


def over_tasks(words: Sequence[Mapping[str, str]], places: Sequence[str]) -> str:
    """One family's readings over the tasks, said once where every task reads the same: ``"level for all three on
    both tasks"``, ``"level for GEGLU and SwiGLU on both tasks"`` (not ``"level for both on both tasks"``), else
    ``"worse for all three on the first task and level for all three on the second"`` (:func:`phrase` per task,
    ``places`` as in :func:`per_task`)."""
    words = [dict(w) for w in words]
    if len(words) != len(places) or not words:
        raise ValueError(f"words: expected one mapping per place of {list(places)}, got {len(words)}")
    if len(words) > 1 and all(w == words[0] for w in words):
        first = words[0]
        if len(first) == 2 and len(set(first.values())) == 1:  # "for both on both tasks" would say "both" twice
            preposition = next(iter(first)).split()[0]
            said = f"{next(iter(first.values()))} {preposition} {listed([k.partition(' ')[2] for k in first])}"
        else:
            said = phrase(first)
        return f"{said} on {'both' if len(words) == 2 else f'all {len(words)}'} tasks"
    return per_task([phrase(w) for w in words], places)
