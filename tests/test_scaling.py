"""The scaling record of ``make bench`` (``symbreak.scaling``): sweeps, degrees of the formulas, measurement, check."""

from __future__ import annotations

import copy

import pytest
import torch

from symbreak import scaling as S
from symbreak.yardsticks import Spread


@pytest.mark.parametrize(
    ("size", "form", "degrees"),
    [
        # per token nothing grows with the batch
        ("n", "kv", {"flops": 0, "memory": 0}),
        # kv: FLOPs 2md + 2m·d_out = 16d² at m = 4d, kept 2m = 8d (the proof of prop-cost-formulas)
        ("d", "kv", {"flops": 2, "memory": 1}),
        # gated: FLOPs 4md + m + 2m·d_out, kept 4m: both linear in m
        ("m", "gated", {"flops": 1, "memory": 1}),
        # rank R: FLOPs 4Rmd + (2R − 1)m + 2m·d_out, kept 2Rm + …: linear in R
        ("R", "rankR", {"flops": 1, "memory": 1}),
    ],
)
def test_formula_degrees(size, form, degrees):
    assert S.formula_degrees(size, form) == degrees


def test_formula_degrees_bad_input():
    with pytest.raises(ValueError, match="size: expected one of"):
        S.formula_degrees("batch", "kv")
    with pytest.raises(ValueError, match=r"form: expected one of \('rankR',\) along 'R', got 'kv'"):
        S.formula_degrees("R", "kv")
    with pytest.raises(ValueError, match="form: expected one of"):
        S.scaling_layer("full", 2, 3, 1)


def test_measure_scaling_with_a_fake_overhead():
    """Tiny sweeps and a fake yardstick: one value per point and metric; seconds per token are the fake's over n."""
    sweeps = {"n": ((2, 4), lambda v: (v, 3, 5, 2)), "R": ((1, 2), lambda v: (4, 3, 5, v))}
    seen = []

    def overhead(run, products):
        run()
        seen.append(sorted(products))
        return Spread(0.5, 0.6, 0.7), 8e-3

    torch.manual_seed(0)
    out = S.measure_scaling(overhead, sweeps)
    assert out["n"]["values"] == [2, 4] and set(out["n"]) == {"values", *S.SCALING_FORMS}
    assert set(out["R"]) == {"values", "rankR"}
    assert out["n"]["kv"]["forward_s"] == [4e-3, 2e-3] and out["R"]["rankR"]["own_backward"] == [0.6, 0.6]
    assert all(p > 0 for p in out["n"]["gated"]["peak_mib_per_1k"])
    assert seen == [["blocked", "unblocked"]] * (2 * 2 * 3 + 2 * 2)
    with pytest.raises(TypeError, match="overhead: expected a callable"):
        S.measure_scaling(None)


def test_check_scaling_names_what_is_wrong():
    good = {
        size: {"values": list(values)} | {f: {k: [1.0] * len(values) for k in S.METRICS} for f in S._forms(size)}
        for size, (values, _) in S.SCALING_SWEEPS.items()
    }
    assert S.check_scaling(good) is good
    with pytest.raises(ValueError, match="scaling: expected a dict with the sweeps"):
        S.check_scaling({})
    broken = copy.deepcopy(good)
    broken["m"]["gated"]["forward_s"][0] = 0.0
    with pytest.raises(ValueError, match=r"scaling\['m'\]\['gated'\]\['forward_s'\]: expected 5 positive floats"):
        S.check_scaling(broken)
    broken = copy.deepcopy(good)
    broken["d"]["values"] = [1, 2]
    with pytest.raises(ValueError, match=r"scaling\['d'\]\['values'\]"):
        S.check_scaling(broken)
