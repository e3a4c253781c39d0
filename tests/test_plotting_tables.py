"""symbreak.plotting.markdown_table: a number and its interval, a bound and its number, never split over lines."""

from __future__ import annotations

import pytest

from symbreak.plotting import constant_columns, long_table_for_pdf, markdown_table, scientific

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


def test_a_hyphen_before_a_number_becomes_a_minus_sign():
    """The hyphens of "-0.030" and "(-1.2, 0.3)" become minus signs; exponents, words, maths and code keep theirs."""
    cells = ["-0.030 ± 0.004", "(-1.2, 0.3)", "1e-04", "rank-4", "$-1$", "`-1.0000`", "-0.1 %"]
    (row,) = markdown_table([str(i) for i in range(len(cells))], [cells]).splitlines()[2:]
    expected = [f"−0.030{NBSP}±{NBSP}0.004", "(−1.2, 0.3)", "1e-04", "rank-4", "$-1$", "`-1.0000`", "−0.1\u00a0%"]
    assert row == "| " + " | ".join(expected) + " |"
    rule = markdown_table(["Δ"], [["-0.030"], ["0.5"]]).splitlines()[1]
    assert rule == "|---:|", "a column of negative numbers is still right-aligned"


def test_a_column_of_ranges_is_right_aligned():
    """min–max ranges (Table 10.7) line up like numbers; a range inside words ("steps 10–20") does not."""
    rule = markdown_table(["min–max", "text"], [["0.44–1.04", "steps 10–20"], ["0.69–1.00", "—"]]).splitlines()[1]
    assert rule == "|---:|---|"


def test_numbers_in_bold_or_set_as_maths_are_right_aligned():
    """A column with a bold chosen value (Table 16.2) and one of numbers set as maths (Tables 6.1, 11.4) line up as
    numbers; a formula that is not a number keeps its column left-aligned."""
    rows = [["1.803", "$-1$", "$2.59 \\times 10^{-3}$", "$-1$"], ["**1.770**", "$-0.99$", "$10^{-12}$", "$\\sqrt{2}$"]]
    rule = markdown_table(["rate", "exact", "drift", "formula"], rows).splitlines()[1]
    assert rule == "|---:|---:|---:|---|"
    assert markdown_table(["x"], [["**yes**"], ["no"]]).splitlines()[1] == "|---|", "bold words are not numbers"


def test_maths_is_left_as_it_is():
    (row,) = markdown_table(["bound"], [["$< 10^{-12}$ and < 2"]]).splitlines()[2:]
    assert row == f"| $< 10^{{-12}}$ and <{NBSP}2 |"


def test_scientific_to_a_given_number_of_digits():
    assert scientific(2.46e3, digits=2) == "2.5e+03" and scientific(2.46e3, digits=3) == "2.46e+03"
    assert scientific(8.76e-4, digits=2, latex=True) == r"$8.8 \times 10^{-4}$"
    assert scientific(-1.4e13, digits=2, latex=True) == r"$-1.4 \times 10^{13}$"
    assert scientific(2.46, digits=2, latex=True) == "$2.5$"
    assert scientific(1e-13, latex=True) == "$10^{-13}$" and scientific(-1e4, latex=True) == "$-10^{4}$"
    assert scientific(1.0e-13, digits=2, latex=True) == r"$1.0 \times 10^{-13}$"  # two digits shown: 1.0 stays
    # a measured value beside others in a column keeps its mantissa (review: a bare "10⁻⁴" beside "8 × 10⁻⁴" read as
    # an order of magnitude or a bound)
    assert scientific(1.04e-4, latex=True, bare_power=False) == r"$1 \times 10^{-4}$"
    assert scientific(-1e4, latex=True, bare_power=False) == r"$-1 \times 10^{4}$"
    with pytest.raises(ValueError, match="digits: expected at least 1 significant digit, got 0"):
        scientific(1.0, digits=0)
    with pytest.raises(TypeError, match="digits: expected an int, got float"):
        scientific(1.0, digits=2.0)


def test_a_long_table_for_the_pdf_breaks_across_pages_in_columns_of_the_given_widths():
    table = ":::{table} A caption.\n:name: tbl-x\n:class: evidence-table\n\n| a | b |\n|---|---|\n| 1 | 2 |\n:::\n"
    out = long_table_for_pdf(table, (1, 3))
    assert ":class: longtable evidence-table\n" in out and out.index("\\begingroup") < out.index(":::{table}")
    assert r"\X{1}{4}" in out and r"\X{3}{4}" in out and out.rstrip().endswith("\\endgroup\n```")
    with pytest.raises(ValueError, match="table: expected a {table} directive"):
        long_table_for_pdf("| a |", (1,))
    with pytest.raises(ValueError, match="widths: expected positive int"):
        long_table_for_pdf(table, (1, 0))
    with pytest.raises(ValueError, match="widths: expected positive int"):
        long_table_for_pdf(table, (True, 2))


def test_constant_columns_leave_the_table_as_one_phrase():
    header = ["case", "count", r"$\varepsilon$", "residual", "note"]
    rows = [
        ["a", "3", "$< 10^{-12}$", "—", "x"],
        ["b", "3", "$< 10^{-12}$", "below 1\u00a0%", "y"],
        ["c", "3", "", "below 1\u00a0%", "y"],
    ]
    kept_header, kept_rows, phrase = constant_columns(header, rows, [r"$\varepsilon$", "residual", "note"])
    # ε and the residual agree wherever they apply ("" and "—" are passed over); the note varies; the count is
    # the same in every row but not among the columns that may leave
    assert kept_header == ["case", "count", "note"]
    assert kept_rows == [["a", "3", "x"], ["b", "3", "y"], ["c", "3", "y"]]
    assert phrase == r"$\varepsilon < 10^{-12}$; residual below 1" + "\u00a0%"
    # a column with a value in one row only says nothing about "every row": it stays
    one = (["case", "v"], [["a", "1"], ["b", "—"]], "")
    assert constant_columns(["case", "v"], [["a", "1"], ["b", "—"]], ["v"]) == one
    with pytest.raises(ValueError, match="among: expected headers of the table"):
        constant_columns(header, rows, ["missing"])
    with pytest.raises(ValueError, match=r"rows\[1\]: expected 5 cells like the header"):
        constant_columns(header, [rows[0], ["b"]], ["note"])
