"""symbreak.pages.ch06: chapter 6's tables, glued values and figures, from results given to it.

Glue goes to a dictionary instead of a kernel; printed text is captured.  Glued
numbers are checked against values worked out here by hand.
"""

from __future__ import annotations

import math

import pytest
import torch

from figure_checks import clashes
from symbreak import REGISTRY
from symbreak.pages import ch06
from symbreak.verdicts import Measurement, exchange_decision


def test_glue_decision_table(glued):
    ch06.glue_decision_table({name: exchange_decision(name) for name in ("identity", "relu")})
    rows = glued["exchange-decision-table"].splitlines()
    assert len(rows) == 4 and rows[2].startswith("| identity | yes (proof) |")
    # D_ReLU(1, −1) = relu(1)·(−1) − relu(−1)·1 = −1
    assert rows[3].startswith("| ReLU | no (counterexample) | $a = 1$, $b = -1$ | $-1$ |")


def test_glue_layer_table_extremes_over_the_nonlinear_activations(glued):
    changes = {"identity": 1e-16, "relu": 0.9, "tanh": 0.35, "abs": 1.4}
    rank1 = {n: Measurement(1e-16, True, 0.1) for n in changes}
    gated = {n: Measurement(c, n == "identity", 0.1 if n == "identity" else 1e3) for n, c in changes.items()}
    ch06.glue_layer_table(rank1, gated)
    assert glued["gated-smallest-change"] == "0.3500" and glued["gated-largest-change"] == "1.4000"
    assert glued["exchange-layer-table"].splitlines()[3] == "| ReLU | yes | 0.9000 | no |"


def test_layer_table_tells_apart_changes_equal_to_three_decimals(glued):
    """Table 6.2: sigmoid's 1.22119 and |z|'s 1.22083 both read 1.221 at three decimals, as if copied."""
    changes = {"identity": 1e-16, "sigmoid": 1.22119, "abs": 1.22083}
    rank1 = {n: Measurement(1e-16, True, 0.1) for n in changes}
    gated = {n: Measurement(c, n == "identity", 1e3) for n, c in changes.items()}
    ch06.glue_layer_table(rank1, gated)
    rows = glued["exchange-layer-table"].splitlines()[2:]
    assert [row.split(" | ")[2] for row in rows] == ["0.0000", "1.2212", "1.2208"]
    assert glued["gated-smallest-change"] == "1.2208" and glued["gated-largest-change"] == "1.2212"


def test_closed_form_defects_name_sigma_as_the_book_does():
    import sympy as sp

    closed = {"identity": 0, "relu": sp.Rational(1, 2), "leaky_relu": sp.Rational(9801, 20000), "abs": 2}
    text = ch06.closed_form_defects(closed | {"gelu": sp.Integer(1)})
    assert text.startswith(r"\begin{aligned}") and text.endswith(r"\end{aligned}"), "one per line: a phone's width"
    assert text.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}").split(",\\\\ ") == [
        r"\Delta_{\mathrm{id}} &= 0",
        r"\Delta_{\mathrm{ReLU}} &= \frac{1}{2}",
        r"\Delta_{\text{leaky ReLU}} &= \frac{9801}{20000}",
        r"\Delta_{\lvert\cdot\rvert} &= 2",
        r"\Delta_{\text{GELU}} &= 1",
    ]
    assert not any(key in text for key in ("relu}", "leaky_relu", "abs", "texttt")), "no registry key shown"
    with pytest.raises(TypeError, match="closed_forms: expected a non-empty mapping, got list"):
        ch06.closed_form_defects([])


def test_glue_relu_broken_and_quadrature_tolerance(glued):
    ch06.glue_relu_broken(0.50012, math.sqrt(0.25 / 2_000_000), 2_000_000)
    ch06.glue_quadrature_tolerance(1e-13)
    assert glued == {
        "relu-broken-fraction": "0.5001",
        "relu-broken-se": "0.0004",  # √(1/8 000 000) = 0.000354
        "n-pairs": "2,000,000",
        "gelu-quadrature-tolerance": "$10^{-13}$",
    }


def test_show_angles(glued, capsys):
    ch06.show_angles([0.0, 0.5, 1.0], [0.0, 0.4987, 1.0], 20_000)
    assert glued == {"n-inputs": "20,000"}
    assert capsys.readouterr().out == ""  # shown once, in the table or figure, not printed as well


