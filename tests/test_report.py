"""symbreak.report: the verdict and margin text of the book's checks (stable across processors)."""

from __future__ import annotations

import pytest
import sympy as sp
import torch

from symbreak.report import VERDICT_WIDTH, below, bound_check, holds_for, margin_check, stacked, vanishes


def test_bound_check_text_and_verdicts():
    difference, bound = torch.tensor([1e-16, 2e-16]), torch.tensor([1e-13, 1e-13])
    assert bound_check(difference, bound) == "every entry within the rounding bound: True; within 10\u00a0% of it: True"
    assert (
        bound_check(difference, bound, "x", fraction=1e-3)
        == "x within the rounding bound: True; within 0.1\u00a0% of it: False"
    )
    assert (
        bound_check(torch.tensor([2.0]), torch.tensor([1.0]), "x", fraction=1) == "x within the rounding bound: False"
    )
    assert bound_check(torch.zeros(1), torch.tensor([1.234e-13]), show_bound=True).endswith(
        "(the bound is at most 1.2·10⁻¹³)"
    )
    with pytest.raises(ValueError, match=r"fraction: expected a real number in \(0, 1\], got 2"):
        bound_check(difference, bound, fraction=2)


def test_below():
    assert below(torch.tensor([-3e-16, 1e-16]), 1e-14, "largest change") == "largest change below 10⁻¹⁴: True"
    assert below(0.5, 1e-14, "change") == "change below 10⁻¹⁴: False"


def test_bad_arguments():
    with pytest.raises(ValueError, match="threshold: expected a real number > 0, got 0"):
        below(1.0, 0, "x")


def test_margin_check_of_stored_margins():
    """tbl-symmetries-measured: kept cells are stated as two verdicts on their margins, never by the margins' digits."""
    assert (
        margin_check([0.0, 0.03, 0.2]) == "every entry within the rounding bound: True; within 10\u00a0% of it: False"
    )
    assert (
        margin_check([0.0, 0.03], "kept", fraction=0.25)
        == "kept within the rounding bound: True; within 25\u00a0% of it: True"
    )
    assert margin_check(1.5, fraction=1) == "every entry within the rounding bound: False"
    assert margin_check(0.25, fraction=0.25).endswith("within 25\u00a0% of it: True")  # at most
    for bad in ([-0.1], [float("nan")], [True], ["0.1"], []):
        with pytest.raises(ValueError, match="margins: expected"):
            margin_check(bad)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="fraction: expected a real number in"):
            margin_check([0.1], fraction=bad)


def test_bound_check_verdicts_are_the_entrywise_comparisons():
    """The two verdicts equal the plain comparisons |difference| <= bound and <= fraction * bound."""
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        bound = torch.rand(5, 3, generator=g, dtype=torch.float64)
        difference = bound * torch.rand(5, 3, generator=g, dtype=torch.float64) * 1.3
        for fraction in (0.1, 0.5):
            expected = (
                f"every entry within the rounding bound: {bool((difference <= bound).all())}; "
                f"within {fraction * 100:g}\u00a0% of it: {bool((difference <= fraction * bound).all())}"
            )
            assert bound_check(difference, bound, fraction=fraction) == expected


def test_vanishes():
    assert vanishes(sp.zeros(1, 2), "the difference") == "the difference identically zero: True"
    assert vanishes((0, sp.zeros(2, 2), [sp.Integer(0)]), "both") == "both identically zero: True"
    x = sp.Symbol("x")
    assert vanishes(sp.Matrix([[0, x]]), "d") == "d identically zero: False"
    assert vanishes(x - x + 1, "d") == "d identically zero: False"
    with pytest.raises(TypeError, match="value"):
        vanishes("0", "d")


def test_holds_for():
    assert holds_for({"relu": True, "tanh": False, "gelu": True}, "odd") == "odd: holds for relu, gelu; fails for tanh"
    assert holds_for({"relu": True}, "p") == "p: holds for relu"
    assert holds_for({"relu": False}, "p") == "p: fails for relu"


def test_a_long_holds_for_line_breaks_before_each_part():
    """Round 9: chapter 5's line of 100 characters wrapped on a desktop page; past VERDICT_WIDTH each part has a
    line of its own."""
    names = ["ReLU", "GELU", "GELU (tanh)", "SiLU", "identity", "leaky ReLU", "tanh", "|z|"]
    text = holds_for(dict(zip(names, [True] * 4 + [False] * 4, strict=True)), "s(z) + s(−z) = 1")
    assert text == (
        "s(z) + s(−z) = 1:\n  holds for ReLU, GELU, GELU (tanh), SiLU;\n  fails for identity, leaky ReLU, tanh, |z|"
    )
    assert all(len(line) <= VERDICT_WIDTH for line in text.splitlines())
    with pytest.raises(ValueError, match="verdicts"):
        holds_for({}, "p")
    with pytest.raises(TypeError, match="verdicts"):
        holds_for({"relu": 1}, "p")


def test_stacked_sets_a_displayed_result_over_lines():
    """A displayed result as a heading and one formula per indented line (chapter 10's checks of prop-cost-formulas):
    on one line the differences of the rank-d and full forms ran past a phone's column."""
    differences = [r"\Delta\text{parameters} = 0", r"\Delta\text{FLOPs} = - m", r"\Delta\text{memory} = 0"]
    text = stacked(r"(\text{rank-}R \text{ at } R = d) - \text{full}:", differences)
    assert text == (
        r"\begin{aligned}&(\text{rank-}R \text{ at } R = d) - \text{full}:"
        r"\\ &\quad \Delta\text{parameters} = 0,\\ &\quad \Delta\text{FLOPs} = - m,"
        r"\\ &\quad \Delta\text{memory} = 0\end{aligned}"
    )
    assert stacked("a:", ["= b"], sep=";") == r"\begin{aligned}&a:\\ &\quad = b\end{aligned}"
    with pytest.raises(TypeError, match="head, lines"):
        stacked("a:", "b")
    with pytest.raises(TypeError, match="lines: expected non-empty strings"):
        stacked("a:", ["b", ""])
