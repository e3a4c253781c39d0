"""The claims-to-evidence index, ``book/evidence.md``, written at every build by ``symbreak.evidence.write``, and
a link from every labelled statement to the index table that lists its evidence.

At ``builder-inited`` the page is written when its text differs from what the notebooks and tests give now, so the
index is never stale in a built book; ``tests/test_evidence.py`` checks that the committed page is the generated one.
Without a build, ``python -m symbreak.evidence`` in the repository's root writes the page the same way.
At ``doctree-read`` each sphinx-proof statement with a label gets a last line, "Evidence: Table E.N", a numbered
reference to its row's table.

The index's tables are numbered E.1, E.2, … as an appendix's would be (``env-get-updated``, after Sphinx has counted):
Sphinx gives all unnumbered pages one table counter, which had numbered them 5–10 after the introduction's table and
the notation's three. The HTML and the PDF (``_ext/latex_book.py``) both print the number Sphinx keeps.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx import addnodes

ROOT = Path(__file__).resolve().parents[1]
DOCNAME = "book/evidence"
PREFIX = "E"
_TABLES: dict[str, str] = {}


def _write_page(app) -> None:
    from symbreak.evidence import collect, index_tables, write

    write(ROOT)
    _TABLES.clear()
    _TABLES.update(index_tables(ROOT, collect(ROOT)))


def _link_statements(app, doctree) -> None:
    for node in doctree.findall(nodes.Admonition):
        label = node.get("label") if "realtype" in node else None
        if label not in _TABLES:
            continue
        ref = addnodes.pending_xref(
            "",
            nodes.inline("", "Table %s of the claims-to-evidence index"),
            refdomain="std",
            reftype="numref",
            reftarget=_TABLES[label],
            refexplicit=True,  # say whose table it is
            refwarn=True,
            refdoc=app.env.docname,
        )
        line = nodes.paragraph("", "", nodes.Text("Evidence: "), ref, classes=["evidence-link"])
        body = [c for c in node.children if isinstance(c, nodes.section)]
        # in the PDF the line never starts a page alone, in a piece of the statement's box of its own
        keep = nodes.raw("", "\\sbkeepwithprevious\n", format="latex")  # _ext/symbreakbook.sty
        (body[-1] if body else node).extend([keep, line])


def _number_as_appendix(app, env) -> list[str]:
    """Number the index's tables E.1, E.2, … in the order Sphinx counted them (its numbers are kept for every build)."""
    tables = env.toc_fignumbers.get(DOCNAME, {}).get("table", {})
    for number, key in enumerate(sorted(tables, key=tables.get), start=1):
        tables[key] = (PREFIX, number)
    return []


def setup(app):
    app.connect("builder-inited", _write_page)
    app.connect("doctree-read", _link_statements)
    app.connect("env-get-updated", _number_as_appendix, priority=900)  # after Sphinx's TocTreeCollector
    return {"parallel_read_safe": True, "parallel_write_safe": True}