def test_show_defect_table_sorted_by_the_defect(glued, capsys):
    names = ["identity", "relu", "silu", "gelu", "tanh", "softplus", "sigmoid"]
    defects = dict(zip(names, [0.0, 0.5, 0.2116, 0.3504, 0.0548, 1.3425, 0.5014], strict=True))
    exact = {n: (0 if n == "identity" else (1 / 2 if n == "relu" else None)) for n in names}
    relative = {n: 2 * v for n, v in defects.items()}
    ch06.show_defect_table(defects, exact, defects, {n: 0.001 for n in names}, relative, {n: True for n in names})
    rows = glued["defect-table"].splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [
        f"| {n}" for n in ["identity", "tanh", "SiLU", "GELU", "ReLU", "sigmoid", "softplus"]
    ]
    assert rows[4] == "| ReLU | 0.500000 | exact | 0.500000\u00a0±\u00a00.001000 | 1.0000 | yes |"
    assert "quadrature" in rows[2]
    assert glued["defect-softplus"] == "1.3425" and glued["relative-sigmoid"] == "1.0028"
    assert capsys.readouterr().out == ""  # shown once, in the table or figure, not printed as well


def test_show_layer_change_glues_the_squared_changes_the_figure_draws(glued, capsys):
    """The text under Fig. 6.2 quotes R̂ itself, as the figure's bottom panel draws it, not its square root."""
    measured = {"identity": 0.0, "tanh": 0.1369, "abs": 2.25}
    ch06.show_layer_change(measured, {n: 0.001 for n in measured}, {"identity": 0.0, "tanh": 0.14, "abs": 2.0}, 20_000)
    assert glued == {
        "n-layer-inputs": "20,000",
        "abs-layer-squared-change": "2.2500",
        "abs-layer-squared-change-se": "0.0010",
        "tanh-layer-squared-change": "0.1369",
    }
    assert capsys.readouterr().out == ""  # shown once, in the table or figure, not printed as well


def test_decision_table_writes_gelu_tanh_with_its_defining_constant(glued):
    """Table 6.1: GELU (tanh)'s exact value at (1, −1) shows 1 + 0.044715, not 1.044715 (which reads like a
    rounding), and the constant is glued for the caption."""
    ch06.glue_decision_table({"gelu_tanh": exchange_decision("gelu_tanh")})
    row = glued["exchange-decision-table"].splitlines()[2]
    assert r"$-\tanh\big(\sqrt{2/\pi}\,(1 + 0.044715)\big)$" in row and "1.044715" not in row
    assert glued["gelu-tanh-coefficient"] == "0.044715"


def test_term_lines_one_term_per_line():
    """f'(x) - f(x) of the exchange check (thm-exchange), one term per line with sympy's signs and order: on one line
    it did not fit a phone's width."""
    import sympy as sp

    a, b, c = sp.symbols("a b c")
    text = ch06.term_lines("f'(x) - f(x)", -a * sp.Function("sigma")(b) + c)
    assert text == r"\begin{aligned}f'(x) - f(x) &= - a \sigma{\left(b \right)}\\ &\quad + c\end{aligned}"
    assert ch06.term_lines("y", a) == r"\begin{aligned}y &= a\end{aligned}"
    joined = text.replace(r"\\ &\quad", "").replace("&", "").removeprefix(r"\begin{aligned}")
    assert joined.removesuffix(r"\end{aligned}") == "f'(x) - f(x) = " + sp.latex(-a * sp.Function("sigma")(b) + c)
    with pytest.raises(TypeError, match="left, expr"):
        ch06.term_lines("y", 1)


def test_limit_lines_one_limit_per_line():
    """The limits of prop-exchange-defect-scale, one per line (on one line they did not fit a phone)."""
    import sympy as sp

    text = ch06.limit_lines({"a, s → 0": 0, "b, s → ∞": 2 - 2 / sp.pi})
    assert text == r"\begin{aligned}\text{a, s → 0} &: 0\\ \text{b, s → ∞} &: 2 - \frac{2}{\pi}\end{aligned}"
    with pytest.raises(TypeError, match="limits: expected a non-empty mapping"):
        ch06.limit_lines({})


def test_glue_glu_order(glued):
    ch06.glue_glu_order(["identity", "silu", "gelu", "relu", "sigmoid"])
    assert glued["glu-order"] == "Bilinear (identity), SwiGLU (SiLU), GEGLU (GELU), ReGLU (ReLU), GLU (sigmoid)"


