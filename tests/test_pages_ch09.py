"""symbreak.pages.ch09: chapter 9's listings, glue blocks and figures have the shape the chapter pastes.

Inputs are small hand-made tensors whose means, counts and extremes are known; the
break-even point of the cost figure is checked against the parameter count of the
packed full form written out from thm-transpose, ``m d(d+1)/2 + m d_out``.
"""

from __future__ import annotations

import pytest
import sympy as sp
import torch
from matplotlib.figure import Figure

from figure_checks import clashes
from symbreak import costs
from symbreak.pages import ch09
from symbreak.plotting import FAMILY_COLOURS

F64 = torch.float64


def test_inertia_table_rows():
    inertia = {
        1: (True, torch.tensor([[-3.0, 0.05, 2.0], [4.0, -0.01, -5.0]], dtype=F64)),
        8: (False, torch.tensor([[-3.0, 1.5e6]], dtype=F64)),
    }
    header, rows = ch09.inertia_table(inertia)
    assert len(header) == 4 and header[1] == "$p = n = R$ in every unit"
    assert rows[0] == ["1", "yes", "yes", "$2.0$"]
    assert rows[1] == ["8", "no", "none ($2R = d$)", "$3.0$"]
    with pytest.raises(ValueError, match="inertia: expected at least one rank"):
        ch09.inertia_table({})


def test_best_terms_table_and_descent_values():
    formula = torch.tensor([0.5, 0.25, 0.0], dtype=F64)
    reached = torch.tensor([0.5, 0.25, 3e-8], dtype=F64)  # a vanished error: rounding, shown as a bound
    descended = torch.tensor([0.25, 0.2500004, 0.26], dtype=F64)
    header, rows = ch09.best_terms_table(reached, formula)
    assert header == ["$R$", "reached by `best_rank_R`", "eigenvalue formula"]
    assert rows == [["1", "0.500", "0.500"], ["2", "0.250", "0.250"], ["3", "$< 10^{-6}$", "$< 10^{-6}$"]]
    assert ch09.best_terms_table(reached, formula, vanished=1e-9)[1][2][1] == "3.00e-08"
    assert ch09.descent_values(descended, formula, rank=2) == {
        "rr-descent-range": "the 3 starts end between 0.250 and 0.260, against the minimum 0.250",
        "rr-descent-starts": (3, "d"),
        "rr-descent-lr": (0.05, "g"),
        "rr-descent-steps": (600, "d"),
        "rr-eigh-growth": (64, "d"),
    }
    # chapter 4's words: one number, once, where every start ends at the minimum
    assert ch09.descent_values(descended[:2], formula, rank=2)["rr-descent-range"] == (
        "all 2 starts end at the minimum 0.250"
    )
    assert ch09.descent_values(descended, formula, rank=2, lr=0.1, steps=7)["rr-descent-steps"] == (7, "d")
    with pytest.raises(ValueError, match=r"rank: expected an int in \[1, 3\], got 4"):
        ch09.descent_values(descended, formula, rank=4)
    with pytest.raises(ValueError, match="reached: expected the shape of formula"):
        ch09.best_terms_table(reached[:2], formula)
    with pytest.raises(ValueError, match="vanished: expected a float in"):
        ch09.best_terms_table(reached, formula, vanished=0.0)


def _families(d: int = 32, draws: int = 4):
    """Curves whose mean at R is (d − R)/d for every family, and known counts of needed terms."""
    column = torch.tensor([(d - R) / d for R in range(1, d + 1)], dtype=F64)[:, None]
    curves = {name: column.repeat(1, draws) for name in ch09.FAMILIES.values()}
    needed = {
        "Gaussian": torch.tensor([16, 16, 17, 18]),
        "positive definite": torch.tensor([32, 32, 32, 32]),
        "planted rank 4 + noise": torch.tensor([16, 17, 16, 16]),
    }
    return curves, needed


def test_family_values():
    curves, needed = _families()
    values = ch09.family_values(curves, needed, d=32, draws=4)
    assert values["rr-gauss-need-half-share"] == (0.5, ".0%")  # two of the four draws need exactly d/2 = 16
    assert values["rr-gauss-need-max"] == (18, "d") and values["rr-definite-need-min"] == (32, "d")
    assert values["rr-fam-half"] == (16, "d") and values["rr-fam-draws"] == (4, "d")
    assert values["rr-definite-R24"][0] == pytest.approx(8 / 32) and values["rr-definite-R24"][1] == ".3f"
    assert len(values) == 14
    with pytest.raises(ValueError, match="missing"):
        ch09.family_values({"Gaussian": curves["Gaussian"]}, needed, d=32, draws=4)


