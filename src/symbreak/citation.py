"""How to cite the book and the paper: BibTeX generated from one set of metadata.

The version is the installed package's (defined once, in ``pyproject.toml``);
``CITATION.cff`` carries the same metadata for GitHub and Zenodo, and a test
checks that the two agree.
"""

from __future__ import annotations

import re
from importlib import metadata

__all__ = ["BOOK", "PAPER", "version", "bibtex_title", "book_bibtex", "paper_bibtex", "theorem_reference"]

#: The book's citation metadata (placeholder repository until it is published); the author is CITATION.cff's, which
#: names no people yet.
BOOK: dict[str, str] = {
    "key": "symbreak2026book",
    "title": "Gated MLPs as symmetry-broken rank-1 bilinear attention: an executable companion",
    "author": "{The symbreak authors}",
    "year": "2026",
    "url": "https://symbreak-book.github.io/symbreak/",
    "repository": "https://github.com/symbreak-book/symbreak",
}

#: The paper the book accompanies.
PAPER: dict[str, str] = {
    "key": "breslow2026gated",
    "title": "Gated {MLPs} as Symmetry-Broken Rank-1 Bilinear Attention",
    "author": "Breslow, Nathan",
    "year": "2026",
    "eprint": "2606.22172",
    "url": "https://arxiv.org/abs/2606.22172",
}


def version() -> str:
    """The installed version of ``symbreak`` (from ``pyproject.toml``)."""
    return metadata.version("symbreak")


def bibtex_title(title: str) -> str:
    """The title with each word that has a capital after its first letter (an acronym such as "MLPs") in braces,
    so that the BibTeX styles that lower-case titles keep it as written."""
    return re.sub(r"\b([A-Za-z0-9]+[A-Z][A-Za-z0-9]*)\b", r"{\1}", title)


#: The longest line of a BibTeX entry that the book prints: a line the desktop page's output column shows whole.
BIBTEX_WIDTH = 84


def _field(name: str, value: str) -> str:
    """``  name    = {value}``; a line longer than :data:`BIBTEX_WIDTH` breaks after the last colon that lets its first
    line fit (else at a space), the rest continued under the value's first character (BibTeX reads a line break
    in a field as a space)."""
    head = f"  {name:<7} = "
    line = f"{head}{{{value}}}"
    if len(line) + 1 <= BIBTEX_WIDTH:
        return line
    cut = line.rfind(": ", 0, BIBTEX_WIDTH)
    cut = cut + 1 if cut > len(head) else line.rfind(" ", 0, BIBTEX_WIDTH)
    return line[:cut] + "\n" + " " * (len(head) + 1) + line[cut + 1 :]


def book_bibtex() -> str:
    """A BibTeX ``@software`` entry for the book at the installed version (acronyms in the title braced)."""
    b = BOOK
    return (
        f"@software{{{b['key']},\n"
        f"  author  = {{{b['author']}}},\n"
        f"{_field('title', bibtex_title(b['title']))},\n"
        f"  year    = {{{b['year']}}},\n"
        f"  version = {{{version()}}},\n"
        f"  url     = {{{b['url']}}},\n"
        f"  note    = {{Source: {b['repository']}}}\n"
        f"}}"
    )


def paper_bibtex() -> str:
    """The BibTeX entry of the paper: that of ``references.bib``, with the ``url`` too, for the BibTeX styles that
    do not link an ``eprint`` (the book's own style links it, so ``references.bib`` gives the eprint alone)."""
    p = PAPER
    return (
        f"@misc{{{p['key']},\n"
        f"  author        = {{{p['author']}}},\n"
        f"  title         = {{{p['title']}}},\n"
        f"  year          = {{{p['year']}}},\n"
        f"  eprint        = {{{p['eprint']}}},\n"
        f"  archiveprefix = {{arXiv}},\n"
        f"  primaryclass  = {{cs.LG}},\n"
        f"  url           = {{{p['url']}}}\n"
        f"}}"
    )


def theorem_reference(label: str) -> str:
    """How to cite one statement in LaTeX: the book, the statement's stable label in typewriter, and the version."""
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", label):
        raise ValueError(f"label: expected a label such as 'thm-exchange', got {label!r}")
    tex = label.replace("_", r"\_")
    return f"\\cite{{{BOOK['key']}}}, statement \\texttt{{{tex}}} (version {version()})"
