"""The benchmark's FLOP counts and result format (``symbreak.benchmark``)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from symbreak import benchmark as B
from symbreak.layers import BilinearMLP, FullBilinearMLP, GatedMLP, KeyValueMLP


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
