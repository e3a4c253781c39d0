"""symbreak.pages.ch12: chapter 12's tables, glued values and figure, from results with known values."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from figure_checks import clashes
from symbreak.decide import Decision
from symbreak.dynamics import History
from symbreak.pages import ch12


def _rows(table: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()[2:]]


def test_power_of_ten():
    assert ch12.power_of_ten(1e-12) == "$10^{-12}$"
    assert ch12.power_of_ten(1e-6) == "$10^{-6}$"
    with pytest.raises(ValueError, match="value: expected a real number > 0, got 0"):
        ch12.power_of_ten(0)
    with pytest.raises(ValueError, match="value: expected a power of ten, got 3e-10"):
        ch12.power_of_ten(3e-10)  # a stated bound printed as 10^k must be 10^k


def test_below_power():
    """The stated bound, never the value: 9.1e-13 and 9.9e-11 both read "< 10^-10"; 1e-10 itself is not below."""
    assert ch12.below_power(9.1e-13, 1e-10) == ch12.below_power(9.9e-11, 1e-10) == "$< 10^{-10}$"
    assert ch12.below_power(1e-10, 1e-10) == r"$\geq 10^{-10}$"
    with pytest.raises(TypeError, match="value: expected a real number, got nan"):
        ch12.below_power(float("nan"), 1e-10)
    with pytest.raises(ValueError, match="bound: expected a power of ten, got 2e-10"):
        ch12.below_power(1e-12, 2e-10)


def test_euler_registry_table(glued):
    """The decision in words and the registry's own homogeneity: yes for ReLU, no for SiLU."""
    z = sp.Symbol("z", real=True)
    decisions = {"relu": Decision(True, "proof"), "silu": Decision(False, "counterexample", {z: sp.Integer(1)})}
    ch12.glue_euler_registry_table(decisions)
    rows = _rows(glued["euler-registry-table"])  # display names; the point one formula, after a no-break space
    assert rows == [["ReLU", "yes (proof)", "yes"], ["SiLU", "no\u00a0$(z = 1)$", "no"]]


def test_setting_and_converse(glued):
    ch12.glue_setting(n=64, m=4, d=4, d_out=2, teacher_m=6, lr=0.05, weight_decay=0.01, steps=1200)
    ch12.glue_converse(0.0143731234, 0.0143731234000001, tolerance=1e-12)
    assert glued["lr"] == "0.05" and glued["wd"] == "0.01" and glued["steps"] == "1,200" and glued["d-out"] == "2"
    assert glued["converse-gap"] == "0.0144" and glued["converse-tolerance"] == "$10^{-12}$"  # quoted once, 3 digits
    with pytest.raises(ValueError, match="gap: expected the predicted 0.0143 within a relative 1e-12"):
        ch12.glue_converse(0.0143731, 0.0143, tolerance=1e-12)


def test_gap_table(glued):
    runs = {
        "symmetric SiLU": History(steps=[0, 1, 2], gap=[0.0, 1e-17, 2e-17]),
        "ReGLU": History(steps=[0, 1, 2], gap=[0.0, 0.0, 3e-15]),
        "SwiGLU": History(steps=[0, 1, 2], gap=[0.0, 2e-3, 0.0123]),
        "GEGLU": History(steps=[0, 1, 2], gap=[0.0, 1e-3, 0.02]),
    }
    allowance = {"symmetric SiLU": 1e-14, "ReGLU": 1e-14, "SwiGLU": 1e-14, "GEGLU": 2e-13}
    stays = {"symmetric SiLU": True, "ReGLU": True, "SwiGLU": False, "GEGLU": False}
    ch12.glue_gap_table(runs, allowance, stays, stay_share=0.1, allowance_below=1e-13)
    assert _rows(glued["gap-table"]) == [  # the allowance only against the stated 1e-13, never its digits
        ["symmetric (SiLU)", "stays", "below 10\u00a0% of the allowance", "$< 10^{-13}$", "✓"],
        ["ReGLU", "stays", "not below 10\u00a0% of the allowance", "$< 10^{-13}$", "✓"],  # 3e-15 is 30 % of it
        ["SwiGLU", "leaves", "0.0123", "$< 10^{-13}$", "✗"],
        ["GEGLU", "leaves", "0.02", r"$\geq 10^{-13}$", "✗"],
    ]
    assert glued["gap-table"].splitlines()[0].endswith("| rounding allowance | gap within the allowance |")
    assert glued["stay-share"] == "10\u00a0%" and glued["leave-first-gap"] == "0.001"
    assert glued["allowance-below"] == "$10^{-13}$"


def test_optimizer_gaps_and_perturbed(glued):
    gaps = {("momentum", "SwiGLU"): 0.4012, ("adam", "SwiGLU"): 2.86, ("adam", "ReGLU"): 1e-17}
    ch12.glue_optimizer_gaps(gaps, stay_below=1e-12)
    assert glued["opt-stay-below"] == "$10^{-12}$" and glued["opt-leave-gap"] == "0.401"
    with pytest.raises(ValueError, match="gaps: expected runs of 'SwiGLU'"):
        ch12.glue_optimizer_gaps({("adam", "ReGLU"): 0.0}, stay_below=1e-12)
    ch12.glue_perturbed({"symmetric SiLU": 1.0004, "ReGLU": 1.0061, "SwiGLU": 101234.0}, eps=1e-6)
    assert glued["eps"] == "$10^{-6}$" and glued["growth-symmetric"] == "1.00"
    assert glued["growth-reglu"] == "1.01" and glued["growth-swiglu"] == r"$1.0 \times 10^{5}$"


