"""The PDF (``make pdf``) holds every labelled statement of the book, numbered as in the HTML.

For every ``prf`` block with a label (theorem, proposition, definition,
corollary, lemma, remark) in the notebooks, the block's title and the first
words of its statement (outside mathematics) must appear in the text that
``pdftotext`` extracts from ``_build/latex/book.pdf``.

Numbers: every numbered object of the built HTML (``_build/html``) — each
statement ("Theorem 7.1"), figure ("Fig. 7.1"), table ("Table 8.1") and
labelled equation ("(7.2)") — is found in the PDF's text by the words that
identify it (a statement's title and first words, a caption's first words, the
words just before an equation), and the number the PDF prints there must be
the HTML's.  The PDF's table of contents must list the HTML's parts and
numbered chapters, in the HTML's order and with its chapter numbers.

Runs where the TeX tools exist (``make test`` builds the HTML and the PDF first
there, and ``.ci/run`` installs them); skipped with a message elsewhere.
``BOOK_BUILD`` names another build folder than ``_build`` (one with ``html``
and ``latex`` in it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("BOOK_BUILD", ROOT / "_build"))
PDF = BUILD / "latex" / "book.pdf"
#: The running head of every page of the PDF: the book's title (_config.yml).
BOOK_TITLE = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
HTML = BUILD / "html"
TEX = shutil.which("xelatex") and shutil.which("latexmk") and shutil.which("pdftotext")

pytestmark = pytest.mark.skipif(
    not TEX, reason="TeX tools (xelatex, latexmk, pdftotext) missing: PDF test skipped (CI installs them)"
)

BLOCK = re.compile(r"(?::::|```)\{prf:(\w+)\}([^\n]*)\n:label: ([\w-]+)\n(.*?)(?::::|```)", re.S)


def _statements() -> list[tuple[str, str, str, str]]:
    out = []
    toc = (ROOT / "_toc.yml").read_text()
    for nb in sorted((ROOT / "book").glob("*.ipynb")):
        if f"book/{nb.stem}" not in toc:
            continue  # not (yet) in the book
        cells = json.loads(nb.read_text())["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for kind, title, label, body in BLOCK.findall(text):
            if kind != "proof":
                out.append((label, kind, title.strip(), body))
    return out


def _words(text: str, n: int) -> str:
    """The first ``n`` words of ``text`` with maths, roles and markup removed, letters only, lower case."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`|:[\w-]+:[^\n]*|\((?:eq|fig|tbl)-[\w-]+\)", " ", text)
    words = re.findall(r"[A-Za-z]{3,}", text)
    return " ".join(w.lower() for w in words[:n])


@pytest.fixture(scope="module")
def pdf_text() -> str:
    if not PDF.exists():
        pytest.fail(f"{PDF} is missing: run `make pdf` (make test does where TeX exists)")
    raw = subprocess.run(["pdftotext", str(PDF), "-"], capture_output=True, text=True, check=True).stdout
    raw = re.sub(r"-\n", "", raw)  # hyphenation at line ends
    letters = re.findall(r"[A-Za-z]{3,}", raw)
    return " ".join(w.lower() for w in letters)


STATEMENTS = _statements()


def test_there_are_labelled_statements():
    assert len(STATEMENTS) >= 10


