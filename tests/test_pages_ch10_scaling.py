"""Chapter 10's scaling figure (``symbreak.pages.ch10_scaling``) from a synthetic record with known values."""

from __future__ import annotations

import pytest

from figure_checks import clashes
from symbreak.benchmark import reference_results
from symbreak.pages import ch10_scaling
from symbreak.scaling import METRICS, SCALING_SWEEPS, _forms


def _record() -> dict:
    """Times per token exactly c·d² along d; overhead ratios 0.9 everywhere but rank R at R = 16 (0.5) and the standard
    MLP at m = 4096 (1.1)."""
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
    scaling["m"]["kv"]["own_backward"][-1] = 1.1
    return {"scaling": scaling, "config": {"scaling_rounds": 5}}


def test_scaling_figure_and_reading(glued):
    assert ch10_scaling.glue_scaling_figure(_record()) == "5 interleaved rounds per point"
    fig = glued["fig-cost-scaling"]
    assert len(fig.axes) == 12
    reading = glued["scaling-reading"]
    assert (
        "fitted slopes 2.00 (standard MLP), 2.00 (gated MLP), 2.00 (rank-$R$), against the FLOP formula's 2" in reading
    )
    # a value in the book's format (4,096, as elsewhere in the chapter), held to its symbol by no-break spaces
    assert "between 0.50 (rank-$R$ at $R$\u00a0=\u00a016) and 1.10 (standard MLP at $m$\u00a0=\u00a04,096)" in reading
    assert "from 0.90 at $R$\u00a0=\u00a01 to 0.50 at $R$\u00a0=\u00a016" in reading
    assert glued["scaling-batch"] == "1,024" and glued["scaling-rounds"] == "5"


def test_scaling_figure_bad_input():
    with pytest.raises(ValueError, match="reference: expected a recorded make bench run with a 'scaling' entry"):
        ch10_scaling.glue_scaling_figure({})


def test_recorded_scaling_figure_labels_three_ticks_per_log_axis_and_nothing_clashes(glued):
    """Fig. 10.2 from the package's record: every log axis labels at least three values (the memory panel against
    the batch once labelled only 10 and 20), the slope guides are thin and black (grey is the standard MLP's
    colour), and no two texts meet."""
    ch10_scaling.glue_scaling_figure(reference_results())
    fig = glued["fig-cost-scaling"]
    grid = [fig.axes[i : i + 4] for i in (0, 4, 8)]
    for ax in grid[0] + grid[1]:
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        low, high = ax.get_ylim()
        shown = [v for v, t in zip(ax.get_yticks(), ax.get_yticklabels(), strict=True) if t.get_text()]
        assert len(labels) >= ch10_scaling.MIN_LOG_LABELS and all(low <= v <= high for v in shown)
        guides = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert guides and all(line.get_color() == "black" and line.get_linewidth() < 1.0 for line in guides)
    assert clashes(fig) == []


def test_ticks_widen_a_narrow_log_axis_to_three_labelled_values():
    from symbreak.plotting import figure

    _, (ax,) = figure()
    ax.set_yscale("log")
    ax.set_ylim(6.0, 40.0)  # only 10 and 20 inside: widened to 5, nearer than 50 in log distance
    assert ch10_scaling._ticks_125(ax) == [5.0, 10.0, 20.0]
    assert ax.get_ylim()[0] < 5.0
    ax.set_ylim(1.0, 5000.0)
    assert ch10_scaling._ticks_125(ax) == [1.0, 5.0, 10.0, 50.0, 100.0, 500.0, 1000.0, 5000.0]
    ax.set_ylim(8.0, 40.0)  # and to 50 where that is the nearer one
    assert ch10_scaling._ticks_125(ax) == [10.0, 20.0, 50.0]
