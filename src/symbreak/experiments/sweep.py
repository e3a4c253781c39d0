"""The small-task sweeps of chapters 14 and 15 (``make experiments-small``, ``-digits``): resumable runs, one JSON each.

A run is one ``(task, form, seed, learning rate)`` of a protocol: :data:`SMALL`, the
low-rank tasks of chapter 14 (:mod:`symbreak.experiments.lowrank`), or :data:`DIGITS`,
scikit-learn's digits of chapter 15 (:func:`symbreak.experiments.tasks.make_digits_split`).
Full-batch Adam from :func:`make_model`'s initialisation on the training loss (mean
squared error; cross-entropy for the digits), the validation criterion (MSE / variance;
cross-entropy for the digits) measured every ``eval_every`` steps, stopped when it has
not improved for ``patience`` measurements (or after ``max_steps``), and the parameters
with the lowest validation criterion kept.  The seed draws the data (the target and the
tokens, or the split of the digits: one generator) and the weights (torch's global generator).

Its result is ``<results>/<task>__<form>__seed<s>__lr<lr>.json`` with the
configuration, the hash of its run configuration (every protocol field except the
grids of tasks, forms, seeds and rates, plus its own task, form, seed and rate),
versions, git commit, wall time, the validation curve, the test measurements
(:class:`~symbreak.experiments.runner.Result`'s fields) and the task's own
measurements (least squares and floors; the digits' validation error and the checks
within rounding of :func:`symbreak.experiments.digits.run_checks`).  A stored result
of another run configuration is refused (:func:`load_small`, :func:`run_small`), so a
changed protocol cannot be shown with old runs.  Files are written atomically
(:func:`symbreak.experiments.records.write_record`).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from symbreak.experiments.digits import run_checks
from symbreak.experiments.lowrank import least_squares_error, make_lowrank_task, rank_floor
from symbreak.experiments.models import _form, make_model, width_for_budget
from symbreak.experiments.records import commit, digest, versions, write_record
from symbreak.experiments.runner import QUERY_KEY_BLOCKS, Result, _evaluate, _metric, relative_swap_change
from symbreak.experiments.seeds import torch_threads
from symbreak.experiments.tasks import Task, make_digits_split

__all__ = ["SMALL", "TINY_SMALL", "RESULTS_SMALL", "DIGITS", "TINY_DIGITS", "RESULTS_DIGITS", "PROTOCOLS"]
__all__ += ["runs", "run_digest", "train_small", "run_small", "load_small", "chosen_rates", "results_at"]
__all__ += ["projections", "main"]

_REPO = Path(__file__).resolve().parents[3]
#: The repository's folder of small-task results, which ``make experiments-small`` fills and chapter 14 reads.
RESULTS_SMALL = _REPO / "results" / "small"
#: The repository's folder of digits results, which ``make experiments-digits`` fills and chapter 15 reads.
RESULTS_DIGITS = _REPO / "results" / "digits"

#: The small-task protocol: the grids (``tasks``, ``forms``, ``seeds``, ``learning_rates``) and every field that
#: decides a run's numbers.  ``reference_width`` ``m₀`` sets the budget ``m₀ (d + d_out)`` of every block.
SMALL: dict[str, object] = {
    "name": "small-lowrank",
    "tasks": ("full-rank quadratic", "quadratic + odd"),
    "forms": (
        "MLP (ReLU)",
        "MLP (GELU)",
        "symmetric (ReLU)",
        "symmetric (GELU)",
        "symmetric (SiLU)",
        "bilinear (σ = id)",
        "ReGLU",
        "GEGLU",
        "SwiGLU",
        "GLU (sigmoid)",
        "tanh gating",
        "symmetrised (GELU)",
        "symmetrised (SiLU)",
        "symmetric rank-4 (SiLU)",
    ),
    "seeds": (0, 1, 2, 3, 4),
    "learning_rates": (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0),
    "d": 16,
    "d_out": 8,
    "n_train": 600,
    "n_val": 300,
    "n_test": 1000,
    "reference_width": 8,
    "max_steps": 8000,
    "eval_every": 25,
    "patience": 12,
    "threads": 1,
}

#: A tiny protocol for the end-to-end test (seconds).
TINY_SMALL: dict[str, object] = {
    **SMALL,
    "name": "small-tiny",
    "tasks": ("full-rank quadratic",),
    "forms": ("symmetric (SiLU)", "SwiGLU"),
    "seeds": (0, 1),
    "learning_rates": (1e-2, 3e-2),
    "d": 4,
    "d_out": 2,
    "n_train": 40,
    "n_val": 20,
    "n_test": 30,
    "reference_width": 4,
    "max_steps": 20,
    "eval_every": 5,
    "patience": 2,
}

#: The digits protocol of chapter 15: the forms of :data:`SMALL` but the ReLU MLP and the rank-4 form,
#: ``n_train``, ``n_val`` and ``n_test`` images of a
#: split that every seed draws anew, the budget of a standard MLP of width ``reference_width`` (``m₀ (d + d_out)``
#: with ``d = 64`` pixels and ``d_out = 10`` classes).
DIGITS: dict[str, object] = {
    "name": "digits",
    "tasks": ("digits",),
    "forms": tuple(f for f in SMALL["forms"] if f not in ("MLP (ReLU)", "symmetric rank-4 (SiLU)")),
    "seeds": tuple(range(10)),
    "learning_rates": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2),
    "n_train": 600,
    "n_val": 300,
    "n_test": 897,
    "reference_width": 32,
    "max_steps": 10000,
    "eval_every": 20,
    "patience": 15,
    "threads": 1,
}

#: A tiny digits protocol for the end-to-end test (seconds): the seeds, rates, width and stopping rule of
#: :data:`TINY_SMALL`, three forms (symmetric, gated, symmetrised) and a few images.
TINY_DIGITS: dict[str, object] = {
    **DIGITS,
    **{k: TINY_SMALL[k] for k in ("seeds", "learning_rates", "reference_width", "max_steps", "eval_every", "patience")},
    "name": "digits-tiny",
    "forms": ("symmetric (SiLU)", "SwiGLU", "symmetrised (SiLU)"),
    **{"n_train": 60, "n_val": 30, "n_test": 40},
}

#: The protocols by the name ``python -m symbreak.experiments.sweep --protocol`` takes: ``(protocol, its tiny
#: twin, the repository's results folder)``.
PROTOCOLS: dict[str, tuple[dict[str, object], dict[str, object], Path]] = {
    "small": (SMALL, TINY_SMALL, RESULTS_SMALL),
    "digits": (DIGITS, TINY_DIGITS, RESULTS_DIGITS),
}

_GRIDS = ("name", "tasks", "forms", "seeds", "learning_rates")
_TARGETS = {"small": "experiments-small", "digits": "experiments-digits"}


def _kind(protocol: Mapping[str, object]) -> str:
    """``"digits"`` for a protocol of the digits task, ``"small"`` for one of the low-rank tasks."""
    return "digits" if tuple(protocol.get("tasks", ())) == ("digits",) else "small"


def _check_protocol(protocol: object) -> Mapping[str, object]:
    if not isinstance(protocol, Mapping):
        raise TypeError(f"protocol: expected a mapping with the keys of SMALL or DIGITS, got {protocol!r}")
    keys = DIGITS if _kind(protocol) == "digits" else SMALL
    if set(protocol) != set(keys):
        raise TypeError(f"protocol: expected a mapping with the keys {sorted(keys)}, got {protocol!r}")
    return protocol


def runs(protocol: Mapping[str, object]) -> list[tuple[str, str, int, float]]:
    """Every ``(task, form, seed, learning rate)`` of ``protocol``'s grids."""
    p = _check_protocol(protocol)
    return [(t, f, s, lr) for t in p["tasks"] for f in p["forms"] for s in p["seeds"] for lr in p["learning_rates"]]


