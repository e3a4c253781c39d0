"""Inline maths in running text (``_ext/inline_math.py``): ``$d$ = 6`` is set as ``$d = 6$``; an opening parenthesis
stays with its formula.

The cases are the book's own (review of issue 17: "an italic d next to an upright '= 6'", a line
break between "d" and "= 32" on a phone); the doctree test runs the Sphinx transform on a
paragraph as myst-nb leaves it after a glued value is pasted (a text node " = ", then the value).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))

import inline_math  # noqa: E402

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("symbol", "following", "expected"),
    [
        ("d", f"{NBSP}={NBSP}6", ("d = 6", "")),
        ("m", f"{NBSP}={NBSP}11,008 units", ("m = 11{,}008", " units")),
        ("\\eta", " = 0.3, and", ("\\eta = 0.3", ", and")),
        ("R", f"{NBSP}={NBSP}16) and 1.10 (standard MLP", ("R = 16", ") and 1.10 (standard MLP")),
        ("c", f"{NBSP}={NBSP}−0.5.", ("c = -0.5", ".")),
    ],
)
def test_a_symbol_and_its_whole_value_become_one_formula(symbol, following, expected):
    assert inline_math.joined(symbol, following) == expected


@pytest.mark.parametrize(
    ("symbol", "following"),
    [
        ("s", f"{NBSP}={NBSP}25{NBSP}% of"),  # a percentage: the sign stays with its number, outside
        ("\\lambda", f"{NBSP}={NBSP}8 × 10⁻⁴"),  # a number in scientific notation continues past its digits
        ("\\varepsilon", f"{NBSP}={NBSP}10⁻⁴"),
        ("m", f"{NBSP}={NBSP}4d"),  # not a number
        ("m = 4d", f"{NBSP}={NBSP}16"),  # a formula with a relation of its own
        ("d", " is 6"),  # no equals sign
        ("d", f"{NBSP}={NBSP}1.5.2"),  # a version, not a number
    ],
)
def test_a_value_that_is_not_a_whole_number_stays_apart(symbol, following):
    assert inline_math.joined(symbol, following) is None


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="symbol, following: expected str, got int, str"):
        inline_math.joined(1, " = 2")


def _paragraph(*children) -> nodes.document:
    document = new_document("test", get_default_settings(Parser))
    document += nodes.paragraph("", "", *children)
    return document


def test_the_transform_joins_a_glued_value_in_the_doctree():
    """myst-nb pastes a glued value as a text node of its own after the text " = "."""
    document = _paragraph(
        nodes.Text("at "), nodes.math("d", "d"), nodes.Text(f"{NBSP}={NBSP}"), nodes.Text("4,096"), nodes.Text(" tok")
    )
    inline_math._join_values(None, document, "test")
    paragraph = document[0]
    assert [type(n).__name__ for n in paragraph.children] == ["Text", "math", "Text"]
    assert paragraph[1].astext() == "d = 4{,}096" and paragraph.astext() == "at d = 4{,}096 tok"


def test_the_transform_joins_two_values_in_one_paragraph():
    """Text nodes compare as strings: the second pair's " = " is equal to the first's, and joining one pair must not
    take the other's nodes (Fig. 6.2 had read "d = 32m = 16, , 20,000 Gaussian inputs")."""
    eq = f"{NBSP}={NBSP}"
    document = _paragraph(
        nodes.math("s", "s"), nodes.Text(eq), nodes.Text(f"25{NBSP}%"), nodes.Text(" ("),  # stays apart
        nodes.math("d", "d"), nodes.Text(eq), nodes.Text("32"), nodes.Text(", "),
        nodes.math("m", "m"), nodes.Text(eq), nodes.Text("16"), nodes.Text(", 20,000 Gaussian inputs)"),
    )  # fmt: skip
    inline_math._join_values(None, document, "test")
    inline_math._keep_parentheses(None, document, "test")
    assert document[0].astext() == f"s{eq}25{NBSP}% (d = 32, m = 16, 20,000 Gaussian inputs)"
    kinds = ["math", "Text", "Text", "Text", "inline", "Text", "inline", "Text"]
    assert [type(n).__name__ for n in document[0].children] == kinds
    assert [n.astext() for n in document[0].children if isinstance(n, nodes.inline)] == ["(d = 32,", "m = 16,"]


def test_the_transform_leaves_a_percentage_apart():
    """Also where the sign is a text node of its own after the glued number."""
    document = _paragraph(nodes.math("s", "s"), nodes.Text(f"{NBSP}={NBSP}"), nodes.Text("25"), nodes.Text(f"{NBSP}%"))
    inline_math._join_values(None, document, "test")
    assert [type(n).__name__ for n in document[0].children] == ["math", "Text", "Text", "Text"]


