"""The comparison (E5) on a tiny configuration: deterministic, parameter-matched, swap test, pairs and readings."""

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
    assert digits.classification and digits.d < 64 and digits.d_out == 10  # constant pixels dropped
    assert E.digits_dropped() == (64 - E.make_task("digits").d, E.digits_dropped()[1])
    assert float(digits.X_train.mean(0).abs().max()) < 1e-12
    # no pixel constant on the training images, and no spread below one grey level blown up (issue 15)
    assert float(digits.X_train.std(0).min()) > 0 and float(digits.X_test.abs().max()) <= 16 + 1e-9


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
        per_unit = {"kv": 12, "gated": 20, "symmetrised": 20, "bilinear": 16 * rank + 4}[kind]
        assert abs(m * per_unit - 2000) <= per_unit / 2


def test_every_model_has_the_same_skip_path():
    sizes = {form: sum(p.numel() for p in E.make_model(form, 8, 4, 2000, seed=0).skip.parameters()) for form in E.FORMS}
    assert set(sizes.values()) == {8 * 4 + 4}


def test_training_is_deterministic_and_swap_is_zero_for_symmetric(tiny_tasks, one_thread):
    task = tiny_tasks[1]
    a, losses_a, _ = E.train_seeds(task, "symmetric (SiLU)", [3], budget=200, steps=20, lr=1e-2)
    b, losses_b, _ = E.train_seeds(task, "symmetric (SiLU)", [3], budget=200, steps=20, lr=1e-2)
    assert a == b and (losses_a == losses_b).all()
    assert abs(a[20][0].swap_change) <= 1e-12  # exchange symmetry of the symmetric form (thm-exchange)
    gated, _, _ = E.train_seeds(task, "SwiGLU", [3], budget=200, steps=20, lr=1e-2)
    assert abs(gated[20][0].swap_change) > 1e-6
    plain, _, _ = E.train_seeds(task, "MLP (GELU)", [3], budget=200, steps=5, lr=1e-2)
    assert plain[5][0].swap_change is None


def test_compare_seeds_and_summarise(tiny_tasks, one_thread):
    comparison = E.compare_seeds(
        tiny_tasks[1:2], ["MLP (ReLU)", "ReGLU"], [0, 1, 2], reference_width=8, steps=10, lr=1e-2
    )
    results = comparison.results[10]
    assert len(results) == 6
    summary = E.summarise(results)
    mean, half, n = summary[("bilinear teacher", "ReGLU")]
    values = [r.test_metric for r in results if r.form == "ReGLU"]
    assert n == 3 and mean == pytest.approx(sum(values) / 3)
    assert half > 0


def test_matched_pairs_are_those_of_p1_p2_and_the_control():
    """P1: each of ReGLU, GEGLU, SwiGLU against the symmetric rank-1 form with the same σ; P2: the bilinear layer
    against each of them; control: each gated form against its symmetrised control with the same σ. Written from
    the forms' definitions (kind, σ, rank), not from the pairs' names."""
    gated = [f for f, (kind, act, _) in E.FORMS.items() if kind == "gated" and act in ("relu", "gelu", "silu")]
    p1 = {(g, s) for g in gated for s, spec in E.FORMS.items() if spec == ("bilinear", E.FORMS[g][1], 1)}
    bilinear = next(f for f, spec in E.FORMS.items() if spec == ("gated", "identity", 1))
    p2 = {(bilinear, g) for g in gated}
    control = {(g, s) for g in gated for s, spec in E.FORMS.items() if spec == ("symmetrised", E.FORMS[g][1], 1)}
    assert set(E.PRIMARY["P1"]) == p1 and set(E.PRIMARY["P2"]) == p2 and set(E.PRIMARY["control"]) == control
    assert len(p1) == len(p2) == 3 and len(control) == 2
    assert set(E.MATCHED_PAIRS) == p1 | p2 | control | set(E.EXPLORATORY)


def test_exchange_groups_follow_thm_exchange():
    """Symmetric rank-R blocks, the bilinear layer (σ = identity) and the symmetrised controls
    (prop-symmetrised-exchange) keep the exchange; nonlinear gated ones do not."""
    symmetric, gated = E.exchange_groups(list(E.FORMS))
    assert symmetric == [
        f for f, (kind, act, _) in E.FORMS.items() if kind in ("bilinear", "symmetrised") or act == "identity"
    ]
    assert gated == [f for f, (kind, act, _) in E.FORMS.items() if kind == "gated" and act != "identity"]
    assert E.exchange_groups(["MLP (ReLU)"]) == ([], [])
    with pytest.raises(TypeError, match="forms: expected a sequence of form names"):
        E.exchange_groups("SwiGLU")


def _result(form: str, seed: int, value: float, swap: float | None = None) -> E.Result:
    return E.Result("t", form, seed, 1, 1, 0.0, value, swap)