def run_digest(protocol: Mapping[str, object], run: tuple[str, str, int, float]) -> str:
    """The hash of ``run``'s configuration: the protocol without its grids, plus the run's task, form, seed, rate."""
    fixed = {k: v for k, v in _check_protocol(protocol).items() if k not in _GRIDS}
    task, form, seed, lr = run
    return digest({**fixed, "task": task, "form": form, "seed": seed, "learning_rate": lr})


def _filename(run: tuple[str, str, int, float]) -> str:
    task, form, seed, lr = run
    slug = "__".join(re.sub(r"[^a-z0-9]+", "-", part.lower().replace("σ", "s")).strip("-") for part in (task, form))
    return f"{slug}__seed{seed}__lr{lr:g}.json"


def projections(form: str) -> int:
    """``r``: how many projections ``x P_j`` of the input one unit of ``form`` is a function of (2R for rank R)."""
    kind, _, rank = _form(form)
    return 1 if kind == "kv" else 2 * rank


def _loss(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, classification: bool) -> torch.Tensor:
    """The training loss of ``model`` on ``(X, Y)``: cross-entropy (classification) or mean squared error."""
    if classification:
        return nn.functional.cross_entropy(model(X), Y.squeeze(-1))
    return ((model(X) - Y) ** 2).mean()


