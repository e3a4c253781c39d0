"""The PDF (``make pdf``) holds every labelled statement of the book.

For every ``prf`` block with a label (theorem, proposition, definition,
corollary, lemma, remark) in the notebooks, the block's title and the first
words of its statement (outside mathematics) must appear in the text that
``pdftotext`` extracts from ``_build/latex/book.pdf``.

Runs where the TeX tools exist (``make test`` builds the PDF first there, and
``.ci/run`` installs them); skipped with a message elsewhere.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT / "_build" / "latex" / "book.pdf"
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
        pytest.fail(f"{PDF.relative_to(ROOT)} is missing: run `make pdf` (make test does where TeX exists)")
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
