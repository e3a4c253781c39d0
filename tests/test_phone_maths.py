"""Chapters 1–16 on a phone: every formula fits the text column at a 400 px wide screen.

A display wider than its column scrolls sideways inside its box, and an inline formula wider than its column is set
on a scrolling line of its own (``_static/wide_inline_math.js``), so that the punctuation after it may start a line:
tests/test_browser.py checks that nothing is *cut off*; here nothing in those chapters needs that help.  Long displays
are broken over aligned lines and long inline chains split into shorter formulas joined by words (issue 17).

Runs on a built book (``BOOK_BUILD``, as tests/test_browser.py) where Debian's ``chromium`` is installed.
"""

from __future__ import annotations

import pytest
from tests.test_browser import CHROMIUM, PAGES, browser, server  # noqa: F401  (fixtures)

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: browser test skipped (CI installs it)"),
    pytest.mark.skipif(not PAGES, reason="the book is not built (run `make book` or `make test`): test skipped"),
]

#: The chapters whose formulas must fit a phone's column (the front matter is checked for being cut off only, by
#: tests/test_browser.py).
CHAPTERS = [p for p in PAGES if p.removeprefix("book/")[:2] in {f"{n:02d}" for n in range(1, 17)}]

#: Printed formulas (cell outputs) that still overflow, by page: they come from code cells and page modules that
#: this test's change did not touch; an entry here excuses that page's outputs only, never its text.
OUTPUTS_LEFT: dict[str, str] = {}

# Every formula of the article outside tables (a table scrolls inside its own box): its own width against the width
# of the box it sits in; a display scrolls inside itself, so its scrollWidth is its width.
_TOO_WIDE = """(outputs) => [...document.querySelectorAll('article mjx-container[jax="CHTML"]')].filter(m => {
    if (m.closest('table') || (!outputs && m.closest('.cell_output'))) return false;
    if (m.getAttribute('display') === 'true') return m.scrollWidth > m.clientWidth + 1;
    return m.classList.contains('sb-wide-inline');
}).map(m => [m.getAttribute('display') === 'true' ? 'display' : 'inline', m.textContent.slice(0, 60)])"""


@pytest.mark.parametrize("page_path", CHAPTERS)
def test_every_formula_fits_a_phone(page_path, server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 400, "height": 800})
    page.goto(server + page_path, wait_until="load")
    page.wait_for_function("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise")
    page.evaluate("() => window.MathJax.startup.promise")
    page.wait_for_function("() => document.documentElement.dataset.wideInlineMath === 'measured'")
    wide = page.evaluate(_TOO_WIDE, page_path not in OUTPUTS_LEFT)
    page.close()
    assert not wide, f"{page_path}: formulas wider than the column at 400 px (kind, text): {wide[:6]}"
