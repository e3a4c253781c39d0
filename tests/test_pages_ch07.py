"""symbreak.pages.ch07: chapter 7's tables, glued values and figure, from results given to it.

Glue goes to a dictionary instead of a kernel; printed text is captured.  Glued
numbers are checked against values worked out here by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch

from figure_checks import clashes
from symbreak import REGISTRY, symbolic
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
    """Kept cells read ✓; a broken cell ‖(0, 1)‖ / ‖(3, 4)‖ = 0.2 reads ✗ 0.20; 3 of the 4 cells agree."""
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
    assert glued["kept-fraction"] == "25\u00a0%" and glued["agreeing-cells"] == "3 of the 4"
    assert glued["broken-min-change"] == "0.20"
    assert capsys.readouterr().out == ""  # glued for the prose, not printed above the table
    glued.clear()
    ch07.show_layer_table(changes, 4, 0.25)
    assert glued["agreeing-cells"] == "all 4"  # words inside the sentence, not "4 of 4" opening it


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
    # the factors in maths, as the other columns: in the sans header font a bare α reads as "a"
    assert rows[0].startswith("| σ | every $\\alpha > 0$ | every $\\alpha < 0$ | $\\alpha = -1$ | $\\alpha = 2$ |")
    # the identity keeps every α ≠ 0: G_σ = ℝ^×, as the theorem writes it (scaling_group's ℝ∖{0})
    assert (
        rows[2]
        == "| identity | yes (proof) | yes (proof) | yes (proof) | yes (proof) | $1$, $1$ | $\\mathbb{R}^\\times$ |"
    )
    # ReLU: σ'(0+) = 1, σ'(0−) = 0; α = −1 fails, e.g. at z = 1: relu(−1) = 0 ≠ −relu(1); the point is one formula,
    # joined to "no" by a no-break space, so that a narrow cell cannot break "no (" from "z = 1)"
    assert rows[3].startswith("| ReLU | yes (proof) | no\u00a0$(z = 1, \\alpha = -1)$ | no\u00a0$(z = 1)$ |")
    assert rows[3].endswith(r"| $1$, $0$ | $(0, \infty)$ |")
    assert "`" not in glued["decision-table"]  # no registry identifier in code font
    assert glued["halfline-count"] == str(sum(s.is_positively_homogeneous for s in REGISTRY.values()))
    assert glued["smooth-count"] == "2"


def test_glue_two_slope(glued):
    """Display names, and a decimal where the exact value has one: (1 − 1/100)² = 9801/10000 reads 0.9801."""
    exact = {"relu": sp.Integer(1), "leaky_relu": sp.Rational(9801, 10000), "abs": sp.Integer(4)}
    ch07.glue_two_slope(exact, 1e-13)
    assert glued == {
        "two-slope-exact": "1 for ReLU, 0.9801 for leaky ReLU and 4 for $|z|$",
        "quadrature-tolerance": "$10^{-13}$",
    }
    glued.clear()
    ch07.glue_two_slope({"relu": sp.Rational(1, 3)}, 1e-13)  # no finite decimal: the fraction, in LaTeX
    assert glued["two-slope-exact"] == r"$\frac{1}{3}$ for ReLU"


def test_decision_text_keeps_the_point_one_formula():
    z = sp.Symbol("z", real=True)
    assert symbolic.decision_text(scaling_decision("relu", 2)) == "yes (proof)"
    assert symbolic.decision_text(scaling_decision("relu", -1)) == "no\u00a0$(z = 1)$"
    assert symbolic.decision_text(inverse_scaling_decision("gelu", 1)).startswith("no\u00a0$(z = 1, ")
    with pytest.raises(TypeError, match="decision: expected a symbreak.decide.Decision"):
        symbolic.decision_text({z: 1})


def test_show_defects_at_reads_the_ends(glued, capsys):
    ch07.show_defects_at(np.array([0.25, 1.5, 4.0]), _curves())
    # silu: α = −4 is the negative curve's last value, α = −1/4 its first
    assert glued["defect-silu--4"] == "0.3000" and glued["defect-silu--1over4"] == "0.1000"
    assert glued["defect-tanh-4"] == "2.6000" and glued["grid-points"] == "3"
    assert capsys.readouterr().out == ""  # the figure shows the defects; they are not printed as well


def test_show_limits(glued, capsys):
    """The limits are glued, not printed; the verdicts compare them with the plotted ends of _curves()."""
    # silu's ends: D(−4) = 0.3, D(−1/4) = 0.1, D(1/4) = 0.4, D(4) = 0.6; gelu's: 1.3, 1.1, 1.4, 1.6
    limits = {("silu", "minus"): 0.31, ("silu", "zero"): 0.2, ("silu", "plus"): 0.59}
    limits |= {("gelu", "minus"): 1.29, ("gelu", "zero"): 1.2, ("gelu", "plus"): 1.61}
    ch07.show_limits(limits, _curves(), within=0.025)
    assert glued["limit-silu-minus"] == "0.3100" and glued["limit-gelu-plus"] == "1.6100"
    assert glued["limit-within"] == "0.025"
    assert capsys.readouterr().out.splitlines() == [
        "SiLU and GELU, at α = ±4: D within 0.025 of its limit as α → ±∞: True",
        "SiLU and GELU: the limit as α → 0 lies between D(−1/4) and D(1/4): True",
    ]
    limits[("gelu", "plus")], limits[("silu", "zero")] = 1.7, 0.05  # 0.1 from D(4); below both D(±1/4)
    ch07.show_limits(limits, _curves(), within=0.025)
    assert [line.endswith("False") for line in capsys.readouterr().out.splitlines()] == [True, True]
    with pytest.raises(ValueError, match="within: expected a real number > 0"):
        ch07.show_limits(limits, _curves(), within=0)


def test_figure_scaling_defect(glued):
    """Display names in the legend; a curve on another one says so; nothing meets or covers data."""
    curves = _curves() | {"leaky_relu": ([0.99, 0.99, 0.99], None), "abs": ([4.0, 4.0, 4.0], None)}
    exact = {"relu": sp.Integer(1), "leaky_relu": sp.Rational(9801, 10000), "abs": sp.Integer(4)}
    ch07.figure_scaling_defect(np.array([0.25, 1.5, 4.0]), curves, exact)
    fig = glued["fig-scaling-defect"]
    left, right = fig.axes[:2]
    assert left.get_yscale() == "log" and right.get_yscale() == "log"
    (legend,) = fig.legends
    names = [t.get_text() for t in legend.get_texts()]
    assert names == ["ReLU", "SiLU", "GELU", "tanh", "leaky ReLU ≈ ReLU", "$|z|$"]
    assert clashes(fig) == []
    # ReLU is drawn over leaky ReLU, which lies on it (it was hidden under leaky ReLU's markers), on every panel;
    handles = {text.get_text(): handle for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)}

    def drawn(label):
        style = (handles[label].get_color(), handles[label].get_marker())
        return [
            line for ax in (left, right) for line in ax.get_lines() if (line.get_color(), line.get_marker()) == style
        ]

    relu, leaky = drawn("ReLU"), drawn("leaky ReLU ≈ ReLU")
    assert relu and leaky and min(line.get_zorder() for line in relu) > max(line.get_zorder() for line in leaky)
    # and leaky ReLU's markers, underneath, are hollow and well larger, and its line a broad band, so that they show
    # around ReLU's at display size (a phone's column): in the plot and the legend
    assert min(line.get_markersize() for line in leaky) >= 2 * max(line.get_markersize() for line in relu)
    assert min(line.get_linewidth() for line in leaky) >= 2 * max(line.get_linewidth() for line in relu)
    assert all(line.get_markerfacecolor() == "none" for line in leaky + [handles["leaky ReLU ≈ ReLU"]])
    assert all(line.get_markerfacecolor() != "none" for line in relu)
    assert handles["leaky ReLU ≈ ReLU"].get_markersize() == leaky[0].get_markersize()
    assert handles["leaky ReLU ≈ ReLU"].get_linewidth() == leaky[0].get_linewidth()
    references = [line for line in left.get_lines() if line.get_color() == "black"]
    assert references and min(line.get_zorder() for line in references) > relu[0].get_zorder()  # still on top
    assert all(line.get_zorder() == drawn("SiLU")[0].get_zorder() for line in drawn("tanh"))  # others unchanged
    far = curves | {"leaky_relu": ([0.5, 0.5, 0.5], None)}  # half of ReLU's: not on it
    with pytest.raises(ValueError, match="curves: expected 'leaky_relu' to lie on 'relu' within 5 %"):
        ch07.figure_scaling_defect(np.array([0.25, 1.5, 4.0]), far, exact)


def test_factors_and_slopes_are_printed_with_a_true_minus():
    """Printed factors and slopes use the book's minus (−1), not ASCII (-1); an empty list reads as words."""
    single = [sp.Integer(-2), sp.Integer(-1), sp.Rational(1, 2), sp.Integer(2)]
    assert ch07.factor_list(single) == "−2, −1, 1/2, 2"
    assert ch07.unchanged_text([sp.Integer(-1)]) == "unchanged within rounding only for α = −1"
    assert ch07.unchanged_text([]) == "changed beyond rounding for every α"  # not "for α = none"
    slopes = {"relu": (sp.Integer(1), sp.Integer(0)), "leaky_relu": (1, sp.Rational(1, 100)), "abs": (1, -1)}
    assert ch07.slope_listing(slopes) == "ReLU 1, 0; leaky ReLU 1, 1/100; |z| 1, −1"
    assert "-" not in ch07.LIMITS["minus"]
    with pytest.raises(TypeError, match="factors: expected a sequence of numbers, got str"):
        ch07.factor_list("-1")


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
        ch07.show_limits({("silu", "minus"): 0.5}, _curves(), within=0.025)


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
