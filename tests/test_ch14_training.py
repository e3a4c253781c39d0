"""Chapter 14–15 (E5): seeds trained together, checkpoints, the swap and parity checks, tables and the figure."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from symbreak import experiments as E
from symbreak.numerics import unit_roundoff
from symbreak.plotting import figure, interval_dots

SYMMETRIC = [f for f, (kind, act, _) in E.FORMS.items() if kind == "bilinear" or act == "identity"]
GATED_NONLINEAR = [f for f, (kind, act, _) in E.FORMS.items() if kind == "gated" and act != "identity"]
#: The gated forms whose block is not even (prop-parity: a gated block is even iff σ is odd, as tanh is).
GATED_NOT_EVEN = [f for f, (kind, act, _) in E.FORMS.items() if kind == "gated" and act not in ("identity", "tanh")]


@pytest.fixture(scope="module")
def tiny_tasks():
    return [E.make_task(name, n_train=60, n_test=40, d=4, seed=1) for name in E.TASKS]


@pytest.fixture(scope="module")
def tiny_comparison(tiny_tasks):
    return E.compare_seeds(
        tiny_tasks[1:], list(E.FORMS), [0, 1], reference_width=6, steps=12, lr=1e-2, checkpoints=[4], threads=1
    )


def test_plain_budget_gives_the_plain_mlp_its_reference_width(tiny_tasks):
    """rem-training-protocol, item 2: the budget is m₀ (d + d_out), with which the plain MLP has width m₀."""
    for task in tiny_tasks:
        budget = E.plain_budget(task, 32)
        assert budget == 32 * (task.d + task.d_out)
        assert E.width_for_budget("MLP (GELU)", task.d, task.d_out, budget) == 32
    with pytest.raises(ValueError, match="reference_width: expected an int >= 1"):
        E.plain_budget(tiny_tasks[0], 0)
    with pytest.raises(TypeError, match="task: expected a Task"):
        E.plain_budget("digits", 32)


def _train_alone(task: E.Task, form: str, seed: int, *, budget: int, steps: int, lr: float) -> tuple[float, float]:
    """The reference: one model trained by itself, full-batch Adam on its own loss (rem-training-protocol, item 3).

    Returns ``(training loss at the last step, test metric after it)``: the loss is the mean squared error (the
    cross-entropy for a classification task), evaluated before the step's update; the test metric the mean
    squared error over the variance of the test targets (the error rate).
    """
    model = E.make_model(form, task.d, task.d_out, budget, seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        out = model(task.X_train)
        if task.classification:
            loss = torch.nn.functional.cross_entropy(out, task.Y_train[:, 0])
        else:
            loss = ((out - task.Y_train) ** 2).mean()
        loss.backward()
        opt.step()
    with torch.no_grad():
        out = model(task.X_test)
        if task.classification:
            metric = (out.argmax(1) != task.Y_test[:, 0]).double().mean()
        else:
            metric = ((out - task.Y_test) ** 2).mean() / task.Y_test.var()
    return float(loss.detach()), float(metric)


def test_train_seeds_follows_separate_runs_step_for_step(tiny_tasks, one_thread):
    """rem-training-protocol, item 3: batched seeds equal separate runs of each model alone (full-batch Adam) up to
    the rounding of the batched kernels.

    In exact arithmetic the two are identical (the gradient of Σ_s L_s with respect to θ_s is ∇L_s,
    and Adam acts entry by entry); the kernels round differently, so after 20 steps the numbers
    agree to a few units of roundoff (observed: at most 4u); 2¹⁰ u is a generous band for that.
    """
    band = 2**10 * unit_roundoff(torch.float64)
    for task in tiny_tasks:
        for form in ["symmetric (SiLU)", "SwiGLU"]:
            results, losses, models = E.train_seeds(task, form, [0, 3], budget=150, steps=20, lr=1e-2)
            assert losses.shape == (2, 20) and len(models) == 2
            for i, (seed, batched) in enumerate(zip([0, 3], results[20], strict=True)):
                train_loss, test_metric = _train_alone(task, form, seed, budget=150, steps=20, lr=1e-2)
                assert (batched.task, batched.form, batched.seed) == (task.name, form, seed)
                assert batched.width == E.width_for_budget(form, task.d, task.d_out, 150)
                assert batched.parameters == sum(p.numel() for p in models[i].parameters())
                assert math.isclose(batched.train_loss, train_loss, rel_tol=band)
                assert abs(batched.test_metric - test_metric) <= band * max(1.0, test_metric)


def test_checkpoints_are_the_shorter_runs(tiny_tasks, one_thread):
    task = tiny_tasks[2]
    long, long_losses, _ = E.train_seeds(task, "GEGLU", [0, 1, 2], budget=150, steps=12, lr=1e-2, checkpoints=[5])
    short, short_losses, _ = E.train_seeds(task, "GEGLU", [0, 1, 2], budget=150, steps=5, lr=1e-2)
    assert sorted(long) == [5, 12]
    assert long[5] == short[5]
    assert np.array_equal(long_losses[:, :5], short_losses)
    with pytest.raises(ValueError, match="checkpoints: expected ints in"):
        E.train_seeds(task, "GEGLU", [0], budget=150, steps=5, lr=1e-2, checkpoints=[9])
    with pytest.raises(ValueError, match="steps: expected an int >= 1"):
        E.train_seeds(task, "GEGLU", [0], budget=150, steps=0, lr=1e-2)
    with pytest.raises(ValueError, match="seeds: expected at least one seed"):
        E.train_seeds(task, "GEGLU", [], budget=150, steps=5, lr=1e-2)


def test_compare_seeds_collects_everything_and_restores_threads(tiny_tasks, tiny_comparison):
    before = torch.get_num_threads()
    E.compare_seeds(tiny_tasks[1:2], ["ReGLU"], [0, 1], reference_width=3, steps=2, lr=1e-2, threads=1)
    assert torch.get_num_threads() == before
    c = tiny_comparison
    assert sorted(c.results) == [4, 12]
    assert len(c.results[12]) == 2 * len(E.FORMS) * 2
    assert set(c.budgets) == {"bilinear teacher", "odd target"}
    assert all(curve.shape == (2, 12) for curve in c.curves.values())
    assert len(c.models) == len(c.results[12])
    with pytest.raises(ValueError, match="seeds: expected at least 2 seeds"):
        E.compare_seeds(tiny_tasks, ["ReGLU"], [0], reference_width=3, steps=2, lr=1e-2)
    with pytest.raises(ValueError, match="threads: expected None or an int >= 1"):
        E.compare_seeds(tiny_tasks, ["ReGLU"], [0, 1], reference_width=3, steps=2, lr=1e-2, threads=0)
    with pytest.raises(ValueError, match="form: expected one of"):
        E.compare_seeds(tiny_tasks, ["GLU"], [0, 1], reference_width=3, steps=2, lr=1e-2)


def test_swap_is_rounding_for_symmetric_forms_thm_exchange(tiny_tasks, tiny_comparison):
    """thm-exchange on trained models: exchanging Q ↔ K keeps a symmetric block within its rounding bound."""
    X = tiny_tasks[1].X_test
    for (task, form, _), model in tiny_comparison.models.items():
        if form in SYMMETRIC:
            assert E.swap_rounding_ratio(model, X) <= 1.0, (task, form)
        if form in GATED_NONLINEAR:
            assert E.swap_rounding_ratio(model, X) > 1e6, (task, form)
    for r in tiny_comparison.results[12]:
        if r.form in SYMMETRIC:
            assert abs(r.swap_change) <= 1e-12
    plain = next(m for (_, f, _), m in tiny_comparison.models.items() if f == "MLP (ReLU)")
    with pytest.raises(TypeError, match="model: expected a Model with a BilinearMLP or GatedMLP block"):
        E.swap_rounding_ratio(plain, X)


def test_parity_of_trained_symmetric_blocks_prop_parity(tiny_tasks, tiny_comparison):
    """prop-parity on trained models: a symmetric block is even, bit for bit; a gated nonlinear one is not."""
    X = tiny_tasks[2].X_test
    with torch.no_grad():
        for (_, form, _), model in tiny_comparison.models.items():
            if form in SYMMETRIC:
                assert torch.equal(model.block(-X), model.block(X))
            if form in GATED_NOT_EVEN:
                assert not torch.allclose(model.block(-X), model.block(X))


def test_final_decrease():
    flat = np.ones((3, 50))
    assert E.final_decrease(flat) == 0.0
    halving = np.tile(np.linspace(2.0, 1.0, 11), (2, 1))
    assert E.final_decrease(halving, fraction=0.1) == pytest.approx((1.1 - 1.0) / 1.1)
    with pytest.raises(ValueError, match="losses: expected shape"):
        E.final_decrease(np.ones(5))
    with pytest.raises(ValueError, match="fraction: expected a number in"):
        E.final_decrease(flat, fraction=1.5)


def test_tables(tiny_comparison):
    results = tiny_comparison.results[12]
    tasks, forms = ["bilinear teacher", "odd target"], ["MLP (ReLU)", "SwiGLU"]
    rows = E.summary_rows(results, tasks, forms, formats={"odd target": (".1f", 100.0, " %")})
    summary = E.summarise(results)
    mean, half, _ = summary[("odd target", "SwiGLU")]
    assert rows[1][0] == "SwiGLU" and rows[1][2] == f"{100 * mean:.1f} ± {100 * half:.1f} %"
    swap_rows = E.summary_rows(results, tasks, forms, field="swap_change")
    assert swap_rows[0][1:] == ["—", "—"]
    budget = E.budget_rows(results, tasks, forms)
    teacher = next(r for r in results if r.task == "bilinear teacher" and r.form == "SwiGLU")
    assert budget[1] == ["SwiGLU", str(teacher.width), f"{teacher.parameters:,}", str(teacher.width), budget[1][4]]
    with pytest.raises(ValueError, match="results: expected a result for"):
        E.budget_rows(results, ["digits"], forms)
    assert E.interval_text(0.1234, 0.0101) == "0.123 ± 0.010"
    assert E.interval_text(-5.6e-17, 1e-17, "+.3f") == "+0.000 ± < 0.001"
    assert E.interval_text(0.18494, 4.9e-5, ".4f") == "0.1849 ± < 0.0001"  # 4.9e-5 rounds to 0.0000
    assert E.interval_text(0.18494, 5.1e-5, ".4f") == "0.1849 ± 0.0001"
    assert E.interval_text(1e-15, 1e-16, ".2f") == "< 0.01"  # |mean| + half < 0.005 + 0.005: within 0.01 of zero
    assert E.interval_text(1e-15, 1e-16, ".1f", 100.0, " %") == "< 0.1 %"
    assert E.interval_text(2.0, 0.0, ".3g") == "2 ± 0"  # not fixed-point: no bound
    assert E.interval_text(-0.25, 0.01, "+.1f", 100.0, " %") == "-25.0 ± 1.0 %"


def test_protocol_is_complete():
    """rem-training-protocol: the package's PROTOCOL fixes m₀, T, η, the early checkpoint and at least five seeds."""
    assert set(E.PROTOCOL) == {"reference_width", "steps", "lr", "checkpoints", "seeds", "threads"}
    assert len(E.PROTOCOL["seeds"]) >= 5
    assert all(0 < c < E.PROTOCOL["steps"] for c in E.PROTOCOL["checkpoints"])


