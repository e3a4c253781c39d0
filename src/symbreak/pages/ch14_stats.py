"""Chapters 14–15's verdicts from statistics: the primary comparisons (Holm), the exploratory ones, the swap test.

Each ``glue_*`` function glues one cell's tables and verdict phrases and returns
the text that cell prints; chapter 15 calls them with one task and its formats.
Every word glued (``better``, ``level``, ``worse``, ``smaller``, ``larger``) is
computed by :mod:`symbreak.experiments.readings`; nothing here is typed by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from symbreak.experiments import (
    EXPLORATORY,
    FORMS,
    PRIMARY,
    Comparison,
    PairTest,
    Result,
    better_than_all,
    exchange_groups,
    pair_tests,
    summary_rows,
)
from symbreak.pages.ch14_wording import only_for, over_tasks, per_task, phrase, task_said
from symbreak.plotting import FAMILY_COLOURS, SIGMA_LINESTYLES
from symbreak.prose import glue_all, glue_table, listed

__all__ = [
    "family_styles",
    "larger_after_training",
    "swap_summary",
    "glue_swap_summary",
    "glue_families",
    "glue_primary",
    "best_words",
    "glue_mlp_best",
    "glue_swap_baselines",
]

_SWAP_WORDS = {"better": "smaller", "worse": "larger", "level": "level"}


def _family(form: str) -> str:
    if form not in FORMS:
        raise ValueError(f"forms: expected names from {list(FORMS)}, got {form!r}")
    kind, act, rank = FORMS[form]
    if kind == "bilinear":
        return "symmetric" if rank == 1 else "rank R"
    if kind == "gated" and act == "identity":
        return "bilinear"
    return kind


def family_styles(forms: Sequence[str]) -> dict[str, tuple[str, object]]:
    """``{form: (colour, line style)}``: the family's colour (:data:`FAMILY_COLOURS`) and σ's line style
    (:data:`SIGMA_LINESTYLES`)."""
    return {form: (FAMILY_COLOURS[_family(form)], SIGMA_LINESTYLES[FORMS[form][1]]) for form in forms}


def _cell(test: PairTest, fmt: str, scale: float) -> list[str]:
    p = test.p_adjusted if test.p_adjusted is not None else test.p_value
    p_text = "< 0.001" if p < 0.001 else f"{p:.3f}"
    return [f"{scale * test.difference:{fmt}} ± {scale * test.half_width:{fmt.lstrip('+')}}", p_text, test.word]


def glue_families(
    final: Sequence[Result],
    task_names: Sequence[str],
    short: Mapping[str, str] | None = None,
    fmt: str = "+.3f",
    scale: float = 1.0,
    tables: str = "",
    keys: str = "",
) -> tuple[list[PairTest], list[PairTest], dict[str, object]]:
    """Glue ``<tables>primary-table`` (Holm over every task and primary pair), ``<tables>exploratory-table`` (each
    p-value alone), a row per pair and task (pair, Δ ± 95 %, p, verdict) grouped by task under a bold label row,
    ``<keys>n-primary`` and the phrases ``<keys><family><suffix>`` and
    ``<keys><form>-vs-bilinear<suffix>`` (suffix ``-<short task>``, none without ``short``); with ``short`` and more
    than one task also ``<keys><family>`` and ``<keys><form>-vs-bilinear``, those readings over the tasks, said
    once where every task reads the same (:func:`over_tasks`, :func:`per_task`).  Returns
    ``(primary tests, exploratory tests, the phrases)``."""
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    tests = pair_tests(final, task_names, primary, corrected=True)
    explore = pair_tests(final, task_names, EXPLORATORY, corrected=False)
    n = len(task_names)

    def rows(found: list[PairTest], pairs) -> list[list[str]]:
        # one row per pair and task, grouped by task under a bold label row (none with one task)
        out = []
        for t, task in enumerate(task_names):
            out += [[f"**{task}**", "", "", ""]] if n > 1 else []
            out += [[f"{a} − {b}", *_cell(found[t * len(pairs) + i], fmt, scale)] for i, (a, b) in enumerate(pairs)]
        return out

    def header(p_name: str) -> list[str]:
        return ["pair", "Δ ± 95 %", p_name, "verdict"]

    glue_table(f"{tables}primary-table", header("p (Holm)"), rows(tests, primary))
    glue_table(f"{tables}exploratory-table", header("p"), rows(explore, EXPLORATORY))
    values: dict[str, object] = {f"{keys}n-primary": len(tests)}
    said: dict[str, list[dict[str, str]]] = {family: [] for family in PRIMARY}  # each family's words, task by task
    for task in task_names:
        suffix = f"-{short[task]}" if short else ""
        for family, pairs in PRIMARY.items():
            words = {
                f"against {t.b}" if family == "P2" else f"for {t.a}": t.word
                for t in tests
                if t.task == task and (t.a, t.b) in pairs
            }
            said[family].append(words)
            values[f"{keys}{family.lower()}{suffix}"] = phrase(words)
        for t in explore:
            if t.task == task and t.b == "bilinear (σ = id)":
                values[f"{keys}{t.a.split()[0].lower()}-vs-bilinear{suffix}"] = t.word
    if short and n > 1:  # each family, and each exploratory reading against the bilinear layer, over the tasks
        places = [f"on {task_said(task)}" for task in task_names]
        for family in PRIMARY:
            values[f"{keys}{family.lower()}"] = over_tasks(said[family], places)
        for a in dict.fromkeys(t.a for t in explore if t.b == "bilinear (σ = id)"):
            key = f"{keys}{a.split()[0].lower()}-vs-bilinear"
            values[key] = per_task([values[f"{key}-{short[task]}"] for task in task_names], places)
    glue_all(values)
    return tests, explore, values


def glue_primary(
    comparison: Comparison,
    task_names: Sequence[str],
    short: Mapping[str, str] | None = None,
    fmt: str = "+.3f",
    scale: float = 1.0,
) -> str:
    """:func:`glue_families` after the last checkpoint, plus ``n-primary`` and the phrases ``p1-early<suffix>`` of the
    first checkpoint (each p-value alone); return every verdict, task by task."""
    points = sorted(comparison.results)
    final, early = comparison.results[points[-1]], comparison.results[points[0]]
    tests, explore, _ = glue_families(final, task_names, short, fmt, scale)
    primary = [p for pairs in PRIMARY.values() for p in pairs]
    explore_early = pair_tests(early, task_names, [*primary, *EXPLORATORY], corrected=False)
    values, lines = {}, []
    for task in task_names:
        suffix = f"-{short[task]}" if short else ""
        early_words = {f"for {t.a}": t.word for t in explore_early if t.task == task and (t.a, t.b) in PRIMARY["P1"]}
        values[f"p1-early{suffix}"] = phrase(early_words)
        lines.append(f"{task}, after {points[-1]} steps (primary, Holm over {len(tests)}):")
        lines += [f"   {t.a} − {t.b}: {t.word}" for t in tests if t.task == task]
        lines.append(f"{task}, exploratory:")
        lines += [f"   {t.a} − {t.b}: {t.word}" for t in explore if t.task == task]
    glue_all(values)
    return "\n".join(lines)


#: The form whose claim to be better than every other form :func:`glue_mlp_best` tests: Shazeer's baseline.
MLP_BEST = "MLP (GELU)"


def best_words(final: Sequence[Result], task: str, forms: Sequence[str], form: str = MLP_BEST) -> str:
    """Where ``form`` stands among ``forms`` on ``task``, as what follows "is": whether its mean error is the lowest,
    and the forms it is better than, level with and worse than (Welch, each at its own 5 % level; better than every
    one is an intersection–union test, which needs no correction).

    ``"the form with the lowest mean error, better than every other form except GLU (sigmoid), level with it"``.
    """
    others = [f for f in forms if f != form]
    if form not in forms or not others:
        raise ValueError(f"forms: expected {form!r} and at least one other form, got {list(forms)!r}")

    def mean(f: str) -> float:
        values = [r.test_metric for r in final if r.form == f and r.task == task]
        if not values:
            raise ValueError(f"final: no result of {f!r} on {task!r}")
        return sum(values) / len(values)

    means = {f: mean(f) for f in forms}
    lowest = min(forms, key=means.__getitem__)
    head = (
        "the form with the lowest mean error"
        if lowest == form
        else f"not the form with the lowest mean error, which {lowest} has"
    )
    every, _ = better_than_all(final, task, form, others)
    if every:
        return f"{head}, and better than every other form"
    tests = pair_tests(final, [task], [(form, f) for f in others], corrected=False)
    said = {w: [t.b for t in tests if t.word == w] for w in ("better", "level", "worse")}
    if not said["better"]:
        verdicts = [
            f"{w} {'with' if w == 'level' else 'than'} {listed(said[w])}" for w in ("level", "worse") if said[w]
        ]
        return f"{head}, better than no other form: " + ", ".join(verdicts)
    pronoun = "it" if len(said["level"]) + len(said["worse"]) == 1 else "them"
    if not said["worse"]:
        tail = f"level with {pronoun}"
    elif not said["level"]:
        tail = f"worse than {pronoun}"
    else:
        tail = f"level with {listed(said['level'])} and worse than {listed(said['worse'])}"
    return f"{head}, better than every other form except {listed(said['level'] + said['worse'])}, {tail}"


def glue_mlp_best(final: Sequence[Result], task: str, forms: Sequence[str], form: str = MLP_BEST) -> str:
    """Glue ``mlp-best``: :func:`best_words` of ``form``; return it."""
    text = best_words(final, task, forms, form)
    glue_all({"mlp-best": text})
    return f"{form}: {text}"


def glue_swap_baselines(
    final: Sequence[Result],
    task_names: Sequence[str],
    forms: Sequence[str],
    error_format: tuple[str, float, str] = (".3f", 1.0, ""),
    short: Mapping[str, str] | None = None,
    verdict: str = "swap-verdict",
) -> str:
    """Glue ``swap-table-<short task>`` (``swap-table`` without ``short``) and the gated forms' verdicts.

    Columns: the relative change ``‖B′ − B‖/‖B‖`` of the trained block under ``Q ↔ K``, the same at
    initialisation (same seeds), the test error of the trained, the swapped and the block-removed model (a unit
    in ``error_format``, such as ``" %"``, goes to these headers, not the cells).
    ``verdict`` (``swap-verdict``): the gated forms, over all tasks, whose change is larger after training.
    Phrases: ``swap-vs-init<suffix>`` (trained change against the change at initialisation: ``smaller``, ``level``,
    ``larger``) and ``swapped-vs-removed<suffix>`` (swapped error against the block-removed error), both exploratory
    Welch readings; ``swap-trained<suffix>`` and ``swap-init<suffix>``: the gated forms' ranges of the mean change.
    """
    symmetric, gated = exchange_groups(forms)
    larger: list[tuple[str, str]] = []
    with_query = [f for f in forms if f in symmetric or f in gated]
    swapped = [
        Result(
            r.task,
            r.form,
            r.seed,
            r.width,
            r.parameters,
            r.train_loss,
            r.test_metric + r.swap_change,
            None,
            skip_metric=r.skip_metric,
        )
        for r in final
        if r.swap_change is not None
    ]
    lines, values = [], {}
    unit = f" ({error_format[2].strip()})" if error_format[2].strip() else ""
    error_format = (*error_format[:2], "")  # the unit goes to the header, so that a cell does not break before it
    for task in task_names:
        suffix = f"-{short[task]}" if short else ""
        columns = [
            summary_rows(final, [task], with_query, field="swap_relative", formats={task: (".2f", 1.0, "")}),
            summary_rows(final, [task], with_query, field="init_swap_relative", formats={task: (".2f", 1.0, "")}),
            summary_rows(final, [task], with_query, formats={task: error_format}),
            summary_rows(swapped, [task], with_query, formats={task: error_format}),
            summary_rows(final, [task], with_query, field="skip_metric", formats={task: error_format}),
        ]
        rows = [[form, *[c[i][1] for c in columns]] for i, form in enumerate(with_query)]
        header = [
            "form",
            "change, trained",
            "change, initialisation",
            f"error{unit}",
            f"error, swapped{unit}",
            f"error, block removed{unit}",
        ]
        glue_table(f"swap-table{suffix}", header, rows)
        init = _trained_against_init(final, task, gated)
        removed = pair_tests(
            swapped, [task], [(f, f) for f in gated], corrected=False, field="test_metric", second="skip_metric"
        )
        trained_means = [float(row[1].split(" ± ")[0]) for row, f in zip(rows, with_query, strict=True) if f in gated]
        init_means = [float(row[2].split(" ± ")[0]) for row, f in zip(rows, with_query, strict=True) if f in gated]
        values |= {
            f"swap-vs-init{suffix}": phrase({f"for {t.a}": _SWAP_WORDS[t.word] for t in init}),
            f"swapped-vs-removed{suffix}": phrase({f"for {t.a}": _SWAP_WORDS[t.word] for t in removed}),
            f"swap-trained{suffix}": f"{min(trained_means):.2f} to {max(trained_means):.2f}",
            f"swap-init{suffix}": f"{min(init_means):.2f} to {max(init_means):.2f}",
        }
        larger += _larger(init)
        lines.append(f"{task}: trained against initialisation: " + values[f"swap-vs-init{suffix}"])
        lines.append(f"{task}: swapped against block removed: " + values[f"swapped-vs-removed{suffix}"])
    values[verdict] = swap_summary({"": (larger, task_names)})
    lines.append(values[verdict])
    glue_all(values)
    return "\n".join(lines)


_LARGER = "the change is larger after training than at initialisation"


def _trained_against_init(final: Sequence[Result], task: str, gated: Sequence[str]) -> list[PairTest]:
    """Welch's test (exploratory) of each gated form's swap change after training against the same blocks'
    change at initialisation, on ``task``."""
    pairs = [(f, f) for f in gated]
    return pair_tests(final, [task], pairs, corrected=False, field="swap_relative", second="init_swap_relative")


def _larger(tests: Sequence[PairTest]) -> list[tuple[str, str]]:
    return [(t.a, t.task) for t in tests if t.word == "worse"]  # "worse": the trained change is the larger


def larger_after_training(final: Sequence[Result], task_names: Sequence[str], forms: Sequence[str]):
    """The ``(form, task)`` pairs of the gated ``forms`` whose swap change is larger after training than at
    initialisation (Welch, exploratory, each at its own 5 % level), task by task."""
    gated = exchange_groups(forms)[1]
    return [pair for task in task_names for pair in _larger(_trained_against_init(final, task, gated))]


def swap_summary(found: Mapping[str, tuple[Sequence[tuple[str, str]], Sequence[str]]]) -> str:
    """The swap test against initialisation in one clause, over one or more comparisons.

    ``found``: ``{where: (pairs, task names)}``, ``where`` how the sentence names the comparison (``"in the first
    comparison"``; ``""`` for a single one) and ``pairs`` its :func:`larger_after_training`.  The verdict is said
    once: ``"the change is larger after training than at initialisation only for tanh gating, on every task of
    both comparisons"`` where each comparison finds the same forms on every one of its tasks, else one
    :func:`only_for` per comparison (``"for no gated form"`` where it finds none).
    """
    if not found:
        raise ValueError("found: expected at least one comparison, got none")
    forms = {where: list(dict.fromkeys(form for form, _ in pairs)) for where, (pairs, _) in found.items()}
    if not any(forms.values()):
        tail = "" if len(found) == 1 else f", {'in either comparison' if len(found) == 2 else 'in any comparison'}"
        return f"for no gated form is the change larger after training than at initialisation{tail}"
    if len(found) == 1:
        pairs, tasks = next(iter(found.values()))
        return f"{_LARGER} {only_for(pairs, tasks)}"
    everywhere = all(
        forms[where] == forms[next(iter(found))] and len(pairs) == len(forms[where]) * len(tasks) > 0
        for where, (pairs, tasks) in found.items()
    )
    if everywhere:
        both = "both comparisons" if len(found) == 2 else f"all {len(found)} comparisons"
        return f"{_LARGER} only for {listed(forms[next(iter(found))])}, on every task of {both}"
    clauses = {
        where: only_for(pairs, tasks) if pairs else "for no gated form" for where, (pairs, tasks) in found.items()
    }
    parts = [f"{clause}{',' if ',' in clause else ''} {where}" for where, clause in clauses.items()]
    return f"{_LARGER} " + "; ".join(parts)


def glue_swap_summary(key: str, found: Mapping[str, tuple[Sequence[Result], Sequence[str], Sequence[str]]]) -> str:
    """Glue ``key``: :func:`swap_summary` of the comparisons ``{where: (final results, task names, forms)}``;
    return it."""
    text = swap_summary(
        {where: (larger_after_training(final, tasks, forms), tasks) for where, (final, tasks, forms) in found.items()}
    )
    glue_all({key: text})
    return text
