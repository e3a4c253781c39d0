"""Every table of the built book is numbered and captioned.

Parses each page of ``_build/html/book`` with :mod:`html.parser` and checks that
every ``<table>`` has a ``<caption>`` whose text starts with its number,
"Table N", "Table N.k" or, in the claims-to-evidence index, "Table E.k" (a
``{table}`` directive with a caption; Sphinx numbers it). ``BOOK_BUILD`` names
another build folder than ``_build`` (one with ``html`` inside), as for
tests/test_pdf.py. Skipped where the book is not built.
"""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_BUILD", ROOT / "_build")) / "html"
PAGES = sorted((HTML / "book").glob("*.html")) if HTML.exists() else []
NUMBERED = re.compile(r"^\s*Table\s+((?:[A-Z]\.)?\d+(?:\.\d+)*)\b")


class _Tables(HTMLParser):
    """Collects, per ``<table>``, the text of its ``<caption>`` (None if it has none)."""

    def __init__(self):
        super().__init__()
        self.captions: list[str | None] = []
        self._stack: list[int] = []  # indices into captions of the open tables
        self._in_caption = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.captions.append(None)
            self._stack.append(len(self.captions) - 1)
        elif tag == "caption" and self._stack:
            self._in_caption += 1
            if self.captions[self._stack[-1]] is None:
                self.captions[self._stack[-1]] = ""

    def handle_endtag(self, tag):
        if tag == "table" and self._stack:
            self._stack.pop()
        elif tag == "caption" and self._in_caption:
            self._in_caption -= 1

    def handle_data(self, data):
        if self._in_caption and self._stack:
            self.captions[self._stack[-1]] += data


def uncaptioned(html: str) -> list[str]:
    """Problems of the tables in ``html``: one line per table without a numbered caption."""
    parser = _Tables()
    parser.feed(html)
    parser.close()
    problems = []
    for k, caption in enumerate(parser.captions, start=1):
        if caption is None:
            problems.append(f"table {k}: no <caption>")
        elif not NUMBERED.match(" ".join(caption.split())):
            problems.append(f"table {k}: caption without a number: {' '.join(caption.split())[:60]!r}")
    return problems


def test_uncaptioned_finds_a_table_without_caption():
    html = "<table><tr><td>1</td></tr></table>"
    assert uncaptioned(html) == ["table 1: no <caption>"]


def test_uncaptioned_finds_a_caption_without_number():
    html = "<table><caption>Some table.</caption><tr><td>1</td></tr></table>"
    assert uncaptioned(html) == ["table 1: caption without a number: 'Some table.'"]


def test_uncaptioned_accepts_numbered_captions():
    html = (
        '<table><caption><span class="caption-number">Table 3.2 </span>'
        '<span class="caption-text">A table.</span></caption><tr><td>1</td></tr></table>'
        '<table><caption><span class="caption-number">Table 1 </span>B.</caption></table>'
    )
    assert uncaptioned(html) == []


@pytest.mark.skipif(not PAGES, reason=f"the book is not built ({HTML} missing): table-caption test skipped")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_table_is_numbered_and_captioned(page):
    problems = uncaptioned(page.read_text(encoding="utf-8"))
    assert not problems, f"{page.name}: " + "; ".join(problems)


def _numbers(page: Path) -> list[str]:
    parser = _Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    return [m[1] for c in parser.captions if c and (m := NUMBERED.match(" ".join(c.split())))]


@pytest.mark.skipif(not PAGES, reason=f"the book is not built ({HTML} missing): table-caption test skipped")
def test_the_evidence_index_numbers_its_tables_as_an_appendix():
    """The index's tables are E.1, E.2, … (``_ext/evidence_page.py``), not 5–10 after the front matter's tables,
    which keep 1–4; a statement's evidence line names its table so."""
    index = _numbers(HTML / "book" / "evidence.html")
    assert index == [f"E.{k}" for k in range(1, len(index) + 1)] and len(index) >= 5, index
    front = _numbers(HTML / "book" / "intro.html") + _numbers(HTML / "book" / "notation.html")
    assert front == [str(k) for k in range(1, len(front) + 1)], front
    chapter = (HTML / "book" / "06_exchange_symmetry.html").read_text(encoding="utf-8")
    assert re.search(r"Evidence: <a [^>]*>.*?Table E\.\d of the claims-to-evidence index", chapter), "no evidence line"
