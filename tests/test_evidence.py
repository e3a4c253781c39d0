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


#: The imports of the made-up notebooks: a check names only what the notebook imports from symbreak.
IMPORTS = _code(
    "from symbreak import GatedMLP, GlobalQueryMLP, exchange, symmetry\n"
    "from symbreak.activations import display_name\n"
    "from symbreak.benchmark import D\n"
    "from symbreak.costs import R\n"
    "from symbreak.pages import ch06\n"
    "from symbreak.report import vanishes\n"
    "from symbreak.symbolic.exchange import exchange_unit_difference\n",
    tags=["not-a-check"],
)


def _repo(tmp_path: Path, cells: list[dict], tests: str = "") -> Path:
    """A repository whose one notebook holds ``cells``, then the imports (a cell that is no check)."""
    (tmp_path / "book").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "book" / "01_one.ipynb").write_text(json.dumps({"cells": [*cells, IMPORTS]}))
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


def test_a_test_of_how_the_book_shows_a_result_is_no_evidence(tmp_path):
    """A label in a test of the pages or of the built PDF names an example (test_pdf.py's thm-exchange in its title
    bar), not evidence: the reviewers of the index had found four such entries."""
    root = _repo(tmp_path, CELLS, TESTS)
    for name in ("test_pdf.py", "test_pages_ch06.py", "test_report.py"):
        (root / "tests" / name).write_text('def test_label_shown():\n    """thm-a in its title bar."""\n')
    (root / "tests" / "test_symmetry.py").write_text('def test_exchange():\n    """thm-a holds."""\n')
    a = E.collect(root)[0]
    assert a.tests == {"test_one.py": 1, "test_symmetry.py": 1}, a.tests


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


SHOWN = [
    _md(
        ":::{prf:theorem} First\n:label: thm-a\n\nIt holds,\n\n$$\nx = y\n$$ (eq-a)\n\n"
        "as {numref}`tbl-cited` lists.\n:::\n"
    ),
    _md("**Numerically.** A layer.\n"),
    _code("R(2) * D(3) + GatedMLP(3, 4)"),
    _md(":::{table} The check's output.\n:name: tbl-checks\n\n| a |\n|---|\n| 1 |\n:::\n"),
    _md("## Later\n\nProse on {prf:ref}`thm-a`.\n\n```{glue:figure} fig-prose\n:name: fig-prose\n\nNear it.\n```\n"),
    _md("```{glue:figure} fig-eq\n:name: fig-eq\n\nThe two sides of {eq}`eq-a`.\n```\n"),
    _md("```{glue:figure} fig-via\n:name: fig-via\n\nAt the scale of {numref}`tbl-checks`.\n```\n"),
    _md(":::{table} Cited.\n:name: tbl-cited\n\n| a |\n|---|\n| 1 |\n:::\n"),
    _md(":::{table} By {prf:ref}`thm-a`.\n:name: tbl-caption\n\n| a |\n|---|\n| 1 |\n:::\n"),
]


def test_shown_in_counts_captions_equations_citations_and_checks_not_prose(tmp_path):
    """A figure or table shows a statement when its caption refers to it or to an equation it numbers, when the
    statement refers to it, or when it stands among its checks; prose near a figure, and a caption that refers to
    another figure that shows the statement, do not count."""
    (a,) = E.collect(_repo(tmp_path, SHOWN))
    assert a.shown == ["tbl-checks", "fig-eq", "tbl-cited", "tbl-caption"]
    assert (a.equations, a.cites) == (["eq-a"], ["tbl-cited"])


def test_check_names_are_functions_and_classes_of_the_package(tmp_path):
    """``R`` (a sympy symbol of symbreak.costs) and ``D`` (a size of symbreak.benchmark) are in the package's
    ``__all__`` and are written ``R(…)`` in a cell, but are not functions: the check is named by GatedMLP alone."""
    from symbreak import benchmark, costs

    assert "R" in costs.__all__ and "D" in benchmark.__all__
    (a,) = E.collect(_repo(tmp_path, SHOWN))
    assert a.calls == {"numerical": ["GatedMLP"]}


