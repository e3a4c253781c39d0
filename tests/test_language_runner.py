"""The sweep end to end on the tiny protocol: results written atomically, resumed, stale results refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from symbreak.experiments import records
from symbreak.language import runner
from symbreak.language.protocol import PROTOCOL, TINY, RunSpec, Stage
from symbreak.language.results import best_learning_rates, load_results, summarise
from symbreak.language.run import main
from symbreak.language.runner import pending_runs, run_stage
from symbreak.language.training import learning_rate_at, train_run

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A results folder holding the tiny protocol's lr-sweep and main stages."""
    folder = tmp_path_factory.mktemp("language")
    first = run_stage(TINY, "lr-sweep", folder, jobs=1, progress=False)
    main_done = run_stage(TINY, "main", folder, jobs=1, progress=False)
    return folder, first, main_done


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_sweep_writes_one_complete_result_per_run(swept):
    folder, first, _ = swept
    assert len(first) == 4
    names = sorted(_files(folder))
    assert names[:4] == [
        f"lr-sweep/{k}__seed0__lr{lr}.json" for k in ("mlp-gelu", "swiglu") for lr in ("0.001", "0.003")
    ]
    assert not any(".tmp" in n for n in names)  # nothing half-written is left
    record = json.loads((folder / names[0]).read_text())
    assert record["protocol_hash"] == TINY.digest() and record["configuration"] == TINY.as_dict()
    assert record["run_hash"] == TINY.run_digest(RunSpec("lr-sweep", TINY.form("mlp-gelu"), 0, 1e-3))
    assert record["curve"]["iteration"] == [0, 3, 6] and len(record["curve"]["validation"]) == 3
    assert set(record["final"]) == {"validation", "test"} and record["finite"]
    assert {"torch", "symbreak", "python"} <= set(record["versions"])
    assert isinstance(record["git_commit"], str) and record["git_commit"]
    assert record["tokens"] == 6 * 4 * 16 and record["tokens_per_s"] > 0 and record["wall_time_s"] > 0


def test_a_second_call_does_nothing(swept):
    folder, _, _ = swept
    before = _files(folder)
    assert run_stage(TINY, "lr-sweep", folder, jobs=1, progress=False) == []
    assert run_stage(TINY, "main", folder, jobs=1, progress=False) == []
    assert _files(folder) == before


def test_main_uses_the_best_swept_rate_and_reuses_the_identical_sweep_run(swept):
    folder, _, main_done = swept
    best = best_learning_rates(load_results(folder, TINY, "lr-sweep"), TINY)
    records = load_results(folder, TINY, "main")
    assert {(r["form_key"], r["learning_rate"]) for r in records} == set(best.items())
    assert len(main_done) == 2 and all(run.seed == 1 for run in main_done)  # seed 0 is the sweep's run
    reused = [r for r in records if r["seed"] == 0]
    assert all(r["reused_from"].startswith("lr-sweep/") for r in reused)
    # the reuse is sound: training the main run anew gives the sweep's numbers exactly
    again = train_run(TINY, RunSpec("main", TINY.form(reused[0]["form_key"]), 0, reused[0]["learning_rate"]))
    assert again["final"] == reused[0]["final"] and again["curve"] == reused[0]["curve"]
    table = summarise(records, TINY, "validation")
    assert list(table) == ["MLP (GELU)", "SwiGLU"] and all(n == 2 for _, _, n, _ in table.values())


def _copy(folder: Path, to: Path) -> Path:
    for name, text in _files(folder).items():
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        (to / name).write_text(text)
    return to


def test_a_tampered_result_is_refused(swept, tmp_path):
    folder, _, _ = swept
    copy = _copy(folder, tmp_path / "copy")
    path = sorted((copy / "main").glob("*seed1*.json"))[-1]
    record = json.loads(path.read_text())
    record["run_hash"] = "0123456789abcdef"  # an edited hash
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="its run_hash 0123456789abcdef is not the hash"):
        load_results(copy, TINY)
    record["run_hash"] = json.loads((folder / path.relative_to(copy)).read_text())["run_hash"]
    record["configuration"]["training"]["batch_size"] += 1  # an edited configuration under the old hash
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="is not the hash"):
        load_results(copy, TINY)
    del record["run_hash"]  # a result made under another batch size
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="made under another run configuration"):
        load_results(copy, TINY)
    with pytest.raises(ValueError, match="got 1 of another run configuration"):
        pending_runs(TINY, TINY.runs("main", best_learning_rates(load_results(copy, TINY, "lr-sweep"), TINY)), copy)
    redone = run_stage(TINY, "main", copy, jobs=1, stale="replace", progress=False)
    assert len(redone) == 1 and len(load_results(copy, TINY)) == 8


