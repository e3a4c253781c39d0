"""The PDF's table layout (``_ext/latex_tables.py``, its width model ``_ext/latex_widths.py``): the width estimates
and how the columns share the line.

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
from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
from latex_tables import _group_headings, _join_units, row_break  # noqa: E402
from latex_widths import (  # noqa: E402
    BODY_MARGIN,
    BOLD,
    GIVE,
    LINE,
    PAD,
    SANS,
    TIGHT,
    _chars,
    _fill,
    _heading_floors,
    _heading_pieces,
    _math_length,
    _math_pieces,
    _shares,
    _size,
    _widths,
)

#: Convention: an estimate within this share of the measured width.
WITHIN = 0.15

# (TeX source of a formula, its width as set in the PDF in characters of 4.8 pt)
MEASURED_MATH = [
    (r"(z = 1, \alpha = 2)", 60.1 / 4.8),  # x from 154.5 pt to 214.6 pt
    (r"(z = 1, \alpha = -1)", 68.0 / 4.8),  # 238.8 to 306.7 pt
    (r"\sigma'(0^+), \sigma'(0^-)", 60.9 / 4.8),  # the heading, 429.0 to 489.9 pt
    (r"\deg_m P", 26.2 / 4.8),  # Table 10.5's heading (review 9: it stuck out by 3 pt), measured on the page
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


# --- Headings: at most two lines where the line has the room --------------------------------------------------


def _table(headings: list[str], rows: list[list[str]]) -> nodes.table:
    """A docutils table as MyST writes one: a heading row and body rows of plain paragraphs."""

    def row(cells: list[str]) -> nodes.row:
        return nodes.row("", *(nodes.entry("", nodes.paragraph("", cell)) for cell in cells))

    group = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in headings), cols=len(headings))
    group += nodes.thead("", row(headings))
    group += nodes.tbody("", *(row(cells) for cells in rows))
    return nodes.table("", group)


def _lines_at(text: str, width: float) -> int:
    """How many lines a heading's sans-serif words (split at spaces, not at no-break spaces) take when filled
    greedily into ``width`` characters of the body's type."""
    words = [SANS * _chars(w) for w in text.split(" ") if w]
    space = SANS * _chars(" ")
    lines, taken = 1, words[0]
    for word in words[1:]:
        if taken + space + word <= width:
            taken += space + word
        else:
            lines, taken = lines + 1, word
    return lines


#: Table 10.7 as it stood (columns of short numbers under longer headings), with Table 14.9's and 16.5's headings
#: in two of them; it has room to spare.
HEADINGS = ["pass", "GFLOP/s", "share of peak", "own products", "test error ± 95 %", "met", "his Δ vs ReLU"]
HEADINGS += ["peak MiB"]
ROW = ["forward + backward", "198.3", "0.79", "0.87", "0.822 ± 0.036", "no", "−0.014", "32.0"]


def test_a_heading_takes_at_most_two_lines_where_the_line_has_room():
    table = _table(HEADINGS, [ROW] * 6)
    _join_units(table)
    shares, pad = _widths(table, len(HEADINGS))
    assert sum(shares) == pytest.approx(LINE)
    heads = [entry.astext() for entry in next(iter(table.findall(nodes.thead))).findall(nodes.entry)]
    lines = {h: _lines_at(h, share - pad) for h, share in zip(heads, shares, strict=True)}
    assert max(lines.values()) <= 2, lines


def test_headings_take_only_the_room_to_spare():
    """Seven columns whose headings need more than the line's spare room on two lines: floors are raised only
    while every column keeps its natural width (with ``BODY_MARGIN``) and the whole still fits the line."""
    widths, least, heads = [30.0, *[6.0] * 6], [12.0, *[5.0] * 6], [0.0, *[15.0] * 6]
    floors = _heading_floors(widths, least, heads, TIGHT)
    assert sum(max(BODY_MARGIN * w, f) for w, f in zip(widths, floors, strict=True)) + TIGHT * len(floors) <= LINE
    assert all(f in (lo, h) for f, lo, h in zip(floors, least, heads, strict=True))
    assert floors != least  # some were raised
    assert _heading_floors([60.0, 30.0], [58.0, 5.0], [0.0, 40.0], PAD) == [58.0, 5.0]  # no room to spare


def test_columns_that_wrap_anyway_give_a_heading_some_room():
    """Two wide columns of text that wrap anyway give a column of numbers the width its heading needs."""
    floors = _heading_floors([60.0, 60.0, 6.0], [10.0, 10.0, 5.0], [0.0, 0.0, 9.0], PAD)
    assert floors == [10.0, 10.0, 9.0]
    shares = _shares([60.0, 60.0, 6.0], floors, PAD)
    assert shares[2] >= 9.0 + PAD and min(shares[:2]) >= (1 - GIVE) * (LINE - 6.0 - PAD) / 2


