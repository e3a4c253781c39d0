"""The PDF's table layout (``_ext/latex_tables.py``): the width estimates and how the columns share the line.

Reference widths are measured on the built PDF (Times 10 pt; the words' boxes
of ``pdftotext -bbox`` on Table 7.2) and stated in average characters of
0.48 em (4.8 pt); the estimates
must be within 15 % of them (a convention: a column sized by the estimate and
one ``PAD`` of space does not wrap the cell it was sized for).  The sharing
rules are checked on made-up widths whose answer follows from the rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
from latex_tables import LINE, PAD, _chars, _math_length, _math_pieces, _shares  # noqa: E402

#: Convention: an estimate within this share of the measured width.
WITHIN = 0.15

# (TeX source of a formula, its width as set in the PDF in characters of 4.8 pt)
MEASURED_MATH = [
    (r"(z = 1, \alpha = 2)", 60.1 / 4.8),  # x from 154.5 pt to 214.6 pt
    (r"(z = 1, \alpha = -1)", 68.0 / 4.8),  # 238.8 to 306.7 pt
    (r"\sigma'(0^+), \sigma'(0^-)", 60.9 / 4.8),  # the heading, 429.0 to 489.9 pt
]
MEASURED_TEXT = [("GELU (tanh)", 52.3 / 4.8), ("yes (proof)", 43.2 / 4.8)]  # 78.0 to 130.3, 142.3 to 185.5 pt


@pytest.mark.parametrize(("tex", "width"), MEASURED_MATH)
def test_a_formula_is_about_as_wide_as_set(tex, width):
    assert abs(_math_length(tex) - width) <= WITHIN * width


@pytest.mark.parametrize(("text", "width"), MEASURED_TEXT)
def test_text_is_about_as_wide_as_set(text, width):
    assert abs(_chars(text) - width) <= WITHIN * width


def test_a_formula_breaks_only_after_a_relation_or_operator_outside_groups():
    assert len(_math_pieces(r"a = b + c")) == 3  # after "=" and after "+"
    assert len(_math_pieces(r"\left(a + b\right)")) == 1  # inside \left … \right: no break
    assert len(_math_pieces(r"x^{a + b}")) == 1  # inside a script: no break
    assert len(_math_pieces(r"\{1, -1\}")) == 1  # a sign, not a binary operator


def test_a_fraction_is_as_wide_as_its_wider_part():
    assert _math_length(r"\frac{1}{100}") == pytest.approx(_math_length("100"))


def test_columns_that_fit_share_the_line_in_proportion():
    shares = _shares([10.0, 20.0], [0.0, 0.0], PAD)
    assert sum(shares) == pytest.approx(LINE)
    assert (shares[1] - PAD) / (shares[0] - PAD) == pytest.approx(2.0)


def test_a_narrow_column_keeps_its_width_where_the_line_is_short():
    """Natural widths 10, 60, 60 do not fit in LINE: the narrow column keeps 10, the wide ones share the rest."""
    shares = _shares([10.0, 60.0, 60.0], [0.0, 0.0, 0.0], PAD)
    assert shares[0] == pytest.approx(10.0 + PAD)
    assert shares[1] == pytest.approx(shares[2]) == pytest.approx((LINE - 10.0 - PAD) / 2)


def test_no_column_gets_less_than_its_longest_word():
    shares = _shares([1.0, 90.0], [12.0, 0.0], PAD)
    assert shares[0] >= 12.0 + PAD