def _criterion(model: nn.Module, val: Task) -> float:
    """The validation criterion: cross-entropy (classification) or MSE / variance (:func:`_metric`)."""
    if val.classification:
        with torch.no_grad():
            return float(_loss(model, val.X_test, val.Y_test, True))
    return _metric(model, val.X_test, val.Y_test, False)


def _fit(model: nn.Module, test: Task, val: Task, lr: float, p: Mapping[str, object]) -> dict:
    """Full-batch Adam with early stopping on ``val``; the best parameters are loaded back into ``model``."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best, best_state, best_step, since, curve = float("inf"), copy.deepcopy(model.state_dict()), 0, 0, []
    for step in range(1, int(p["max_steps"]) + 1):
        opt.zero_grad(set_to_none=True)
        loss = _loss(model, test.X_train, test.Y_train, test.classification)
        loss.backward()
        opt.step()
        if step % int(p["eval_every"]) == 0:
            current = _criterion(model, val)
            curve.append([step, float(loss.detach()), current])
            if current < best:
                best, best_state, best_step, since = current, copy.deepcopy(model.state_dict()), step, 0
            else:
                since += 1
                if since >= int(p["patience"]):
                    break
    model.load_state_dict(best_state)
    return {
        "validation": best,
        "best_step": best_step,
        "steps_run": curve[-1][0] if curve else 0,
        "stopped_early": since >= int(p["patience"]),
        "curve": curve,
    }


def _data(p: Mapping[str, object], task: str, seed: int):
    """``(train/test task, train/validation task, target)`` of ``task`` from ``seed`` (digits: the masked pixels)."""
    if _kind(p) == "digits":
        test, val, masked = make_digits_split(**{k: int(p[k]) for k in ("n_train", "n_val", "n_test")}, seed=seed)
        return test, val, masked
    return make_lowrank_task(task, seed=seed, **{k: int(p[k]) for k in ("d", "d_out", "n_train", "n_val", "n_test")})


def train_small(protocol: Mapping[str, object], run: tuple[str, str, int, float]) -> dict:
    """Train one run with early stopping on validation; return its measurements (no configuration)."""
    p = _check_protocol(protocol)
    task_name, form, seed, lr = run
    test, val, target = _data(p, task_name, seed)
    budget = int(p["reference_width"]) * (test.d + test.d_out)
    start = time.perf_counter()
    with torch_threads(int(p["threads"])):
        model = make_model(form, test.d, test.d_out, budget, seed)
        init = relative_swap_change(model.block, test.X_test) if isinstance(model.block, QUERY_KEY_BLOCKS) else None
        fitted = _fit(model, test, val, lr, p)
        with torch.no_grad():
            train_loss = float(_loss(model, test.X_train, test.Y_train, test.classification))
        result = _evaluate(test, form, seed, model, train_loss, init)
        if _kind(p) == "digits":
            extra = {
                "masked_pixels": target,
                "validation_error": _metric(model, val.X_test, val.Y_test, True),
                "train_error": _metric(model, test.X_train, test.Y_train, True),
                **run_checks(model, form, test.X_test),
            }
        else:
            rank = projections(form) * width_for_budget(form, test.d, test.d_out, budget)
            extra = {
                "rank_bound": rank,
                "floor": rank_floor(target, rank),
                "least_squares_quadratic": least_squares_error(test, quadratic=True),
                "least_squares_affine": least_squares_error(test, quadratic=False),
            }
    return {"result": dataclasses.asdict(result), **fitted, **extra, "wall_s": time.perf_counter() - start}


def _run_and_store(protocol, run, results: Path, head: str) -> dict:
    record = {
        "run_hash": run_digest(protocol, run),
        "protocol_name": protocol["name"],
        "task": run[0],
        "form": run[1],
        "seed": run[2],
        "learning_rate": run[3],
        "configuration": {k: (list(v) if isinstance(v, tuple) else v) for k, v in protocol.items()},
        "versions": versions(),
        "git_commit": head,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **train_small(protocol, run),
    }
    write_record(results / _filename(run), record)
    return record


def _stored(results: Path, protocol, run) -> dict | None:
    path = results / _filename(run)
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    if record.get("run_hash") != run_digest(protocol, run):
        raise ValueError(
            f"results: expected {path} to be made under run configuration {run_digest(protocol, run)} of protocol "
            f"{protocol['name']!r}, got {record.get('run_hash')!r}; delete it (or use another folder) to redo it"
        )
    return record


def run_small(protocol: Mapping[str, object], results: str | os.PathLike, *, jobs: int = 1, progress: bool = True):
    """Run every run of ``protocol`` without a stored result under ``results`` (joblib); returns the runs done."""
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    p = _check_protocol(protocol)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise ValueError(f"jobs: expected an int >= 1 or -1 (all cores), got {jobs!r}")
    if not isinstance(results, (str, os.PathLike)):
        raise TypeError(f"results: expected a folder path (str or os.PathLike), got {type(results).__name__}")
    folder = Path(results)
    todo = [run for run in runs(p) if _stored(folder, p, run) is None]
    head = commit() if todo else "unknown"
    bar = tqdm(total=len(todo), desc=f"{p['name']}", unit="run", disable=not progress)
    try:
        tasks = (delayed(_run_and_store)(p, run, folder, head) for run in todo)
        for _ in Parallel(n_jobs=jobs, return_as="generator_unordered")(tasks):
            bar.update(1)
    finally:
        bar.close()
    return todo


def load_small(results: str | os.PathLike = RESULTS_SMALL, protocol: Mapping[str, object] = SMALL) -> list[dict]:
    """Every stored record of ``protocol``'s grids; a missing run or one of another configuration is refused."""
    p = _check_protocol(protocol)
    folder = Path(results)
    records, missing = [], []
    for run in runs(p):
        record = _stored(folder, p, run)
        (missing.append(_filename(run)) if record is None else records.append(record))
    if missing:
        raise ValueError(
            f"results: expected all {len(records) + len(missing)} runs of {p['name']!r} in {folder}, "
            f"got {len(missing)} missing, e.g. {missing[0]}; run `make {_TARGETS[_kind(p)]}`"
        )
    return records