def test_check_names_leave_out_what_only_names_a_thing_for_the_reader(tmp_path):
    """``display_name`` (an activation's book name) is a public function of ``symbreak.activations`` that a
    check calls for its printed verdict; it says nothing of what is checked, so only GatedMLP names the check."""
    from symbreak import activations

    assert "display_name" in activations.__all__
    cells = [CELLS[0], _md("**Numerically.** A layer.\n"), _code('{display_name("silu"): GatedMLP(3, 4)}')]
    (a,) = E.collect(_repo(tmp_path, cells))
    assert a.calls == {"numerical": ["GatedMLP"]}


def test_check_names_include_a_class_whose_method_the_check_calls(tmp_path):
    """A check that builds its layer by ``GlobalQueryMLP.from_weights(…)`` is named by that class (it had been
    named by nothing, "1 cell"); a function called by name (``exchange``, through its module) comes first."""
    check = _code("a = GlobalQueryMLP.from_weights(q, k, v)\nsymmetry.exchange(a)")
    cells = [CELLS[0], _md("**Numerically.** A layer.\n"), check]
    (a,) = E.collect(_repo(tmp_path, cells))
    assert a.calls == {"numerical": ["exchange", "GlobalQueryMLP"]}


def test_check_names_are_what_the_notebook_imports_from_the_package_not_its_variables(tmp_path):
    """``memory = KeyValueMLP(…)`` then ``memory(x)`` calls the notebook's variable, not ``symbreak.costs.memory``
    (book/evidence.md had named chapters 2 and 3's checks by ``memory``); ``REGISTRY[n].sym(1)`` calls a method,
    not ``symbreak.approximation.sym``.  An alias is read as what it imports, a module's function through it."""
    from symbreak import approximation, costs

    assert "memory" in costs.__all__ and "sym" in approximation.__all__
    check = _code(
        "memory = KeyValueMLP(2, 3)\nmemory(x)\nREGISTRY['relu'].sym(1)\nB(2, 3)\nsy.exchange(memory)\n"
        "import symbreak.layers as L\nL.GatedMLP(2, 3)\nmemory_of(1)"
    )
    imports = _code(
        "import numpy as np\nfrom symbreak import REGISTRY, KeyValueMLP, BilinearMLP as B\n"
        "from symbreak import symmetry as sy\n%matplotlib inline"
    )
    cells = [imports, CELLS[0], _md("**Numerically.** A layer.\n"), check]
    (a,) = E.collect(_repo(tmp_path, cells))
    assert a.calls == {"numerical": ["KeyValueMLP", "BilinearMLP", "exchange", "GatedMLP"]}


def test_a_name_in_a_string_or_a_comment_is_no_call(tmp_path):
    """Regression read 9: a printed label "x sym(W) xᵀ" named ``approximation.sym`` as a check of Theorem 3.1; calls
    are read from the syntax tree, so strings and comments do not count."""
    check = _code('print(vanishes(d, "x W xᵀ − x sym(W) xᵀ"))  # not sym(W) either\nsym(W)')
    imports = _code("from symbreak.approximation import sym\nfrom symbreak.report import vanishes")
    cells = [imports, CELLS[0], _md("**Numerically.** A layer.\n"), check]
    (a,) = E.collect(_repo(tmp_path, cells))
    assert a.calls == {"numerical": ["sym"]}
    only_text = _code('print(vanishes(d, "x sym(W) xᵀ"))')
    (tmp_path / "b").mkdir()
    (b,) = E.collect(_repo(tmp_path / "b", [imports, CELLS[0], _md("**Numerically.** A layer.\n"), only_text]))
    assert b.calls.get("numerical", []) == []


LABELS = {"prop-a": "prf:ref", "fig-b": "numref", "tbl-c": "numref", "eq-d": "eq"}


def test_linked_writes_each_label_as_the_reference_of_its_kind():
    text = "from prop-a's check, in fig-b and tbl-c, by eq-d."
    assert E.linked(text, LABELS) == (
        "from {prf:ref}`prop-a`'s check, in {numref}`fig-b` and {numref}`tbl-c`, by {eq}`eq-d`."
    )
    kept = "`prop-a` in code, {eq}`eq-d`, $eq-d$, test_prop_a_holds in tests/test_prop-a.py, a fig-bar-like word"
    with pytest.raises(ValueError, match="fig-bar-like"):
        E.linked(kept, LABELS)
    kept = kept.replace(", a fig-bar-like word", "")
    # labels inside code, roles and maths stay; a test's name and a file name become code
    assert E.linked(kept, LABELS) == kept.replace("test_prop_a_holds", "`test_prop_a_holds`").replace(
        "tests/test_prop-a.py", "`tests/test_prop-a.py`"
    )
    assert E.linked("the tests test_x_* in ARCHITECTURE.md", LABELS) == "the tests `test_x_*` in `ARCHITECTURE.md`"


