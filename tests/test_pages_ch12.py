"""symbreak.pages.ch12: chapter 12's tables, glued values and figure, from results with known values."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

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
    assert _rows(glued["euler-registry-table"]) == [["relu", "yes (proof)", "yes"], ["silu", "no ($z = 1$)", "no"]]


def test_setting_and_converse(glued):
    ch12.glue_setting(n=64, m=4, d=4, d_out=2, teacher_m=6, lr=0.05, weight_decay=0.01, steps=1200)
    ch12.glue_converse(0.0143731234, 0.0143731)
    assert glued["lr"] == "0.05" and glued["wd"] == "0.01" and glued["steps"] == "1,200" and glued["d-out"] == "2"
    assert glued["converse-gap"] == "0.014373" and glued["converse-predicted"] == "0.014373"


def test_gap_table(glued):
    runs = {
        "sym": History(steps=[0, 1, 2], gap=[0.0, 1e-17, 2e-17]),
        "reglu": History(steps=[0, 1, 2], gap=[0.0, 0.0, 3e-15]),
        "swiglu": History(steps=[0, 1, 2], gap=[0.0, 2e-3, 0.0123]),
        "geglu": History(steps=[0, 1, 2], gap=[0.0, 1e-3, 0.02]),
    }
    allowance = {"sym": 1e-14, "reglu": 1e-14, "swiglu": 1e-14, "geglu": 2e-13}
    stays = {"sym": True, "reglu": True, "swiglu": False, "geglu": False}
    ch12.glue_gap_table(runs, allowance, stays, stay_share=0.1, allowance_below=1e-13)
    assert _rows(glued["gap-table"]) == [  # the allowance only against the stated 1e-13, never its digits
        ["sym", "stays", "below 10 % of the allowance", "$< 10^{-13}$", "✓"],
        ["reglu", "stays", "not below 10 % of the allowance", "$< 10^{-13}$", "✓"],  # 3e-15 is 30 % of it
        ["swiglu", "leaves", "0.0123", "$< 10^{-13}$", "✗"],
        ["geglu", "leaves", "0.02", r"$\geq 10^{-13}$", "✗"],
    ]
    assert glued["gap-table"].splitlines()[0].endswith("| rounding allowance | gap within the allowance |")
    assert glued["stay-share"] == "10 %" and glued["leave-first-gap"] == "0.001"
    assert glued["allowance-below"] == "$10^{-13}$"


def test_optimizer_gaps_and_perturbed(glued):
    gaps = {("momentum", "SwiGLU"): 0.4012, ("adam", "SwiGLU"): 2.86, ("adam", "ReGLU"): 1e-17}
    ch12.glue_optimizer_gaps(gaps, stay_below=1e-12)
    assert glued["opt-stay-below"] == "$10^{-12}$" and glued["opt-leave-gap"] == "0.40"
    with pytest.raises(ValueError, match="gaps: expected runs of 'SwiGLU'"):
        ch12.glue_optimizer_gaps({("adam", "ReGLU"): 0.0}, stay_below=1e-12)
    ch12.glue_perturbed({"symmetric SiLU": 1.0004, "ReGLU": 1.0061, "SwiGLU": 101234.0}, eps=1e-6)
    assert glued["eps"] == "$10^{-6}$" and glued["growth-symmetric"] == "1.00"
    assert glued["growth-reglu"] == "1.01" and glued["growth-swiglu"] == r"$1.0 \times 10^{5}$"


def test_diagonal_gap_figure(glued):
    """Left: the leaving runs from step 1 and, dashed over their steps, the stated bound on the allowance."""
    runs = {
        "GEGLU": History(steps=[0, 1, 2, 3], gap=[0.0, 1e-3, 2e-3, 3e-3]),
        "SwiGLU": History(steps=[0, 1, 2, 3], gap=[0.0, 2e-3, 4e-3, 6e-3]),
        "ReGLU": History(steps=[0, 1, 2, 3], gap=[0.0, 0.0, 0.0, 0.0]),
    }
    perturbed = {"ReGLU": History(steps=[0, 1, 2, 3], gap=[1e-6, 1.1e-6, 1.2e-6, 1.3e-6])}
    ch12.diagonal_gap_figure(runs, 1e-10, perturbed, lr=0.5, eps=1e-6)
    left, right = glued["fig-diagonal-gap"].axes
    geglu, swiglu, bound = left.get_lines()
    assert np.allclose(geglu.get_xdata(), [0.5, 1.0, 1.5]) and np.allclose(swiglu.get_ydata(), [2e-3, 4e-3, 6e-3])
    assert np.allclose(bound.get_xdata(), [0.5, 1.5]) and np.allclose(bound.get_ydata(), [1e-10, 1e-10])
    assert bound.get_linestyle() == "--" and bound.get_label() == "stated bound on the allowance, $10^{-10}$"
    assert right.get_title() == r"started $10^{-6}$ off $\mathcal{D}$"
    assert np.allclose(right.get_lines()[0].get_ydata(), [1e-6, 1.1e-6, 1.2e-6, 1.3e-6])
