"""symbreak.plotting.markdown_table: a number and its interval, a bound and its number, never split over lines."""

from __future__ import annotations

import pytest

from symbreak.plotting import markdown_table, scientific

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


def test_scientific_to_a_given_number_of_digits():
    assert scientific(2.46e3, digits=2) == "2.5e+03" and scientific(2.46e3, digits=3) == "2.46e+03"
    assert scientific(8.76e-4, digits=2, latex=True) == r"$8.8 \times 10^{-4}$"
    assert scientific(-1.4e13, digits=2, latex=True) == r"$-1.4 \times 10^{13}$"
    with pytest.raises(ValueError, match="digits: expected at least 1 significant digit, got 0"):
        scientific(1.0, digits=0)
    with pytest.raises(TypeError, match="digits: expected an int, got float"):
        scientific(1.0, digits=2.0)
