"""The comparison runner (E5) on a tiny configuration: deterministic, parameter-matched, swap test."""

from __future__ import annotations

import pytest
import torch

from symbreak import experiments as E


@pytest.fixture(scope="module")
def tiny_tasks():
    return [E.make_task(name, n_train=60, n_test=40, d=4, seed=1) for name in E.TASKS]


def test_tasks_are_deterministic_and_standardised(tiny_tasks):
    again = E.make_task("odd target", n_train=60, n_test=40, d=4, seed=1)
    assert torch.equal(again.X_train, tiny_tasks[2].X_train) and torch.equal(again.Y_test, tiny_tasks[2].Y_test)
    digits = tiny_tasks[0]
    assert digits.classification and digits.d == 64 and digits.d_out == 10
    assert float(digits.X_train.mean(0).abs().max()) < 1e-12


def test_odd_target_has_an_odd_component():
    """The odd task is not even in x: y(x) ≠ y(−x) — which an even block alone could not fit."""
    plain = E.make_task("bilinear teacher", n_train=50, n_test=10, d=4, seed=2)
    odd = E.make_task("odd target", n_train=50, n_test=10, d=4, seed=2)
    assert torch.equal(plain.X_train, odd.X_train)
    assert float((odd.Y_train - plain.Y_train).abs().max()) > 0.1


def test_budgets_are_matched():
    for form in E.FORMS:
        m = E.width_for_budget(form, 8, 4, 2000)
        kind, _, rank = E.FORMS[form]
        per_unit = {"kv": 12, "gated": 20, "bilinear": 16 * rank + 4}[kind]
        assert abs(m * per_unit - 2000) <= per_unit / 2


def test_every_model_has_the_same_skip_path():
    sizes = {form: sum(p.numel() for p in E.make_model(form, 8, 4, 2000, seed=0).skip.parameters()) for form in E.FORMS}
    assert set(sizes.values()) == {8 * 4 + 4}


def test_run_is_deterministic_and_swap_is_zero_for_symmetric(tiny_tasks):
    task = tiny_tasks[1]
    a = E.run(task, "symmetric (SiLU)", 3, budget=200, steps=20, lr=1e-2)
    b = E.run(task, "symmetric (SiLU)", 3, budget=200, steps=20, lr=1e-2)
    assert a == b
    assert abs(a.swap_change) <= 1e-12  # exchange symmetry of the symmetric form (thm-exchange)
    gated = E.run(task, "SwiGLU", 3, budget=200, steps=20, lr=1e-2)
    assert abs(gated.swap_change) > 1e-6
    assert E.run(task, "MLP (GELU)", 3, budget=200, steps=5, lr=1e-2).swap_change is None


def test_compare_and_summarise(tiny_tasks):
    results = E.compare(tiny_tasks[1:2], ["MLP (ReLU)", "ReGLU"], [0, 1, 2], budget=200, steps=10, lr=1e-2)
    assert len(results) == 6
    summary = E.summarise(results)
    mean, half, n = summary[("bilinear teacher", "ReGLU")]
    values = [r.test_metric for r in results if r.form == "ReGLU"]
    assert n == 3 and mean == pytest.approx(sum(values) / 3)
    assert half > 0


def test_bad_arguments(tiny_tasks):
    with pytest.raises(ValueError, match="name: expected one of"):
        E.make_task("mnist")
    with pytest.raises(ValueError, match="form: expected one of"):
        E.width_for_budget("GLU", 4, 2, 100)
    with pytest.raises(ValueError, match="seeds: expected at least 2 seeds"):
        E.compare(tiny_tasks[1:2], ["ReGLU"], [0], budget=100, steps=1, lr=1e-2)
