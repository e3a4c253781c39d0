"""The book's search finds a statement by its stable label and by its number: "thm-exchange" and "Theorem 6.1".

"How to cite" asks a reader to cite a statement by its label, which the statement's title bar shows (added at run
time by ``_static/statement_labels.js``, so Sphinx's index never saw it), and the PDF names it by its number.

* Each labelled statement is a search object of the domain ``sb`` (:class:`StatementDomain`), shown as
  "thm-exchange — Theorem 6.1 (Exchange symmetry)" and linking to the statement itself; its number is the one the
  HTML gives it (``env.toc_fignumbers``), its title in plain text.
* ``_static/search_scorer.js`` (Sphinx's ``html_search_scorer``) lists a statement whose label, or whose number
  with its kind, is the whole query first: the pages that cite it had ranked as high as the one that states it.
* Each statement also ends in its label as hidden text, which the full-text index reads.
"""

from __future__ import annotations

import html
from pathlib import Path

from book_fixes import plain_text
from docutils import nodes
from sphinx.domains import Domain, ObjType

SCORER = Path(__file__).resolve().parents[1] / "_static" / "search_scorer.js"


def _statements(doctree: nodes.Node):
    """Every labelled statement of ``doctree`` (theorem, definition, …; a proof has no label of its own)."""
    from sphinx_proof.nodes import NODE_TYPES, unenumerable_node

    kinds = (*NODE_TYPES.values(), unenumerable_node)
    for statement in doctree.findall(lambda n: isinstance(n, kinds)):
        label = statement.get("label", "")
        if label and label in statement.get("ids", ()):
            yield label, statement


def display_name(label: str, kind: str, number: tuple[int, ...] | None, title: str) -> str:
    """The label, then the statement as the book names it: "thm-exchange — Theorem 6.1 (Exchange symmetry)"."""
    named = kind.title() + (" " + ".".join(map(str, number)) if number else "")
    return f"{label} — {named}" + (f" ({title})" if title else "")


class StatementDomain(Domain):
    """The labelled statements, as search objects only (they are referred to with ``prf:ref``)."""

    name = "sb"
    label = "statements"
    object_types = {"statement": ObjType("statement")}
    initial_data: dict = {"statements": {}}  # label -> (docname, figure type, kind, title)

    @property
    def statements(self) -> dict[str, tuple[str, str, str, str]]:
        return self.data.setdefault("statements", {})

    def note(self, label: str, docname: str, figtype: str, kind: str, title: str) -> None:
        self.statements[label] = (docname, figtype, kind, title)

    def clear_doc(self, docname: str) -> None:
        for label, entry in list(self.statements.items()):
            if entry[0] == docname:
                del self.statements[label]

    def merge_domaindata(self, docnames, otherdata: dict) -> None:
        for label, entry in otherdata.get("statements", {}).items():
            if entry[0] in docnames:
                self.statements[label] = entry

    def get_type_name(self, type: ObjType, primary: bool = False) -> str:
        return type.lname  # "statement, in 6. …", not "statements statement"

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        return None

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []

    def get_objects(self):
        # the object's name differs from its anchor, so that the index keeps the anchor (the label) apart from the
        # display name it shows
        numbers = self.env.toc_fignumbers
        for label, (docname, figtype, kind, title) in sorted(self.statements.items()):
            number = numbers.get(docname, {}).get(figtype, {}).get(label)
            yield (f"statement:{label}", display_name(label, kind, number, title), "statement", docname, label, 1)


def _note_statements(app, doctree) -> None:
    std, domain = app.env.get_domain("std"), app.env.get_domain("sb")
    for label, statement in _statements(doctree):
        figtype = std.get_enumerable_node_type(statement) or ""
        title = statement[0].astext() if statement.children and isinstance(statement[0], nodes.title) else ""
        title = title.strip()[1:-1] if title.strip().startswith("(") and title.strip().endswith(")") else title
        domain.note(label, app.env.docname, figtype, statement.get("realtype", figtype), plain_text(title))


def indexed_labels(doctree) -> None:
    """Each labelled statement of ``doctree`` ends in its label as hidden raw HTML, whose words (``thm``,
    ``exchange``) the full-text index reads."""
    for label, statement in list(_statements(doctree)):
        words = f'<span class="sb-label-words" hidden>{html.escape(label)}</span>'
        statement.append(nodes.raw("", words, format="html"))


def _indexed_labels(app, doctree, docname) -> None:
    if app.builder.format == "html":
        indexed_labels(doctree)


def _search_scorer(app, config) -> None:
    """Sphinx opens ``html_search_scorer`` from the working directory: set absolute here."""
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)


def setup(app):
    app.setup_extension("sphinx_proof")
    app.add_domain(StatementDomain)
    app.connect("config-inited", _search_scorer)
    app.connect("doctree-read", _note_statements)
    app.connect("doctree-resolved", _indexed_labels)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
