"""symbreak.prose: glued values are formatted once, and bad input names the argument."""

from __future__ import annotations

import pytest

from symbreak import prose


def test_glue_all_formats_numbers_strings_and_pairs(glued):
    texts = prose.glue_all({"n": 12345, "name": "SwiGLU", "share": (0.25, ".0%"), "x": 0.5}, fmt=".2f")
    assert glued == {"n": "12345.00", "name": "SwiGLU", "share": "25\u00a0%", "x": "0.50"}
    assert texts == glued


def test_glue_value_spaces_percentages_as_the_book_does(glued):
    # Python's own format gives "18.6%"; the book writes a space before the sign
    assert prose.glue_value("s", 0.1862, ".1%") == "18.6\u00a0%"
    assert prose.glue_value("w", 1.0, "6.1%") == " 100.0\u00a0%"
    assert glued == {"s": "18.6\u00a0%", "w": " 100.0\u00a0%"}
    with pytest.raises(TypeError, match="fmt: expected a format str"):
        prose.glue_value("s", 0.5, 2)


def test_glue_all_default_format_groups_thousands(glued):
    prose.glue_all({"n": 1234567})
    assert glued["n"] == "1,234,567"


def test_glue_table_is_a_pipe_table(glued):
    text = prose.glue_table("t", ["form", "params"], [["gated", "3md"]])
    assert text.splitlines() == ["| form | params |", "|---|---|", "| gated | 3md |"]
    assert glued["t"] == text


def test_glue_table_moves_constant_columns_to_the_caption(glued):
    rows = [["a", "1", "$< 10^{-10}$", "yes"], ["b", "2", "$< 10^{-10}$", "no"]]
    text = prose.glue_table(
        "t", ["case", "$P$", r"$\tau$", "settled"], rows, constants="t-constants", among=[r"$\tau$"]
    )
    assert text.splitlines()[0] == "| case | $P$ | settled |"
    assert glued["t-constants"] == r"The same in every row (where defined): $\tau < 10^{-10}$."


@pytest.mark.parametrize(
    ("values", "error", "match"),
    [
        ([("n", 1)], TypeError, "values: expected a mapping"),
        ({"": 1}, TypeError, "values: expected non-empty str keys"),
        ({"n": (1, 2, 3)}, ValueError, r"values\['n'\]: expected a pair"),
        ({"n": True}, TypeError, "value: expected a real number, got bool"),
    ],
)
def test_glue_all_rejects_bad_input(glued, values, error, match):
    with pytest.raises(error, match=match):
        prose.glue_all(values)


def test_listed_names_a_list_as_a_sentence():
    listed = prose.listed
    assert [listed(["ReLU"]), listed(["ReLU", "GELU"]), listed(["ReLU", "GELU", "SiLU"])] == [
        "ReLU",
        "ReLU and GELU",
        "ReLU, GELU and SiLU",
    ]
    with pytest.raises(ValueError, match="items: expected a non-empty sequence of str"):
        listed([])


def test_all_or_count_says_all_where_every_case_counts():
    """Review: "In 12 of the 12 cases" reads "In all 12 cases" (chapter 13), "in 10 of 10 of its runs" reads "in all
    10 runs" (chapter 14)."""
    assert [prose.all_or_count(k, 12) for k in (12, 11, 0)] == ["all 12", "11 of the 12", "none of the 12"]
    with pytest.raises(ValueError, match="part: expected a count from 0 to 12"):
        prose.all_or_count(13, 12)
    with pytest.raises(TypeError, match="whole: expected an int, got float"):
        prose.all_or_count(1, 2.0)
