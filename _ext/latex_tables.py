"""The PDF's tables (``make pdf``): which break across pages, how wide their columns are, which rows keep together.

Used by ``latex_book`` (its post-transform calls :func:`lay_out` on every table
of the assembled book, and :func:`depart_row` writes a row's end).  Widths are
estimated from the cells' text by ``latex_widths``, since a longtable cannot
size its columns to their contents as tabulary does.
"""

from __future__ import annotations

import re
from itertools import groupby

from docutils import nodes
from latex_widths import PAD, SANS, _chars, _lines, _widths
from sphinx import addnodes
from sphinx.util.texescape import escape
from sphinx.writers.latex import LaTeXTranslator

#: Convention: a table of this many rows or more is a longtable, so that it can break across pages.  A 14-row
#: tabulary (which cannot break) ran 104 pt past the foot of a page whose top a figure had taken.
LONG = 5
#: A longtable of fewer rows than this keeps together where it can: ``\sbkeeptable`` (``_ext/symbreakbook.sty``)
#: moves it to the next page whole where little of this page is left; where more is left, or where the next page
#: cannot hold it, its rows, joined by ``ROW_PENALTY``, break.  The penalty is small: at 5000 a break before the
#: table (after a page with some stretch) cost less than one inside it, and Tables 3.1 and 13.3 went to the next page
#: whole with a third of this one left blank.
SHORT = 15
ROW_PENALTY = 100
#: Between the rows of a group of such a table (:func:`_keep_groups`), which break only where no other row can.
GROUP_PENALTY = 9000


def _grouped_widths(table: nodes.table, n: int) -> tuple[list[float], float]:
    """:func:`_widths` of a table whose adjacent headings that open with the same words and a colon ("bilinear
    teacher: p (Holm)", "bilinear teacher: verdict") are set under one spanning heading of those words
    (:func:`_group_headings`), where the spanned columns hold it on one line; else of the table as it was."""
    groups = _group_headings(table)
    shares, pad = _widths(table, n)
    if groups and all(SANS * _chars(label) + pad <= sum(shares[a : b + 1]) for a, b, label, _ in groups):
        next(iter(table.findall(nodes.thead)))[0]["sb_groups"] = [(a, b, label) for a, b, label, _ in groups]
        return shares, pad
    for _, _, _, texts in groups:  # the headings as they were
        for old, new in texts:
            new.parent.replace(new, old)
    return _widths(table, n) if groups else (shares, pad)


HEADING_PREFIX = re.compile(r"^\s*([^:]+?):\s+")


def _group_headings(table: nodes.table) -> list[tuple[int, int, str, list[tuple[nodes.Text, nodes.Text]]]]:
    """The runs of two or more adjacent headings of a table's one heading row whose text opens with the same words
    and a colon, as (first column, last column, those words, each heading's (old, new) text): each heading loses
    those words.  Table 14.11's six headings of three lines ("full-rank quadratic: Δ ± 95 %", "full-rank
    quadratic: p (Holm)", …) had left its pairs' names two lines each."""
    thead = next(iter(table.findall(nodes.thead)), None)
    if thead is None or len(thead.children) != 1:
        return []
    entries = list(thead[0].children)
    if any(entry.get("morecols") or entry.get("morerows") for entry in entries):
        return []
    firsts, prefixes = [], []
    for entry in entries:
        first = next(iter(entry.findall(nodes.Text)), None)
        plain = first is not None and not isinstance(first.parent, (nodes.math, nodes.literal))
        match = HEADING_PREFIX.match(first.astext()) if plain else None
        firsts.append(first)
        prefixes.append(match[1] if match else None)
    groups = []
    for prefix, run in groupby(range(len(entries)), key=lambda i: prefixes[i]):
        run = list(run)
        if prefix is not None and len(run) > 1:
            texts = []
            for i in run:
                old = firsts[i]
                new = nodes.Text(HEADING_PREFIX.sub("", old.astext(), count=1))
                old.parent.replace(old, new)
                texts.append((old, new))
            groups.append((run[0], run[-1], prefix, texts))
    return groups