def test_figures(glued):
    grid = torch.arange(-3, 4, dtype=torch.float64)
    A, B = torch.meshgrid(grid, grid, indexing="xy")
    angles = torch.tensor([0.0, math.pi / 2, math.pi], dtype=torch.float64)
    ch06.figure_relu_exchange(A * B, angles, [0.0, 0.5, 1.0], [0.0, 0.003, 0.0])
    right = glued["fig-relu-exchange"].axes[1]
    assert right.get_title() == "one ReGLU unit, Gaussian inputs"
    assert list(right.lines[0].get_xdata()) == [0.0, 0.5, 1.0]  # θ/π
    values = {n: 0.1 * (i + 1) for i, n in enumerate(REGISTRY)}
    errors = {n: 0.01 for n in values}
    ch06.figure_exchange_defects((values, values, errors), (values, values, errors))
    top, bottom = glued["fig-exchange-defects"].axes[:2]
    assert top.get_title() == "mean-square exchange defect of a unit"
    assert bottom.get_title() == "scale-free: relative to the coefficient's size"
    ticks = {t.get_text() for t in top.get_yticklabels()}
    assert {"leaky ReLU", "GELU (tanh)", "$|z|$"} <= ticks and not ticks & {"leaky_relu", "gelu_tanh", "abs"}


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match=r"decisions\['relu'\]: expected a Decision, got str"):
        ch06.glue_decision_table({"relu": "no"})
    with pytest.raises(ValueError, match="gated: expected the keys of rank1"):
        ch06.glue_layer_table({"relu": Measurement(0.0, True, 0.1)}, {"gelu": Measurement(0.5, False, 9.0)})
    with pytest.raises(ValueError, match="gated: expected at least one nonlinear σ"):
        ch06.glue_layer_table({"identity": Measurement(0.0, True, 0.1)}, {"identity": Measurement(0.0, True, 0.1)})
    with pytest.raises(ValueError, match="predicted, changed: expected as many values of each, got 2 and 1"):
        ch06.show_angles([0.0, 1.0], [0.0], 10)
    with pytest.raises(ValueError, match="by_defect: expected the GLU family's activations"):
        ch06.glue_glu_order(["relu"])
    with pytest.raises(ValueError, match="layer: expected \\(bars, points, standard errors\\), got 2 items"):
        ch06.figure_exchange_defects(({"relu": 0.5},) * 3, ({"relu": 0.5},) * 2)
    with pytest.raises(ValueError, match="relative: expected the keys of measured"):
        ch06.show_layer_change({"abs": 2.0}, {"abs": 0.1}, {"tanh": 1.0}, 10)


def test_measure_sizes_and_glue_configuration(glued):
    """The sizes are measure's defaults and the quadrature's nodes; P(|N| > 5) = 5.733e-7 (tables of the normal law)."""
    sizes = ch06.measure_sizes()
    assert sizes == {"measure-d": 6, "measure-m": 8, "measure-n": 256, "elementwise-ulps": 8, "gh-points": 160}
    ch06.glue_configuration({"n-angles": 13, "d-layer": 32}, tail=5.733e-7, n_activations=10)
    assert glued == {
        "n-angles": "13",
        "d-layer": "32",
        "tail-5se": r"$5.7 \times 10^{-7}$",
        "tail-5se-all": r"$5.7 \times 10^{-6}$",
    }


def test_glue_scale_ratios(glued):
    ch06.glue_scale_ratios([0.5, 1.0, 2.0], {"silu": [0.27, 0.5946, 0.86], "relu": [1.0, 1.0, 1.0]}, quoted=[0.5, 2.0])
    assert glued == {
        "n-scales": "3",
        "scale-min": "0.5",
        "scale-max": "2",
        "ratio-silu-0": "0.270",
        "ratio-silu-1": "0.860",
        "ratio-relu-0": "1.000",
        "ratio-relu-1": "1.000",
    }


def test_figure_defect_scale(glued):
    """One line per variant, all in the gated family's colour, each in its σ's line style, data snapped to 1e-6; the
    limits and unit scale as thin grey solid lines, which no variant's dashed or dotted style can be taken for."""
    scales = [0.5, 1.0, 2.0]
    ch06.figure_defect_scale(scales, {"silu": [0.27, 0.5946194 + 1e-15, 0.86], "relu": [1.0] * 3}, {"$1$": 1.0})
    ax = glued["fig-defect-scale"].axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    from symbreak.plotting import FAMILY_COLOURS

    assert lines["SwiGLU (SiLU)"].get_color() == lines["ReGLU (ReLU)"].get_color() == FAMILY_COLOURS["gated"]
    assert lines["SwiGLU (SiLU)"].get_linestyle() != lines["ReGLU (ReLU)"].get_linestyle()
    assert lines["SwiGLU (SiLU)"].get_ydata()[1] == pytest.approx(0.594619, abs=1e-12)
    assert ax.get_xscale() == "log"
    assert min(text.get_fontsize() for text in ax.texts) >= 9
    references = [line for line in ax.lines if line.get_label().startswith("_")]
    assert len(references) == 2  # the limit 1 (horizontal) and unit scale (vertical)
    variants = [lines["SwiGLU (SiLU)"], lines["ReGLU (ReLU)"]]
    for line in references:
        assert line.get_linestyle() == "-" and line.get_color() != FAMILY_COLOURS["gated"]
        assert line.get_linewidth() < min(v.get_linewidth() for v in variants)
        assert line.get_zorder() < min(v.get_zorder() for v in variants)


