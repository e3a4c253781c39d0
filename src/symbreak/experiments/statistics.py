"""Statistics of measurements: t-intervals over seeds, Welch's difference, rankings and standard errors.

* over seeds (E5): :func:`summarise`, :func:`welch_difference`, :func:`ranking`;
* of two samples: :func:`welch` (Welch's interval and test of a difference of
  means) and, over a family of tests, :func:`holm` (Holm's step-down
  adjustment of their p-values) and :func:`reading` (the verdict word);
* of one sample (the Monte Carlo checks of Part III): :func:`mean_standard_error`
  of a mean, :func:`binomial_standard_error` of a proportion and
  :func:`ratio_standard_error` of a ratio of two sums (the delta method).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch
from scipy import stats

from symbreak.experiments.runner import Result

__all__ = [
    "Welch",
    "welch",
    "holm",
    "reading",
    "summarise",
    "welch_difference",
    "ranking",
    "mean_standard_error",
    "binomial_standard_error",
    "ratio_standard_error",
]


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
        samples.append(values)
    w = welch(*samples, level=level)
    return w.difference, w.half_width, w.dof


class Welch(NamedTuple):
    """Welch's comparison of two means: ``difference`` ā − b̄, the interval's ``half_width``, ``dof`` ν, ``p_value``."""

    difference: float
    half_width: float
    dof: float
    p_value: float


def welch(a, b, level: float = 0.95) -> Welch:
    """Welch's interval and two-sided test of ``mean(a) − mean(b)`` for two independent samples of at least 2 each.

    With ``u = s_a²/n_a + s_b²/n_b``, ``ν = u² / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))``
    (Welch–Satterthwaite), the interval is ``Δ ± t_{ν, (1+level)/2} · √u`` and
    ``p = 2 · P(T_ν > |Δ| / √u)``; so ``p < 1 − level`` exactly when the
    interval excludes 0.  Two constant samples give ``half_width = 0``,
    ``ν = ∞`` and ``p`` = 1 for equal means, 0 otherwise.
    """
    x, y = _sample("a", a, 2).numpy(), _sample("b", b, 2).numpy()
    if not 0 < level < 1:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    diff = float(x.mean() - y.mean())
    if va + vb == 0:
        return Welch(diff, 0.0, float("inf"), 1.0 if diff == 0 else 0.0)
    nu = float((va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1)))
    se = math.sqrt(va + vb)
    return Welch(diff, float(stats.t.ppf((1 + level) / 2, nu) * se), nu, float(2 * stats.t.sf(abs(diff) / se, nu)))


def holm(p_values) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (Holm 1979).

    With the ``m`` p-values sorted, ``p_(1) ≤ … ≤ p_(m)``, the adjusted value of
    ``p_(i)`` is ``max_{j ≤ i} min(1, (m − j + 1) p_(j))``.  Rejecting every
    hypothesis whose adjusted value is below ``α`` keeps the probability of
    any false rejection in the family at most ``α``, whatever the dependence
    between the tests.
    """
    values = [float(p) for p in _sample("p_values", p_values, 1)]
    if any(not 0 <= p <= 1 for p in values):
        raise ValueError(f"p_values: expected probabilities in [0, 1], got {values}")
    m, order = len(values), sorted(range(len(values)), key=lambda i: values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[i]))
        adjusted[i] = running
    return adjusted


def reading(difference: float, p_value: float, alpha: float = 0.05) -> str:
    """The verdict on a difference of losses ``a − b``: ``"better"`` (``a`` lower), ``"worse"`` or ``"level"``.

    ``"better"``/``"worse"`` when ``p_value < alpha`` (for Welch's test: when
    the ``1 − alpha`` interval excludes 0), by the sign of ``difference``;
    ``"level"`` otherwise — no measurable difference at this number of seeds.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a number in (0, 1), got {alpha!r}")
    if not 0 <= p_value <= 1:
        raise ValueError(f"p_value: expected a probability in [0, 1], got {p_value!r}")
    if p_value >= alpha:
        return "level"
    return "better" if difference < 0 else "worse"


def ranking(results: Sequence[Result], task: str, forms: Sequence[str], field: str = "test_metric") -> list[str]:
    """The ``forms`` ordered by their mean ``field`` on ``task``, smallest (best) first."""
    summary = summarise(results, field)
    missing = [f for f in forms if (task, f) not in summary]
    if missing:
        raise ValueError(f"results: expected values of {field!r} on {task!r} for {missing}, found none")
    return sorted(forms, key=lambda f: summary[(task, f)][0])


def _sample(name: str, values, minimum: int) -> torch.Tensor:
    """``values`` as a flat float64 tensor of at least ``minimum`` finite entries, or a clear error."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (torch.Tensor, np.ndarray, Sequence)):
        raise TypeError(f"{name}: expected a tensor, array or sequence of real numbers, got {type(values).__name__}")
    sample = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
    if sample.numel() < minimum:
        raise ValueError(f"{name}: expected at least {minimum} values, got {sample.numel()}")
    if not bool(torch.isfinite(sample).all()):
        raise ValueError(f"{name}: expected finite values, got a NaN or an infinity")
    return sample


def mean_standard_error(sample) -> tuple[float, float]:
    """``(mean, s/√n)``: the mean of ``n`` independent draws and its standard error.

    ``s² = Σ (X_i − X̄)² / (n − 1)`` is the sample variance; by the central limit
    theorem ``X̄`` lies within ``k · s/√n`` of the expectation except with
    probability about ``P(|N(0, 1)| > k)``.
    """
    values = _sample("sample", sample, 2)
    return values.mean().item(), (values.std() / math.sqrt(values.numel())).item()


def binomial_standard_error(p: float, n: int) -> float:
    """``√(p (1 − p) / n)``: the standard error of the share of successes in ``n`` draws of probability ``p``."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise ValueError(f"p: expected a probability in [0, 1], got {p!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    return math.sqrt(p * (1 - p) / n)


def ratio_standard_error(numerators, denominators) -> tuple[float, float]:
    """``(R̂, se)``: the ratio of two sums ``R̂ = Σ_i C_i / Σ_i F_i`` over independent pairs, and its standard error.

    By the delta method, ``se = (Σ_i (C_i − R̂ F_i)²)^{1/2} / Σ_i F_i``: ``R̂ − R``
    is to first order ``Σ_i (C_i − R F_i) / Σ_i F_i``, a sum of independent terms
    of mean zero.  In chapter 6, ``C_i = ‖f'(x_i) − f(x_i)‖²`` and
    ``F_i = ‖f(x_i)‖²`` for a gated layer ``f`` and its exchange ``f'``, so
    ``R̂`` is the squared relative output change.
    """
    C, F = _sample("numerators", numerators, 2), _sample("denominators", denominators, 2)
    if C.shape != F.shape:
        raise ValueError(f"numerators, denominators: expected as many of each, got {C.numel()} and {F.numel()}")
    total = F.sum()
    if not total > 0:
        raise ValueError(f"denominators: expected a positive sum, got {total.item()}")
    ratio = C.sum() / total
    return ratio.item(), ((C - ratio * F).pow(2).sum().sqrt() / total).item()
