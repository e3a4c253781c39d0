"""The benchmark's FLOP counts and result format (``symbreak.benchmark``)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from symbreak import benchmark as B
from symbreak import costs
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, GlobalQueryMLP, KeyValueMLP
from symbreak.timing import counted_flops
from symbreak.yardsticks import Spread


@pytest.mark.parametrize(
    ("form", "layer"),
    [
        ("kv", KeyValueMLP(6, 10, 3)),
        ("rank1", BilinearMLP(6, 10, 3, rank=1)),
        ("rankR", BilinearMLP(6, 10, 3, rank=4)),
        ("gated", GatedMLP(6, 10, 3)),
        ("full", FullBilinearMLP(6, 10, 3)),
        ("full", FullBilinearMLP(6, 10, 3, packed=True)),
    ],
)
def test_matmul_flops_are_what_torch_counts(form, layer):
    x = torch.randn(7, 6)
    with FlopCounterMode(display=False) as counter:
        B.forward(layer, x)()
    assert B.matmul_flops(form, layer, 7) == counter.get_total_flops()


def test_matmul_flops_bad_input():
    with pytest.raises(ValueError, match="form: expected one of"):
        B.matmul_flops("global_query", KeyValueMLP(3, 2), 4)
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        B.matmul_flops("kv", KeyValueMLP(3, 2), 0)


def test_forward_backward_fills_every_gradient():
    layer = GatedMLP(4, 5)
    B.forward_backward(layer, torch.randn(3, 4))()
    assert all(p.grad is not None for p in layer.parameters())


def test_recorded_reference_has_the_benchmark_shape():
    ref = B.reference_results()
    assert {(r["form"], r["pass"]) for r in ref["layers"]} == {
        (f, p) for f in ("kv", "rank1", "rankR", "gated", "full") for p in ("forward", "forward+backward")
    }
    assert ref["config"]["batch"] == B.N and ref["config"]["d"] == B.D and ref["config"]["R"] == B.RANK


def test_check_results_names_what_is_wrong():
    ref = B.reference_results()
    with pytest.raises(TypeError, match="results"):
        B.check_results([])
    broken = copy.deepcopy(ref)
    del broken["matmul_gflops"]
    with pytest.raises(ValueError, match="matmul_gflops"):
        B.check_results(broken)
    broken = copy.deepcopy(ref)
    broken["layers"] = broken["layers"][1:]
    with pytest.raises(ValueError, match="one row per form and pass"):
        B.check_results(broken)
    broken = copy.deepcopy(ref)
    broken["layers"][0]["ratio_to_matmul"] = -1.0
    with pytest.raises(ValueError, match="ratio_to_matmul"):
        B.check_results(broken)
    broken = copy.deepcopy(ref)
    broken["layers"][0]["ratio_to_own_products_min"] = 2 * broken["layers"][0]["ratio_to_own_products"]
    with pytest.raises(ValueError, match="min <= median <= max"):
        B.check_results(broken)


# ---- the measurements of the cost chapter ----------------------------------------------------------------------
# Expected counts below are the proof of prop-cost-formulas read at small sizes (d_out = d): the product with V costs
# m·d_out parameters and 2m·d_out FLOPs; kv adds K (md, 2md FLOPs) and keeps 2m numbers; gated adds Q and K (2md,
# 4md FLOPs) and keeps 4m; the packed full form holds d(d+1)/2 numbers per unit and keeps d(d+1)/2 + 2m.


def _hand_counts(form: str, d: int, m: int) -> tuple[int, int, int]:
    """(parameters, matmul FLOPs per token, kept per token) of three forms, from the proof's text."""
    packed = d * (d + 1) // 2
    return {
        "kv": (m * d + m * d, 2 * m * d + 2 * m * d, 2 * m),
        "gated": (2 * m * d + m * d, 4 * m * d + 2 * m * d, 4 * m),
        "full_packed": (m * packed + m * d, 2 * m * packed + 2 * m * d, packed + 2 * m),
    }[form]


def test_formulas_names_every_cost_form():
    assert B.formulas("full_features") is costs.FULL_FEATURES
    assert all(B.formulas(f) is costs.FORMS[f] for f in B.COST_FORMS if f != "full_features")
    with pytest.raises(ValueError, match="form: expected one of .*'full_packed'.*, got 'dense'"):
        B.formulas("dense")
    with pytest.raises(TypeError, match="form: expected a form name"):
        B.cost_layer(3, 4, 5, 2)