def lay_out(table: nodes.table, parent: nodes.Element) -> None:
    """A table of ``LONG`` rows or more breaks across pages (longtable), not float to the next one (one of fewer than
    ``SHORT`` rows only where it must); the columns of numbers that the HTML right-aligns are right-aligned here too.

    A longtable cannot size its columns to their contents as the default
    (tabulary) does, and tabulary cannot right-align a column of paragraphs: such a table's columns get
    widths (:func:`_widths`) in proportion to their contents, and a column whose body cells are all
    right-aligned in the HTML (``text-right``, from a Markdown ``---:``) is ``\\raggedleft``, the others
    ``\\raggedright`` (justified, a pair's name had wide gaps); a table's own ``tabularcolumns``
    directive keeps its layout (and a tabulary, if it names tabulary's columns ``L``, ``C``, ``R``, ``J``).
    Tabulary had sized a column by its heading, so that the name of a compared pair took three lines beside
    columns of short numbers.
    """
    body = next(iter(table.findall(nodes.tbody)), None)
    if body is None:
        return
    _join_units(table)
    for entry in body.findall(nodes.entry):
        if all(isinstance(c, nodes.paragraph) and not c.children for c in entry.children):
            del entry.children[:]  # an empty paragraph set an empty line (Table 13.5's blank row)
    specs = list(table.findall(nodes.colspec))
    right = [_all_right(body, col) for col in range(len(specs))]
    at = parent.index(table)
    own = at > 0 and isinstance(parent[at - 1], addnodes.tabular_col_spec)
    tabulary = own and bool(re.search(r"[LCRJ]", parent[at - 1]["spec"]))  # longtable has no L, C, R, J
    long = len(body.children) >= LONG and not tabulary
    if not long and (own or not any(right)):
        return
    if long:
        _keep_groups(body)
    together = long and len(body.children) < SHORT
    if together:
        rows = list(body.children)
        for row in rows[:-1]:
            row["classes"].append("keep-together")
        for row in {rows[0], rows[-2]}:  # where it breaks, not after its first row nor before its last
            row["classes"].append("keep-firm")
    shares, pad = _grouped_widths(table, len(specs))
    widths = [round(10 * width) for width in shares]
    for spec, width in zip(specs, widths, strict=True):
        spec["colwidth"] = width  # Sphinx writes \X{colwidth}{total} in integers
    classes = [c for c in table["classes"] if c != "colwidths-auto"]
    table["classes"] = [*classes, *(["longtable"] if long else []), "colwidths-given"]
    if (long or any(right)) and not own:  # a justified cell of a narrow column had wide gaps
        total = sum(widths)
        ragged = {True: r">{\raggedleft\arraybackslash}", False: r">{\raggedright\arraybackslash}"}
        columns = [ragged[r] + rf"\X{{{w}}}{{{total}}}" for w, r in zip(widths, right, strict=True)]
        parent.insert(at, addnodes.tabular_col_spec(spec="".join(columns)))
    if together:  # moves to the next page whole where this one cannot hold it
        _before(parent, table, raw_latex(rf"\sbkeeptable{{{min(_lines(table, shares, pad), 40)}\baselineskip}}"))
    if pad != PAD:
        _before(parent, table, raw_latex(rf"\setlength{{\tabcolsep}}{{{pad * 4.8 / 2:.0f}pt}}"))
        parent.insert(parent.index(table) + 1, raw_latex(r"\setlength{\tabcolsep}{6pt}"))


#: Short units a line must not break inside (a no-break space joins their words): "± 95 %", "Δ vs", "5 %", and a
#: short bracket, "(σ = id)".  A heading had set "test error ± 95 / %" and "his Δ / vs / ReLU", and a pair's
#: name "tanh gating − bilinear (σ / = id)".
UNITS = re.compile(r"(?<=[±Δ]) (?=\w{1,3}\b)|(?<=\S) (?=%)")
BRACKET = re.compile(r"[(\[][^()\[\]]{1,10}[)\]]")


def _join_units(table: nodes.table) -> None:
    """Join the words of every short unit (``UNITS``, ``BRACKET``) of a table's cells outside code and maths by
    no-break spaces (which Sphinx writes as such into the LaTeX)."""
    for text in list(table.findall(nodes.Text)):
        if isinstance(text.parent, (nodes.math, nodes.literal, nodes.raw)):
            continue
        value = text.astext()
        joined = BRACKET.sub(lambda m: m[0].replace(" ", "\u00a0"), UNITS.sub("\u00a0", value))
        if joined != value:
            text.parent.replace(text, nodes.Text(joined))


