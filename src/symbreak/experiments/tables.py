"""The comparison as table text (chapters 14–15): intervals, summaries, budgets, differences, readings, verdicts."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from symbreak.experiments.models import _form
from symbreak.experiments.runner import Result
from symbreak.experiments.statistics import summarise, welch_difference

__all__ = [
    "interval_text",
    "summary_rows",
    "budget_rows",
    "difference_rows",
    "pair_readings",
    "form_verdicts",
    "symmetrised_keeps",
    "exchange_groups",
]


def interval_text(mean: float, half: float, fmt: str = ".3f", scale: float = 1.0, suffix: str = "") -> str:
    """``"{scale·mean} ± {scale·half}{suffix}"``, both numbers formatted by ``fmt``.

    A ``+`` in ``fmt`` signs the mean only; a mean that rounds to zero is shown
    as zero, without the sign of a negative rounding error (``-0.000``).  A
    half-width that rounds to zero in a fixed-point ``fmt`` is shown as a bound,
    one unit of the last place shown: ``"0.1849 ± < 0.0001"``, not ``"± 0.0000"``; if the mean rounds to
    zero as well (and ``fmt`` has no ``+``), the whole interval lies within that unit of zero and the cell is
    that bound alone, ``"< 0.01"``.
    """
    text = f"{scale * mean:{fmt}}"
    if float(text) == 0:
        text = f"{0.0:{fmt}}"
    spread = f"{scale * half:{fmt.replace('+', '')}}"
    fixed = re.fullmatch(r"\+?\.(\d+)f", fmt)
    if fixed and float(spread) == 0:
        spread = f"< {10.0 ** -int(fixed.group(1)):.{fixed.group(1)}f}"
        if float(text) == 0 and "+" not in fmt:
            return f"{spread}{suffix}"
    return f"{text} ± {spread}{suffix}"


def summary_rows(
    results: Sequence[Result],
    tasks: Sequence[str],
    forms: Sequence[str],
    field: str = "test_metric",
    formats: dict[str, tuple[str, float, str]] | None = None,
    level: float = 0.95,
) -> list[list[str]]:
    """One row per form: its name, then ``mean ± half-width`` of ``field`` on each task (:func:`summarise`).

    ``formats[task] = (fmt, scale, suffix)`` formats a task's cells with
    :func:`interval_text` (default ``(".3f", 1.0, "")``); a (task, form) without
    values (the swap test of a standard MLP) reads ``—``.
    """
    summary = summarise(results, field, level)
    formats = formats or {}
    rows = []
    for form in forms:
        row = [form]
        for task in tasks:
            if (task, form) in summary:
                mean, half, _ = summary[(task, form)]
                row.append(interval_text(mean, half, *formats.get(task, (".3f", 1.0, ""))))
            else:
                row.append("—")
        rows.append(row)
    return rows


def budget_rows(results: Sequence[Result], tasks: Sequence[str], forms: Sequence[str]) -> list[list[str]]:
    """One row per form: its name, then the hidden width ``m`` and the model's parameter count on each task."""
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for r in results:
        seen.setdefault((r.task, r.form), (r.width, r.parameters))
    rows = []
    for form in forms:
        row = [form]
        for task in tasks:
            if (task, form) not in seen:
                raise ValueError(f"results: expected a result for ({task!r}, {form!r}), found none")
            m, p = seen[(task, form)]
            row += [str(m), f"{p:,}"]
        rows.append(row)
    return rows


def difference_rows(
    results: Sequence[Result],
    tasks: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    fmt: str = "+.3f",
    field: str = "test_metric",
    scale: float = 1.0,
    level: float = 0.95,
) -> list[list[str]]:
    """One row per pair ``(a, b)``: ``"a − b"``, then :func:`welch_difference` on each task as ``"Δ ± half"``."""
    rows = []
    for form_a, form_b in pairs:
        row = [f"{form_a} − {form_b}"]
        for task in tasks:
            diff, half, _ = welch_difference(results, task, form_a, form_b, field, level)
            row.append(f"{scale * diff:{fmt}} ± {scale * half:{fmt.lstrip('+')}}")
        rows.append(row)
    return rows