@pytest.mark.parametrize(("label", "kind", "title", "body"), STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_statement_is_in_the_pdf(label, kind, title, body, pdf_text):
    title_words = _words(title, 8)
    if title_words:
        assert title_words in pdf_text, f"{label}: title '{title}' not found in the PDF"
    opening = _words(body, 8).split()
    assert _in_order(opening, pdf_text.split()), f"{label}: statement opening {opening} not found in the PDF"


def _in_order(words: list[str], text: list[str], window: int = 40) -> bool:
    """``words`` occur in ``text`` after the first of them, all within ``window`` words per word.

    Mathematics typeset in the PDF leaves letter runs (``dout``, ``Rm``) between
    the prose words, so the words need not be adjacent; and ``pdftotext`` emits
    the lines of a large operator with limits (a ``\\sum`` over ``r = 1 … R``)
    after the rest of its paragraph line, which moves the words next to it.  So
    the test asks for the words (with their multiplicities) in the stretch of
    ``window · len(words)`` words that starts at an occurrence of the first one,
    not for their exact order.
    """
    need = Counter(words[1:])
    span = window * len(words)
    for start in (i for i, w in enumerate(text) if w == words[0]):
        if not need - Counter(text[start + 1 : start + 1 + span]):
            return True
    return False


# --- Numbers: the PDF prints the HTML's numbers --------------------------------

WORD = re.compile(r"[A-Za-z]{3,}")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIPPED = {"math", "headerlink", "cell"}  # LaTeX source, "#" anchors, code cells


class _Page(HTMLParser):
    """The prose words of a built HTML page's article and the numbered objects in it.

    ``objects`` holds ``(label, printed, position)``: the id of the object, what
    the HTML prints as its number ("Theorem 7.1", "Fig. 7.1", "Table 8.1",
    "(7.2)") and the index in ``words`` where it stands (just after the words
    before it).
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.objects: list[tuple[str, str, int]] = []
        self._open: list[tuple[str, str, bool]] = []  # tag, id, skips its text
        self._number: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if classes & {"caption-number", "eqno"}:
            self._number = []
        skip = bool(classes & SKIPPED) or tag in {"script", "style"}
        self._open.append((tag, attrs.get("id") or "", skip))

    def handle_endtag(self, tag):
        if tag in VOID or not any(t == tag for t, _, _ in self._open):
            return
        while self._open:
            if self._open.pop()[0] == tag:
                break
        if self._number is not None and tag == "span":
            printed = " ".join("".join(self._number).split()).rstrip("#").strip()
            label = next((i for _, i, _ in reversed(self._open) if i), "")
            self.objects.append((label, printed, len(self.words)))
            self._number = None

    def handle_data(self, data):
        if self._number is not None:
            self._number.append(data)
        elif not any(skip for _, _, skip in self._open):
            self.words.extend(w.lower() for w in WORD.findall(data))


def _article(html: str) -> str:
    start = html.find('<article class="bd-article"')
    return html[start : html.find("</article>", start)] if start >= 0 else ""


def _html_objects(html_dir: Path) -> list[dict]:
    """Every numbered object of the built HTML with the words that identify it."""
    found = []
    for page in sorted((html_dir / "book").glob("*.html")):
        parser = _Page()
        parser.feed(_article(page.read_text()))
        found += [
            (page.stem, label, printed, parser.words[:at], parser.words[at:])
            for label, printed, at in parser.objects
            if re.search(r"\d", printed)  # not an unnumbered statement
        ]
    # a reference ("Table 14.6") is a number, not words, in the PDF's tokens
    kinds = {p.rpartition(" ")[0].rstrip(".").lower() for _, _, p, _, _ in found} | {"equation"}
    out = []
    for page, label, printed, before, after in found:
        if printed.startswith("("):  # an equation: the words before it
            kind, number, words = "equation", printed.strip("()"), [w for w in before if w not in kinds][-24:]
        else:  # "Theorem 7.1", "Fig. 7.1": the words after its number
            kind, _, number = printed.rpartition(" ")
            words = [w for w in after if w not in kinds][:24]
        out.append({"page": page, "label": label, "kind": kind, "number": number, "words": words})
    return out


NUMBER = r"(?:[A-Z]\.)?\d+(?:\.\d+)*"  # "7.2", or an appendix's "E.1"


def _caption_lines(page: str) -> int | None:
    """How many lines the caption of a figure floated to the top of a page takes, from ``pdftotext -layout``'s
    text of the page: its first block (up to a blank line) that opens with "Fig. ".  In the reading-order text
    the caption may run on into the page's next paragraph without a blank line (the caption of Fig. 7.1 did)."""
    blocks = [b for b in re.split(r"\n\s*\n", page) if b.strip()]
    caption = next((b for b in blocks[:3] if b.strip().startswith("Fig. ")), None)
    return None if caption is None else len(caption.strip().splitlines())


def _without_running_heads(text: str, title: str, layout: str | None = None) -> str:
    """``pdftotext``'s text in reading order: without each page's running head (the book's ``title``) and foot
    (the section's number and title, the page number), and with the pages that hold only a floated figure (its
    caption) moved to the end, as is the caption of a figure floated to the top of a page; any of these would
    otherwise sit between an equation and the words before it wherever a page breaks there.  A caption ends at
    the first blank line, or where ``layout`` (``pdftotext -layout``'s text of the same PDF) ends it."""
    pages, floats = [], []
    shapes = layout.split("\f") if layout is not None else []
    for k, page in enumerate(text.split("\f")):
        lines = page.split("\n")
        filled = [i for i, line in enumerate(lines) if line.strip()]
        drop = set()
        if filled and lines[filled[0]].strip() == title:
            drop.add(filled[0])
        if len(filled) >= 2 and re.fullmatch(r"\d+|[ivxlc]+", lines[filled[-1]].strip()):
            drop.add(filled[-1])
            # the foot's section number has a chapter and a section ("11.1. "): a numbered list item ("1. At every
            # θ,") whose equation a page break put on the next page is not a foot
            if re.match(r"\d+(?:\.\d+)+\.\s", lines[filled[-2]].strip()):
                drop.add(filled[-2])
        kept = [line for i, line in enumerate(lines) if i not in drop]
        body = "\n".join(kept).strip()
        if re.match(r"Fig\. \d+\.\d+: ", body):  # a floated figure opens the page: its caption is one paragraph
            n = _caption_lines(shapes[k]) if k < len(shapes) else None
            if n is None:
                caption, _, body = body.partition("\n\n")
            else:
                lines = body.split("\n")
                caption, body = "\n".join(lines[:n]), "\n".join(lines[n:]).strip()
            floats.append(caption + "\n")
        if body:
            pages.append(body + "\n")  # an equation's number may end the page: "(4.5)" stays a line of its own
    return "\f".join(pages + floats)


def _pdf_tokens(text: str, kinds: set[str]) -> list[tuple[str, str]]:
    """The PDF's text as ``(kind, number)`` tokens for numbered objects, ``("", word)`` for words.

    An equation's number is a line of its own, "(7.2)", in ``pdftotext``'s
    text; a reference to it, inline, is not taken for it.
    """
    text = re.sub(r"-\n", "", text)
    names = "|".join(re.escape(k) for k in sorted(kinds - {"equation"}, key=len, reverse=True))
    token = re.compile(
        rf"^\((?P<tag>{NUMBER})\)$|(?P<kind>{names})\s+(?P<num>{NUMBER})\b|(?P<word>[A-Za-z]{{3,}})", re.M
    )
    out = []
    for m in token.finditer(text):
        if m["tag"]:
            out.append(("equation", m["tag"]))
        elif m["kind"]:
            out.append((m["kind"], m["num"]))
        else:
            out.append(("", m["word"].lower()))
    kinds = {k.rstrip(".").lower() for k in kinds}
    return [(k, w) for k, w in out if k or w not in kinds]


def _reach(words: list[str], seq: list[str]) -> int | None:
    """How many items of ``seq`` it takes to hold all of ``words`` (with multiplicities), or None.

    Not their order: ``pdftotext`` emits the lines of a display with large
    operators out of order (see ``_in_order``).
    """
    need = Counter(words)
    for k, w in enumerate(seq, start=1):
        if need[w] > 0:
            need[w] -= 1
            if not +need:
                return k
    return None


def _printed_numbers(obj: dict, tokens: list[tuple[str, str]], window: int = 60) -> set[str]:
    """The number(s) the PDF prints where its text holds ``obj``'s words most tightly.

    Every number of ``obj``'s kind is a candidate; the words (the first 8 of
    ``obj["words"]``, more if two candidates tie) must follow it (a statement's
    title and first words, a caption) or, for an equation, precede it (its
    ``words`` are the last ones before it), within ``window`` words.  The
    candidate that holds them in the fewest words is the object, and its number
    is what the PDF prints for it.  Where candidates with different numbers
    tie, more words decide, and then the candidate nearest to the words.
    """
    near = {}
    for i, (kind, number) in enumerate(tokens):
        if kind == obj["kind"]:
            if kind == "equation":
                seq = [w for k, w in reversed(tokens[max(0, i - 3 * window) : i]) if not k]
            else:
                seq = [w for k, w in tokens[i + 1 : i + 1 + 3 * window] if not k]
            near[i] = (number, seq[:window])
    tied: list[int] = []
    for n in (8, 16, 24):
        words = obj["words"][-n:] if obj["kind"] == "equation" else obj["words"][:n]
        reach = {i: _reach(words, seq) for i, (_, seq) in near.items()}
        reach = {i: k for i, k in reach.items() if k is not None}
        if not reach:
            return set()
        tied = [i for i, k in reach.items() if k == min(reach.values())]
        if len({near[i][0] for i in tied}) == 1:
            return {near[tied[0]][0]}
    # still tied: a reference right before the object ("(Remark 14.2).  Remark 14.1 (…)")
    # reaches the same words; the object is the candidate nearest to them
    return {near[min(tied) if obj["kind"] == "equation" else max(tied)][0]}


@pytest.fixture(scope="module")
def html_objects() -> list[dict]:
    if not (HTML / "book").is_dir():
        pytest.fail(f"{HTML} is missing: build the HTML book (`make book`; make test does) before the PDF test")
    return _html_objects(HTML)


@pytest.fixture(scope="module")
def pdf_raw() -> str:
    if not PDF.exists():
        pytest.fail(f"{PDF} is missing: run `make pdf` (make test does where TeX exists)")
    return subprocess.run(["pdftotext", str(PDF), "-"], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def pdf_layout() -> str:
    if not PDF.exists():
        pytest.fail(f"{PDF} is missing: run `make pdf` (make test does where TeX exists)")
    return subprocess.run(["pdftotext", "-layout", str(PDF), "-"], capture_output=True, text=True, check=True).stdout


def test_numbers_are_the_htmls(html_objects, pdf_raw, pdf_layout):
    """Each numbered statement, figure, table and equation of the HTML has the HTML's number in the PDF."""
    by_kind = Counter(o["kind"] for o in html_objects)
    chapters = {
        k: {o["page"] for o in html_objects if o["kind"] == k} for k in ("Theorem", "Fig.", "Table", "equation")
    }
    assert all(len(pages) >= 3 for pages in chapters.values()), f"too few numbered objects in the HTML: {chapters}"
    tokens = _pdf_tokens(_without_running_heads(pdf_raw, BOOK_TITLE, pdf_layout), set(by_kind))
    wrong = []
    for obj in html_objects:
        assert len(obj["words"]) >= 4, f"{obj['label']}: no words identify it in the HTML ({obj})"
        printed = _printed_numbers(obj, tokens)
        if printed != {obj["number"]}:
            wrong.append(
                f"{obj['page']}: {obj['label']} is {obj['kind']} {obj['number']} in the HTML, "
                f"{sorted(printed) or 'not found'} in the PDF"
            )
    assert not wrong, f"{len(wrong)} of {len(html_objects)} numbers differ:\n" + "\n".join(wrong)


def test_running_heads_and_feet_are_left_out():
    """The words before an equation at the top of a page are found across the page break."""
    expected = ["the", "words", "before", "it", "formula", "(6.3)"]
    text = f"the words before it\n\n6.3. A section\n\n68\n\n\f{BOOK_TITLE}\n\nformula\n(6.3)\n"
    assert _without_running_heads(text, BOOK_TITLE).split() == expected
    floated = (
        f"the words before it\n\n68\n\n\f{BOOK_TITLE}\n\nFig. 6.1: A caption\non two lines.\n\n69\n\n\fformula\n(6.3)\n"
    )
    assert _without_running_heads(floated, BOOK_TITLE).split()[:6] == expected
    # the caption runs on into the page's text in the reading order; the layout's blank line ends it
    run_on = f"{BOOK_TITLE}\n\nFig. 6.1: A caption\non two lines.\nthe words before it\n\nformula\n(6.3)\n"
    shape = f"{BOOK_TITLE}\n\n  Fig. 6.1: A caption\n  on two lines.\n\n\nthe words before it\n\n  formula  (6.3)\n"
    assert _without_running_heads(run_on, BOOK_TITLE, shape).split()[:6] == expected


def test_a_row_naming_a_form_is_not_a_group_label():
    labels = {("symmetric", "rank")}
    assert _is_label("  symmetric rank-1  ", labels)
    assert not _is_label("symmetric rank-1        180      180      360", labels)


def test_a_changed_number_is_caught():
    """The matcher reads the number the PDF prints: a renumbered or unnumbered statement fails."""
    obj = {"kind": "Theorem", "number": "7.1", "words": ["inverse", "scaling", "let", "the"]}
    text = "by Theorem 6.1 above.\nTheorem {} (Inverse scaling)\nLet α ≠ 0 and let T be the map\n"
    assert _printed_numbers(obj, _pdf_tokens(text.format("7.1"), {"Theorem"})) == {"7.1"}
    assert _printed_numbers(obj, _pdf_tokens(text.format("12.1"), {"Theorem"})) == {"12.1"}
    assert _printed_numbers(obj, _pdf_tokens(text.format(""), {"Theorem"})) != {"7.1"}  # unnumbered
    eq = {"kind": "equation", "number": "7.2", "words": ["for", "all", "and", "only"]}
    lines = "for all Q, K, V and x if and only if\nσ(αz) = α σ(z)\n({})\nwhich is (7.1).\n"
    assert _printed_numbers(eq, _pdf_tokens(lines.format("7.2"), {"equation"})) == {"7.2"}
    assert _printed_numbers(eq, _pdf_tokens(lines.format("12.2"), {"equation"})) == {"12.2"}


def _labelled_headings(layout: str, labels: set[str]) -> dict[str, str]:
    """The statement heading ("Corollary 8.2") whose title bar each of ``labels`` ends, from ``pdftotext -layout``'s
    text: the label ends a line (set at the right of the bar), and the heading starts that line or one of the two
    before it (a long title takes two or three lines)."""
    heading = re.compile(rf"^\s*([A-Z][a-z]+ {NUMBER}) \(")
    lines = layout.splitlines()
    found = {}
    for i, line in enumerate(lines):
        words = line.split()
        if words and words[-1] in labels and (len(words) == 1 or line.rstrip()[-len(words[-1]) - 2 :][:2] == "  "):
            starts = [heading.match(lines[k]) for k in range(i, max(-1, i - 3), -1)]
            match = next((m for m in starts if m), None)
            if match:
                found.setdefault(words[-1], match[1])
    return found


def test_statements_show_their_labels(html_objects, pdf_layout):
    """Every labelled statement shows its stable label (``:label: thm-exchange``), which "How to cite" asks a reader
    to cite it by, in its title bar, as the HTML does (``_static/statement_labels.js``): the label ends the bar's
    line beside the statement's heading, whose number is the HTML's."""
    numbers = {o["label"]: f"{o['kind']} {o['number']}" for o in html_objects}
    labels = {label for label, *_ in STATEMENTS}
    assert labels <= set(numbers), f"labelled statements not numbered in the HTML: {sorted(labels - set(numbers))}"
    found = _labelled_headings(pdf_layout, labels)
    wrong = {label: found.get(label, "no label") for label in sorted(labels) if found.get(label) != numbers[label]}
    assert not wrong, f"{len(wrong)} of {len(labels)} statements lack their label beside their heading: {wrong}"


def test_a_missing_or_misplaced_label_is_caught():
    layout = (
        "  Proposition 3.1 (Neither form contains the other; with a constant feature, the full form contains the\n"
        "  memory)                                                      prop-bilinear-expressivity\n"
        "  Theorem 2.2 (The standard MLP)\n"
        "  Let x be a token.\n  As thm-static-query says.\n"
    )
    assert _labelled_headings(layout, {"prop-bilinear-expressivity", "thm-static-query"}) == {
        "prop-bilinear-expressivity": "Proposition 3.1"
    }


# --- The contents: parts and chapters as in the HTML ----------------------------


class _Nav(HTMLParser):
    """The HTML's navigation: the captions of ``_toc.yml`` and the numbered chapter titles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.entries: list[tuple[str, str]] = []  # ("caption" | "chapter", text)
        self._what: str | None = None
        self._text: list[str] = []
        self._done = False

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        if not self._done and "caption-text" in classes:
            self._what, self._text = "caption", []
        elif not self._done and tag == "a" and "reference" in classes and self.entries:
            self._what, self._text = "chapter", []

    def handle_endtag(self, tag):
        if tag == "nav" and self.entries:
            self._done = True
        if self._what and tag in {"span", "a"}:
            self.entries.append((self._what, " ".join("".join(self._text).split())))
            self._what = None

    def handle_data(self, data):
        if self._what:
            self._text.append(data)


def _title_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _html_contents(html_dir: Path) -> list[tuple[str, str]]:
    nav = _Nav()
    nav.feed((html_dir / "book" / "intro.html").read_text())
    out = []
    for what, text in nav.entries:
        chapter = re.match(r"(\d+)\.\s+(.*)", text)
        if what == "caption" and text.startswith("Part "):
            out.append(("part", " ".join(_title_words(text))))
        elif what == "chapter" and chapter:
            out.append((chapter[1], " ".join(_title_words(chapter[2]))))
    return out


def _pdf_contents(pdf: Path) -> list[tuple[str, str]]:
    """The parts and numbered chapters of the PDF's table of contents, in order."""
    layout = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True)
    pages = layout.stdout.split("\f")
    start = next((i for i, p in enumerate(pages) if re.search(r"^\s*Contents\s*$", p, re.M | re.I)), len(pages))
    out = []
    for page in pages[start:]:
        if not re.search(r"\. \. \. |^\s*Part [IVXLC]+: ", page, re.M):
            break
        for line in page.splitlines():
            part = re.match(r"\s*(Part [IVXLC]+: .*?)\s+[0-9ivxlc]+\s*$", line)
            chapter = re.match(r"\s*(\d+)\s+(\S.*?)\s+\d+\s*$", line)
            if part:
                out.append(("part", " ".join(_title_words(part[1]))))
            elif chapter and ". ." not in line:
                out.append((chapter[1], " ".join(_title_words(chapter[2]))))
    return out


def test_contents_are_the_htmls():
    """The PDF's contents list the HTML's parts and numbered chapters, in order, numbered as in the HTML."""
    if not (HTML / "book" / "intro.html").exists() or not PDF.exists():
        pytest.fail(f"build the HTML and the PDF first ({HTML}, {PDF}): make test does")
    html = _html_contents(HTML)
    numbers = [int(n) for n, _ in html if n != "part"]
    assert sum(n == "part" for n, _ in html) >= 5 and numbers == list(range(1, len(numbers) + 1)), html
    assert _pdf_contents(PDF) == html


#: Convention: a line may stick out of its box by at most this much (TeX reports every overshoot; 2 pt is about
#: half a letter, below what a reader sees; the table layout of ``_ext/latex_book.py`` once left 16 pt).
OVERFULL_PT = 2.0


def test_no_line_sticks_out_of_its_box():
    """No line of the PDF, in the text or a table cell, is wider than its box by more than ``OVERFULL_PT``."""
    log = PDF.with_suffix(".log")
    if not log.exists():
        pytest.fail(f"{log} is missing: run `make pdf` (make test does where TeX exists)")
    text = log.read_text(encoding="utf-8", errors="replace")
    wide = [
        (float(pt), line)
        for pt, line in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\) .*?lines? (\d+)", text)
        if float(pt) > OVERFULL_PT
    ]
    assert not wide, f"lines wider than their box by more than {OVERFULL_PT} pt (pt, line of book.tex): {wide[:10]}"