def _before(parent: nodes.Element, table: nodes.table, node: nodes.Node) -> None:
    """Insert ``node`` just before ``table`` and its ``tabularcolumns``, if it has one."""
    at = parent.index(table)
    parent.insert(at - 1 if at > 0 and isinstance(parent[at - 1], addnodes.tabular_col_spec) else at, node)


def raw_latex(tex: str) -> nodes.raw:
    """A node that writes ``tex`` (and a line end) into the LaTeX output only."""
    return nodes.raw("", tex + "\n", format="latex")


def _all_right(body: nodes.tbody, col: int) -> bool:
    """Whether every body cell of column ``col`` is right-aligned in the HTML (class ``text-right``)."""
    cells = [row.children[col] for row in body.children if len(row.children) > col]
    return bool(cells) and all("text-right" in cell.get("classes", []) for cell in cells)


def _keep_groups(body: nodes.tbody, most: int = 20) -> None:
    """Rows of a group (from a label row, whose cells but the first are empty, to the next) keep together on a page:
    each row of a group but its last is ``keep-with-next`` (:func:`depart_row`).  A long table broke Table 8.4's
    "symmetric rank-1" group after two rows, and its rows on the next page had no label.  A group of more than
    ``most`` rows (a page holds about 40) may break.  So do consecutive rows that name the same thing first."""
    rows = list(body.children)
    labels = [i for i, row in enumerate(rows) if row.children and not any(c.children for c in row.children[1:])]
    ends = [*labels[1:], len(rows)] if labels else []
    for start, end in zip(labels, ends, strict=True):
        for row in rows[start : end - 1] if end - start <= most else []:
            row["classes"].append("keep-with-next")
    runs = [list(run) for _, run in groupby(rows, key=lambda row: row.children[0].astext() if row.children else "")]
    for row in (row for run in runs if 1 < len(run) <= most and run[0].astext() for row in run[:-1]):  # Table 11.1
        row["classes"].append("keep-with-next")


def visit_row(self, node: nodes.row) -> None:
    """Sphinx's row start; before a heading row with ``sb_groups`` (:func:`_grouped_widths`), a row of the spanning
    headings, each centred over its columns and ruled below (booktabs' ``\\cmidrule``)."""
    groups = node.get("sb_groups", [])
    if groups:
        cells, col = [], 0
        for first, last, label in groups:
            cells += [""] * (first - col)
            label = escape(label, "xelatex")
            cells.append(rf"\multicolumn{{{last - first + 1}}}{{c}}{{\sphinxstyletheadfamily {label}}}")
            col = last + 1
        cells += [""] * (self.table.colcount - col)
        rules = "".join(rf"\cmidrule(lr){{{first + 1}-{last + 1}}}" for first, last, _ in groups)
        self.body.append("&".join(cells) + "\\\\" + rules + "\n")
    LaTeXTranslator.visit_row(self, node)


def row_break(classes: list[str]) -> str:
    """What follows a row's end: ``\\nobreak`` (no page break after it) for a ``keep-with-next`` row of a long table
    and for a ``keep-firm`` row (the first and the last but one of a short table: a table broken after its first row
    or before its last had left one row alone on a page, Table 13.3's last); ``\\penalty…`` for the other rows of a
    ``keep-together`` table (``ROW_PENALTY``), high inside a group (``GROUP_PENALTY``: only where no other row can);
    "" else."""
    group, together = "keep-with-next" in classes, "keep-together" in classes
    if "keep-firm" in classes or (group and not together):
        return "\\nobreak"
    return "\\penalty" + str(GROUP_PENALTY if group else ROW_PENALTY) if together else ""


def depart_row(self, node: nodes.row) -> None:
    """Sphinx's row end followed by ``\\noalign{…}`` with :func:`row_break`'s penalty.

    Longtable's own ``\\\\*`` does not hold in Sphinx's tables (a ``\\\\*`` row of Table 10.6 still ended a page);
    an explicit ``\\nobreak`` between the rows does."""
    LaTeXTranslator.depart_row(self, node)
    penalty = row_break(node["classes"])
    if penalty:
        at = max(i for i, piece in enumerate(self.body) if piece == "\\\\\n")
        self.body[at] = "\\\\\n\\noalign{" + penalty + "}\n"