def pair_readings(
    results: Sequence[Result],
    task: str,
    pairs: Sequence[tuple[str, str]],
    field: str = "test_metric",
    level: float = 0.95,
) -> list[str]:
    """One reading per pair ``(a, b)`` of Welch's interval ``Δ ± h`` of ``Δ = v̄_a − v̄_b`` (:func:`welch_difference`).

    ``"a < b"`` when the whole interval lies below 0 (``Δ + h < 0``: ``a`` is
    better), ``"a > b"`` when it lies above 0 (``Δ − h > 0``), and ``"a ~ b"``
    when it contains 0 (the runs cannot tell the two apart).
    """
    readings = []
    for form_a, form_b in pairs:
        diff, half, _ = welch_difference(results, task, form_a, form_b, field, level)
        sign = "<" if diff + half < 0 else ">" if diff - half > 0 else "~"
        readings.append(f"{form_a} {sign} {form_b}")
    return readings


def form_verdicts(form: str, symmetries: Sequence[str] = ("exchange", "scale_pos", "parity")) -> dict[str, bool | None]:
    """Which of ``symmetries`` the block of ``form`` keeps for all weights and inputs (:mod:`symbreak.verdicts`).

    A rank-1 block is the verdicts' ``"rank1"`` form, a rank-``R > 1`` block
    the ``"full"`` form (its scores are quadratic forms ``x W_j xᵀ``, for which
    the verdicts hold for every ``W_j``), a gated block ``"gated"`` and a plain
    MLP ``"kv"`` (which has no query: exchange and inverse scaling are ``None``);
    the symmetrised gated control is decided by :func:`symmetrised_keeps`.
    """
    from symbreak.verdicts import verdict

    kind, act, rank = _form(form)
    if kind == "symmetrised":
        return {s: symmetrised_keeps(s, act) for s in symmetries}
    table_form = {"kv": "kv", "gated": "gated", "bilinear": "rank1" if rank == 1 else "full"}[kind]
    return {s: verdict(table_form, s, act).holds for s in symmetries}


@functools.cache
def symmetrised_keeps(symmetry: str, activation: str) -> bool | None:
    """Whether the symmetrised gated unit ``h(a, b) = ½[σ(a) b + σ(b) a]`` keeps ``symmetry`` for all ``a, b``.

    The verdicts' table has no such form, so its cell is decided here the way the
    table decides the others: ``h' − h`` for the transformed factors
    (``exchange``: ``a ↔ b``; ``scale_pos``: ``a → α a``, ``b → b/α`` with ``α > 0``;
    ``parity``: ``(a, b) → (−a, −b)``) is 0 as sympy writes it, or is decided by
    :func:`symbreak.decide.decide_zero` (``None`` when undecided).  The exchange
    is kept for every σ: ``h(b, a)`` is ``h(a, b)`` with the two terms swapped.
    """
    import sympy as sp

    from symbreak.activations import resolve
    from symbreak.decide import decide_zero

    a, b = sp.symbols("a b", real=True)
    alpha = sp.Symbol("alpha", positive=True)
    s = resolve(activation).sym

    def h(u, w):
        return (s(u) * w + s(w) * u) / 2

    after = {"exchange": h(b, a), "scale_pos": h(alpha * a, b / alpha), "parity": h(-a, -b)}
    if symmetry not in after:
        raise ValueError(f"symmetry: expected one of {list(after)}, got {symmetry!r}")
    expr = after[symmetry] - h(a, b)
    if expr == 0:
        return True
    return decide_zero(expr, (a, b, alpha) if symmetry == "scale_pos" else (a, b)).holds


def exchange_groups(forms: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(symmetric, gated)``: the ``forms`` whose block keeps the exchange ``q_j ↔ k_j`` for all weights, and the rest
    that have a query and a key (:func:`form_verdicts`); standard MLPs, which have no query, are in neither. Order kept.
    """
    if isinstance(forms, str):
        raise TypeError(f"forms: expected a sequence of form names, got the str {forms!r}")
    verdicts = {form: form_verdicts(form)["exchange"] for form in forms}
    return [f for f in forms if verdicts[f] is True], [f for f in forms if verdicts[f] is False]