def test_interval_dots():
    fig, axes = figure()
    interval_dots(
        axes[0],
        ["a", "b", "c"],
        {"early": ([1, 2, 3], [0.1, 0.2, float("nan")]), "late": ([1, 1, 1], [0, 0, 0])},
        xlabel="x",
        separators=[1],
    )
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["a", "b", "c"]
    assert axes[0].get_ylim() == (2.5, -0.5)
    assert axes[0].get_xlabel() == "x"
    with pytest.raises(ValueError, match="series\\['s'\\]: expected 3 means"):
        interval_dots(axes[0], ["a", "b", "c"], {"s": ([1, 2], [0, 0])}, xlabel="x")
    with pytest.raises(ValueError, match="separators: expected row indices"):
        interval_dots(axes[0], ["a", "b"], {"s": ([1, 2], [0, 0])}, xlabel="x", separators=[2])
    with pytest.raises(ValueError, match="half-widths >= 0"):
        interval_dots(axes[0], ["a"], {"s": ([1], [-1])}, xlabel="x")
    with pytest.raises(ValueError, match="series: expected at least one series"):
        interval_dots(axes[0], ["a"], {}, xlabel="x")


def _result(form: str, seed: int, value: float) -> E.Result:
    return E.Result("t", form, seed, 1, 1, 0.0, value, None)


