"""The language-model comparison from stored results: per-form summaries, the primary contrasts with Holm, Shazeer.

Every number of chapter 16 is computed here from the stored results
(:func:`symbreak.language.results.load_results`, which has already refused
any run made under another run configuration):

* :func:`main_runs` — per form, the ``main`` runs at the learning rate the
  sweep chose (:func:`~symbreak.language.results.best_learning_rates`);
* :func:`form_summaries` — per form the mean final validation and test loss
  over seeds with 95 % t-intervals, and Welch's comparison of its test loss
  with the baseline's (exploratory: no multiplicity correction);
* :func:`primary_results` — the contrasts of
  ``PRIMARY_CONTRASTS`` of :mod:`symbreak.language.protocol` on the test loss, with
  Holm's adjusted p-values over the family and the verdict at α = 0.05;
* :func:`sweep_grid` — the final validation loss of every form at every swept rate;
* :func:`mean_curves` — the mean validation curve of each form's ``main`` runs;
* :func:`shazeer_rows` — Shazeer's Table 1 beside the same forms here: the
  direction of each form's difference from the ReLU MLP in both.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from symbreak.experiments.statistics import Welch, holm, reading, welch
from symbreak.language.protocol import BASELINE, PRIMARY_CONTRASTS, Contrast, FormSpec, Protocol
from symbreak.language.reference import SHAZEER_BASELINE, SHAZEER_TABLE_1, ShazeerRow
from symbreak.language.results import best_learning_rates, missing_runs

__all__ = [
    "ALPHA",
    "main_runs",
    "final_losses",
    "Interval",
    "FormSummary",
    "form_summaries",
    "ContrastResult",
    "primary_results",
    "sweep_grid",
    "mean_curves",
    "ShazeerComparison",
    "shazeer_rows",
]

#: The level of every test: a family-wise error rate for the primary contrasts, a per-comparison one otherwise.
ALPHA = 0.05


def _check(records: object, protocol: object) -> list[dict]:
    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol: expected a Protocol, got {type(protocol).__name__}")
    if isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise TypeError(f"records: expected a list of stored results, got {type(records).__name__}")
    return list(records)


def main_runs(records: list[dict], protocol: Protocol) -> dict[str, list[dict]]:
    """``{form key: main runs at the chosen rate, by seed}``; a ``ValueError`` names the first missing run."""
    records = _check(records, protocol)
    chosen = best_learning_rates([r for r in records if r["stage"] == "lr-sweep"], protocol)
    main = [r for r in records if r["stage"] == "main"]
    missing = missing_runs(main, protocol, "main", chosen)
    if missing:
        raise ValueError(
            f"records: expected every main run at the chosen rates, missing {len(missing)}, e.g. "
            f"{missing[0].filename}; run make experiments-main"
        )
    return {
        f.key: sorted(
            (r for r in main if r["form_key"] == f.key and r["learning_rate"] == chosen[f.key]),
            key=lambda r: r["seed"],
        )
        for f in protocol.forms
    }


def final_losses(runs: list[dict], field: str) -> list[float]:
    """The final ``field`` loss (``"validation"`` or ``"test"``) of each run; a diverged run counts as ``inf``."""
    if field not in ("validation", "test"):
        raise ValueError(f"field: expected 'validation' or 'test', got {field!r}")
    out = []
    for r in runs:
        value = r["final"][field]
        out.append(math.inf if value is None or not math.isfinite(value) else float(value))
    return out


class Interval(NamedTuple):
    """A mean over seeds and the half-width of its 95 % t-interval ``t_{n−1, 0.975} · s / √n``."""

    mean: float
    half_width: float


def _interval(values: list[float]) -> Interval:
    from scipy import stats

    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Interval(mean, math.nan)
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return Interval(mean, float(stats.t.ppf(0.975, n - 1)) * s / math.sqrt(n))


class FormSummary(NamedTuple):
    """One form's row: rate, seeds, validation and test losses, Welch's test-loss difference from the baseline."""

    form: FormSpec
    learning_rate: float
    n: int
    validation: Interval
    test: Interval
    versus_baseline: Welch | None  # None for the baseline itself
    reading: str | None


def form_summaries(records: list[dict], protocol: Protocol, baseline: str = BASELINE) -> list[FormSummary]:
    """Per form (protocol order): the summary of its ``main`` runs; the comparison is exploratory (uncorrected)."""
    runs = main_runs(records, protocol)
    protocol.form(baseline)  # checks the key
    base = final_losses(runs[baseline], "test")
    out = []
    for form in protocol.forms:
        rs = runs[form.key]
        test = final_losses(rs, "test")
        versus = None if form.key == baseline else welch(test, base)
        out.append(
            FormSummary(
                form,
                rs[0]["learning_rate"],
                len(rs),
                _interval(final_losses(rs, "validation")),
                _interval(test),
                versus,
                None if versus is None else reading(versus.difference, versus.p_value, ALPHA),
            )
        )
    return out


class ContrastResult(NamedTuple):
    """A primary contrast: Welch's comparison of the test losses, Holm's adjusted p-value and the verdict."""

    contrast: Contrast
    welch: Welch
    p_holm: float
    reading: str


def primary_results(
    records: list[dict], protocol: Protocol, contrasts: tuple[Contrast, ...] = PRIMARY_CONTRASTS
) -> list[ContrastResult]:
    """The ``contrasts`` on the test loss, Holm-adjusted over the family; ``"better"``: ``a`` has the lower loss."""
    runs = main_runs(records, protocol)
    for c in contrasts:
        protocol.form(c.a), protocol.form(c.b)
    tests = [welch(final_losses(runs[c.a], "test"), final_losses(runs[c.b], "test")) for c in contrasts]
    adjusted = holm([w.p_value for w in tests])
    return [
        ContrastResult(c, w, p, reading(w.difference, p, ALPHA))
        for c, w, p in zip(contrasts, tests, adjusted, strict=True)
    ]


def sweep_grid(records: list[dict], protocol: Protocol) -> dict[str, dict[float, float]]:
    """``{form key: {learning rate: final validation loss}}`` of the ``lr-sweep`` runs (seed 0; ``inf``: diverged)."""
    records = _check(records, protocol)
    sweep = [r for r in records if r["stage"] == "lr-sweep"]
    missing = missing_runs(sweep, protocol, "lr-sweep")
    if missing:
        raise ValueError(f"records: expected every lr-sweep run, missing {len(missing)}, e.g. {missing[0].filename}")
    grid = {}
    for form in protocol.forms:
        rows = {}
        for lr in protocol.lr_sweep.learning_rates:
            values = final_losses(
                [r for r in sweep if r["form_key"] == form.key and r["learning_rate"] == lr], "validation"
            )
            rows[lr] = sum(values) / len(values)
        grid[form.key] = rows
    return grid


def mean_curves(records: list[dict], protocol: Protocol) -> dict[str, tuple[list[int], list[float]]]:
    """``{form key: (iterations, mean validation loss over the main seeds)}`` of the runs at the chosen rate."""
    out = {}
    for key, rs in main_runs(records, protocol).items():
        iterations = rs[0]["curve"]["iteration"]
        if any(r["curve"]["iteration"] != iterations for r in rs):
            raise ValueError(f"records: expected the same curve iterations for every seed of {key!r}")
        curves = [[math.inf if v is None else v for v in r["curve"]["validation"]] for r in rs]
        out[key] = (list(iterations), [sum(col) / len(col) for col in zip(*curves, strict=True)])
    return out


class ShazeerComparison(NamedTuple):
    """Shazeer's row and the same form here: each one's difference from its ReLU MLP, and whether the signs agree."""

    row: ShazeerRow | None  # None: a form Shazeer did not have
    his_difference: float | None  # his loss − his ReLU baseline's (None for the baseline)
    his_reading: str | None
    ours: FormSummary | None  # None: not run here
    our_difference: Welch | None
    our_reading: str | None
    agreement: str  # "agrees", "level here", "disagrees", "baseline", "not run here" or "new"


def shazeer_rows(records: list[dict], protocol: Protocol) -> list[ShazeerComparison]:
    """Shazeer's Table 1, row by row, beside the same form's test loss here (differences from the ReLU MLP).

    His direction is the sign of his difference (his table gives no
    intervals); ours is Welch's verdict at α = 0.05, uncorrected
    (exploratory).  ``agreement``: ``"agrees"`` when both say better (or
    both worse), ``"level here"`` when ours cannot tell, ``"disagrees"``
    when the signs are opposite and ours is resolved.  After his rows come
    the forms of ``protocol`` that he did not have (symmetric rank-1 and
    symmetrised), with ``row=None`` and ``agreement="new"``.
    """
    keys = [f.key for f in protocol.forms]
    if SHAZEER_BASELINE.form_key not in keys:
        raise ValueError(f"protocol: expected the form {SHAZEER_BASELINE.form_key!r} (his baseline), got {keys}")
    by_key = {s.form.key: s for s in form_summaries(records, protocol)}
    runs = main_runs(records, protocol)
    relu = final_losses(runs[SHAZEER_BASELINE.form_key], "test")
    out = []
    for row in SHAZEER_TABLE_1:
        if row is SHAZEER_BASELINE:
            out.append(ShazeerComparison(row, None, None, by_key[row.form_key], None, None, "baseline"))
            continue
        his = row.steps_65k - SHAZEER_BASELINE.steps_65k
        his_reading = "better" if his < 0 else "worse" if his > 0 else "level"
        if row.form_key is None or row.form_key not in by_key:
            out.append(ShazeerComparison(row, his, his_reading, None, None, None, "not run here"))
            continue
        w = welch(final_losses(runs[row.form_key], "test"), relu)
        ours = reading(w.difference, w.p_value, ALPHA)
        agreement = "level here" if ours == "level" else "agrees" if ours == his_reading else "disagrees"
        out.append(ShazeerComparison(row, his, his_reading, by_key[row.form_key], w, ours, agreement))
    for form in protocol.forms:
        if form.kind in ("bilinear", "symmetrised"):
            w = welch(final_losses(runs[form.key], "test"), relu)
            out.append(
                ShazeerComparison(None, None, None, by_key[form.key], w, reading(w.difference, w.p_value, ALPHA), "new")
            )
    return out
