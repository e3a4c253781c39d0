"""The two ceilings of a layer's speed (``symbreak.yardsticks``): own products, ratios, peak, bandwidth, bytes."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from symbreak import yardsticks as Y
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, KeyValueMLP
from symbreak.timing import counted_flops

LAYERS = {
    "kv": lambda: KeyValueMLP(6, 10, 3),
    "gated": lambda: GatedMLP(6, 10, 3),
    "rank1": lambda: BilinearMLP(6, 10, 3, rank=1),
    "rankR": lambda: BilinearMLP(6, 10, 3, rank=4),
    "full": lambda: FullBilinearMLP(6, 10, 3),
    "packed": lambda: FullBilinearMLP(6, 10, 3, packed=True),
}


@pytest.mark.parametrize("name", LAYERS)
def test_product_shapes_hold_the_layers_weights(name):
    """k₁·p₁ is the number of entries of the first product's weights, m·d_out those of V (from the parameters)."""
    layer = LAYERS[name]()
    (k1, p1), (m, d_out) = Y.product_shapes(layer)
    first = sum(p.numel() for n, p in layer.named_parameters() if n != "V")
    assert (k1 * p1, m * d_out) == (first, layer.V.numel())


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("backward", [False, True])
def test_own_products_do_the_layers_matrix_products(name, backward):
    """Both closures count the FLOPs that FlopCounterMode counts in the layer's own pass (3× with the backward)."""
    torch.manual_seed(0)
    layer, n = LAYERS[name](), 9
    x = torch.randn(n, layer.d, requires_grad=backward)

    def layer_pass():
        out = layer(x)
        if backward:
            out.sum().backward()

    expected = counted_flops(layer_pass, n)
    for closure in Y.own_products(layer, n, backward=backward).values():
        assert counted_flops(closure, n) == expected


def test_blocked_own_products_cut_the_batch_into_the_layers_blocks(monkeypatch):
    """With blocks of 2 rows, a batch of 7 is 4 blocks: 4 times the 6 products, the same FLOPs as unblocked."""
    monkeypatch.setattr(Y, "_BLOCK_NUMBERS", 40)  # 40 // (2m = 20) = 2 rows for a gated layer of m = 10
    torch.manual_seed(1)
    closures = Y.own_products(GatedMLP(6, 10, 3), 7, backward=True)
    with FlopCounterMode(display=False) as counter:
        grads = closures["blocked"]()
    calls = counter.get_flop_counts()["Global"]
    assert sum(calls.values()) == 3 * 2 * 7 * (6 * 20 + 10 * 3)
    assert [tuple(g.shape) for g in grads] == [(7, 6), (20, 6), (7, 10), (10, 3)]


def test_own_products_bad_input():
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        Y.own_products(GatedMLP(3, 2), 0)
    with pytest.raises(TypeError, match="layer: expected a KeyValueMLP"):
        Y.product_shapes(torch.nn.Linear(3, 2))


def test_spread_and_its_bad_input():
    assert Y.spread([3.0, 1.0, 2.0, 10.0]) == Y.Spread(1.0, 2.5, 10.0)
    with pytest.raises(ValueError, match="values: expected a non-empty sequence"):
        Y.spread([])


def test_paired_ratios_pair_each_round_and_take_the_faster_product():
    times = {"run": iter([2.0, 4.0, 1.0]), "a": iter([1.0, 3.0, 1.5]), "b": iter([1.5, 1.0, 0.5])}
    runs = {name: (lambda name=name: name) for name in times}
    timer = lambda f: next(times[f()])  # noqa: E731
    ratios, fastest = Y.paired_ratios(runs["run"], {"a": runs["a"], "b": runs["b"]}, 3, timer)
    assert ratios == Y.Spread(0.25, 0.5, 0.5) and fastest == 1.0  # rounds: 1/2, 1/4, 0.5/1


def test_paired_ratios_bad_input():
    f = lambda: None  # noqa: E731
    with pytest.raises(TypeError, match="run: expected a callable"):
        Y.paired_ratios(1, {"a": f}, 1, lambda g: 1.0)
    with pytest.raises(TypeError, match="products: expected a non-empty mapping"):
        Y.paired_ratios(f, {}, 1, lambda g: 1.0)
    with pytest.raises(ValueError, match="rounds: expected an int >= 1, got 0"):
        Y.paired_ratios(f, {"a": f}, 0, lambda g: 1.0)


def test_peak_is_the_best_rate_over_the_shapes():
    seconds = itertools.cycle([2.0, 1.0])  # the second shape is timed at 1 s
    peak = Y.peak_gflops(lambda run: (run(), next(seconds))[1], shapes=[(10, 20, 30), (40, 5, 50)])
    assert peak == pytest.approx(max(2 * 10 * 20 * 30 / 2.0, 2 * 40 * 5 * 50 / 1.0) / 1e9)
    with pytest.raises(ValueError, match="shapes: expected"):
        Y.peak_gflops(lambda run: 1.0, shapes=[(1, 2)])
    with pytest.raises(TypeError, match="timer: expected a callable"):
        Y.peak_gflops(None)


def test_copy_bandwidth_counts_a_read_and_a_write_per_number():
    assert Y.copy_bandwidth(lambda run: (run(), 0.5)[1], numbers=1000) == pytest.approx(2 * 4 * 1000 / 0.5 / 1e9)
    with pytest.raises(ValueError, match="numbers: expected an int >= 1"):
        Y.copy_bandwidth(lambda run: 1.0, numbers=0)


def test_elementwise_bytes_count_reads_and_writes_but_not_products_or_views():
    a, b, c = torch.randn(8, 5), torch.randn(8, 5), torch.empty(8, 5)
    assert Y.elementwise_bytes(lambda: torch.sigmoid(a), 8) == 2 * 4 * 5  # read 5, write 5 numbers per row
    assert Y.elementwise_bytes(lambda: torch.mul(a, b, out=c), 8) == 3 * 4 * 5  # two reads, one write
    assert Y.elementwise_bytes(lambda: c.mul_(b), 8) == 3 * 4 * 5  # in place: c read and written, b read
    assert Y.elementwise_bytes(lambda: a @ b.T, 8) == 0
    assert Y.elementwise_bytes(lambda: a.view(40).unflatten(0, (8, 5)).unbind(1), 8) == 0
    with pytest.raises(ValueError, match="n: expected an int >= 1"):
        Y.elementwise_bytes(lambda: None, 0)