def test_welch_difference_matches_scipy():
    from scipy import stats

    a, b = [0.31, 0.29, 0.35, 0.30, 0.33], [0.25, 0.27, 0.22, 0.30, 0.26, 0.24]
    results = [_result("A", i, v) for i, v in enumerate(a)] + [_result("B", i, v) for i, v in enumerate(b)]
    diff, half, nu = E.welch_difference(results, "t", "A", "B")
    reference = stats.ttest_ind(a, b, equal_var=False)
    low, high = reference.confidence_interval(0.95)
    assert diff == pytest.approx(np.mean(a) - np.mean(b))
    assert (diff - half, diff + half) == pytest.approx((low, high))
    assert nu == pytest.approx(reference.df)
    assert E.welch_difference([_result("A", 0, 1.0), _result("A", 1, 1.0)] * 2, "t", "A", "A")[1] == 0.0
    with pytest.raises(ValueError, match="results: expected at least 2 values"):
        E.welch_difference(results, "t", "A", "C")


def test_ranking():
    results = [_result("A", i, 0.3 + 0.01 * i) for i in range(3)] + [_result("B", i, 0.2) for i in range(3)]
    assert E.ranking(results, "t", ["A", "B"]) == ["B", "A"]
    with pytest.raises(ValueError, match="results: expected values of 'test_metric'"):
        E.ranking(results, "t", ["A", "C"])