def test_cost_layers_are_the_chapters_layers_in_its_order():
    """Same classes, options and weights as building the chapter's dictionary by hand from the same seed."""
    d, m, R = 5, 7, 3
    torch.manual_seed(11)
    built = B.cost_layers(d, m, R, activation="relu")
    torch.manual_seed(11)
    by_hand = [
        KeyValueMLP(d, m, activation="relu"),
        GlobalQueryMLP(d, m, activation="relu"),
        BilinearMLP(d, m, rank=1, activation="relu"),
        BilinearMLP(d, m, rank=R, activation="relu"),
        GatedMLP(d, m, activation="relu"),
        BilinearMLP(d, m, rank=d, activation="relu"),
        FullBilinearMLP(d, m, activation="relu"),
        FullBilinearMLP(d, m, activation="relu", packed=True),
    ]
    assert list(built) == list(B.COST_FORMS)
    for layer, reference in zip(built.values(), by_hand, strict=True):
        assert type(layer) is type(reference) and repr(layer) == repr(reference)
        for p, q in zip(layer.parameters(), reference.parameters(), strict=True):
            assert torch.equal(p, q)
    # without an activation each class keeps its own default
    assert repr(B.cost_layer("kv", d, m, R)) == repr(KeyValueMLP(d, m))
    assert repr(B.cost_layer("rankR", d, m, R)) == repr(BilinearMLP(d, m, rank=R))


def test_count_costs_and_kept_per_token_match_the_proof():
    d, m = 4, 5
    torch.manual_seed(0)
    layers = {f: B.cost_layer(f, d, m, 2, activation="silu") for f in ("kv", "gated", "full_packed")}
    x = torch.randn(3, d, generator=torch.Generator().manual_seed(1))
    counts = B.count_costs(layers, x)
    kept = B.kept_per_token(layers, x)
    for form, (params, flops, memory) in ((f, _hand_counts(f, d, m)) for f in layers):
        c = counts[form]
        assert (c.parameters, c.stored, c.matmul_flops, c.counted, c.memory) == (params, params, flops, flops, memory)
        assert kept[form] == memory
    with pytest.raises(TypeError, match="layers: expected a mapping of form names to layers, got list"):
        B.count_costs(list(layers.values()), x)
    with pytest.raises(ValueError, match=r"x: expected a 2-d tensor \(n, d\) of tokens, got torch.Size\(\[4\]\)"):
        B.count_costs(layers, torch.zeros(4))


def test_counted_flops_sweep_counts_each_form_at_m_proportional_to_d():
    counted = B.counted_flops_sweep([2, 4], units_per_width=3, rank=2)
    assert list(counted) == list(B.COST_FORMS)
    assert counted["kv"] == [_hand_counts("kv", w, 3 * w)[1] for w in (2, 4)]
    assert counted["full_packed"] == [_hand_counts("full_packed", w, 3 * w)[1] for w in (2, 4)]
    with pytest.raises(TypeError, match="widths: expected a non-empty sequence of ints"):
        B.counted_flops_sweep([], 4, 2)


@pytest.mark.parametrize(
    ("form", "degrees"),
    [
        # params md + m d_out, FLOPs 2md + 2m d_out; at m = 4d: 16 d²
        ("kv", (1, 1, 0, 1, 1, 0, 2)),
        # params 2Rmd + m d_out, FLOPs 4Rmd + (2R − 1)m + 2m d_out; at m = 4d, R = 4: quadratic in d
        ("rankR", (1, 1, 1, 1, 1, 1, 2)),
        # params m d(d+1)/2 + m d_out; at m = 4d: cubic
        ("full_packed", (2, 1, 0, 2, 1, 0, 3)),
    ],
)
def test_growth_degrees(form, degrees):
    assert B.growth_degrees(form) == degrees


def test_time_growth_with_a_flop_counting_timer():
    """A fake timer returning the run's FLOPs: the slopes are then the FLOP growth, exactly the degrees of the
    chapter's figure (2 against d, 3 for the packed full form, 1 against m and R) where one term dominates."""
    torch.manual_seed(0)
    growth = B.time_growth(lambda run: float(counted_flops(run, 1)), n_tokens=2)
    expected = {("d", f): 3 if f == "full_packed" else 2 for f in B.GROWTH_FORMS}
    expected |= {("m", f): 1 for f in B.GROWTH_FORMS} | {("R", "rankR"): 1}
    assert growth.degrees == expected
    assert list(growth.seconds) == list(expected)
    assert growth.slopes["d", "kv"] == pytest.approx(2.0, abs=1e-9)  # 16 d² exactly
    assert growth.slopes["m", "kv"] == pytest.approx(1.0, abs=1e-9)
    assert 2.5 < growth.slopes["d", "full_packed"] < 3.0  # m d(d+1) + 8d²: below 3 at small d
    d_values = B.GROWTH_SWEEPS["d"][0]
    assert growth.seconds["d", "kv"] == [_hand_counts("kv", w, 4 * w)[1] for w in d_values]
    with pytest.raises(ValueError, match="n_tokens: expected an int >= 1, got 0"):
        B.time_growth(lambda run: 1.0, n_tokens=0)
    with pytest.raises(TypeError, match="timer: expected a callable run -> seconds, got float"):
        B.time_growth(1.0)