def test_pair_readings_read_welchs_interval():
    from scipy import stats

    a, b, c = [0.20, 0.22, 0.21, 0.23], [0.30, 0.31, 0.29, 0.32], [0.19, 0.26, 0.21, 0.25]
    results = [_result(f, i, v) for f, vs in (("A", a), ("B", b), ("C", c)) for i, v in enumerate(vs)]
    intervals = [stats.ttest_ind(x, y, equal_var=False).confidence_interval(0.95) for x, y in [(a, b), (b, a), (a, c)]]
    assert intervals[0].high < 0 < intervals[1].low and intervals[2].low < 0 < intervals[2].high  # the references
    assert E.pair_readings(results, "t", [("A", "B"), ("B", "A"), ("A", "C")]) == ["A < B", "B > A", "A ~ C"]
    with pytest.raises(ValueError, match="results: expected at least 2 values"):
        E.pair_readings(results, "t", [("A", "D")])


def test_swap_effects_are_mean_swap_and_its_ratio_to_the_test_error():
    swaps, errors = [0.30, 0.34, 0.32], [0.20, 0.22, 0.24]
    results = [_result("G", i, e, s) for i, (e, s) in enumerate(zip(errors, swaps, strict=True))]
    results += [_result("P", i, 0.5) for i in range(3)]
    mean, ratio = E.swap_effects(results, "t", ["G"])["G"]
    assert mean == pytest.approx(0.32) and ratio == pytest.approx(0.32 / 0.22)
    with pytest.raises(ValueError, match="forms: expected forms with a swap test"):
        E.swap_effects(results, "t", ["P"])


def test_bad_arguments(tiny_tasks):
    with pytest.raises(ValueError, match="name: expected one of"):
        E.make_task("mnist")
    with pytest.raises(ValueError, match="form: expected one of"):
        E.width_for_budget("GLU", 4, 2, 100)
    with pytest.raises(ValueError, match="seeds: expected at least 2 seeds"):
        E.compare_seeds(tiny_tasks[1:2], ["ReGLU"], [0], reference_width=4, steps=1, lr=1e-2)


def test_symmetrised_control_keeps_exchange_prop_symmetrised_exchange():
    """prop-symmetrised-exchange: Q ↔ K leaves ½[σ(a)b + σ(b)a]V unchanged for every σ (bit for bit: the two
    products are added in the other order), while the gated layer with the same weights changes; and the decided
    verdicts: exchange kept for every σ, parity and inverse scaling lost for GELU and SiLU."""
    from symbreak.layers import GatedMLP
    from symbreak.layers.symmetrised import SymmetrisedGatedMLP

    inputs = torch.Generator().manual_seed(7)
    for act in ("gelu", "silu", "relu", "tanh", "sigmoid"):
        torch.manual_seed(3)  # the weights' stream, independent of the inputs'
        layer = SymmetrisedGatedMLP(5, 7, 3, activation=act, dtype=torch.float64)
        gated = GatedMLP.from_weights(layer.Q.detach(), layer.K.detach(), layer.V.detach(), activation=act)
        X = torch.randn(200, 5, generator=inputs, dtype=torch.float64)
        with torch.no_grad():
            assert torch.equal(E.exchanged(layer)(X), layer(X)), act
            assert not torch.allclose(E.exchanged(gated)(X), gated(X)), act
            assert E.relative_swap_change(layer, X) == 0.0
        assert E.symmetrised_keeps("exchange", act) is True
    for act in ("gelu", "silu"):
        assert E.symmetrised_keeps("parity", act) is False and E.symmetrised_keeps("scale_pos", act) is False
    assert E.symmetrised_keeps("parity", "tanh") is True
    with pytest.raises(ValueError, match="symmetry: expected one of"):
        E.symmetrised_keeps("gauge", "silu")


def test_skip_path_is_drawn_from_n_0_1_over_fan_in():
    """The skip path's S has entries N(0, 1/d) (the protocol's initialisation) and c = 0 (issue 15)."""
    S = torch.cat([E.make_model("SwiGLU", 64, 4, 2000, seed=s).skip.weight.detach().reshape(-1) for s in range(20)])
    bias = E.make_model("SwiGLU", 64, 4, 2000, seed=0).skip.bias
    # 5120 draws: the sample variance of N(0, 1/64) lies within 10 % of 1/64 except with probability ~1e-6
    assert abs(float(S.var()) * 64 - 1) < 0.1 and torch.equal(bias, torch.zeros_like(bias))


def test_pair_tests_holm_and_better_than_all():
    """readings: the primary family's p-values are Holm's adjustment of Welch's; words follow reading()."""
    results = [_result(f, s, v + 0.01 * s) for f, v in (("a", 0.0), ("b", 1.0), ("c", 0.001)) for s in range(5)]
    tests = E.pair_tests(results, ["t"], [("a", "b"), ("a", "c")], corrected=True)
    raw = [E.welch([0.01 * s for s in range(5)], [v + 0.01 * s for s in range(5)]).p_value for v in (1.0, 0.001)]
    assert [t.p_adjusted for t in tests] == E.holm(raw)
    assert [t.word for t in tests] == ["better", "level"]
    assert E.better_than_all(results, "t", "a", ["b", "c"]) == (False, ["c"])
