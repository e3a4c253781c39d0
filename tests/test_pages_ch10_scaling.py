"""Chapter 10's scaling figure (``symbreak.pages.ch10_scaling``) from a synthetic record with known values."""

from __future__ import annotations

import pytest

from symbreak.pages import ch10_scaling
from symbreak.scaling import METRICS, SCALING_SWEEPS, _forms


def _record() -> dict:
    """Times per token exactly c·d² along d; overhead ratios 0.9 everywhere but rank R at R = 16 (0.5)."""
    scaling = {}
    for size, (values, _) in SCALING_SWEEPS.items():
        scaling[size] = {"values": list(values)}
        for form in _forms(size):
            series = {key: [1.0] * len(values) for key in METRICS}
            series["own_backward"] = [0.9] * len(values)
            if size == "d":
                series["backward_s"] = [1e-9 * v**2 for v in values]
            scaling[size][form] = series
    scaling["R"]["rankR"]["own_backward"][-1] = 0.5
    scaling["m"]["kv"]["own_backward"][0] = 1.1
    return {"scaling": scaling, "config": {"scaling_rounds": 5}}


def test_scaling_figure_and_reading(glued):
    assert ch10_scaling.glue_scaling_figure(_record()) == "5 interleaved rounds per point"
    fig = glued["fig-cost-scaling"]
    assert len(fig.axes) == 12
    reading = glued["scaling-reading"]
    assert (
        "fitted slopes 2.00 (standard MLP), 2.00 (gated MLP), 2.00 (rank-$R$), against the FLOP formula's 2" in reading
    )
    assert "between 0.50 (rank-$R$ at $R$ = 16) and 1.10 (standard MLP at $m$ = 256)" in reading
    assert "from 0.90 at $R$ = 1 to 0.50 at $R$ = 16" in reading
    assert glued["scaling-batch"] == "1,024" and glued["scaling-rounds"] == "5"


def test_scaling_figure_bad_input():
    with pytest.raises(ValueError, match="reference: expected a recorded make bench run with a 'scaling' entry"):
        ch10_scaling.glue_scaling_figure({})