def test_short_units_are_not_broken():
    table = _table(["test error ± 95 %", "his Δ vs ReLU"], [["tanh gating − bilinear (σ = id)", "5 %"]])
    _join_units(table)
    texts = [entry.astext() for entry in table.findall(nodes.entry)]
    nb = "\u00a0"
    assert texts == [
        f"test error ±{nb}95{nb}%",
        f"his Δ{nb}vs ReLU",
        f"tanh gating − bilinear (σ{nb}={nb}id)",
        f"5{nb}%",
    ]


def test_headings_with_a_common_opening_share_a_spanning_heading():
    headings = ["pair", "full-rank quadratic: Δ", "full-rank quadratic: p", "quadratic + odd: Δ", "quadratic + odd: p"]
    table = _table(headings, [["ReGLU − symmetric (ReLU)", "+0.006 ± 0.069", "1.000", "−0.009 ± 0.025", "0.051"]])
    groups = _group_headings(table)
    assert [(a, b, label) for a, b, label, _ in groups] == [(1, 2, "full-rank quadratic"), (3, 4, "quadratic + odd")]
    heads = [entry.astext() for entry in next(iter(table.findall(nodes.thead))).findall(nodes.entry)]
    assert heads == ["pair", "Δ", "p", "Δ", "p"]


def test_a_bold_label_is_wider_than_its_text():
    plain = nodes.entry("", nodes.paragraph("", "full, packed"))
    bold = nodes.entry("", nodes.paragraph("", "", nodes.strong("", "full, packed")))
    assert _size(bold) == pytest.approx(BOLD * _size(plain)) and _size(plain) == pytest.approx(_chars("full, packed"))


def test_a_short_table_never_leaves_one_row_alone():
    """A short table (``keep-together``) breaks between its rows, never after its first row or before its last
    (``keep-firm``: Table 13.3's last row had stood alone on a page), inside a group only where no other row can; a
    long table's group keeps together."""
    assert row_break(["keep-together", "keep-firm"]) == "\\nobreak"
    assert row_break(["keep-together"]).startswith("\\penalty")
    group, plain = (row_break(["keep-together", *c]) for c in (["keep-with-next"], []))
    in_group, plain = int(group.removeprefix("\\penalty")), int(plain.removeprefix("\\penalty"))
    assert in_group > plain  # a break inside a group only where no other row can
    assert row_break(["keep-with-next"]) == "\\nobreak"
    assert row_break([]) == ""


def test_a_row_label_takes_at_most_two_lines_in_a_table_that_wraps():
    """Table 8.3's row labels ("inverse scaling, α > 0") fit their column's natural width on one line, but the line is
    short and every column wraps: in the share the column got they took three lines.  Their two-line width is now
    reckoned at that share, and the other columns give it the room."""

    def cell(*parts: str) -> nodes.entry:  # text, with "$…$" as a formula
        content = [nodes.math("", p.strip("$")) if p.startswith("$") else nodes.Text(p) for p in parts]
        return nodes.entry("", nodes.paragraph("", "", *content))

    verdict = cell("✗ but ✓ identity, ReLU, leaky ReLU, ", "$|z|$")
    rows = [
        [cell("exchange ", r"$q_j \leftrightarrow k_j$"), cell("—"), cell("✓ every σ"), cell("✓ every σ"), verdict],
        [cell("inverse scaling, ", r"$\alpha > 0$"), cell("—"), cell("✓ every σ"), cell("✓ every σ"), verdict],
        [cell("parity ", r"$x \to -x$"), cell("✗ but ✓ ", "$|z|$"), cell("✓ every σ"), cell("✓ every σ"), verdict],
        [
            cell("rescaling ", "$(k_j, v_j)$", ", ", r"$\alpha > 0$"),
            verdict.deepcopy(),
            verdict.deepcopy(),
            verdict.deepcopy(),
            cell("✓ every σ"),
        ],
    ]
    group = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in range(5)), cols=5)
    headings = ["symmetry", "standard MLP", "symmetric rank-1", "full bilinear", "gated"]
    group += nodes.thead("", nodes.row("", *(cell(h) for h in headings)))
    group += nodes.tbody("", *(nodes.row("", *(c.deepcopy() for c in r)) for r in rows))
    shares, pad = _widths(nodes.table("", group), 5)
    assert sum(shares) == pytest.approx(LINE)
    label = cell("inverse scaling, ", r"$\alpha > 0$")
    assert _fill(_heading_pieces(label, 1.0), shares[0] - pad) <= 2, shares
