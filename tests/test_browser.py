"""The built book as a reader sees it, in headless Chromium: every page of _build/html.

Checks, per page: no console errors; MathJax typesets every formula (each
``.math`` element holds an ``mjx-container``) with no ``mjx-merror``; every
image loads; every internal link and every ``{prf:ref}``/``{eq}`` target
resolves (the file exists and, for ``#anchor``, an element with that id).
(tests/test_accessibility.py runs axe-core on the same pages.)
A screenshot of the intro page is saved under ``_build/screenshots/``.

Runs where Debian's ``chromium`` is installed (``.ci/run`` installs it) and the
book is built (``make test`` builds it first); skipped with a message otherwise.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_BUILD", ROOT / "_build")) / "html"  # BOOK_BUILD: a build elsewhere (as test_pdf)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PAGES = sorted(p.relative_to(HTML).as_posix() for p in (HTML / "book").glob("*.html")) if HTML.exists() else []

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed: browser test skipped (CI installs it)"),
    pytest.mark.skipif(
        not PAGES, reason="the book is not built (run `make book` or `make test`): browser test skipped"
    ),
]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(_Quiet, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@functools.cache
def _ids(path: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def _check_link(base_url: str, page_url: str, href: str) -> str | None:
    """None if ``href`` resolves inside the built book, else a description of the problem."""
    target = urljoin(page_url, href)
    if not target.startswith(base_url):
        return None  # external: not followed offline
    url, fragment = urldefrag(target)
    rel = unquote(urlparse(url).path)[len(urlparse(base_url).path) :]
    path = HTML / (rel or "index.html")
    if path.is_dir():
        path = path / "index.html"
    if not path.exists():
        return f"{href}: no file {path.relative_to(HTML)}"
    if fragment and path.suffix == ".html" and unquote(fragment) not in _ids(path):
        return f"{href}: no id '{fragment}' in {path.relative_to(HTML)}"
    return None


#: The narrowest desktop window the page test uses: from here up, every figure is shown at its own size.
DESKTOP_WIDTH = 1280


@pytest.mark.parametrize("page_path", PAGES)
def test_page_reads_as_a_book_page(page_path, server, browser):
    page = browser.new_page(viewport={"width": DESKTOP_WIDTH, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    url = server + page_path
    page.goto(url, wait_until="load")
    has_math = page.evaluate("() => document.querySelectorAll('.math').length > 0")
    if has_math:
        page.wait_for_function("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise")
        page.evaluate("() => window.MathJax.startup.promise")
        untypeset = page.evaluate(
            "() => Array.from(document.querySelectorAll('.math'))"
            ".filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80))"
        )
        assert not untypeset, f"{page_path}: formulas not typeset: {untypeset[:5]}"
        assert page.evaluate("() => document.querySelectorAll('mjx-merror').length") == 0, f"{page_path}: mjx-merror"
    # No formula left as raw TeX in the text a reader sees (a glued value in a caption needs ``:myst`` to be parsed).
    raw_tex = page.evaluate(
        "() => { const w = document.createTreeWalker(document.querySelector('.bd-content'), NodeFilter.SHOW_TEXT);"
        " const found = []; for (let n = w.nextNode(); n; n = w.nextNode()) {"
        " if (n.parentElement.closest('pre, code, script, style, mjx-container, .math, .sig')) continue;"
        " if (/\\$[^\\s$][^$]*\\$|\\\\(mathrm|frac|varepsilon|lVert|sigma|times)\\b/.test(n.textContent))"
        " found.push(n.textContent.slice(0, 80)); } return found; }"
    )
    assert not raw_tex, f"{page_path}: raw TeX in the text: {raw_tex[:3]}"
    broken_images = page.evaluate(
        "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert not broken_images, f"{page_path}: images that do not load: {broken_images}"
    # Every figure at its own size (its width in CSS px = its size in inches at CSS_DPI), not scaled down by the column.
    figures = page.evaluate(
        "() => Array.from(document.querySelectorAll('.bd-content img')).filter(i => i.style.width.endsWith('px'))"
        ".map(i => [i.getAttribute('src'), parseFloat(i.style.width), i.getBoundingClientRect().width])"
    )
    scaled = [(src, own, round(shown)) for src, own, shown in figures if shown < own - 0.5]
    assert not scaled, f"{page_path}: figures scaled down at {DESKTOP_WIDTH} px (src, own width, shown): {scaled}"
    # Every table fits its column at desktop width (a reader should not scroll a table sideways there).
    wide = page.evaluate(
        "() => Array.from(document.querySelectorAll('.bd-content table')).map(t => {"
        " const box = t.closest('.pst-scrollable-table-container') || t.parentElement;"
        " const cap = t.querySelector('caption');"
        " return [cap ? cap.innerText.slice(0, 30) : '', t.scrollWidth, box.clientWidth]; })"
        ".filter(([, own, room]) => own > room + 1)"
    )
    assert not wide, f"{page_path}: tables wider than their column at {DESKTOP_WIDTH} px (caption, px, room): {wide}"
    hrefs = page.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    problems = [
        p for h in hrefs if not h.startswith(("mailto:", "javascript:")) for p in [_check_link(server, url, h)] if p
    ]
    assert not problems, f"{page_path}: broken internal links: {problems[:10]}"
    assert not errors, f"{page_path}: console errors: {errors[:5]}"
    if page_path == "book/intro.html":
        shots = ROOT / "_build" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "intro.png"), full_page=True)
    page.close()


def test_intro_screenshot_was_saved(server, browser):
    """Runs after the page tests (file order): the intro page's screenshot exists."""
    assert (ROOT / "_build" / "screenshots" / "intro.png").stat().st_size > 10_000


