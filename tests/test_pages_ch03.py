"""symbreak.pages.ch03: chapter 3's tables, glue block and figure hold the counts the prose quotes.

The expected numbers are counted here from the shapes of the layers: the full
form stores ``Q_j, K_j ∈ R^{d×d}`` per unit and ``V ∈ R^{m×d}`` (``2md² + md``),
its packed form ``d(d+1)/2`` numbers per unit, a SwiGLU layer ``3md``, a ReLU
layer ``2md``; gigabytes at two bytes per number.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import torch

from figure_checks import clashes
from symbreak import costs, prose
from symbreak.pages import ch03

matplotlib.use("Agg")

D, M = 4096, 11008  # LLaMA-7B
FULL = 2 * M * D**2 + M * D
PACKED = M * D * (D + 1) // 2 + M * D
SWIGLU = 3 * M * D


def test_gauge_rounding_table_marks_measured_and_missing_exponents():
    header, rows = ch03.gauge_rounding_table({torch.float64: {0: True, 2: False}, torch.float32: {0: True, 1: True}})
    assert header == [r"$\kappa(A)$", "float64", "float32"]
    assert len(rows) == 13
    assert rows[0] == ["$10^{0}$", "✓", "✓"]
    assert rows[1] == ["$10^{1}$", "—", "✓"]
    assert rows[2] == ["$10^{2}$", "✗", "—"]
    assert rows[12] == ["$10^{12}$", "—", "—"]


@pytest.mark.parametrize(
    ("in_band", "match"),
    [({}, "in_band: expected a non-empty mapping"), ({torch.float64: {0: 0.5}}, "in_band\\[torch.float64\\]")],
)
def test_gauge_rounding_table_rejects_bad_input(in_band, match):
    with pytest.raises(ValueError, match=match):
        ch03.gauge_rounding_table(in_band)


def test_gauge_grid_values_say_which_condition_numbers_were_measured():
    """Review: Table 3.2's "—" cells had no reason; its caption names each precision's grid."""
    grids = {torch.float64: dict.fromkeys(range(0, 13, 2), True), torch.float32: dict.fromkeys(range(0, 7), True)}
    assert ch03.gauge_grid_values(grids) == {
        "gauge-grid-float64": "every second power of ten from $10^{0}$ to $10^{12}$",
        "gauge-grid-float32": "every power of ten from $10^{0}$ to $10^{6}$",
    }
    assert ch03.gauge_grid_values({torch.float64: {0: True, 3: False}}) == {"gauge-grid-float64": "$10^{0}$, $10^{3}$"}
    with pytest.raises(ValueError, match="in_band\\[torch.float32\\]: expected a non-empty mapping"):
        ch03.gauge_grid_values({torch.float32: {}})


def test_cost_formulas_table(glued):
    header, rows = ch03.cost_formulas()
    assert header == ["form", "parameters", "FLOPs per token", "hidden numbers per token"]
    # the names with unbroken hyphens (review 9: "symmetric rank- / 1" wrapped in Table 3.3)
    assert [r[0] for r in rows] == [name.replace("-", "\u2011") for name in ch03.FORM_NAMES.values()]
    assert rows[2][0] == "symmetric rank\u20111" and not any("-" in r[0] for r in rows)
    assert set(ch03.FORM_NAMES) == set(costs.FORMS)
    for row in rows:
        assert all(cell.startswith("$") and cell.endswith("$") for cell in row[1:]), row
        assert r"d_{\mathrm{out}}" in row[1] and "d_out" not in "".join(row)
    assert rows[0][1] == r"$d m + d_{\mathrm{out}} m$"  # the standard MLP: md keys, m d_out values
    assert rows[5][1] == r"$2 d^{2} m + d_{\mathrm{out}} m$"  # two d×d maps per unit
    text = prose.glue_table("cost-formulas", header, rows)
    assert glued["cost-formulas"] == text and len(text.splitlines()) == 2 + 7


def test_cost_models_table_and_text():
    header, rows = ch03.cost_models()
    assert header == ["model", "$d$, $m$", "its layer", "full form", "full, packed", "full / its layer"]
    llama, t5_relu, _ = rows
    assert llama[:2] == ["LLaMA\u20117B", "4,096, 11,008"]  # no break after "LLaMA-" (regression read 9)
    # every count with its gigabytes in parentheses, as the caption says: the published layer's too
    # number and unit joined by a no-break space (review 9: "(0.27 / GB)" wrapped at 1280 px)
    gb = "\u00a0GB"
    assert llama[2] == f"$1.35 \\cdot 10^{{8}}$ ({2 * SWIGLU / 1e9:.2f}{gb})" == f"$1.35 \\cdot 10^{{8}}$ (0.27{gb})"
    assert llama[3] == f"$3.69 \\cdot 10^{{11}}$ ({2 * FULL / 1e9:,.1f}{gb})" == f"$3.69 \\cdot 10^{{11}}$ (738.8{gb})"
    assert llama[4] == f"$9.24 \\cdot 10^{{10}}$ ({2 * PACKED / 1e9:,.1f}{gb})"
    assert not any(" GB" in cell for row in rows for cell in row)
    assert llama[5] == f"{FULL // SWIGLU:,}" == "2,731" and FULL % SWIGLU == 0
    # T5-base's ReLU layer stores 2md; the full form (2md² + md) / (2md) = d + 1/2 times as much
    assert t5_relu[2] == "$4.72 \\cdot 10^{6}$ (0.0094\u00a0GB)"
    # not "768", which f"{768.5:,.0f}" prints by rounding half to even
    assert t5_relu[5] == "768.5"
    assert rows[2][5] == "512.3"  # (2d + 1) / 3 for T5-base's GLU variants


def test_llama_texts(glued):
    texts = ch03.llama_texts()
    expected_keys = {
        "llama-d",
        "llama-m",
        "t5-d",
        "t5-m-relu",
        "t5-m-glu",
        "llama-full-maps",
        "llama-gated",
        "llama-ratio",
        "llama-full-gb",
        "llama-gated-gb",
        "llama-packed-gb",
        "llama-packed-ratio",
        *(f"llama-{f}-{k}" for f in ("full", "full-packed", "gated") for k in ("flops", "memory")),
    }
    assert set(texts) == expected_keys
    # as maths, as the table typesets its counts; GB with the table's one decimal
    assert texts["llama-full-maps"] == r"$3.69 \cdot 10^{11}$"  # 2md² = 369,367,187,456
    assert texts["llama-full-gb"] == f"{2 * FULL / 1e9:,.1f}" == "738.8"
    assert texts["llama-packed-gb"] == f"{2 * PACKED / 1e9:,.1f}" == "184.8"
    assert texts["llama-gated-gb"] == f"{2 * SWIGLU / 1e9:.2f}" == "0.27"
    assert texts["llama-packed-ratio"] == f"{PACKED / SWIGLU:,.0f}"
    # hidden numbers kept per token: 2md products plus 2m coefficients in the full form, 4m in the gated one
    assert texts["llama-full-memory"] == r"$9.02 \cdot 10^{7}$" and 2 * M * D + 2 * M == 90_199_552
    assert texts["llama-gated-memory"] == r"$4.40 \cdot 10^{4}$" and 4 * M == 44_032
    assert texts["t5-m-glu"] == "2,048"
    prose.glue_all(texts)
    assert glued == texts


def test_full_form_cost_figure_curves():
    fig = ch03.full_form_cost_figure()
    top, bottom = fig.axes[0], fig.axes[1]
    for ax, full_at_16, mlp_at_16 in (
        # d = 16, m = 64: parameters 2md² + md and 2md; FLOPs 4md² + 2md + 2md and 2md + 2md
        (top, 2 * 64 * 16**2 + 64 * 16, 2 * 64 * 16),
        (bottom, 4 * 64 * 16**2 + 4 * 64 * 16, 4 * 64 * 16),
    ):
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert {"standard MLP", "gated = symmetric rank-1", "rank-$R$, $R = 8$", "full, packed", "full"} <= set(lines)
        x, y = lines["full"].get_data()
        assert x[0] == 16 and x[-1] == 2**14
        assert y[0] == full_at_16
        assert lines["standard MLP"].get_ydata()[0] == mlp_at_16
        stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
        assert [tuple(np.ravel(s.get_xdata())) for s in stars] == [(4096,), (4096,)]
    assert len(fig.axes) == 2
    (gb,) = top.child_axes  # the right-hand axis reads parameters as GB at two bytes per number
    assert gb.get_ylabel() == "GB at 2 bytes per number" and not bottom.child_axes


def test_configuration_values_glue_the_configured_sizes():
    names = ["ch3-d", "ch3-m", "ch3-tokens", "gauge-draws", "gauge-band"]
    values = ch03.configuration_values(6, 10, 64, 5, 10)
    assert list(values) == names
    assert [value for value, _ in values.values()] == [6, 10, 64, 5, 10]
    assert {fmt for _, fmt in values.values()} == {"d"}
    with pytest.raises(ValueError, match="gauge-draws: expected an int >= 1, got 0"):
        ch03.configuration_values(6, 10, 64, 0, 10)


def test_scaling_alpha_values_glue_the_two_factors_in_latex():
    """2⁻³ is written as the power it is, 3 as itself; a factor of the wrong kind is refused."""
    assert ch03.scaling_alpha_values(0.125, 3.0) == {"scale-exact-alpha": "$2^{-3}$", "scale-rounded-alpha": "$3$"}
    assert ch03.scaling_alpha_values(4.0, 1.7)["scale-exact-alpha"] == "$2^{2}$"
    with pytest.raises(ValueError, match="exact: expected a power of two, got 3.0"):
        ch03.scaling_alpha_values(3.0, 3.0)
    with pytest.raises(ValueError, match="rounded: expected a number that is not a power of two, got 0.5"):
        ch03.scaling_alpha_values(0.125, 0.5)
    with pytest.raises(ValueError, match="rounded: expected a finite real number > 0, got -3.0"):
        ch03.scaling_alpha_values(0.125, -3.0)


def test_expressivity_table_one_row_per_activation():
    from symbreak.symbolic.bilinear import expressivity_routes

    header, rows = ch03.expressivity_table({name: expressivity_routes(name) for name in ("relu", "tanh", "abs")})
    assert header[:3] == ["$\\sigma$", "item 1 by", "item 2 by"]
    assert rows[0][:4] == ["ReLU", "parity", "homogeneity", "no"]
    assert rows[1][:4] == ["tanh", "parity", "poles", "no"]
    assert rows[2][:4] == ["$|z|$", "homogeneity", "homogeneity", "yes"]
    assert rows[0][4] == "$1$, $0$"  # lim ReLU(s)/s: 1 at +∞, 0 at −∞
    with pytest.raises(ValueError, match="routes: expected a non-empty mapping"):
        ch03.expressivity_table({})
    with pytest.raises(ValueError, match=r"routes\['relu'\]: expected the dict"):
        ch03.expressivity_table({"relu": {}})


def test_full_form_cost_figure_labels_its_stars_clear_of_everything():
    """Fig. 3.1: each star's label lies inside its panel and meets no tick label (the SwiGLU label ran into the
    right-hand axis's 10⁻¹), no other label, no curve or marker; the legends cover no curve."""
    fig = ch03.full_form_cost_figure()
    assert clashes(fig) == []
    for ax in fig.axes:
        frame = ax.get_window_extent()
        labels = {t.get_text(): t.get_window_extent() for t in ax.texts}
        assert set(labels) == {"LLaMA-7B, full form", "LLaMA-7B,\nSwiGLU"}
        assert all(frame.x0 < b.x0 and b.x1 < frame.x1 and frame.y0 < b.y0 and b.y1 < frame.y1 for b in labels.values())
