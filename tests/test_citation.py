"""CITATION.cff is valid CFF 1.2.0, and the version is the same everywhere it appears.

The schema in tests/data/cff-schema-1.2.0.json is the Citation File Format
1.2.0 JSON schema (CC-BY-4.0, citation-file-format/citation-file-format), as
shipped in cffconvert 2.0.0; it is vendored so that the test runs offline.
``cffconvert --validate`` itself cannot share the book's environment: it pins
jsonschema 3.2, which Jupyter's packages do not accept.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import yaml

import symbreak

ROOT = Path(__file__).resolve().parents[1]


def _cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_citation_cff_validates_against_the_schema():
    schema = json.loads((ROOT / "tests" / "data" / "cff-schema-1.2.0.json").read_text())
    data = _cff()
    # YAML reads an unquoted date as datetime.date; CFF wants the ISO string
    data = json.loads(json.dumps(data, default=str))
    jsonschema.validate(data, schema, format_checker=jsonschema.FormatChecker())


def test_citation_cff_rejects_a_broken_file():
    schema = json.loads((ROOT / "tests" / "data" / "cff-schema-1.2.0.json").read_text())
    broken = json.loads(json.dumps(_cff(), default=str))
    del broken["authors"]
    try:
        jsonschema.validate(broken, schema)
    except jsonschema.ValidationError:
        return
    raise AssertionError("a CITATION.cff without authors validated")


def test_version_is_the_same_everywhere():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert symbreak.__version__ == pyproject
    assert str(_cff()["version"]) == pyproject
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(pyproject)} ", changelog, flags=re.M), "CHANGELOG.md lacks the version"


def test_the_paper_is_in_the_bibliography():
    bib = (ROOT / "references.bib").read_text()
    assert "@misc{breslow2026gated," in bib and "2606.22172" in bib


def test_package_citation_metadata_matches_citation_cff():
    from symbreak import citation

    cff = _cff()
    assert cff["title"] == citation.BOOK["title"]
    assert cff["repository-code"] == citation.BOOK["repository"]
    assert cff["url"] == citation.BOOK["url"]
    entry = citation.book_bibtex()
    assert f"version = {{{citation.version()}}}" in entry and entry.startswith("@software{symbreak2026book,")
    # the paper's entry agrees with references.bib on the essentials
    bib = (ROOT / "references.bib").read_text()
    for field in ("2606.22172", "Breslow, Nathan", "breslow2026gated"):
        assert field in citation.paper_bibtex() and field in bib


def test_theorem_reference():
    """The LaTeX citation of one result sets its label in typewriter type (a Markdown backtick would print as a
    quote in LaTeX), with LaTeX's underscore escaped."""
    from symbreak import citation

    ref = citation.theorem_reference("thm-exchange")
    assert ref == f"\\cite{{symbreak2026book}}, statement \\texttt{{thm-exchange}} (version {citation.version()})"
    assert "`" not in ref
    assert "\\texttt{a\\_b}" in citation.theorem_reference("a_b")
    import pytest

    for bad in ("", "thm exchange", "thm-{x}", 3):
        with pytest.raises(ValueError, match="label: expected a label"):
            citation.theorem_reference(bad)


def test_the_book_author_is_that_of_citation_cff():
    from symbreak import citation

    assert [a["name"] for a in _cff()["authors"]] == [citation.BOOK["author"].strip("{}")]


def test_the_book_title_keeps_its_acronym_in_bibtex():
    """Classic BibTeX styles lower-case a title outside braces ("mlps"): the generated entry braces {MLPs}, and
    only words with a capital after their first letter; CITATION.cff keeps the plain title."""
    from symbreak import citation

    assert "  title   = {Gated {MLPs} as symmetry-broken rank-1 bilinear attention:\n" in (
        citation.book_bibtex()
    )
    assert citation.bibtex_title("Gated GLU and SwiGLU, Rank-1 Gated") == "Gated {GLU} and {SwiGLU}, Rank-1 Gated"
    assert "{" not in _cff()["title"]


def test_the_book_entry_fits_the_page_and_keeps_its_title():
    """Round 9: the title line (97 characters) wrapped on the desktop page; it now breaks after the colon, and BibTeX,
    which reads the line break as a space, gets the whole title back."""
    from symbreak import citation

    entry = citation.book_bibtex()
    assert all(len(line) <= citation.BIBTEX_WIDTH for line in entry.splitlines())
    title = re.search(r"title\s*=\s*\{(.*?)\},\n\s*year", entry, re.S).group(1)
    assert " ".join(title.split()) == citation.bibtex_title(citation.BOOK["title"])