_VISIBLE_SEARCH = """() => [...document.querySelectorAll('.search-button__button, #searchbox input')].filter(e => {
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
}).length"""


@pytest.mark.parametrize("width", [400, 1000, 1400])
def test_one_search_box_at_every_width(width, server, browser):
    """The theme's header band had a second search field beside the sidebar's on wide screens (_static/book.css
    removes the band): one search control is shown at a phone's, a laptop's and a desktop's width."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(server + "book/06_exchange_symmetry.html", wait_until="load")
    page.evaluate("() => document.querySelectorAll('.bd-sidebar-primary').forEach(s => s.scrollTop = 0)")
    assert page.evaluate(_VISIBLE_SEARCH) == 1
    page.close()


def _snippets(server, browser, query: str) -> list[str]:
    """The snippets of the search page's results for ``query``."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto(server + f"search.html?q={query}", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li p.context').length > 0", timeout=30_000)
    page.wait_for_timeout(2000)  # the rest of the snippets
    snippets = page.evaluate(
        "() => [...document.querySelectorAll('#search-results li p.context')].map(e => e.textContent)"
    )
    page.close()
    return snippets


def test_search_snippets_show_formulas_as_text(server, browser):
    """Sphinx's search cuts a result's snippet from the page's text, where a formula was raw TeX
    (``\\eta^2(\\|g_a\\|^2 …``); with _static/search_plain.js it is the formula's text (``η²(‖ g_a ‖² …``)."""
    snippets = _snippets(server, browser, "charges")
    assert snippets
    tex = [s for s in snippets if re.search(r"\\[A-Za-z|(\[]|<span", s)]
    assert not tex, f"snippets with raw TeX or markup: {tex[:3]}"
    assert any("‖" in s for s in snippets), "no snippet shows a charge's norm as text"


def test_a_wrapped_code_line_hangs_and_copies_as_written(server, browser):
    """Review 9: at 400 px a long code line continued at column 0, where it read as a new line; its continuation
    now starts two characters beyond the line's own indentation (_ext/book_fixes.hanging_lines), and the text a
    reader copies (innerText) is still the code as written, one line break per line."""
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.goto(server + "book/06_exchange_symmetry.html", wait_until="load")
    found = page.evaluate(
        """() => { const out = []; let wrapped = 0;
             for (const pre of document.querySelectorAll('div.cell_input pre')) { if (!pre.checkVisibility()) continue;
               if (pre.innerText.replace(/\\n+$/, '') !== pre.textContent.replace(/\\n+$/, '')) out.push('copy');
               for (const line of pre.querySelectorAll(':scope > span.sb-line')) {
                 const range = document.createRange(); range.selectNodeContents(line);
                 const rects = [...range.getClientRects()].filter(r => r.width > 0);
                 const top = Math.min(...rects.map(r => r.top));
                 const later = rects.filter(r => r.top > top + 2);
                 if (!later.length) continue;
                 wrapped += 1;
                 const first = [...line.querySelectorAll('*'), line].flatMap(e => [...e.childNodes])
                   .find(n => n.nodeType === 3 && n.textContent.trim());
                 if (first) {  // the line's first word on its first row, not after an empty one
                   const at = document.createRange(), i = first.textContent.search(/\\S/);
                   at.setStart(first, i); at.setEnd(first, i + 1);
                   const text = line.textContent.trim().slice(0, 40);
                   if (at.getBoundingClientRect().top > top + 2) out.push('empty first row: ' + text);
                 }
                 const pad = parseFloat(getComputedStyle(line).paddingLeft);
                 if (!(pad > 0)) out.push('no hanging indent: ' + line.textContent.slice(0, 40));
                 const hang = line.getBoundingClientRect().left + pad;
                 if (Math.min(...later.map(r => r.left)) < hang - 1) out.push(line.textContent.slice(0, 40));
               } }
             return wrapped ? out : ['no wrapped line']; }"""
    )
    page.close()
    assert not found, f"code that copies wrongly or wraps without a hanging indent: {found[:5]}"


