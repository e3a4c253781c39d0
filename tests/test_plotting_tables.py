"""symbreak.plotting.markdown_table: a number and its interval, a bound and its number, never split over lines."""

from __future__ import annotations

from symbreak.plotting import markdown_table

NBSP = "\u00a0"


def test_intervals_and_bounds_are_joined_by_no_break_spaces():
    table = markdown_table(["Δ", "p", "form"], [["+0.020 ± 0.013", "< 0.001", "symmetric (ReLU)"]])
    header, rule, row = table.splitlines()
    assert row == f"| +0.020{NBSP}±{NBSP}0.013 | <{NBSP}0.001 | symmetric (ReLU) |"
    assert rule == "|---:|---:|---|", "the columns of numbers are still recognised and right-aligned"
    assert header == "| Δ | p | form |"


def test_a_bound_before_maths_is_joined_too():
    (row,) = markdown_table(["bound"], [["≤ $10^{-12}$"]]).splitlines()[2:]
    assert row == f"| ≤{NBSP}$10^{{-12}}$ |"


def test_maths_is_left_as_it_is():
    (row,) = markdown_table(["bound"], [["$< 10^{-12}$ and < 2"]]).splitlines()[2:]
    assert row == f"| $< 10^{{-12}}$ and <{NBSP}2 |"