def test_difference_rows_and_form_verdicts():
    results = [_result("A", i, 0.3 + 0.01 * i) for i in range(3)] + [_result("B", i, 0.2 + 0.02 * i) for i in range(3)]
    diff, half, _ = E.welch_difference(results, "t", "A", "B")
    assert E.difference_rows(results, ["t"], [("A", "B")]) == [["A − B", f"{diff:+.3f} ± {half:.3f}"]]
    assert E.form_verdicts("SwiGLU") == {"exchange": False, "scale_pos": False, "parity": False}
    assert E.form_verdicts("ReGLU")["scale_pos"] is True
    assert E.form_verdicts("symmetric rank-4 (SiLU)") == {"exchange": True, "scale_pos": True, "parity": True}
    assert E.form_verdicts("bilinear (σ = id)")["exchange"] is True
    assert E.form_verdicts("MLP (GELU)") == {"exchange": None, "scale_pos": None, "parity": False}


def test_odd_target_parts_rebuild_make_task():
    task = E.make_task("odd target", n_train=50, n_test=30, d=4, seed=3)
    teacher, U, mean, std = E.odd_target_parts(n_train=50, n_test=30, d=4, seed=3)
    X = torch.cat([task.X_train, task.X_test])
    Y = torch.cat([task.Y_train, task.Y_test])
    with torch.no_grad():
        assert torch.equal((teacher(X) + torch.tanh(X @ U) - mean) / std, Y)


def test_odd_target_floor_cor_parity_comparison():
    """cor-parity-comparison: even block + affine map cannot beat the floor; an affine map alone does no better."""
    floor = E.odd_target_floor(d=4, samples=20_000)
    assert 0 < floor < 1
    teacher, U, mean, std = E.odd_target_parts(d=4)
    g = torch.Generator().manual_seed(5)
    X = torch.randn(20_000, 4, generator=g, dtype=torch.float64)
    with torch.no_grad():
        Y = (teacher(X) + torch.tanh(X @ U) - mean) / std
        # the best even-plus-affine model we can write down: the exact even part plus the best linear map
        even = (teacher(X) - mean) / std
        odd = torch.tanh(X @ U) / std
        S = torch.linalg.lstsq(X, odd).solution
        error = float(((Y - even - X @ S) ** 2).mean() / Y.var())
    assert error == pytest.approx(floor, rel=0.05)
    with pytest.raises(ValueError, match="samples: expected an int >= 10·d"):
        E.odd_target_floor(d=4, samples=5)