@pytest.mark.parametrize("query", ["thm-exchange", "Theorem 6.1"])
def test_search_finds_a_statement_by_its_label_and_its_number(query, server, browser):
    """Review 9: "How to cite" asks a reader to cite a statement by its label, which the title bar shows, and the PDF
    names it by its number; neither search found it (the bar's label is added at run time, the number when the page
    is written).  Each labelled statement is a search object now (_ext/statement_search.py), listed first."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto(server + f"search.html?q={query}", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li a').length > 0", timeout=30_000)
    first = page.evaluate(
        "() => [document.querySelector('#search-results li a').href, "
        "document.querySelector('#search-results li').innerText]"
    )
    page.close()
    assert first[0].endswith("book/06_exchange_symmetry.html#thm-exchange"), first
    assert first[1].startswith("thm-exchange — Theorem 6.1 (Exchange symmetry)"), first


def test_search_snippets_leave_out_the_page_furniture(server, browser):
    """Review, round eight: a snippet had been cut from the page's header buttons, its contents and its folded code
    cells ("… Binder", "Contents …", "Show code cell source Hide code cell source import torch …"); they are
    removed from the text a snippet is cut from (_static/search_plain.js)."""
    snippets = _snippets(server, browser, "parity")
    assert len(snippets) > 2
    furniture = [s for s in snippets if re.search(r"Show code cell source|Binder|Repository|\.pdf\b", s)]
    assert not furniture, f"snippets with the page's furniture: {furniture[:3]}"


def test_a_table_that_scrolls_fades_at_its_cut_edge(server, browser):
    """On a phone Table 3.3 scrolls inside its box, and its cut right edge had looked like the table's end: the edge
    where more of it lies fades (_static/table_scroll_hint.js), the right one until the reader scrolls to the end,
    then the left one; at a desktop's width, where the table fits, neither.  The fade leaves the caption above the
    table whole (it had dimmed the last words of its lines): the mask's unfaded top reaches the caption's foot."""

    def state(width: int, scroll: bool = False) -> list[str]:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(server + "book/03_bilinear_attention.html", wait_until="load")
        page.evaluate("() => window.MathJax.startup.promise")
        page.wait_for_function("() => document.documentElement.dataset.tableScrollHint === 'measured'")
        box = "document.getElementById('tbl-cost-formulas').closest('.pst-scrollable-table-container')"
        if scroll:
            page.evaluate(f"() => {{ const b = {box}; b.scrollLeft = b.scrollWidth; }}")
            page.wait_for_timeout(200)
        classes = page.evaluate(f"() => [...{box}.classList].filter(c => c.startsWith('sb-more'))")
        whole, foot = page.evaluate(
            f"""() => {{ const b = {box}, top = b.getBoundingClientRect().top;
                        return [parseFloat(getComputedStyle(b).getPropertyValue('--sb-caption')),
                                b.querySelector('caption').getBoundingClientRect().bottom - top]; }}"""
        )
        page.close()
        assert whole >= foot > 20, f"at {width} px the fade dims the caption: {whole} px kept whole, caption to {foot}"
        return sorted(classes)

    assert state(400) == ["sb-more-right"]
    assert state(400, scroll=True) == ["sb-more-left"]
    assert state(1280) == []


def test_a_table_a_little_too_wide_fits_a_phone(server, browser):
    """At 400 px tables are set in smaller type with closer cells (book.css), so that one a little wider than the
    column fits it instead of scrolling: Table 12.2 had been 32 px too wide there.  At a desktop's width, the
    body's size."""

    def measure(width: int) -> tuple[int, int, float]:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(server + "book/12_invariant_diagonal.html", wait_until="load")
        page.evaluate("() => window.MathJax.startup.promise")
        found = page.evaluate(
            """() => { const t = document.getElementById('tbl-diagonal-gap');
                       const box = t.closest('.pst-scrollable-table-container') || t.parentElement;
                       return [t.scrollWidth, box.clientWidth, parseFloat(getComputedStyle(t).fontSize)]; }"""
        )
        page.close()
        return found

    table, column, size = measure(400)
    assert table <= column, f"Table 12.2 is {table} px wide in a {column} px column at 400 px"
    assert size < measure(1280)[2]


