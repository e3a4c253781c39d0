"""Statistics over seeds (E5): t-intervals of the means, Welch's interval of a difference, the ranking of forms."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from symbreak.experiments.runner import Result

__all__ = ["summarise", "welch_difference", "ranking"]


def summarise(results: Sequence[Result], field: str = "test_metric", level: float = 0.95) -> dict:
    """``{(task, form): (mean, half-width of the t-interval, n)}`` of ``field`` over seeds.

    The interval is ``mean ± t_{n−1, (1+level)/2} · s / √n``.
    """
    groups: dict[tuple[str, str], list[float]] = {}
    for r in results:
        value = getattr(r, field)
        if value is not None:
            groups.setdefault((r.task, r.form), []).append(value)
    out = {}
    for key, values in groups.items():
        v = np.asarray(values, dtype=float)
        n = len(v)
        half = float(stats.t.ppf((1 + level) / 2, n - 1) * v.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        out[key] = (float(v.mean()), half, n)
    return out


def welch_difference(
    results: Sequence[Result], task: str, form_a: str, form_b: str, field: str = "test_metric", level: float = 0.95
) -> tuple[float, float, float]:
    """``(mean_a − mean_b, half-width, ν)``: the difference of two forms' means of ``field`` on ``task``.

    The interval is Welch's: ``half = t_{ν, (1+level)/2} · √(s_a²/n_a + s_b²/n_b)`` with the
    Welch–Satterthwaite degrees of freedom
    ``ν = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))``.
    """
    samples = []
    for form in (form_a, form_b):
        values = [getattr(r, field) for r in results if r.task == task and r.form == form]
        if len(values) < 2 or any(v is None for v in values):
            raise ValueError(f"results: expected at least 2 values of {field!r} for ({task!r}, {form!r}), got {values}")
        samples.append(np.asarray(values, dtype=float))
    a, b = samples
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        return float(a.mean() - b.mean()), 0.0, float("inf")
    nu = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = float(stats.t.ppf((1 + level) / 2, nu) * math.sqrt(va + vb))
    return float(a.mean() - b.mean()), half, float(nu)


def ranking(results: Sequence[Result], task: str, forms: Sequence[str], field: str = "test_metric") -> list[str]:
    """The ``forms`` ordered by their mean ``field`` on ``task``, smallest (best) first."""
    summary = summarise(results, field)
    missing = [f for f in forms if (task, f) not in summary]
    if missing:
        raise ValueError(f"results: expected values of {field!r} on {task!r} for {missing}, found none")
    return sorted(forms, key=lambda f: summary[(task, f)][0])