def test_torch_threads_sets_and_restores():
    before = torch.get_num_threads()
    with E.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with E.torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads: expected None or an int >= 1"):
        with E.torch_threads(0):
            pass


def test_training_error(tiny_tasks, tiny_comparison):
    task = tiny_tasks[1]
    model = tiny_comparison.models[("bilinear teacher", "SwiGLU", 0)]
    with torch.no_grad():
        expected = float(((model(task.X_train) - task.Y_train) ** 2).mean() / task.Y_train.var())
    assert E.training_error(model, task) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(TypeError, match="model: expected a Model"):
        E.training_error(model.block, task)
    with pytest.raises(TypeError, match="task: expected a Task"):
        E.training_error(model, "digits")


def test_swap_check_thm_exchange_prop_parity(tiny_tasks, tiny_comparison):
    """thm-exchange and prop-parity over a whole comparison: the symmetric blocks within the rounding bound and
    even bit for bit, the gated ones far outside it; the counts from the forms' definitions."""
    check = E.swap_check(tiny_comparison, tiny_tasks[1:])
    assert check.n_symmetric == sum(form in SYMMETRIC for _, form, _ in tiny_comparison.models)
    assert check.symmetric_ratio <= 1.0 and check.gated_ratio > 1e6 and check.even is True
    assert 0 <= check.largest_swap <= 1e-12
    final = tiny_comparison.results[max(tiny_comparison.results)]
    assert check.largest_swap == max(abs(r.swap_change) for r in final if r.form in SYMMETRIC)
    with pytest.raises(ValueError, match="tasks: expected every task of the comparison"):
        E.swap_check(tiny_comparison, tiny_tasks[1:2])
    with pytest.raises(TypeError, match="comparison: expected a Comparison"):
        E.swap_check(tiny_comparison.models, tiny_tasks[1:])
    with pytest.raises(TypeError, match="tasks: expected a sequence of Task"):
        E.swap_check(tiny_comparison, tiny_tasks[1])
    only_symmetric = E.Comparison(
        tiny_comparison.results,
        tiny_comparison.curves,
        {k: m for k, m in tiny_comparison.models.items() if k[1] in SYMMETRIC},
        tiny_comparison.budgets,
    )
    with pytest.raises(ValueError, match="comparison: expected exchange-symmetric and gated forms"):
        E.swap_check(only_symmetric, tiny_tasks[1:])


def test_swap_check_sees_a_broken_parity(tiny_tasks, tiny_comparison):
    """A symmetric block with an odd part added is no longer even: the check must say so."""
    from symbreak.layers import BilinearMLP

    class WithOddPart(BilinearMLP):
        """``B(x) + 10⁻³ (Σ_i x_i) 1``: odd in ``x``, so ``B(−x) ≠ B(x)``."""

        def forward(self, x):
            out = super().forward(x)
            return out + 1e-3 * x.sum(-1, keepdim=True).expand_as(out)

    key = next(k for k in tiny_comparison.models if k[1] == "symmetric (SiLU)")
    broken = copy.deepcopy(tiny_comparison.models[key])
    broken.block.__class__ = WithOddPart
    models = dict(tiny_comparison.models) | {key: broken}
    changed = E.Comparison(tiny_comparison.results, tiny_comparison.curves, models, tiny_comparison.budgets)
    assert E.swap_check(changed, tiny_tasks[1:]).even is False
    assert E.swap_check(tiny_comparison, tiny_tasks[1:]).even is True


def test_training_errors_on_a_classification_task(tiny_tasks, one_thread):
    digits = tiny_tasks[0]
    comparison = E.compare_seeds([digits], ["ReGLU", "MLP (GELU)"], [0, 1], reference_width=3, steps=5, lr=1e-2)
    errors = E.training_errors(comparison, [digits])
    assert set(errors) == set(comparison.models)
    for key, model in comparison.models.items():
        with torch.no_grad():
            wrong = (model(digits.X_train).argmax(1) != digits.Y_train[:, 0]).sum().item()
        assert errors[key] == wrong / len(digits.X_train)
    with pytest.raises(ValueError, match="tasks: expected every task of the comparison"):
        E.training_errors(comparison, tiny_tasks[1:])