def test_throughput_rows_with_fake_yardsticks():
    calls, products = [], []

    def ratio(run, n, flops, k, backward):
        calls.append((n, flops, k, backward))
        return 0.5, 1e-3

    def overhead(run, own):
        products.append(sorted(own))
        return Spread(0.7, 0.8, 0.9), 2e-3

    torch.manual_seed(0)
    layers = B.benchmark_layers(d=8, m=16, rank=2, d_full=4, m_full=6)
    rows = B.throughput(layers, 4, ratio, overhead)
    assert [(r["form"], r["pass"]) for r in rows] == [
        (f, p) for f in ("kv", "rank1", "rankR", "gated", "full") for p in ("forward", "forward+backward")
    ]
    kv_flops = 4 * _hand_counts("kv", 8, 16)[1]
    full_flops = 4 * _hand_counts("full_packed", 4, 6)[1]
    assert calls[0] == (4, kv_flops, 8, False) and calls[1] == (4, kv_flops, 8, True)
    assert calls[-1] == (4, full_flops, 4 * 5 // 2, True)  # the yardstick's width: the packed features
    assert products == [["blocked", "unblocked"]] * 10
    assert rows[0]["gflops"] == pytest.approx(kv_flops / 1e-3 / 1e9)  # the faster of the two timings
    assert rows[1]["gflops"] == pytest.approx(3 * kv_flops / 1e-3 / 1e9)
    assert rows[1]["matmul_flops_per_token"] == 3 * _hand_counts("kv", 8, 16)[1]
    assert all(r["ratio_to_matmul"] == 0.5 and r["peak_mib"] > 0 for r in rows)
    assert all((r[f"ratio_to_own_products{s}"] for s in ("_min", "", "_max")) for r in rows)
    assert [r["ratio_to_own_products"] for r in rows] == [0.8] * 10
    # the gated forward: σ(a) reads and writes m numbers, σ(a)·b reads 2m and writes m: 5m float32 numbers
    gated = next(r for r in rows if (r["form"], r["pass"]) == ("gated", "forward"))
    assert gated["elementwise_bytes_per_token"] == 5 * 16 * 4
    with pytest.raises(ValueError, match="n: expected an int >= 1, got 0"):
        B.throughput(layers, 0, ratio, overhead)


def test_roofline_reads_each_row_against_the_peak_and_the_bandwidth():
    row = {"gflops": 50.0, "matmul_flops_per_token": 2000.0, "elementwise_bytes_per_token": 300.0}
    (out,) = B.roofline([row], peak_gflops=200.0, copy_gbs=10.0)
    assert out["share_of_peak"] == 0.25 and out["matmul_ns"] == 10.0 and out["elementwise_ns"] == 30.0
    with pytest.raises(ValueError, match="copy_gbs: expected a positive number, got 0"):
        B.roofline([row], 1.0, 0)


def test_benchmark_layers_are_the_benchmarks_forms():
    layers = B.benchmark_layers(d=6, m=5, rank=3, d_full=4, m_full=2)
    assert list(layers) == ["kv", "rank1", "rankR", "gated", "full"]
    assert "activation='relu'" in repr(layers["kv"])
    assert all("activation='silu'" in repr(layers[f]) for f in ("rank1", "rankR", "gated", "full"))
    assert layers["rankR"].rank == 3 and layers["rank1"].rank == 1
    assert layers["full"].packed and (layers["full"].d, layers["full"].m) == (4, 2)


def test_score_routes_compute_the_same_scores_without_grad():
    """Three routes to s_j = x W_j xᵀ; compared in float64 with the scores written as a loop over units."""
    torch.manual_seed(0)
    unpacked = FullBilinearMLP(5, 3, dtype=torch.float64)
    packed = FullBilinearMLP.from_weights(unpacked.W.detach(), unpacked.V.detach(), packed=True)
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with torch.no_grad():
        reference = torch.stack([((x @ unpacked.W[j]) * x).sum(-1) for j in range(3)], dim=-1)
    routes = B.score_routes(unpacked, packed, x)
    assert list(routes) == ["per-unit einsum", "x ⊗ x features", "packed features"]
    for run in routes.values():
        scores = run()
        assert not scores.requires_grad
        torch.testing.assert_close(scores, reference, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="packed: expected a FullBilinearMLP with packed=True"):
        B.score_routes(unpacked, unpacked, x)


def test_lowest_ratios_leave_out_the_full_form():
    results = copy.deepcopy(B.reference_results())
    for i, row in enumerate(results["layers"]):
        row["ratio_to_matmul"] = 0.01 if row["form"] == "full" else 1.0 + i / 100
    assert B.lowest_ratios(results, "ratio_to_matmul") == {"forward": 1.0, "forward+backward": 1.01}
    with pytest.raises(ValueError, match="key: expected one of"):
        B.lowest_ratios(results, "gflops_per_watt")


def test_recorded_run_is_consistent():
    """The record's own-products medians lie within their spreads, its shares of the peak are at most 1 and
    its GFLOP/s are its matmul FLOPs over a time: the targets it is read against are TARGET_RATIOS."""
    ref = B.reference_results()
    for row in ref["layers"]:
        assert row["ratio_to_own_products_min"] <= row["ratio_to_own_products"] <= row["ratio_to_own_products_max"]
        # above 1 the measured peak would not be the peak; 5 % for the noise between the two measurements
        assert 0 < row["share_of_peak"] <= 1.05
        assert row["share_of_peak"] == pytest.approx(row["gflops"] / ref["peak_gflops"])
    assert set(B.lowest_ratios(ref)) == set(B.TARGET_RATIOS) and B.RATIO_REPEATS >= 1
