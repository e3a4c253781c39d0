"""The small-task sweep end to end on the tiny protocol; the stored results against the package's protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symbreak.experiments import sweep
from symbreak.experiments.sweep import SMALL, TINY_SMALL, chosen_rates, load_small, results_at, run_digest, run_small

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    return folder, run_small(TINY_SMALL, folder, jobs=1, progress=False)


def test_the_tiny_sweep_writes_one_complete_record_per_run(swept):
    folder, done = swept
    assert len(done) == len(sweep.runs(TINY_SMALL)) == 8
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 8 and not any(".tmp" in f for f in files)
    record = json.loads((folder / files[0]).read_text())
    assert record["run_hash"] == run_digest(
        TINY_SMALL, (record["task"], record["form"], record["seed"], record["learning_rate"])
    )
    assert {"torch", "numpy", "python", "symbreak"} <= set(record["versions"]) and record["git_commit"]
    assert record["wall_s"] > 0 and record["curve"] and record["steps_run"] <= TINY_SMALL["max_steps"]
    assert record["validation"] == min(v for _, _, v in record["curve"])  # the best validation point is kept
    assert set(record["result"]) >= {"test_metric", "swap_relative", "init_swap_relative", "skip_metric"}


def test_a_second_call_does_nothing_and_the_records_load(swept):
    folder, _ = swept
    before = {p.name: p.read_text() for p in folder.iterdir()}
    assert run_small(TINY_SMALL, folder, jobs=1, progress=False) == []
    assert {p.name: p.read_text() for p in folder.iterdir()} == before
    records = load_small(folder, TINY_SMALL)
    rates = chosen_rates(records)
    assert set(rates) == {(t, f) for t in TINY_SMALL["tasks"] for f in TINY_SMALL["forms"]}
    assert len(results_at(records, rates)) == len(TINY_SMALL["forms"]) * len(TINY_SMALL["seeds"])


def test_chosen_rate_is_the_lowest_mean_validation_error():
    records = [
        {"task": "t", "form": "f", "learning_rate": lr, "validation": v}
        for lr, v in [(0.1, 1.0), (0.1, 3.0), (0.01, 1.5), (0.01, 1.6)]
    ]
    assert chosen_rates(records) == {("t", "f"): 0.01}


def test_a_record_of_another_configuration_is_refused(swept, tmp_path):
    folder, _ = swept
    for p in folder.iterdir():
        (tmp_path / p.name).write_text(p.read_text())
    changed = {**TINY_SMALL, "max_steps": TINY_SMALL["max_steps"] + 1}
    with pytest.raises(ValueError, match="run configuration"):
        load_small(tmp_path, changed)
    with pytest.raises(ValueError, match="run configuration"):
        run_small(changed, tmp_path, jobs=1, progress=False)
    wider = {**TINY_SMALL, "seeds": (0, 1, 2)}  # a wider grid keeps the finished runs valid, and asks for the rest
    with pytest.raises(ValueError, match="missing"):
        load_small(tmp_path, wider)


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(TypeError, match="protocol"):
        sweep.runs({"d": 3})
    with pytest.raises(ValueError, match="jobs"):
        run_small(TINY_SMALL, tmp_path, jobs=0)
    with pytest.raises(TypeError, match="results"):
        run_small(TINY_SMALL, 3)


def test_the_stored_small_results_match_the_package_protocol():
    """rem-lowrank-protocol: every run of ``SMALL`` is stored under results/small/, made under its configuration."""
    records = load_small(REPO / "results" / "small", SMALL)
    assert len(records) == len(sweep.runs(SMALL))
    assert all(r["configuration"]["max_steps"] == SMALL["max_steps"] for r in records)


def test_the_command_line_runs_the_tiny_protocol(tmp_path, capsys):
    assert sweep.main(["--tiny", "--results", str(tmp_path), "--jobs", "1"]) == 0
    assert "8 stored" in capsys.readouterr().out
