"""Reading stored language-model results: the protocol check, the chosen learning rates and per-form summaries.

:func:`load_results` refuses a result whose run configuration (computed
from the protocol it stores, :func:`symbreak.language.protocol.run_configuration`)
is not the package's (:meth:`Protocol.run_digest`), so a table can never show
runs made under another protocol; :func:`missing_runs` lists what a stage still lacks;
:func:`summarise` gives per form the mean over seeds of a final loss and its
95 % t-interval ``mean ± t_{n−1, 0.975} · s / √n``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from scipy import stats

from symbreak.language.protocol import STAGES, Protocol, RunSpec, configuration_hash, run_configuration

__all__ = [
    "record_run_hash",
    "check_record",
    "load_results",
    "missing_runs",
    "best_learning_rates",
    "summarise",
    "FIELDS",
]

#: The final losses a summary can be made of.
FIELDS = ("validation", "test")


def record_run_hash(record: dict) -> str:
    """The run hash of a stored result, computed from the protocol it stores (not read from it).

    Raises ``ValueError`` when the record lacks a field that decides it, or
    when its stored ``run_hash`` differs from the computed one (an edited file).
    """
    try:
        computed = configuration_hash(
            run_configuration(
                record["configuration"], record["stage"], record["form_key"], record["seed"], record["learning_rate"]
            )
        )
    except (KeyError, TypeError) as err:
        raise ValueError(f"record: expected a stored result with its configuration, got one lacking {err}") from None
    stored = record.get("run_hash", computed)
    if stored != computed:
        raise ValueError(f"record: its run_hash {stored} is not the hash {computed} of its own configuration")
    return computed


def check_record(record: dict, protocol: Protocol) -> str:
    """``record``'s run hash when its run configuration is ``protocol``'s; else a ``ValueError`` naming both."""
    found = record_run_hash(record)
    run = RunSpec(record["stage"], protocol.form(record["form_key"]), record["seed"], record["learning_rate"])
    expected = protocol.run_digest(run)
    if found != expected:
        raise ValueError(
            f"was made under another run configuration ({found}) than the package's protocol "
            f"{protocol.name!r} gives it ({expected}); rerun the sweep (make experiments) or restore the protocol"
        )
    return found


def load_results(results: str | os.PathLike, protocol: Protocol, stage: str | None = None) -> list[dict]:
    """Every stored result under the folder ``results`` (of ``stage``, or of all stages), sorted by file name.

    Raises ``ValueError`` naming the file when a result's run configuration is
    not ``protocol``'s (:func:`check_record`) or a file is not a result.
    """
    if not isinstance(results, (str, os.PathLike)):
        raise TypeError(f"results: expected a folder path (str or os.PathLike), got {type(results).__name__}")
    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol: expected a Protocol, got {type(protocol).__name__}")
    if stage is not None:
        protocol.stage(stage)  # checks the name
    stages = STAGES if stage is None else (stage,)
    out = []
    for s in stages:
        for path in sorted((Path(results) / s).glob("*.json")):
            try:
                record = json.loads(path.read_text())
            except ValueError as err:
                raise ValueError(
                    f"results: expected a stored result in {path}, got an unreadable file ({err})"
                ) from None
            try:
                check_record(record, protocol)
            except ValueError as err:
                raise ValueError(f"results: {path} {err}") from None
            out.append(record)
    return out


def missing_runs(records: list[dict], protocol: Protocol, stage: str, learning_rates: dict | None = None) -> list:
    """The runs of ``stage`` that ``records`` lack (``main`` needs the chosen learning rates)."""
    have = {(r["stage"], r["form_key"], r["seed"], r["learning_rate"]) for r in records}
    return [
        run
        for run in protocol.runs(stage, learning_rates)
        if (run.stage, run.form.key, run.seed, run.learning_rate) not in have
    ]


def _final(record: dict, field: str) -> float:
    value = record["final"][field]
    return float("nan") if value is None else float(value)


def best_learning_rates(sweep: list[dict], protocol: Protocol) -> dict[str, float]:
    """Per form key, the swept learning rate with the lowest mean final validation loss (a diverged run loses).

    Raises ``ValueError`` when the sweep is incomplete.
    """
    missing = missing_runs(sweep, protocol, "lr-sweep")
    if missing:
        raise ValueError(
            f"sweep: expected every lr-sweep run of protocol {protocol.name!r}, missing {len(missing)}, "
            f"e.g. {missing[0].filename}; run the lr-sweep stage first"
        )
    best = {}
    for form in protocol.forms:
        means = {}
        for lr in protocol.lr_sweep.learning_rates:
            values = [_final(r, "validation") for r in sweep if r["form_key"] == form.key and r["learning_rate"] == lr]
            mean = sum(values) / len(values)
            means[lr] = mean if math.isfinite(mean) else math.inf
        best[form.key] = min(means, key=lambda lr: (means[lr], lr))
    return best


def summarise(records: list[dict], protocol: Protocol, field: str = "validation", stage: str = "main") -> dict:
    """``{form name: (mean, half-width of the 95 % t-interval, n, learning rate)}`` of a final loss over seeds.

    Forms appear in the protocol's order; the half-width is ``nan`` for one seed.
    """
    if field not in FIELDS:
        raise ValueError(f"field: expected one of {list(FIELDS)}, got {field!r}")
    out = {}
    for form in protocol.forms:
        rows = [r for r in records if r["stage"] == stage and r["form_key"] == form.key]
        if not rows:
            continue
        values = [_final(r, field) for r in rows]
        n = len(values)
        mean = sum(values) / n
        if n > 1:
            s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
            half = float(stats.t.ppf(0.975, n - 1)) * s / math.sqrt(n)
        else:
            half = float("nan")
        lrs = sorted({r["learning_rate"] for r in rows})
        out[form.name] = (mean, half, n, lrs[0] if len(lrs) == 1 else tuple(lrs))
    return out