def test_a_changed_protocol_cannot_read_old_results(swept):
    folder, _, _ = swept
    for changed in (
        replace(TINY, main=Stage(seeds=(0, 1), iterations=7)),
        replace(TINY, training=replace(TINY.training, weight_decay=0.2)),
        replace(TINY, shape=replace(TINY.shape, n_embd=32)),
    ):
        assert changed.digest() != TINY.digest()
        with pytest.raises(ValueError, match="rerun the sweep"):
            load_results(folder, changed)


def test_a_wider_grid_and_more_seeds_keep_the_runs_made(swept, tmp_path):
    """Adding grid points or seeds leaves every finished run valid: only the new runs are pending."""
    folder, _, _ = swept
    copy = _copy(folder, tmp_path / "grown")
    grown = replace(
        TINY,
        lr_sweep=replace(TINY.lr_sweep, learning_rates=(*TINY.lr_sweep.learning_rates, 9e-3)),
        main=replace(TINY.main, seeds=(0, 1, 2)),
    )
    assert len(load_results(copy, grown)) == 8
    pending = pending_runs(grown, grown.runs("lr-sweep"), copy)
    assert [(r.form.key, r.learning_rate) for r in pending] == [("mlp-gelu", 9e-3), ("swiglu", 9e-3)]


def test_main_before_the_sweep_is_refused(tmp_path):
    with pytest.raises(ValueError, match="run the lr-sweep stage first"):
        run_stage(TINY, "main", tmp_path, progress=False)


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "main" / "x.json"
    runner._write_atomically(path, {"a": 1.0, "b": [float("nan")]})
    assert json.loads(path.read_text()) == {"a": 1.0, "b": [None]}  # JSON has no NaN: stored as null

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(records.json, "dumps", broken)
    with pytest.raises(OSError, match="disk full"):
        runner._write_atomically(path, {"a": 2.0})
    assert json.loads(path.read_text())["a"] == 1.0
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]


def test_the_command_line_runs_a_stage(tmp_path, capsys):
    assert main(["--stage", "lr-sweep", "--results", str(tmp_path), "--jobs", "1", "--tiny"]) == 0
    out = capsys.readouterr().out
    assert f"protocol {TINY.digest()}): 4 runs done now" in out and "SwiGLU" in out


def test_the_learning_rate_schedule_is_nanogpts():
    peak = 1e-3
    assert learning_rate_at(0, peak, PROTOCOL, 2000) == pytest.approx(peak / 101)
    assert learning_rate_at(100, peak, PROTOCOL, 2000) == pytest.approx(peak)
    assert learning_rate_at(1050, peak, PROTOCOL, 2000) == pytest.approx(0.55 * peak)
    assert learning_rate_at(2000, peak, PROTOCOL, 2000) == pytest.approx(0.1 * peak)


def test_a_seed_changes_initialisation_and_batches():
    form = TINY.form("swiglu")
    a, b = (train_run(TINY, RunSpec("lr-sweep", form, s, 1e-3)) for s in (0, 0))
    c = train_run(TINY, RunSpec("lr-sweep", form, 1, 1e-3))
    assert a["final"] == b["final"] and a["final"] != c["final"]


def test_bad_arguments_are_rejected_with_their_name(tmp_path):
    with pytest.raises(ValueError, match="stage: expected one of"):
        run_stage(TINY, "warmup", tmp_path, progress=False)
    with pytest.raises(ValueError, match="jobs: expected an int >= 1 or -1"):
        run_stage(TINY, "lr-sweep", tmp_path, jobs=0, progress=False)
    with pytest.raises(ValueError, match="stale: expected 'error' or 'replace'"):
        pending_runs(TINY, [], tmp_path, stale="keep")
    with pytest.raises(TypeError, match="results: expected a folder path"):
        load_results(None, TINY)


def test_stored_results_match_the_package_protocol():
    """Every result committed under results/language/ was made under the package's protocol."""
    records = load_results(REPO / "results" / "language", PROTOCOL)
    assert records and all(
        r["run_hash"]
        == PROTOCOL.run_digest(RunSpec(r["stage"], PROTOCOL.form(r["form_key"]), r["seed"], r["learning_rate"]))
        for r in records
        if "run_hash" in r
    )


def test_main_runs_seed_by_seed():
    """An interrupted main stage leaves complete seeds: every form's seed s comes before any form's seed s + 1."""
    runs = PROTOCOL.runs("main", {f.key: 1e-3 for f in PROTOCOL.forms})
    n = len(PROTOCOL.forms)
    assert [r.seed for r in runs] == [s for s in PROTOCOL.main.seeds for _ in range(n)]
    assert [r.form for r in runs[:n]] == list(PROTOCOL.forms)
