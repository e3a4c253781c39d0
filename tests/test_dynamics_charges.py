"""symbreak.dynamics.charges: the rescalings each form keeps, starts on and near the diagonal, grouping by the law."""

from __future__ import annotations

import pytest
import torch

from helpers import equal_within_rounding, exceeds_rounding
from symbreak import dynamics as D
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.numerics import unit_roundoff

F64 = torch.float64


@pytest.mark.parametrize("act", ["relu", "abs", "identity", "gelu", "tanh"])
@pytest.mark.parametrize("form", [KeyValueMLP, BilinearMLP, "rank2", GatedMLP])
def test_kept_rescalings_table_matches_the_layer_output(form, act):
    """Each pair KEPT_RESCALINGS keeps leaves a random float64 layer's output within rounding; each other changes it."""
    torch.manual_seed(12)
    if form == "rank2":
        layer = BilinearMLP(4, 3, 2, rank=2, activation=act, dtype=F64)
    else:
        layer = form(4, 3, 2, activation=act, dtype=F64)
    X = torch.randn(40, 4, generator=torch.Generator().manual_seed(13), dtype=F64)
    table = D.KEPT_RESCALINGS[type(layer)]
    assert sorted(table) == (["kv"] if isinstance(layer, KeyValueMLP) else ["kv", "qk", "qv"])
    for pair, condition in table.items():
        kept = condition is None or getattr(layer.activation, condition)
        moved = D.rescale(layer, pair, 2.5)
        check = equal_within_rounding if kept else exceeds_rounding
        assert check(layer, moved, X, param_rel_error=unit_roundoff(F64)), (pair, kept)


@pytest.mark.parametrize("rank", [None, 2])
def test_on_diagonal_is_a_copy_with_keys_equal_to_queries(rank):
    torch.manual_seed(1)
    layer = GatedMLP(3, 4, 2, dtype=F64) if rank is None else BilinearMLP(3, 4, 2, rank=rank, dtype=F64)
    before = [p.detach().clone() for p in layer.parameters()]
    start = D.on_diagonal(layer)
    assert torch.equal(start.K, layer.Q) and torch.equal(start.Q, layer.Q) and torch.equal(start.V, layer.V)
    assert D.diagonal_gap(start) == 0.0 and D.diagonal_gap(layer) > 0
    assert all(torch.equal(a, b) for a, b in zip(before, layer.parameters(), strict=True))


def test_off_diagonal_adds_normal_noise_of_the_stated_size_to_the_keys():
    """K − Q has mean ≈ 0 and standard deviation ≈ ε (2000 entries: within 10 %); Q and V are untouched."""
    torch.manual_seed(0)
    start = D.on_diagonal(GatedMLP(50, 40, 2, dtype=F64))
    generator = torch.Generator().manual_seed(4)
    eps = 1e-6
    moved = D.off_diagonal(start, eps, generator)
    noise = (moved.K - moved.Q).detach() / eps
    assert torch.equal(moved.Q, start.Q) and torch.equal(moved.V, start.V) and torch.equal(start.K, start.Q)
    assert abs(float(noise.mean())) < 0.1 and abs(float(noise.std()) - 1) < 0.1
    # one draw per key entry: the generator has advanced by K.numel() normal draws
    fresh = torch.Generator().manual_seed(4)
    torch.randn(start.K.numel(), generator=fresh, dtype=F64)
    assert torch.equal(torch.randn(3, generator=generator, dtype=F64), torch.randn(3, generator=fresh, dtype=F64))


def test_off_diagonal_bad_arguments():
    layer = GatedMLP(2, 1, 1, dtype=F64)
    with pytest.raises(ValueError, match="eps: expected a real number > 0, got 0"):
        D.off_diagonal(layer, 0, torch.Generator())
    with pytest.raises(TypeError, match="generator: expected a torch.Generator, got int"):
        D.off_diagonal(layer, 1e-3, 0)
    with pytest.raises(TypeError, match="layer: expected a form with queries .*got KeyValueMLP"):
        D.on_diagonal(KeyValueMLP(2, 1, 1))


def test_by_law_groups_values_by_the_prediction():
    values = {"a": {"qk": 1.0, "kv": 2.0}, "b": {"kv": 3.0}, "c": {"qk": 4.0, "kv": 5.0}}
    laws = {"a": {"qk": True, "kv": False}, "b": {"kv": True}, "c": {"qk": False, "kv": True}}
    assert D.by_law(values, laws) == {True: [1.0, 3.0, 5.0], False: [2.0, 4.0]}
    with pytest.raises(ValueError, match="laws: expected a prediction for 'b', pair 'qk'"):
        D.by_law({"b": {"qk": 1.0}}, laws)
