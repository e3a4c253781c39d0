"""symbreak.evidence: the claims-to-evidence index, on a small made-up repository with known evidence, and on the
book itself (complete, and the committed page not stale)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from symbreak import evidence as E

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_BUILD", ROOT / "_build")) / "html" / "book" / "evidence.html"


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text.splitlines(True)}


def _code(text: str, tags: list[str] | None = None) -> dict:
    meta = {"tags": tags} if tags else {}
    return {"cell_type": "code", "metadata": meta, "source": text.splitlines(True), "outputs": []}


def _repo(tmp_path: Path, cells: list[dict], tests: str = "") -> Path:
    (tmp_path / "book").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "book" / "01_one.ipynb").write_text(json.dumps({"cells": cells}))
    (tmp_path / "tests" / "test_one.py").write_text(tests)
    (tmp_path / "_toc.yml").write_text("parts:\n  - caption: 'Part I: one'\n    chapters:\n      - file: book/01_one\n")
    return tmp_path


CELLS = [
    _md(":::{prf:theorem} First\n:label: thm-a\n\nText.\n:::\n\n```{prf:proof}\nShort.\n```\n"),
    _md("### Check\n\n**Symbolically.** The identity.\n"),
    _code("vanishes(exchange_unit_difference())"),
    _code("ch06.glue_table(x)", tags=["hide-input"]),
    _md("**Numerically.** A layer.\n"),
    _code("GatedMLP(3, 4)"),
    _md(":::{prf:remark} Second\n:label: rem-b\n\nAn aside.\n:::\n\n% rem-b: no proof: an aside\n"),
    _md("% checks of thm-a\n\n**Numerically,** once more.\n"),
    _code("exchange(layer)"),
    _md("```{glue:figure} fig-x\n:name: fig-x\n\nShows {prf:ref}`thm-a`.\n```\n"),
    _md(":::{prf:theorem} Third\n:label: thm-a-long\n\nText.\n:::\n"),
]
TESTS = '''
def test_thm_a_holds():
    pass

def test_something():
    """thm-a-long: the longer label."""

def test_thm_a_long_too():
    pass
'''


def test_collect_reads_proofs_checks_tests_and_figures(tmp_path):
    a, b, c = E.collect(_repo(tmp_path, CELLS, TESTS))
    assert (a.label, a.kind, a.title, a.proof) == ("thm-a", "theorem", "First", True)
    assert a.symbolic == [2] and a.numerical == [5, 8], "folded cells are not checks; '% checks of' re-attributes"
    assert a.calls["symbolic"] == ["exchange_unit_difference"] and "GatedMLP" in a.calls["numerical"]
    assert a.shown == ["fig-x"]
    assert a.tests == {"test_one.py": 1}, "thm-a is counted once: the longer label thm-a-long takes its own tests"
    assert c.tests == {"test_one.py": 2}
    assert (b.proof, b.symbolic, b.numerical, b.reasons) == (False, [], [], {"proof": "an aside"})


def test_missing_names_each_gap_without_a_reason(tmp_path):
    statements = E.collect(_repo(tmp_path, CELLS, TESTS))
    assert E.missing(statements) == [
        "rem-b: no symbolic check",
        "rem-b: no numerical check",
        "rem-b: no unit test",
        "thm-a-long: no proof",
        "thm-a-long: no symbolic check",
        "thm-a-long: no numerical check",
    ]


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(ValueError, match="root"):
        E.collect(tmp_path)
    with pytest.raises(ValueError, match="kind"):
        E.Statement("x", "theorem", "", "01").has("lemma")
    bad = [_md("% checks of thm-z\n")]
    with pytest.raises(ValueError, match="thm-z"):
        E.collect(_repo(tmp_path, bad))


def test_every_statement_of_the_book_has_its_evidence_or_a_reason():
    assert E.missing(E.collect(ROOT)) == []


def test_the_experiments_verdicts_are_read_from_the_chapters():
    verdicts = E.experiments(ROOT)
    assert len(verdicts) == len(E.EXPERIMENTS)
    words = re.compile(r"\b(better|worse|level)\b|^\d+ of \d+$")
    assert all(words.search(v) for _, v in verdicts), [v for _, v in verdicts if not words.search(v)]


def test_the_committed_index_is_not_stale():
    page = (ROOT / "book" / "evidence.md").read_text(encoding="utf-8")
    assert page == E.render(ROOT), "book/evidence.md is stale: build the book (make book) and commit the page"


@pytest.mark.skipif(not HTML.exists(), reason=f"the book is not built ({HTML} missing): index page test skipped")
def test_the_index_page_has_one_row_per_statement():
    html = HTML.read_text(encoding="utf-8")
    labels = [s.label for s in E.collect(ROOT)]
    rows = re.findall(
        r'<tr class="row-(?:odd|even)">\s*<td[^>]*><p><a class="reference internal" href="([^"#]+#[^"]+)"', html
    )
    assert [href.split("#", 1)[1] for href in rows] == labels
    assert "**missing**" not in html and "<strong>missing</strong>" not in html


def test_every_label_the_package_and_tests_cite_exists():
    """A label cited as ````label```` in a docstring or test (``cor-single-alpha``) names a statement of the book:
    a renamed statement leaves no stale citation behind."""
    labels = {s.label for s in E.collect(ROOT)}
    cited = re.compile(r"``((?:thm|prop|lem|cor|def|rem)-[A-Za-z0-9-]+)``")
    stale = {
        (m.group(1), path.name)
        for path in [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
        for m in cited.finditer(path.read_text(encoding="utf-8"))
        if m.group(1) not in labels and path.name != "test_evidence.py"
    }
    assert not stale, f"cited labels that name no statement: {sorted(stale)}"