def test_one_gap_format_for_table_printed_lines_and_prose(glued):
    """Review: the prose said "at least 0.40" where the printed line said "0.4"; one format (gap_text) for both."""
    assert [ch12.gap_text(g) for g in (0.4, 0.4012, 0.006412, 0.1159)] == ["0.4", "0.401", "0.00641", "0.116"]
    ch12.glue_optimizer_gaps({("momentum", "SwiGLU"): 0.4, ("adam", "SwiGLU"): 2.86}, stay_below=1e-12)
    line = ch12.optimizer_gap_line("momentum", "SwiGLU", 0.4, stay_below=1e-12)
    assert line == "heavy ball, SwiGLU: largest gap above 10⁻¹²: True" and glued["opt-leave-gap"] == "0.4"


def test_optimizer_gap_line_names_optimiser_and_layer_as_the_book_does():
    """No registry ids ("momentum", "adam") in a printed line: heavy ball and Adam, and the layer's book name."""
    line = ch12.optimizer_gap_line("momentum", "symmetric SiLU", 1e-17, stay_below=1e-12)
    assert line == "heavy ball, symmetric (SiLU): largest gap below 10⁻¹²: True"
    # the layer that leaves: a verdict too, never its gap's digits (review 8)
    line = ch12.optimizer_gap_line("adam", "SwiGLU", 2.8612, stay_below=1e-12)
    assert line == "Adam, SwiGLU: largest gap above 10⁻¹²: True"
    assert ch12.optimizer_gap_line("adam", "SwiGLU", 1e-13, stay_below=1e-12).endswith("above 10⁻¹²: False")
    assert ch12.optimizer_gap_line("adam", "ReGLU", 1e-3, stay_below=1e-12).endswith("below 10⁻¹²: False")
    with pytest.raises(ValueError, match="optimizer: expected one of"):
        ch12.optimizer_gap_line("sgd", "ReGLU", 0.0, stay_below=1e-12)


def test_diagonal_gap_figure(glued):
    """Left: the leaving runs from step 1 and, dashed over their steps, the stated bound on the allowance; every kept
    layer as its markers on the floor line "≈ 0" (a log axis cannot show 0).  Right: the perturbed runs, the kept ones
    with markers; one legend, by book names; nothing meets or covers data."""
    steps = list(range(301))
    runs = {
        "GEGLU": History(steps=steps, gap=[0.0, *(1e-2 * (1 + s / 300) for s in steps[1:])]),
        "SwiGLU": History(steps=steps, gap=[0.0, *(2e-2 * (1 + s / 300) for s in steps[1:])]),
        "symmetric SiLU": History(steps=steps, gap=[0.0] * 301),
        "ReGLU": History(steps=steps, gap=[0.0, *([1e-17] * 300)]),
    }
    perturbed = {
        "symmetric SiLU": History(steps=steps, gap=[1.9e-6] * 301),
        "ReGLU": History(steps=steps, gap=[2e-6] * 301),
        "SwiGLU": History(steps=steps, gap=[1e-6, *(0.1 * (1 + s / 300) for s in steps[1:])]),
    }
    ch12.diagonal_gap_figure(runs, 1e-10, perturbed, lr=0.05, eps=1e-6)
    fig = glued["fig-diagonal-gap"]
    top, right, floor = fig.axes
    geglu, swiglu, bound = top.get_lines()
    assert np.allclose(geglu.get_xdata()[[0, -1]], [0.05, 15.0]) and np.allclose(swiglu.get_ydata()[-1], 4e-2)
    assert np.allclose(bound.get_xdata(), [0.05, 15.0]) and np.allclose(bound.get_ydata(), [1e-10, 1e-10])
    assert bound.get_linestyle() == "--" and bound.get_label() == "stated bound on the allowance, $10^{-10}$"
    on_floor = floor.get_lines()
    assert [line.get_marker() for line in on_floor] == ["^", "v"] and all(
        max(line.get_ydata()) == 0 for line in on_floor
    )
    assert [t.get_text() for t in floor.get_yticklabels()] == ["≈ 0"]
    assert right.get_title() == r"started $10^{-6}$ off $\mathcal{D}$"
    assert [line.get_marker() for line in right.get_lines()] == ["^", "v", "None"]  # the kept layers marked
    assert right.get_lines()[0].get_markevery() != right.get_lines()[1].get_markevery()  # staggered, both seen
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:2] == ["GEGLU", "SwiGLU"] and "symmetric (SiLU)" in legend
    assert clashes(fig) == []
    runs["ReGLU"] = History(steps=steps, gap=[0.0, *([1e-9] * 300)])  # above the stated bound: not on the floor
    with pytest.raises(ValueError, match=r"runs: expected the gaps of \['ReGLU'\] below the stated 1e-10"):
        ch12.diagonal_gap_figure(runs, 1e-10, perturbed, lr=0.05, eps=1e-6)