def test_an_opening_parenthesis_and_closing_punctuation_stay_with_their_formula():
    """Review: Fig. 4.2's caption on a phone ended a line with "(" before "d = 32"; lines started with ", and" or "."
    after a formula (chapters 2–8, 13, at 400 and at 1280 px)."""
    document = _paragraph(nodes.Text("noise ("), nodes.math("d", "d"), nodes.Text(", 128 draws)"))
    inline_math._keep_parentheses(None, document, "test")
    paragraph = document[0]
    assert [type(n).__name__ for n in paragraph.children] == ["Text", "inline", "Text"]
    kept = paragraph[1]
    assert kept["classes"] == ["sb-nowrap"] and kept.astext() == "(d," and isinstance(kept[1], nodes.math)
    assert paragraph.astext() == "noise (d, 128 draws)"
    # a parenthesis that is the whole text node before the formula, and "). " after it; a formula with a word after
    # it is left alone
    document = _paragraph(nodes.Text("("), nodes.math("x", "x"), nodes.Text("). And "), nodes.math("y", "y"))
    document[0] += nodes.Text(" is")
    inline_math._keep_parentheses(None, document, "test")
    assert [type(n).__name__ for n in document[0].children] == ["inline", "Text", "math", "Text"]
    assert document[0][0].astext() == "(x)." and document[0].astext() == "(x). And y is"


def test_a_word_joined_by_a_hyphen_stays_with_its_formula():
    """Review: lines started with "‑interval" after "t" (Figs. 14.2, 14.4, 15.2, Table 15.2, §16.6, at 400 and at
    1280 px); a formula with a space after it is left alone."""
    for hyphen in ("\u2011", "-"):
        document = _paragraph(nodes.Text("95 % "), nodes.math("t", "t"), nodes.Text(f"{hyphen}interval), the"))
        inline_math._keep_parentheses(None, document, "test")
        assert [type(n).__name__ for n in document[0].children] == ["Text", "inline", "Text"]
        assert document[0][1].astext() == f"t{hyphen}interval)," and document[0][2].astext() == " the"
    document = _paragraph(nodes.math("t", "t"), nodes.Text(" - interval"))
    inline_math._keep_parentheses(None, document, "test")
    assert [type(n).__name__ for n in document[0].children] == ["math", "Text"]


def test_the_word_or_code_after_equals_stays_with_its_formula():
    """Review: lines started with "= identity" (Fig. 5.1's caption at 400 px, Remark 8.2's proof) and "= `w1.weight`"
    (Proposition 5.4, at 1280 px), no-break spaces notwithstanding."""
    eq = f"{NBSP}={NBSP}"
    document = _paragraph(nodes.Text("Rows: "), nodes.math("σ", "σ"), nodes.Text(f"{eq}identity, ReLU"))
    inline_math._keep_parentheses(None, document, "test")
    assert [type(n).__name__ for n in document[0].children] == ["Text", "inline", "Text"]
    assert document[0][1].astext() == f"σ{eq}identity," and document[0][2].astext() == " ReLU"
    code = nodes.literal("w1.weight", "w1.weight")
    document = _paragraph(nodes.math("Q", "Q"), nodes.Text(eq), code, nodes.Text(" and"))
    inline_math._keep_parentheses(None, document, "test")
    assert [type(n).__name__ for n in document[0].children] == ["inline", "Text"]
    assert document[0][0].astext() == f"Q{eq}w1.weight" and document[0].astext() == f"Q{eq}w1.weight and"


def test_a_formula_that_ends_in_its_relation_takes_the_value_after_it():
    """Review: "α = ±" ended a line in §8.5 and "1.7" started the next."""
    assert inline_math.joined("\\alpha = \\pm", " 1.7 the") == ("\\alpha = \\pm 1.7", " the")
    assert inline_math.joined("\\alpha =", f"{NBSP}2 and") == ("\\alpha = 2", " and")
    assert inline_math.joined("\\alpha = 2", " and") is None


def test_a_word_after_equals_is_held_by_no_break_spaces():
    """Review: the PDF broke "σ / = SiLU" (Proposition 5.4)."""
    document = _paragraph(nodes.math("\\sigma", "\\sigma"), nodes.Text(" = SiLU (SwiGLU)"))
    inline_math._join_values(None, document, "test")
    assert [n.astext() for n in document[0].children] == ["\\sigma", f"{NBSP}={NBSP}SiLU (SwiGLU)"]