def test_error_figure_panels():
    curves, needed = _families()
    fig = ch09.error_figure(curves, needed, d=32)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    left, right = fig.axes
    assert len(left.lines) == 3 + 3  # three means and three dotted lines at d/4, d/2, d
    heights = [patch.get_height() for patch in right.patches]
    assert heights[16] == 2 and heights[17] == 1 and heights[18] == 1 and sum(heights) == 4


def test_breakeven_values_and_cost_figure_star():
    sizes = {"d": 4096, "m": 11008}
    values = ch09.breakeven_values(1024.25, 1024.17, sizes)
    assert values == {
        "rr-breakeven-params-llama": (1024.25, ",.2f"),
        "rr-breakeven-flops-llama": (1024.17, ",.2f"),
        "rr-llama-d": (4096, ","),
        "rr-llama-m": (11008, ","),
        "rr-llama-half": (2048, ","),
    }
    fig = ch09.cost_figure(1024.25, 1024.17, sizes)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    d, m = sizes["d"], sizes["m"]
    packed = m * d * (d + 1) // 2 + m * d  # thm-transpose: d(d+1)/2 numbers per unit, plus the values
    stars = [line for line in fig.axes[0].lines if line.get_marker() == "*"]
    assert len(stars) == 1
    assert list(stars[0].get_xdata()) == [1024.25] and list(stars[0].get_ydata()) == [packed]


def test_cost_figure_has_one_legend_below_the_panels_and_nothing_over_the_curves():
    """Fig. 9.2: the legend is the figure's, below both panels (inside them it covered the rank-R curve), and no
    text meets a curve, the star or another text."""
    fig = ch09.cost_figure(1024.25, 1024.17, costs.MODELS["LLaMA-7B"])
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    fig.canvas.draw()
    legend_top = fig.legends[0].get_window_extent().y1
    assert legend_top < min(ax.get_tightbbox().y0 for ax in fig.axes)
    assert clashes(fig) == []
    colours = {line.get_label(): line.get_color() for line in fig.axes[0].lines}
    assert colours["gated MLP"] == FAMILY_COLOURS["gated"] and colours["full form"] == FAMILY_COLOURS["rank R"]


def test_gated_change_values():
    changes = {"gauge": 0.2023, "exchange": 0.7725, "tied": 0.272}
    assert ch09.gated_change_values(changes) == {
        "rr-gated-gauge": (0.2023, ".2f"),
        "rr-gated-exchange": (0.7725, ".2f"),
        "rr-symmetric-tied": (0.272, ".2f"),
    }
    with pytest.raises(ValueError, match="changes: expected 3 changes"):
        ch09.gated_change_values({"gauge": 0.2})


def test_sizes_values_glue_the_sizes_of_a_check():
    """The sizes of chapter 9's checks, glued from the objects their code cells built."""
    assert ch09.sizes_values("rr-sum", d=8, m=16, R=3, d_out=2) == {
        "rr-sum-d": (8, "d"),
        "rr-sum-m": (16, "d"),
        "rr-sum-R": (3, "d"),
        "rr-sum-d-out": (2, "d"),
    }
    with pytest.raises(ValueError, match="prefix: expected a non-empty str, got ''"):
        ch09.sizes_values("", d=8)
    with pytest.raises(ValueError, match="sizes: expected at least one size, got none"):
        ch09.sizes_values("rr-sum")
    with pytest.raises(TypeError, match="d: expected an int, got float"):
        ch09.sizes_values("rr-sum", d=8.0)


def test_matrix_verdict_typesets_the_matrix_not_a_python_list():
    shown = ch09.matrix_verdict(r"h_j \text{ unchanged by } A =", sp.Matrix([[2, 0], [-1, 1]]), True)
    assert shown.data == (
        r"h_j \text{ unchanged by } A = \left[\begin{matrix}2 & 0\\-1 & 1\end{matrix}\right]:\ \text{True}"
    )
    assert "[[" not in shown.data
    with pytest.raises(TypeError, match="matrix: expected a sympy Matrix, got list"):
        ch09.matrix_verdict("A =", [[2, 0], [-1, 1]], True)
    with pytest.raises(TypeError, match="verdict: expected a bool, got str"):
        ch09.matrix_verdict("A =", sp.eye(2), "True")


def test_matrix_verdict_over_two_lines_for_a_phone():
    """With ``then``, the statement stands on its own line and the matrix and verdict on the next (§9.6.1)."""
    shown = ch09.matrix_verdict(r"h_j \text{ unchanged by}", 2 * sp.eye(2), False, then="A =")
    assert shown.data == (
        r"\begin{aligned}&h_j \text{ unchanged by}\\ &\quad A = "
        r"\left[\begin{matrix}2 & 0\\0 & 2\end{matrix}\right]:\ \text{False}\end{aligned}"
    )
    with pytest.raises(TypeError, match="then: expected a str of LaTeX or None, got int"):
        ch09.matrix_verdict("A =", sp.eye(2), True, then=1)