def test_linked_refuses_an_unknown_label_or_a_reference_of_the_wrong_kind():
    with pytest.raises(ValueError, match=r"the reason: 'thm-nowhere' names no statement"):
        E.linked("see thm-nowhere", LABELS, "the reason")
    with pytest.raises(ValueError, match="refers to no numref target"):
        E.linked("see {numref}`eq-d`", LABELS)


def test_the_page_links_reasons_as_notes_and_refuses_an_unknown_label(tmp_path, monkeypatch):
    import symbreak.evidence.page as page

    monkeypatch.setattr(page, "experiments", lambda root: [])
    cells = [*CELLS[:6], _md(":::{prf:remark} Second\n:label: rem-b\n:::\n\n% rem-b: no proof: see thm-a\n")]
    text = E.render(_repo(tmp_path, cells))
    assert "| — {ref}`note 1 <evidence-note-rem-b-proof>` |" in text
    assert "(evidence-note-rem-b-proof)=\n**Note 1.** {prf:ref}`rem-b`, proof: see {prf:ref}`thm-a`.\n" in text
    (tmp_path / "book" / "01_one.ipynb").write_text(
        json.dumps({"cells": [*cells[:-1], _md("".join(cells[-1]["source"]).replace("thm-a", "thm-gone"))]})
    )
    with pytest.raises(ValueError, match="the reason of rem-b for no proof: 'thm-gone' names no statement"):
        E.render(tmp_path)


def test_every_label_a_reason_names_is_a_reference_on_the_page():
    """No raw label is left in the committed page outside code and references."""
    page = (ROOT / "book" / "evidence.md").read_text(encoding="utf-8")
    prose = re.sub(r"(?:\{[\w:-]+\})?`[^`]*`|\$[^$]*\$|^\([\w-]+\)=$|^:name: .*$", "", page, flags=re.M)
    assert not re.findall(r"(?<![\w./-])(?:def|thm|prop|lem|cor|rem|fig|tbl|eq)-[A-Za-z0-9]", prose)


def test_every_statement_of_the_book_has_its_evidence_or_a_reason():
    assert E.missing(E.collect(ROOT)) == []


def test_the_experiments_verdicts_are_read_from_the_chapters():
    verdicts = E.experiments(ROOT)
    assert len(verdicts) == len(E.EXPERIMENTS)
    words = re.compile(r"\b(better|worse|level)\b|^\d+ of \d+$")
    assert all(words.search(v) for _, v in verdicts), [v for _, v in verdicts if not words.search(v)]


def test_the_committed_index_is_not_stale():
    page = (ROOT / "book" / "evidence.md").read_text(encoding="utf-8")
    assert page == E.render(ROOT), (
        "book/evidence.md is stale: run `.venv/bin/python -m symbreak.evidence` (or build the book) and commit it"
    )


@pytest.mark.skipif(not HTML.exists(), reason=f"the book is not built ({HTML} missing): index page test skipped")
def test_the_index_page_has_one_row_per_statement():
    html = HTML.read_text(encoding="utf-8")
    labels = [s.label for s in E.collect(ROOT)]
    rows = re.findall(
        r'<tr class="row-(?:odd|even)">\s*<td[^>]*><p><a class="reference internal" href="([^"#]+#[^"]+)"', html
    )
    assert [href.split("#", 1)[1] for href in rows] == labels
    assert "**missing**" not in html and "<strong>missing</strong>" not in html
    text = re.sub(r"<[^>]+>", " ", html.split('<article class="bd-article"', 1)[-1].split("</article>", 1)[0])
    raw = re.findall(r"(?<![\w./-])(?:def|thm|prop|lem|cor|rem|fig|tbl|eq)-[A-Za-z0-9][\w-]*", text)
    assert not raw, f"raw labels in the index page: {sorted(set(raw))}"


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
