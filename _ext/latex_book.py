"""The PDF book (``make pdf``): the structure and the numbers of the HTML, in LaTeX.

Sphinx's LaTeX builder joins the book into one document whose root is the
introduction; left alone it makes the introduction's sections chapters 1–4,
drops the parts of ``_toc.yml`` and lets LaTeX count chapters, equations,
figures and tables on its own, so that its numbers drift from the HTML's.
This extension acts on the LaTeX builder only (the HTML is untouched):

* structure: the introduction and the front matter of ``_toc.yml`` as
  unnumbered chapters (roman page numbers), each numbered caption of
  ``_toc.yml`` ("Part I: …") as a part page, chapter N of the HTML as
  chapter N, the back matter unnumbered, the bibliography inside the
  "References" chapter;
* numbers: every chapter, figure, table and labelled equation gets the number
  Sphinx gives it in the HTML (``env.toc_secnumbers``, ``env.toc_fignumbers``),
  set as the LaTeX counter just before the object; statements of sphinx-proof
  (theorem, proposition, …) are titled "Theorem 7.1 (…)" with the same
  numbers (sphinx-proof's own LaTeX loses them in chapters whose title has a
  typographic apostrophe), and proofs are amsthm proofs, "Proof." with the end
  mark;
* code: cells whose input (or output, or whole cell) is hidden in the HTML
  (``hide-input``, ``hide-output``, ``hide-cell``) leave it out of the PDF;
  the visible checks keep their code and output;
* tables: laid out by ``_ext/latex_tables.py`` (which break across pages,
  their column widths from the width model of ``_ext/latex_widths.py``, which
  rows keep together);
* title page with subtitle (``latex_book_subtitle``), the package's version and
  the date; the LaTeX side lives in ``_ext/symbreakbook.sty``.
"""

from __future__ import annotations

import datetime
import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

from docutils import nodes
from latex_tables import depart_row, lay_out, raw_latex, visit_row
from sphinx.builders.latex.nodes import thebibliography
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.fileutil import copy_asset_file
from sphinx.util.texescape import escape

STY = Path(__file__).with_name("symbreakbook.sty")
INTRO_TITLE = "Introduction"
#: The title of the section that ends each chapter; the floats of the chapter's body stay before it.
SUMMARY = "Summary"
# Sphinx's name of each numbered kind and the LaTeX counter that prints it
COUNTERS = {"figure": "figure", "table": "table", "displaymath": "equation"}
PART = re.compile(r"^Part\s+([IVXLC]+)\s*[:.]\s*(.+)$")
SQUARES = {r"\square", r"\blacksquare", r"\Box", "□", "∎"}