def test_every_statement_shows_its_label(server, browser):
    """ "How to cite" asks a reader to cite a result by its stable label, which only the page's anchors had carried:
    each labelled statement's title bar ends in its label, a link to itself (_static/statement_labels.js); a proof,
    which has no label of its own, shows none."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server + "book/06_exchange_symmetry.html", wait_until="load")
    shown = page.evaluate(
        """() => [...document.querySelectorAll('div.proof.admonition[id]')].map(box => {
            const a = box.querySelector(':scope > p.admonition-title > a.sb-label');
            return [box.id, a ? a.textContent : null, a ? a.getAttribute('href') : null];
        })"""
    )
    statements = [(i, t, h) for i, t, h in shown if not i.startswith("proof")]
    assert any(i == "thm-exchange" for i, _, _ in statements)
    assert all(t == i and h == "#" + i for i, t, h in statements), statements
    assert all(t is None for i, t, _ in shown if i.startswith("proof"))
    page.close()


def test_a_label_stays_in_its_title_bar_beside_a_long_title(server, browser):
    """Theorem 2.2's title fills its bar at 1280 px: its label had dropped below the bar onto the body's first line;
    it takes a line of its own inside the bar (book.css), at a desktop's width and on a phone."""
    for width in (1280, 400):
        page = browser.new_page(viewport={"width": width, "height": 1000})
        page.goto(server + "book/02_static_query.html", wait_until="load")
        page.wait_for_selector("#thm-static-query a.sb-label")
        bar, label = page.evaluate(
            """() => { const box = document.getElementById('thm-static-query');
                       const r = (e) => { const b = e.getBoundingClientRect(); return [b.top, b.bottom]; };
                       const bar = box.querySelector(':scope > p.admonition-title');
                       return [r(bar), r(bar.querySelector('a.sb-label'))]; }"""
        )
        page.close()
        assert bar[0] <= label[0] and label[1] <= bar[1] + 0.5, f"at {width} px the label {label} leaves its bar {bar}"


def test_module_names_in_the_contents_break_after_a_dot(server, browser):
    """The API page's contents (right-hand sidebar, 13 rem at 1280 px) had broken "symbreak.decid/e" at a letter
    (_static/toc_name_breaks.js): every line of a module's name there ends at a dot or at the name's end."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(server + "book/api.html", wait_until="load")
    page.add_style_tag(content=".page-toc ul, .page-toc li { display: block !important; }")  # shown as one scrolls
    names = page.evaluate(
        """() => [...document.querySelectorAll('.page-toc .toc-h3 > a code')].map(code => {
            const range = document.createRange(), tops = new Map();
            const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
                const t = walker.currentNode;
                for (let i = 0; i < t.data.length; i++) {
                    range.setStart(t, i); range.setEnd(t, i + 1);
                    const top = Math.round(range.getBoundingClientRect().top);
                    tops.set(top, (tops.get(top) || '') + t.data[i]);
                }
            }
            return [...tops.values()];
        })"""
    )
    assert names, "the API page's contents name no module"
    broken = ["|".join(lines) for lines in names if any(not line.endswith(".") for line in lines[:-1])]
    assert not broken, f"module names broken inside a word: {broken[:5]}"
    page.close()


# Formulas of the article only: the table of contents of a page, off-canvas on a phone, is not cut but hidden.
_CUT_FORMULAS = """() => [...document.querySelectorAll('article mjx-container')].filter(m => {
    const r = m.getBoundingClientRect();
    if (r.width === 0 || r.right <= innerWidth + 1) return false;
    if (m.closest('.pst-scrollable-table-container')) return false;  // a table scrolls inside its own box
    for (let e = m; e && e.tagName === 'MJX-CONTAINER'; e = e.parentElement.closest('mjx-container')) {
        const x = getComputedStyle(e).overflowX;
        if (x === 'auto' || x === 'scroll') return false;  // the formula scrolls on a line of its own
    }
    return true;
}).map(m => m.textContent.slice(0, 60))"""


@pytest.mark.parametrize("page_path", [p for p in PAGES if not p.endswith("api.html")])
def test_page_at_phone_width(page_path, server, browser):
    """At 400 px the page never scrolls sideways as a whole, and a formula wider than the screen scrolls on a line
    of its own (display maths, or an inline formula that ``_static/wide_inline_math.js`` sets apart) or inside its
    table, instead of being cut off at the screen's edge or moving its paragraph sideways; a code cell's long line
    wraps inside its box, as an output's does (``_static/book.css``)."""
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.goto(server + page_path, wait_until="load")
    if page.evaluate("() => document.querySelectorAll('.math').length > 0"):
        page.wait_for_function("() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise")
        page.evaluate("() => window.MathJax.startup.promise")
        page.wait_for_function("() => document.documentElement.dataset.wideInlineMath === 'measured'")
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 400, f"{page_path} scrolls sideways"
    cut = page.evaluate(_CUT_FORMULAS)
    assert not cut, f"{page_path}: formulas cut off at the screen's edge: {cut[:3]}"
    sideways = page.evaluate(
        "() => [...document.querySelectorAll('div.cell_input pre')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 40))"
    )
    assert not sideways, f"{page_path}: code cells that scroll sideways instead of wrapping: {sideways[:3]}"
    page.close()
