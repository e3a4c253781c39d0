"""Every page of the built book previews as a link should: OpenGraph title, description and URL (sphinxext-opengraph),
the description in plain text, not TeX (``_ext/book_fixes.py``); and a copy button on code cells
(sphinx-copybutton, part of Jupyter Book).  ``BOOK_BUILD`` names another build folder, as for
tests/test_html_tables.py; skipped where the book is not built."""

from __future__ import annotations

import html
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_BUILD", ROOT / "_build")) / "html"
PAGES = sorted((HTML / "book").glob("*.html")) if HTML.exists() else []
META = re.compile(r'<meta property="og:(\w+)" content="([^"]*)"')


@pytest.mark.skipif(not PAGES, reason="the book is not built (make book)")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_page_has_plain_opengraph_metadata(page):
    tags = dict(META.findall(page.read_text()))
    assert {"title", "description", "url", "site_name"} <= set(tags), sorted(tags)
    description = html.unescape(tags["description"])
    assert len(description) > 40 and "\\" not in description and "{" not in description, description
    assert tags["url"].endswith(f"book/{page.name}")


@pytest.mark.skipif(not PAGES, reason="the book is not built (make book)")
def test_code_cells_have_a_copy_button():
    text = (HTML / "book" / "01_key_value_memory.html").read_text()
    assert "copybutton" in text


def test_plain_descriptions_turn_tex_into_text():
    sys.path.insert(0, str(ROOT / "_ext"))
    from book_fixes import plain_text

    assert plain_text(r"pairs q_j \leftrightarrow k_j, whatever\sigma is") == "pairs q_j ↔ k_j, whatever σ is"
    assert plain_text(r"\sigma\big(\sum_r x\big)") == "σ (Σ_r x)"
    assert plain_text(r"\(\eta^2(\|g_a\|^2 - x^\top)\)") == "η²(‖ g_a ‖² - xᵀ)"
    assert plain_text(r"\[\begin{aligned} q_j \to \alpha q_j \end{aligned}\]") == "q_j → α q_j"
    # fractions keep their bar (a caption's alt text read "14 ≤ |α| ≤ 4" for 1/4 ≤ |α| ≤ 4)
    assert plain_text(r"\(\tfrac14 \le |\alpha| \le 4\)") == "1/4 ≤ | α | ≤ 4"
    assert plain_text(r"\frac{\pi}{2} and \dfrac{a+b}{2}") == "π/2 and (a+b)/2"
    # review, round eight: search snippets had dropped ν, δ, Ξ, dots and hats, and left "\\" of a set's brace
    assert plain_text(r"t_\nu, \delta, \Xi") == "t_ν, δ, Ξ"
    assert plain_text(r"\|\dot a\|^2 = \hat H, \bar{s}") == "‖ a\u0307 ‖² = H\u0302, s\u0304"  # combining marks
    assert plain_text(r"\eta \in \{0.1, 0.05\}") == "η ∈ {0.1, 0.05}"
    assert plain_text(r"\begin{aligned} a \\ b \end{aligned}") == "a b"
    assert plain_text(r"x \in \mathbb{R}^d, \mathbb E[x]") == "x ∈ ℝ^d, 𝔼[x]"


def test_a_numbered_reference_does_not_break_after_its_word():
    """Review: "Fig. ⏎ 6.2" in a caption (HTML); every reference's "Fig. 6.2", "Theorem 6.1" gets a no-break space."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
    from book_fixes import unbroken_numbers
    from docutils import nodes

    words = ["Fig. 6.2", "Theorem 6.1", "Table 8.3", "Chapter 14", "the introduction", "Fig. A"]
    paragraph = nodes.paragraph("", "", *(nodes.reference("", "", nodes.inline(w, w)) for w in words))
    unbroken_numbers(paragraph)
    assert [r.astext() for r in paragraph.children] == [
        "Fig.\u00a06.2",
        "Theorem\u00a06.1",
        "Table\u00a08.3",
        "Chapter\u00a014",
        "the introduction",
        "Fig. A",
    ]


def test_each_code_line_is_a_span_with_its_indentation():
    """Review 9: a wrapped code line continued at column 0 on a phone; each line is a span that carries its
    indentation (the CSS hangs the continuation two characters beyond it), blank lines stay bare, and the line
    ends stay outside the spans, so the block's text is unchanged."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
    from book_fixes import hanging_lines
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    class Hanging(HtmlFormatter):
        def wrap(self, source):
            return super().wrap(hanging_lines(source))

    code = 'x = 1\n\nfor a in b:\n    y = f(a,\n          """two\nlines""")\n'
    out = highlight(code, PythonLexer(), Hanging())
    lines = re.findall(r'<span class="sb-line"(?: style="--indent: (\d+)ch")?>', out)
    assert lines == ["", "", "4", "10", ""]
    # the indentation in a span of its own, which the CSS keeps from breaking (regression read 9: a row of its own)
    assert re.findall(r'<span class="sb-indent">( +)</span>', out) == [" " * 4, " " * 10]
    assert html.unescape(re.sub(r"<[^>]+>", "", out)).rstrip("\n") == code.rstrip("\n")


def test_a_statement_is_shown_in_search_by_its_label_and_its_number():
    """A statement's search entry reads as "How to cite" and the PDF name it (_ext/statement_search.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
    from statement_search import display_name

    assert display_name("thm-exchange", "theorem", (6, 1), "Exchange symmetry") == (
        "thm-exchange — Theorem 6.1 (Exchange symmetry)"
    )
    assert display_name("rem-x", "remark", None, "") == "rem-x — Remark"