def _roman(text: str) -> int:
    values = [{"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}[c] for c in text]
    return sum(-v if v < max(values[i + 1 :], default=0) else v for i, v in enumerate(values))


def _version(srcdir: str) -> str:
    """The package's version: its installed metadata, else ``pyproject.toml``."""
    try:
        return metadata.version("symbreak")
    except metadata.PackageNotFoundError:
        pyproject = Path(srcdir) / "pyproject.toml"
        return tomllib.loads(pyproject.read_text())["project"]["version"]


def _date() -> str:
    """Today (or ``SOURCE_DATE_EPOCH``), as "1 December 2026"."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    day = datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date() if epoch else datetime.date.today()
    return f"{day.day} {day:%B %Y}"


def _latex_elements(app, config) -> None:
    elements = config.latex_elements
    macros = (
        "\\usepackage{symbreakbook}\n"
        f"\\renewcommand\\sbsubtitle{{{escape(config.latex_book_subtitle, 'xelatex')}}}\n"
        f"\\renewcommand\\sbversion{{{escape(_version(app.srcdir), 'xelatex')}}}\n"
    )
    elements["preamble"] = elements.get("preamble", "") + "\n" + macros


def _latex_builder(app) -> None:
    if app.builder.name == "latex":
        copy_asset_file(str(STY), app.outdir)
        app.builder.context["date"] = _date()


def _walk(node: nodes.Element, docname: str):
    """(node, its parent, its document) for every element below ``node``.

    The assembled book cannot be walked upwards: Sphinx moves each document's
    children under its ``start_of_file`` node without resetting their parent.
    """
    for child in list(node.children):
        if isinstance(child, nodes.Element):
            yield child, node, docname
            inner = child["docname"] if child.tagname == "start_of_file" else docname
            yield from _walk(child, inner)


class LatexBook(SphinxPostTransform):
    """Lay out the assembled LaTeX book as the HTML numbers it."""

    default_priority = 800  # after the LaTeX builder's bibliography transform (750)
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        root = self.config.root_doc
        if not any(n.tagname == "start_of_file" for n in self.document.findall(nodes.Element)):
            return  # not the assembled book
        self._drop_hidden_code(root)
        self._tables(root)
        self._number(root)
        self._proofs()
        self._summaries(root)
        self._structure(root)
        self._bibliography()

    def _drop_hidden_code(self, root: str) -> None:
        drop = {"input": {"cell_code_source"}, "output": {"cell_code_output"}}
        drop["all"] = drop["input"] | drop["output"]
        for cell, parent, _ in list(_walk(self.document, root)):
            hidden = drop.get(cell.get("hide_mode", ""), set())
            if cell.get("nb_element") != "cell_code" or not hidden:
                continue
            for part in list(cell.children):
                if part.get("nb_element") in hidden:
                    cell.remove(part)
            if not cell.children:
                parent.remove(cell)

    def _tables(self, root: str) -> None:
        for table, parent, _ in list(_walk(self.document, root)):
            if isinstance(table, nodes.table):
                lay_out(table, parent)

    def _number(self, root: str) -> None:
        """Give figures, tables, equations and statements the HTML's numbers."""
        fignumbers = self.env.toc_fignumbers
        domain = self.env.get_domain("std")
        for node, parent, docname in list(_walk(self.document, root)):
            if not node.get("ids"):
                continue
            if isinstance(node, nodes.math_block):
                kind = "displaymath"
            else:
                kind = domain.get_enumerable_node_type(node)
            number = fignumbers.get(docname, {}).get(kind or "", {}).get(node["ids"][0])
            if number is None:
                continue
            if kind in COUNTERS:
                name = COUNTERS[kind]
                counter = f"\\setcounter{{{name}}}{{{number[-1] - 1}}}"
                if isinstance(number[0], str):  # a lettered number, E.1 (``_ext/evidence_page.py``), for this one
                    # and hyperref's anchor (\theH…) too: the back matter's chapter is 0, as the front matter's, and
                    # "Table E.1" had linked to the front matter's Table 1
                    lettered = f"{{{number[0]}.\\arabic{{{name}}}}}"
                    counter = (
                        f"\\begingroup\\renewcommand{{\\the{name}}}{lettered}"
                        f"\\renewcommand{{\\theH{name}}}{lettered}{counter}"
                    )
                    parent.insert(parent.index(node) + 1, raw_latex("\\endgroup"))
                parent.insert(parent.index(node), raw_latex(counter))
            elif "realtype" in node:  # a sphinx-proof statement
                node["sb_number"] = ".".join(map(str, number))

    def _proofs(self) -> None:
        """Proofs without sphinx-proof's box, its "Proof." prefix and a typed end mark."""
        from sphinx_proof.nodes import proof_node

        for proof in self.document.findall(proof_node):
            for box in [c for c in proof.children if isinstance(c, nodes.admonition)]:
                proof.replace(box, box.children)
            first = next(iter(proof.findall(nodes.paragraph)), None)
            if first and first.children and isinstance(first[0], nodes.Text):
                text = first[0].astext()
                if text.startswith("Proof."):
                    first.replace(first[0], nodes.Text(text[len("Proof.") :].lstrip()))
            last = proof
            while last.children and isinstance(last[-1], nodes.Element):
                last = last[-1]
                if isinstance(last, nodes.paragraph):
                    break
            if isinstance(last, nodes.paragraph) and last.children:
                if isinstance(last[-1], nodes.math) and last[-1].astext().strip() in SQUARES:
                    last.remove(last[-1])
                    if last.children and isinstance(last[-1], nodes.Text):
                        last.replace(last[-1], nodes.Text(last[-1].astext().rstrip()))

    def _summaries(self, root: str) -> None:
        """``\\sbsummarybarrier`` before each chapter's "Summary": a figure of the chapter's body is placed before
        its summary, not amid the summary's list (review 9: Fig. 6.3 had floated into it), where the page is full
        enough there that flushing it leaves no page part empty (``symbreakbook.sty``)."""
        for section, parent, _ in list(_walk(self.document, root)):
            if isinstance(section, nodes.section) and section[0].astext() == SUMMARY:
                parent.insert(parent.index(section), raw_latex("\\sbsummarybarrier"))

    def _structure(self, root: str) -> None:
        """Introduction and front matter, parts, numbered chapters, back matter."""
        intro = next(iter(self.document.findall(nodes.section)))
        toctrees = {}
        for toctree in self.env.get_doctree(root).findall(nodes.Element):
            if toctree.tagname == "toctree":
                for doc in toctree["includefiles"]:
                    toctrees[doc] = toctree
        title, body, parts = intro[0], [], []
        for child in intro.children[1:]:
            if "toctree-wrapper" in child.get("classes", ()):
                parts.append(child)
            else:
                body.append(child)
        opening = nodes.section("", nodes.title("", INTRO_TITLE), *body)
        children = [title, raw_latex("\\sbfrontmatter"), opening]
        numbered_seen = back = False
        for count, wrapper in enumerate(parts, start=1):
            files = [c for c in wrapper.children if c.tagname == "start_of_file"]
            toctree = toctrees.get(files[0]["docname"]) if files else None
            caption = (toctree.get("caption") or "") if toctree is not None else ""
            if toctree is not None and toctree.get("numbered"):
                if not numbered_seen:
                    children.append(raw_latex("\\sbmainmatter"))
                    numbered_seen = True
                match = PART.match(caption)
                number, name = (_roman(match[1]), match[2]) if match else (count, caption)
                children.append(raw_latex(f"\\sbpart{{{number}}}{{{escape(name, 'xelatex')}}}"))
            elif numbered_seen and not back:
                children.append(raw_latex("\\sbbackmatter"))
                back = True
            for sof in files:
                secnum = self.env.toc_secnumbers.get(sof["docname"], {}).get("")
                mark = f"\\sbchapter{{{secnum[0]}}}" if secnum else "\\sbunnumbered"
                sof.insert(0, raw_latex(mark))
            children.append(wrapper)
        intro.children = []
        intro.extend(children)

    def _bibliography(self) -> None:
        """Move the bibliography (the builder puts it at the end) into its chapter."""
        bibliographies = getattr(self.env.get_domain("cite"), "bibliographies", {})
        docs = {key.docname for key in bibliographies}
        for bib in list(self.document.findall(thebibliography)):
            for sof in self.document.findall(nodes.Element):
                if sof.tagname == "start_of_file" and sof["docname"] in docs:
                    section = next(iter(sof.findall(nodes.section)))
                    bib.parent.remove(bib)
                    section.append(bib)
                    break


def statement_label(node: nodes.Element) -> str:
    """The stable label of a statement (``:label: thm-exchange``), which "How to cite" asks a reader to cite it by
    and the HTML shows in its title bar (``_static/statement_labels.js``); "" for a statement without one, whose id
    sphinx-proof makes from its kind and a serial number ("theorem-3") and which a new statement would change."""
    label = node.get("label", "")
    if not label or re.fullmatch(rf"{re.escape(node.get('realtype', ''))}-\d+", label):
        return ""
    return label


def visit_statement(self, node) -> None:
    """A theorem, proposition, …: "Kind N.k (title)" as the heading of its box."""
    heading = node.get("realtype", "").title()
    if node.get("sb_number"):
        heading += " " + node["sb_number"]
    title = ""
    if node.children and isinstance(node[0], nodes.title):
        self.pushbody([])
        for child in node[0].children:
            child.walkabout(self)
        title = "".join(self.popbody())
        node.remove(node[0])
    # sbstatement (_ext/symbreakbook.sty): the note box, whose heading never ends a page, with the label at its right
    label = statement_label(node)
    option = f"[{self.encode(label)}]" if label else ""
    self.body.append("\n\\begin{sbstatement}" + option + "{" + heading + title + "}\n")
    for node_id in node.get("ids", ()):
        self.body.append(self.hypertarget(node_id, anchor=True))


def depart_statement(self, node) -> None:
    self.body.append("\\end{sbstatement}\n")


def visit_proof(self, node) -> None:
    self.body.append("\n\\begin{proof}\n")


def depart_proof(self, node) -> None:
    self.body.append("\\end{proof}\n")


def setup(app):
    app.setup_extension("sphinx_proof")
    from sphinx_proof.nodes import NODE_TYPES, proof_node, unenumerable_node

    app.add_config_value("latex_book_subtitle", "", "", [str])
    app.connect("config-inited", _latex_elements)
    app.connect("builder-inited", _latex_builder)
    app.add_post_transform(LatexBook)
    for node_class in [*NODE_TYPES.values(), unenumerable_node]:
        app.add_node(node_class, override=True, latex=(visit_statement, depart_statement))
    app.add_node(proof_node, override=True, latex=(visit_proof, depart_proof))
    app.add_node(nodes.row, override=True, latex=(visit_row, depart_row))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