def test_no_page_runs_past_its_foot():
    """No page's content runs below its foot (over the page number): TeX reports a page it could not break as
    ``Overfull \\vbox (…pt too high) has occurred while \\output is active``.  A 14-row table that could not break
    (tabulary) once ran 104 pt past the foot of the page under Fig. 14.1."""
    log = PDF.with_suffix(".log")
    if not log.exists():
        pytest.fail(f"{log} is missing: run `make pdf` (make test does where TeX exists)")
    text = log.read_text(encoding="utf-8", errors="replace")
    high = [
        float(pt) for pt in re.findall(r"Overfull \\vbox \(([\d.]+)pt too high\) has occurred while \\output", text)
    ]
    assert not [pt for pt in high if pt > OVERFULL_PT], f"pages that run past their foot by (pt): {high}"


def _group_labels(html_dir: Path) -> set[tuple[str, ...]]:
    """The words of every group label of the HTML's tables (a row whose cells but the first are empty), TeX commands
    of its maths left out: ``full, packed \\(\\mathrm{sym}(W_j)\\)`` is full, packed, sym as ``pdftotext`` reads it."""
    labels = set()
    for page in (html_dir / "book").glob("*.html"):
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page.read_text(encoding="utf-8"), re.S):
            cells = [
                re.sub(r"<[^>]+>|\\[A-Za-z]+", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            ]
            if len(cells) > 1 and cells[0] and not any(cells[1:]):
                labels.add(tuple(WORD.findall(cells[0])))
    return labels - {()}


def _is_label(line: str, labels: set[tuple[str, ...]]) -> bool:
    """Whether a line of ``pdftotext -layout``'s text is a group label: one cell (no gap of two spaces between
    columns) whose words are a label's.  A row of numbers that names a form ("symmetric rank-1   180   360") is not."""
    return len(re.split(r"\s{2,}", line.strip())) == 1 and tuple(WORD.findall(line)) in labels


def test_no_page_of_a_table_ends_with_a_group_label(pdf_layout):
    """A long table's group (Table 8.4's forms, Table 10.6's passes of a form) never leaves its label alone at the
    foot of a page: the row before "continues on next page" is not a group label (``_ext/latex_book._keep_groups``)."""
    labels = _group_labels(HTML)
    assert {("standard", "MLP"), ("gated", "MLP")} <= labels, f"the HTML's group labels were not found: {labels}"
    alone = []
    for number, page in enumerate(pdf_layout.split("\f"), start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        ends = [i for i, line in enumerate(lines) if line.endswith("continues on next page")]
        alone += [(number, lines[i - 1]) for i in ends if i and _is_label(lines[i - 1], labels)]
    assert not alone, f"pages whose table ends with a group label (page, label): {alone}"


def _shared_anchors(aux: str) -> dict[str, set[str]]:
    """The hyperlink anchors of LaTeX's ``.aux`` (``\\newlabel{…}{{E.1}{212}{…}{table.E.1}{}}``) that serve
    tables, figures or equations of different numbers: ``{anchor: numbers}``."""
    numbers: dict[str, set[str]] = {}
    for line in aux.splitlines():
        found = re.match(
            r"\\newlabel\{[^}]*\}\{\{([^{}]*)\}.*\{((?:table|figure|equation)\.[^{}]*)\}\{[^{}]*\}\}\s*$", line
        )
        if found:
            numbers.setdefault(found[2], set()).add(found[1])
    return {anchor: n for anchor, n in numbers.items() if len(n) > 1}


def test_every_numbered_object_has_its_own_link_target():
    """A link to Table E.1 lands on Table E.1: the back matter's chapter counter is 0, as the front matter's, and
    the claims-to-evidence index's tables had shared the anchors of the front matter's Tables 1–4 (table.0.1, …),
    so that every "Evidence: Table E.1" of the PDF went to Table 1 of the introduction."""
    aux = (BUILD / "latex" / "book.aux").read_text(encoding="utf-8")
    assert aux.count("{table.") >= 20, "no table anchors in the .aux"
    assert not _shared_anchors(aux), _shared_anchors(aux)
    old = "\\newlabel{intro:t}{{1}{vi}{A.}{table.0.1}{}}\n\\newlabel{evidence:t}{{E.1}{212}{B.}{table.0.1}{}}\n"
    assert _shared_anchors(old) == {"table.0.1": {"1", "E.1"}}


def test_no_statement_box_leaves_its_evidence_line_alone_on_a_page(pdf_layout):
    """A statement's last line, "Evidence: Table E.n …", goes with the line before it (``\\sbkeepwithprevious``):
    it had started a page four times, in a piece of its box of its own."""
    alone = []
    for number, page in enumerate(pdf_layout.split("\f"), start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if len(lines) > 1 and lines[0] == BOOK_TITLE and lines[1].startswith("Evidence: Table"):
            alone.append(number)
    assert pdf_layout.count("Evidence: Table") >= 40, "the statements' evidence lines are missing"
    assert not alone, f"pages that open with a statement's evidence line: {alone}"


def _continued_gaps(bbox: str) -> list[tuple[str, float, float]]:
    """``(number, gap after "Table", gap after the number)`` in points, for each "Table 3.1 – continued from
    previous page" of ``pdftotext -bbox``'s words."""
    words = [
        (float(m[1]), float(m[2]), m[3])
        for m in re.finditer(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>', bbox)
    ]
    return [
        (number[2], number[0] - table[1], dash[0] - number[1])
        for table, number, dash, word in zip(words, words[1:], words[2:], words[3:], strict=False)
        if table[2] == "Table" and dash[2] == "–" and word[2] == "continued"
    ]


def test_a_continued_table_is_named_with_one_space():
    """ "Table 3.1 – continued from previous page" had two spaces after "Table" (Sphinx's ``\\tablename\\ `` after a
    name that ends in a space): the gap after "Table" is the gap after the number, to 0.5 pt."""
    bbox = subprocess.run(["pdftotext", "-bbox", str(PDF), "-"], capture_output=True, text=True, check=True).stdout
    gaps = _continued_gaps(bbox)
    assert len(gaps) >= 5, f"too few continued tables found: {gaps}"
    wide = [g for g in gaps if abs(g[1] - g[2]) > 0.5]
    assert not wide, f"(table, gap after 'Table', gap after its number) in pt: {wide}"


def _short_code_continuations(layout: str) -> list[tuple[int, list[str]]]:
    """``(page, lines)`` for each code block or printed output (Sphinx's "(continued from previous page)" above it)
    that goes on at the top of a page with fewer than three lines, from ``pdftotext -layout``'s text: the lines up to
    the first blank line after them."""
    short = []
    for number, page in enumerate(layout.split("\f"), start=1):
        lines = page.split("\n")
        for i, line in enumerate(lines):
            if line.strip() != "(continued from previous page)":
                continue
            rest = [x.strip() for x in lines[i + 1 :]]
            start = next((k for k, x in enumerate(rest) if x), len(rest))
            end = next((k for k in range(start, len(rest)) if not rest[k]), len(rest))
            if end - start < 3:
                short.append((number, rest[start:end]))
    return short


def test_no_code_block_leaves_its_last_lines_alone_on_a_page(pdf_layout):
    """A code block or printed output split by a page break carries at least three lines to the next page
    (``_ext/symbreakbook.sty``): a page had begun with ")", ")" under "(continued from previous page)"."""
    assert not _short_code_continuations(pdf_layout), _short_code_continuations(pdf_layout)


def test_a_code_block_split_before_its_last_lines_is_caught():
    page = "Head\n\n          (continued from previous page)\n  )\n)\n\nxs = 1\n"
    fine = "(continued from previous page)\n  a\n  b\n  c\n\n"
    assert _short_code_continuations(f"{fine}\f{page}") == [(2, [")", ")"])]


#: Convention: a page is at least this full (of its text area) where the next page opens with a section heading, a
#: float (a figure's caption under the figure at its top, a table's caption) or a statement box: what did not fit went
#: to the next page and left the rest of this one blank.  Tables moved whole had left pages 41 % to 46 % blank (Tables
#: 3.2, 8.3, 15.1) and then 30 % to 34 % (Tables 3.1, 13.3, 15.5); a statement box that fitted only by shrinking went
#: to the next page whole and left 55 % (Remark 14.1).  ``\sbkeeptable`` now breaks a table where at least
#: ``\sbtablebreakroom`` (0.2) of the page is left, and a statement box is split where its framed height does not fit.
#: A chapter's last page (the next opens with "Chapter N"), part pages and the front and back matter (unnumbered
#: headings) are not counted: they may be short.
PAGE_FILL = 0.7
#: What the next page opens with, for :data:`PAGE_FILL`: a numbered section heading ("8.4 Parity …", "14.2.1 The …"),
#: a figure's or a table's caption, a statement's title bar ("Remark 14.1 (…)").
STATEMENT_KINDS = "Theorem|Proposition|Corollary|Lemma|Definition|Remark"
OPENS = re.compile(rf"{NUMBER}\.\d+ [A-Z]|(?:Fig\.|Table) {NUMBER}:|(?:{STATEMENT_KINDS}) {NUMBER} \(")


def _page_fills(bbox: str) -> list[tuple[float, str]]:
    """For each page of ``pdftotext -bbox``'s output: how far down its text area (between the running head and the
    foot) its lowest word reaches, as a share, and its first line of text below the running head."""
    out = []
    for height, body in re.findall(r'<page width="[\d.]+" height="([\d.]+)">(.*?)</page>', bbox, re.S):
        top, bottom = 0.09 * float(height), 0.9 * float(height)
        words = [
            (float(y0), float(y1), word)
            for y0, y1, word in re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)<', body)
            if top < float(y0) < bottom
        ]
        if not words:
            out.append((0.0, ""))
            continue
        first_y = min(y0 for y0, _, _ in words)
        first = " ".join(w for y0, _, w in words if abs(y0 - first_y) < 2)
        out.append(((max(y1 for _, y1, _ in words) - top) / (bottom - top), first))
    return out


def _short_pages(fills: list[tuple[float, str]]) -> list[tuple[int, float, str]]:
    """The pages (numbered from 1) less than :data:`PAGE_FILL` full whose next page opens as :data:`OPENS` says, with
    their share filled and the next page's first line."""
    return [
        (number, round(fill, 2), after)
        for number, ((fill, _), (_, after)) in enumerate(zip(fills, fills[1:], strict=False), start=1)
        if fill < PAGE_FILL and OPENS.match(after)
    ]


def test_no_page_is_left_half_empty_before_a_heading_a_float_or_a_box():
    """No page is less than ``PAGE_FILL`` full where the next page opens with a section heading, a figure or a table
    (its caption) or a statement box."""
    if not PDF.exists():
        pytest.fail(f"{PDF} is missing: run `make pdf` (make test does where TeX exists)")
    bbox = subprocess.run(["pdftotext", "-bbox", str(PDF), "-"], capture_output=True, text=True, check=True).stdout
    short = _short_pages(_page_fills(bbox))
    assert not short, f"pages left part empty before what opens the next (page, share filled, its first line): {short}"


def test_a_half_empty_page_before_a_heading_a_float_or_a_box_is_caught():
    page = '<page width="612" height="792"><word xMin="1" yMin="{}" xMax="2" yMax="{}">{}</word></page>'
    opening = ["Table 3.2:", "Fig. 11.1:", "8.4 Parity", "13.3.1 Check", "Remark 14.1 (The", "Chapter 9", "Part IV"]
    bbox = "".join(page.format(100, 110, "Text") + page.format(80, 90, first) for first in opening)
    fills = _page_fills(bbox)
    assert [after for _, _, after in _short_pages(fills)] == opening[:5]  # not a chapter's or part's start
    assert fills[0][0] < PAGE_FILL and fills[1] == (pytest.approx(fills[1][0]), "Table 3.2:")


def test_every_summary_follows_its_chapters_floats():
    """Review 9: Fig. 6.3 floated into its chapter's Summary list; ``\\sbsummarybarrier`` before each Summary keeps
    the chapter's floats before it where the page is full enough (``_ext/symbreakbook.sty``)."""
    tex = PDF.with_suffix(".tex")
    if not tex.exists():
        pytest.fail(f"{tex} is missing: run `make pdf` (make test does where TeX exists)")
    text = tex.read_text(encoding="utf-8")
    summaries = re.findall(r"(.{0,200})\\section\{Summary\}", text, re.S)
    assert len(summaries) == len(list((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))), len(summaries)
    assert all("\\sbsummarybarrier" in before for before in summaries)