def test_scale_figure_bad_input():
    with pytest.raises(ValueError, match="ratios: expected activations of"):
        ch06.figure_defect_scale([1.0], {"tanh": [0.1]}, {})
    with pytest.raises(ValueError, match=r"ratios\['silu'\]: expected 2 values, one per scale, got 1"):
        ch06.glue_scale_ratios([1.0, 2.0], {"silu": [0.5]}, quoted=[1.0])
    with pytest.raises(ValueError, match=r"quoted: expected scales of the grid, got \[3.0\]"):
        ch06.glue_scale_ratios([1.0, 2.0], {"silu": [0.5, 0.6]}, quoted=[3.0])
    with pytest.raises(ValueError, match="tail: expected a probability in"):
        ch06.glue_configuration({}, tail=0.0, n_activations=1)
    with pytest.raises(TypeError, match=r"config\['n'\]: expected an int, got float"):
        ch06.glue_configuration({"n": 1.5}, tail=1e-7, n_activations=1)


def _relu_exchange_figure(glued):
    """fig-relu-exchange as the chapter draws it: the defect on the grid i/40 of [−3, 3]², 13 angles, measured
    shares on the prediction θ/π with their binomial standard errors for 20 000 inputs."""
    grid = torch.arange(-120, 121, dtype=torch.float64) / 40
    a, b = torch.meshgrid(grid, grid, indexing="xy")
    defect = torch.relu(a) * b - torch.relu(b) * a
    angles = torch.arange(13, dtype=torch.float64) * (math.pi / 12)
    shares = (angles / math.pi).tolist()
    ch06.figure_relu_exchange(defect, angles, shares, [math.sqrt(p * (1 - p) / 20_000) for p in shares])
    return glued["fig-relu-exchange"]


def test_relu_exchange_figure_title_stays_above_its_map_and_nothing_clashes(glued):
    """Fig. 6.1: the map's title lies within the map's width, clear of the colour bar (it ran under it) and of the
    tick labels; the legend covers no point (it covered the top ones); no two texts meet."""
    fig = _relu_exchange_figure(glued)
    assert clashes(fig) == []
    heatmap, right, colorbar = fig.axes
    title, frame = heatmap.title.get_window_extent(), heatmap.get_window_extent()
    assert frame.x0 <= title.x0 and title.x1 <= frame.x1 < colorbar.get_window_extent().x0
    assert right.get_legend() is not None


def test_defect_scale_figure_limit_labels_clear_of_every_line(glued):
    """Fig. 6.3 with the chapter's data: each limit's label meets no line but its own (SwiGLU's and GEGLU's lines
    ran through 'z g(z), s → 0'), no other text, and stays inside the axes; the legend is below them."""
    import numpy as np

    from symbreak.symbolic.exchange import exchange_ratio_limits
    from symbreak.symmetry import exchange_change_ratio

    scales = (2.0 ** (np.arange(-12, 17) / 4)).tolist()
    ratios = {name: exchange_change_ratio(name, scales) for name in ("relu", "silu", "gelu", "sigmoid")}
    limits = exchange_ratio_limits()
    ch06.figure_defect_scale(scales, ratios, limits)
    fig = glued["fig-defect-scale"]
    (ax,) = fig.axes
    assert clashes(fig) == []
    assert ax.get_legend() is None and len(fig.legends) == 1
    assert sorted(t.get_text() for t in ax.texts) == sorted(limits)
    below = [t.get_text() for t in ax.texts if t.get_window_extent().y1 < ax.transData.transform(t.xy)[1]]
    # under their lines: the curves start just above 0, and ReGLU's runs along 1, where a label above sat on it
    assert sorted(below) == ["z g(z), s → 0", "z g(z), s → ∞"]
    assert min(t.get_fontsize() for t in ax.texts) >= 10  # 9 pt came out at about 8 pt on a desktop column
    assert ax.get_ylabel() == r"$r_\sigma(s)$"  # the symbol; its definition is in the caption
