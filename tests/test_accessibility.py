"""Every page of the built book is accessible: axe-core finds no violation of impact "serious" or "critical".

axe-core 4.12 is the ``axe.min.js`` that the pinned ``axe-playwright-python`` ships (no npm, no network); it runs
in the headless Chromium of the browser test, on each page in light mode (every rule) and again in dark mode (the
rule that depends on the mode: colour contrast).

The maths.  A typeset page holds about four MathJax elements for every element of the book's own markup, and they
make an axe-core run take half a minute instead of five seconds.  MathJax's markup is the same on every page: a
``mjx-container`` per formula, its glyphs drawn as CSS generated content (no text nodes, so the colour-contrast
rule checks nothing inside a formula: asserted below) and a hidden MathML copy for screen readers.  So every page
is checked, in both modes, with MathJax not loaded (the formulas' TeX stays as text, in the same colours), and
the typeset maths is checked with every rule on the pages that hold the most formulas (:data:`TYPESET_PAGES`).

Every figure's alt text is checked too: it says what the figure shows (its caption's first sentence, which
_ext/book_fixes.py puts there), not a file name.  Runs where the browser test runs.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from tests.test_browser import CHROMIUM, HTML, PAGES, browser, server  # noqa: F401  (fixtures)

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: accessibility test skipped"),
    pytest.mark.skipif(not PAGES, reason="the book is not built (run `make book` or `make test`): test skipped"),
]

#: Where axe-core looks: the whole page, except on the API reference, whose 900 entries of one kind would take it
#: minutes; there it reads the page's frame and its first two layers (every kind of entry the page has).
_CONTEXT = {
    "book/api.html": "{include: [['.bd-header-article'], ['.bd-sidebar-primary'], ['#layer-0-decisions'], "
    "['#layer-1-forms']]}"
}


@functools.cache
def _axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


def _serious(page, page_path: str, only: str | None = None) -> list[str]:
    """axe-core's violations of impact "serious" or "critical" on the page as it is now (``only``: one rule)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(_axe_source())
    options = "{resultTypes: ['violations']" + (f", runOnly: ['{only}']" if only else "") + "}"
    result = page.evaluate(f"async () => await axe.run({_CONTEXT.get(page_path, 'document')}, {options})")
    return [
        f"{v['id']} ({v['impact']}) at {node['target']}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
        for node in v["nodes"][:3]
    ]


def _formulas(page_path: str) -> int:
    return (HTML / page_path).read_text(encoding="utf-8").count('class="math notranslate')


#: The pages on which the typeset maths is checked: the two with the most formulas.
TYPESET_PAGES = sorted(PAGES, key=_formulas, reverse=True)[:2]


def _open(browser, url: str, *, maths: bool):  # noqa: F811
    """A new page at ``url``, with its maths typeset (``maths``) or with MathJax not loaded."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    if not maths:
        page.route("**/mathjax/**", lambda route: route.abort())
    page.goto(url, wait_until="load")
    if maths:
        page.wait_for_function("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise")
        page.evaluate("() => window.MathJax.startup.promise")
    return page


@pytest.mark.parametrize("page_path", PAGES)
def test_no_serious_accessibility_violation(page_path, server, browser):  # noqa: F811
    page = _open(browser, server + page_path, maths=False)
    light = _serious(page, page_path)
    # the theme fades its colours in; without the fade the dark colours are there at once (a busy machine had
    # measured the search box mid-fade, 400 ms after the switch)
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
    page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
    page.wait_for_timeout(400)
    dark = _serious(page, page_path, only="color-contrast")
    page.close()
    assert not light, f"{page_path}, light mode: {light}"
    assert not dark, f"{page_path}, dark mode: {dark}"


@pytest.mark.parametrize("page_path", TYPESET_PAGES)
def test_typeset_maths_has_no_serious_violation(page_path, server, browser):  # noqa: F811
    """Every rule on a page with its maths typeset; and the colour-contrast rule checks no node inside a formula
    (what lets the other test leave MathJax out)."""
    page = _open(browser, server + page_path, maths=True)
    assert page.evaluate("() => document.querySelectorAll('mjx-container').length") > 100
    page.evaluate(_axe_source())
    result = page.evaluate(
        "async () => { const r = await axe.run(document, {resultTypes: ['violations']});"
        " const c = await axe.run(document, {runOnly: ['color-contrast']});"
        " return [r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".flatMap(v => v.nodes.slice(0, 3).map(n => v.id + ' at ' + n.target.join(' '))),"
        " [...c.passes, ...c.incomplete, ...c.violations].flatMap(v => v.nodes.map(n => n.target.join(' ')))]; }"
    )
    page.close()
    serious, contrast_targets = result
    assert not serious, f"{page_path}, typeset: {serious}"
    assert len(contrast_targets) > 100, f"the colour-contrast rule checked only {len(contrast_targets)} nodes"
    inside = [t for t in contrast_targets if "mjx" in t]
    assert not inside, inside[:5]


def _alt_texts(html: str) -> list[tuple[str, str]]:
    """``(alt, caption)`` of every figure image of a page."""
    out = []
    for fig in re.findall(r"<figure[^>]*>(.*?)</figure>", html, re.S):
        img = re.search(r'<img[^>]*\balt="([^"]*)"', fig)
        caption = re.search(r'<span class="caption-text">(.*?)</span>\s*<a', fig, re.S) or re.search(
            r"<figcaption>(.*?)</figcaption>", fig, re.S
        )
        if img:
            text = re.sub(r"<[^>]+>", "", caption.group(1)) if caption else ""
            out.append((img.group(1), " ".join(text.split())))
    return out


@pytest.mark.parametrize("page_path", PAGES)
def test_every_figure_says_what_it_shows(page_path):
    for alt, caption in _alt_texts((HTML / page_path).read_text(encoding="utf-8")):
        assert alt and not re.search(r"\.(png|svg|jpe?g)$|^_images/|^[\w-]+$", alt), f"{page_path}: alt {alt!r}"
        assert len(alt.split()) >= 3 and caption.split()[:2] == alt.split()[:2], (
            f"{page_path}: alt {alt!r} is not the opening of the caption {caption[:60]!r}"
        )
