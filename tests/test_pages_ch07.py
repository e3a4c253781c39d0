"""symbreak.pages.ch07: chapter 7's tables, glued values and figure, from results given to it.

Glue goes to a dictionary instead of a kernel; printed text is captured.  Glued
numbers are checked against values worked out here by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch

from symbreak import REGISTRY
from symbreak.pages import ch07
from symbreak.symbolic.scaling import scaling_decision
from symbreak.symmetry import Change
from symbreak.verdicts import exchange_decision, inverse_scaling_decision

F64 = torch.float64


def _change(before, after, bound=(1e-15, 1e-15)) -> Change:
    return Change(*(torch.tensor([v], dtype=F64) for v in (before, after, bound)))


def _curves():
    """Two-sided curves over three |α|: the identity not drawn, ReLU only for α < 0, SiLU, GELU and tanh both."""
    curves = {"identity": (None, None), "relu": ([1.0, 1.0, 1.0], None)}
    for i, name in enumerate(("silu", "gelu", "tanh")):
        curves[name] = ([0.1 + i, 0.2 + i, 0.3 + i], [0.4 + i, 0.5 + i, 0.6 + i])
    return curves


def test_show_layer_table(glued, capsys):
    """Kept cells read ✓; a broken cell ‖(0, 1)‖ / ‖(3, 4)‖ = 0.2 reads ✗ 0.20; 3 of 4 cells agree."""
    half, two = sp.Rational(1, 2), sp.Integer(2)
    kept = _change([3.0, 4.0], [3.0, 4.0])
    changes = {("A", half): kept, ("A", two): kept, ("B", half): kept, ("B", two): _change([3.0, 4.0], [3.0, 5.0])}
    ch07.show_layer_table(changes, 3, 0.25)
    assert glued["layer-table"].splitlines() == [
        r"| layer | $\alpha = \frac{1}{2}$ | $\alpha = 2$ |",
        "|---|---|---|",
        "| A | ✓ | ✓ |",
        "| B | ✓ | ✗ 0.20 |",
    ]
    assert glued["kept-fraction"] == "25 %" and glued["agreeing-cells"] == "3 of 4"
    assert glued["broken-min-change"] == "0.20"
    assert capsys.readouterr().out == "broken cells: smallest change 0.2000\n"


def test_glue_reglu_exchange(glued):
    ch07.glue_reglu_exchange(exchange_decision("relu"), 0.91286)
    # relu(1)·(−1) − relu(−1)·1 = −1 at (a, b) = (1, −1)
    assert glued == {
        "relu-exchange-witness": "$a = 1$, $b = -1$",
        "relu-exchange-value": "$-1$",
        "reglu-exchange-change": "0.91",
    }


def test_glue_decision_table(glued):
    names = ("identity", "relu")
    decisions = {
        n: [inverse_scaling_decision(n, s) for s in (1, -1)] + [scaling_decision(n, a) for a in (-1, 2)] for n in names
    }
    groups = {"identity": r"\mathbb{R}\setminus\{0\}", "relu": r"(0, \infty)"}
    ch07.glue_decision_table(decisions, groups, ["gelu", "silu"])
    rows = glued["decision-table"].splitlines()
    assert rows[2].startswith("| `identity` | yes (proof) | yes (proof) | yes (proof) | yes (proof) | $1$, $1$ |")
    # ReLU: σ'(0+) = 1, σ'(0−) = 0; α = −1 fails, e.g. at z = 1: relu(−1) = 0 ≠ −relu(1)
    assert rows[3].startswith("| `relu` | yes (proof) | no (") and rows[3].endswith(r"| $1$, $0$ | $(0, \infty)$ |")
    assert glued["halfline-count"] == str(sum(s.is_positively_homogeneous for s in REGISTRY.values()))
    assert glued["smooth-count"] == "2"


def test_glue_two_slope(glued):
    ch07.glue_two_slope({"relu": sp.Integer(1), "abs": sp.Integer(4)}, 1e-13)
    assert glued == {"two-slope-exact": "`relu` $1$, `abs` $4$", "quadrature-tolerance": "$10^{-13}$"}


def test_show_defects_at_reads_the_ends(glued, capsys):
    ch07.show_defects_at(np.array([0.25, 1.5, 4.0]), _curves())
    # silu: α = −4 is the negative curve's last value, α = −1/4 its first
    assert glued["defect-silu--4"] == "0.3000" and glued["defect-silu--1over4"] == "0.1000"
    assert glued["defect-tanh-4"] == "2.6000" and glued["grid-points"] == "3"
    assert capsys.readouterr().out == ""  # the figure shows the defects; they are not printed as well


def test_show_limits(glued, capsys):
    limits = {(n, k): v for n in ("silu", "gelu") for k, v in zip(ch07.LIMITS, (0.66789, 0.1058, 0.0437), strict=True)}
    ch07.show_limits(limits, _curves())
    assert glued["limit-silu-minus"] == "0.6679" and glued["limit-gelu-plus"] == "0.0437"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "silu, α → -∞: D → 0.6679"
    assert lines[3] == "silu, plotted: D(-4) = 0.3000, D(-1/4) = 0.1000, D(1/4) = 0.4000, D(4) = 0.6000"


def test_figure_scaling_defect(glued):
    ch07.figure_scaling_defect(np.array([0.25, 1.5, 4.0]), _curves(), {"relu": sp.Integer(1)})
    left, right = glued["fig-scaling-defect"].axes[:2]
    assert left.get_yscale() == "log" and right.get_yscale() == "log"


def test_bad_input_names_the_argument():
    half = sp.Rational(1, 2)
    with pytest.raises(ValueError, match="changes: expected every pair of"):
        ch07.show_layer_table(
            {("A", half): _change([1.0], [2.0], [0.1]), ("B", 2): _change([1.0], [2.0], [0.1])}, 0, 0.25
        )
    with pytest.raises(ValueError, match="changes: expected at least one cell outside the rounding bound"):
        ch07.show_layer_table({("A", half): _change([1.0], [1.0], [0.1])}, 1, 0.25)
    with pytest.raises(ValueError, match="decision: expected a counterexample Decision"):
        ch07.glue_reglu_exchange(exchange_decision("identity"), 0.0)
    with pytest.raises(ValueError, match=r"decisions\['relu'\]: expected four Decisions"):
        ch07.glue_decision_table({"relu": [scaling_decision("relu", 2)]}, {"relu": r"(0, \infty)"}, [])
    with pytest.raises(ValueError, match="curves: expected both sides of"):
        ch07.show_defects_at(np.array([1.0]), {"relu": ([1.0], None)})
    with pytest.raises(ValueError, match="limits: expected the keys"):
        ch07.show_limits({("silu", "minus"): 0.5}, _curves())


def test_glue_configuration(glued):
    ch07.glue_configuration({"layer-d": 6, "n-alphas": 2}, [sp.Integer(-4), sp.Rational(3, 2)], [sp.Rational(1, 2)])
    assert glued == {
        "layer-d": "6",
        "n-alphas": "2",
        "alpha-list": r"$-4, \frac{3}{2}$",
        "single-list": r"$\frac{1}{2}$",
        "scale-alpha": "1.7",  # the configured factor of the standard check
        "gh-points": "160",  # the configured nodes of the quadrature
    }
    with pytest.raises(TypeError, match=r"config\['d'\]: expected an int, got float"):
        ch07.glue_configuration({"d": 6.0}, [sp.Integer(2)], [sp.Integer(2)])
    with pytest.raises(ValueError, match="single: expected at least one factor, got none"):
        ch07.glue_configuration({}, [sp.Integer(2)], [])
