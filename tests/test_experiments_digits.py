"""The digits runs of chapter 15: the split drawn from a seed, a run's checks within rounding, the stored swap check,
the digits sweep end to end on the tiny protocol, and the stored results against the package's protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from symbreak.experiments import make_model
from symbreak.experiments.digits import CHECK_FIELDS, run_checks, stored_swap_check
from symbreak.experiments.sweep import (
    DIGITS,
    SMALL,
    TINY_DIGITS,
    chosen_rates,
    load_small,
    main,
    run_digest,
    run_small,
    runs,
)
from symbreak.experiments.tasks import DIGITS_IMAGES, DIGITS_STD_FLOOR, make_digits_split

REPO = Path(__file__).resolve().parents[1]
SHAPE = {"n_train": 600, "n_val": 300, "n_test": 897}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("digits")
    return folder, run_small(TINY_DIGITS, folder, jobs=1, progress=False)


def test_the_split_is_drawn_from_the_seed_and_standardised_on_the_training_images():
    test, val, masked = make_digits_split(**SHAPE, seed=3)
    again, _, _ = make_digits_split(**SHAPE, seed=3)
    other, _, _ = make_digits_split(**SHAPE, seed=4)
    assert torch.equal(test.X_test, again.X_test) and not torch.equal(test.X_train, other.X_train)
    assert (test.d, test.d_out, len(test.X_train), len(val.X_test), len(test.X_test)) == (64, 10, 600, 300, 897)
    assert torch.equal(val.X_train, test.X_train) and val.classification and test.classification
    assert float(test.X_train.mean(0).abs().max()) < 1e-12
    constant = test.X_train.std(0) == 0  # the masked pixels: 0 on every image, so d = 64 for every seed
    assert (
        int(constant.sum()) == masked >= 3 and not test.X_test[:, constant].any() and not val.X_test[:, constant].any()
    )
    # no spread below one grey level blown up: a standardised pixel is at most 16 / DIGITS_STD_FLOOR
    assert float(torch.cat([test.X_test, val.X_test]).abs().max()) <= 16 / DIGITS_STD_FLOOR + 1e-9


def test_the_three_parts_are_disjoint_and_bad_sizes_are_refused():
    test, val, _ = make_digits_split(n_train=1000, n_val=400, n_test=397, seed=0)
    rows = torch.cat([test.X_train, val.X_test, test.X_test])
    assert len(rows) == DIGITS_IMAGES  # every image once (the digits set has duplicates only by chance)
    with pytest.raises(ValueError, match="at most 1797"):
        make_digits_split(n_train=1000, n_val=400, n_test=398, seed=0)
    with pytest.raises(ValueError, match="n_val: expected an int >= 1"):
        make_digits_split(n_train=10, n_val=0, n_test=5, seed=0)


def test_run_checks_of_a_symmetric_a_gated_and_a_control_block():
    """thm-exchange, prop-symmetrised-exchange, prop-parity on untrained blocks of the three kinds."""
    X = torch.randn(50, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    symmetric = run_checks(make_model("symmetric (SiLU)", 6, 3, 60, seed=1), "symmetric (SiLU)", X)
    assert symmetric["swap_ratio"] <= 1 and symmetric["even"] is True and symmetric["swap_unchanged"] is None
    gated = run_checks(make_model("SwiGLU", 6, 3, 60, seed=1), "SwiGLU", X)
    assert gated["swap_ratio"] > 1e6 and gated["even"] is None  # SwiGLU's block is not even
    control = run_checks(make_model("symmetrised (SiLU)", 6, 3, 60, seed=1), "symmetrised (SiLU)", X)
    assert control == {"swap_ratio": None, "swap_unchanged": True, "even": None}
    assert set(run_checks(make_model("MLP (GELU)", 6, 3, 60, seed=1), "MLP (GELU)", X)) == set(CHECK_FIELDS)
    with pytest.raises(ValueError, match="X: expected"):
        run_checks(make_model("SwiGLU", 6, 3, 60, seed=1), "SwiGLU", X[:, :5])
    with pytest.raises(TypeError, match="model: expected a Model"):
        run_checks(X, "SwiGLU", X)


def test_the_stored_swap_check_gathers_the_records(swept):
    folder, _ = swept
    records = load_small(folder, TINY_DIGITS)
    check = stored_swap_check(records)
    per_form = len(TINY_DIGITS["seeds"]) * len(TINY_DIGITS["learning_rates"])
    assert check.n_symmetric == per_form and check.n_controls == per_form  # symmetric (SiLU); its control
    assert check.symmetric_ratio <= 1 < check.gated_ratio and check.even and check.controls_unchanged
    assert check.largest_swap == 0
    changed = [{**r, "swap_unchanged": False} if r["swap_unchanged"] else r for r in records[:-1]] + records[-1:]
    assert not stored_swap_check(changed).controls_unchanged  # the check can fail
    odd = [{**r, "even": False} if r["even"] else r for r in records]
    assert not stored_swap_check(odd).even
    with pytest.raises(ValueError, match="one kind only"):
        stored_swap_check([r for r in records if r["form"] == "SwiGLU"])
    with pytest.raises(ValueError, match="fields"):
        stored_swap_check([{k: v for k, v in r.items() if k != "even"} for r in records])


def test_the_tiny_digits_sweep_writes_one_complete_record_per_run(swept):
    folder, done = swept
    assert len(done) == len(runs(TINY_DIGITS)) == 12
    record = json.loads(sorted(folder.glob("digits__swiglu__*.json"))[0].read_text())
    assert record["run_hash"] == run_digest(
        TINY_DIGITS, (record["task"], record["form"], record["seed"], record["learning_rate"])
    )
    assert record["validation"] == min(v for _, _, v in record["curve"])  # the lowest validation cross-entropy
    assert 0 <= record["validation_error"] <= 1 and 0 <= record["train_error"] <= 1 and record["masked_pixels"] >= 3
    assert record["result"]["test_metric"] in {k / TINY_DIGITS["n_test"] for k in range(TINY_DIGITS["n_test"] + 1)}
    assert run_small(TINY_DIGITS, folder, jobs=1, progress=False) == []  # resumable: nothing is redone
    assert set(chosen_rates(load_small(folder, TINY_DIGITS))) == {("digits", f) for f in TINY_DIGITS["forms"]}


def test_a_digits_record_of_another_configuration_is_refused(swept, tmp_path):
    folder, _ = swept
    for p in folder.iterdir():
        (tmp_path / p.name).write_text(p.read_text())
    for changed in ({**TINY_DIGITS, "n_val": 31}, {**TINY_DIGITS, "patience": 3}):
        with pytest.raises(ValueError, match="run configuration"):
            load_small(tmp_path, changed)
        with pytest.raises(ValueError, match="run configuration"):
            run_small(changed, tmp_path, jobs=1, progress=False)
    with pytest.raises(ValueError, match="experiments-digits"):
        load_small(tmp_path, {**TINY_DIGITS, "seeds": (0, 1, 2)})  # a wider grid asks for the missing runs


def test_the_digits_and_small_protocols_keep_their_own_keys():
    assert run_digest(SMALL, runs(SMALL)[0]) != run_digest(DIGITS, ("full-rank quadratic", *runs(SMALL)[0][1:]))
    with pytest.raises(TypeError, match="protocol: expected a mapping with the keys"):
        runs({**DIGITS, "d": 16})
    with pytest.raises(TypeError, match="protocol"):
        runs([("digits",)])


def test_the_command_line_runs_the_tiny_digits_protocol(tmp_path, capsys):
    assert main(["--protocol", "digits", "--tiny", "--results", str(tmp_path), "--jobs", "1"]) == 0
    assert "digits-tiny: 12 runs done now" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--protocol", "digits", "--tiny"])  # the tiny runs never go into the repository's folder


def test_the_stored_digits_results_match_the_package_protocol():
    """rem-digits-protocol: every run of ``DIGITS`` is stored under results/digits/, made under its configuration."""
    records = load_small(REPO / "results" / "digits", DIGITS)
    assert len(records) == len(runs(DIGITS))
    assert all(r["configuration"]["max_steps"] == DIGITS["max_steps"] for r in records)