def chosen_rates(records: Sequence[Mapping]) -> dict[tuple[str, str], float]:
    """``{(task, form): rate}``: the rate with the lowest mean best validation error over the seeds."""
    means: dict[tuple[str, str], dict[float, list[float]]] = {}
    for r in records:
        means.setdefault((r["task"], r["form"]), {}).setdefault(r["learning_rate"], []).append(r["validation"])
    return {key: min(by, key=lambda lr: (float(np.mean(by[lr])), lr)) for key, by in means.items()}


def results_at(records: Sequence[Mapping], rates: Mapping[tuple[str, str], float]) -> list[Result]:
    """The :class:`Result` of every record at its ``(task, form)``'s chosen rate."""
    return [Result(**r["result"]) for r in records if rates[(r["task"], r["form"])] == r["learning_rate"]]


def main(argv: list[str] | None = None) -> int:
    """``python -m symbreak.experiments.sweep [--protocol small|digits] [--results DIR] --jobs N [--tiny]``."""
    parser = argparse.ArgumentParser(prog="python -m symbreak.experiments.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS), default="small", help="the sweep (default small)")
    parser.add_argument("--results", help="results folder (default the protocol's: results/small, results/digits)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1; -1: one per core)")
    parser.add_argument("--tiny", action="store_true", help="the tiny protocol, for a check in seconds")
    args = parser.parse_args(argv)
    full, tiny, folder = PROTOCOLS[args.protocol]
    if args.tiny and args.results is None:
        parser.error("--tiny: expected --results DIR too (the tiny runs do not belong in the repository's folder)")
    protocol, results = (tiny if args.tiny else full), args.results or str(folder)
    start = time.perf_counter()
    done = run_small(protocol, results, jobs=args.jobs)
    records = load_small(results, protocol)
    cpu = sum(r["wall_s"] for r in records)
    print(
        f"{protocol['name']}: {len(done)} runs done now in {time.perf_counter() - start:.0f} s; "
        f"{len(records)} stored, {cpu:.0f} s of training in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
