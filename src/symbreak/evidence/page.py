"""The index page ``book/evidence.md``: one table of statements per part of the book, notes, the experiments' verdicts.

A table's row is a line of ✓ and names; where a kind of evidence is missing, its cell links to a note after the
table that states the reason.  :func:`linked` writes every label a reason names as the MyST role of its kind, so
that the book shows its number ("Proposition 6.2", "Fig. 1.1", "(1.1)") with a link.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from symbreak.evidence.notebooks import KINDS, Statement, book_labels, collect
from symbreak.evidence.runs import experiments
from symbreak.plotting import long_table_for_pdf

__all__ = ["linked", "index_tables", "render", "write"]

#: A label as the book spells them (``prop-exchange-defect``, ``tbl-diagonal-gap``, ``eq-kv-memory``): a prefix of
#: a statement, figure, table or equation, not inside a word, a file name or a Python name.
_LABEL = re.compile(r"(?<![\w`./-])((?:def|thm|prop|lem|cor|rem|fig|tbl|eq)-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)(?![\w-])")
#: Text that is left as it is: code, a role with its target, inline maths.
_PROTECTED = re.compile(r"(?:\{[\w:-]+\})?`[^`]*`|\$[^$]*\$")
#: A file of the repository or a test's name in a reason's prose (``tests/test_claims_part1.py``,
#: ``test_rem_kv_vs_softmax_*``), set as code so that neither edition reads it as a word (or hyphenates it).
_CODE = re.compile(r"(?<![\w`./-])(?:[\w-]+/)*[\w-]+\.(?:py|md|json|toml)\b|(?<![\w`])test_\w+\*?")
_ROLE = re.compile(r"\{(prf:ref|numref|eq)\}`(?:[^`<]*<)?([\w-]+)>?`")
_HEAD = ("statement", "proof", "symbolic", "numerical", "tests", "shown in")


def linked(text: str, labels: Mapping[str, str], where: str = "text") -> str:
    """``text`` with every label it names written as a reference of its kind (``{prf:ref}`` for a statement,
    ``{numref}`` for a figure or table, ``{eq}`` for an equation; ``labels`` as :func:`book_labels` gives them),
    and every file name and test name it mentions as code.

    A label that names nothing of the book, or a reference of the wrong kind, raises ``ValueError`` naming
    ``where``: the page never prints a raw label."""

    def plain(part: str) -> str:
        def role(match: re.Match) -> str:
            label = match.group(1)
            if label not in labels:
                raise ValueError(f"{where}: {label!r} names no statement, figure, table or equation of the book")
            return f"{{{labels[label]}}}`{label}`"

        return _CODE.sub(lambda code: f"`{code.group(0)}`", _LABEL.sub(role, part))

    out, last = [], 0
    for match in _PROTECTED.finditer(text):
        ref = _ROLE.fullmatch(match.group(0))
        if ref and labels.get(ref.group(2)) != ref.group(1):
            raise ValueError(f"{where}: {match.group(0)} refers to no {ref.group(1)} target of the book")
        out += [plain(text[last : match.start()]), match.group(0)]
        last = match.end()
    return "".join([*out, plain(text[last:])])


def _note_target(statement: Statement, kind: str) -> str:
    return f"evidence-note-{statement.label}-{kind.replace(' ', '-')}"


def _cell(statement: Statement, kind: str, notes: list[tuple[Statement, str]]) -> str:
    """The cell of ``kind``: ✓, the names of the check's functions and its cell count, the test files; or, where
    the evidence is missing, a link to the note that says why (appended to ``notes``)."""
    if statement.has(kind):
        if kind == "proof":
            return "✓"
        if kind == "unit test":
            return ", ".join(f"`{name[5:-3]}` ({n})" for name, n in statement.tests.items())
        marker = "symbolic" if kind == "symbolic check" else "numerical"
        cells = getattr(statement, marker)
        names = statement.calls.get(marker, [])[:2]
        count = f"{len(cells)} cell{'s' if len(cells) > 1 else ''}"
        return f"{', '.join(f'`{n}`' for n in names)} ({count})" if names else count
    if kind in statement.reasons:
        notes.append((statement, kind))
        return f"— {{ref}}`note {len(notes)} <{_note_target(statement, kind)}>`"
    return "— (a definition)" if kind == "proof" and statement.kind == "definition" else "**missing**"


#: Before a heading that a long table follows: in the PDF the heading starts a new page unless the table's first
#: rows fit below it (a longtable that does not fit moves on and left its heading alone at a page's foot).
_KEEP_WITH_TABLE = "\n```{raw} latex\n\\Needspace{12\\baselineskip}\n```\n"


def _table(statements: Sequence[Statement], name: str, caption: str, labels: Mapping[str, str]) -> str:
    """One index table, and after it the notes of its missing evidence, each a paragraph with its own target."""
    rows = ["| " + " | ".join(_HEAD) + " |", "|---" * len(_HEAD) + "|"]
    notes: list[tuple[Statement, str]] = []
    for s in statements:
        shown = ", ".join(f"{{numref}}`{n}`" for n in s.shown) or "—"
        title = f" ({s.title})" if s.title else ""
        cells = [f"{{prf:ref}}`{s.label}`{title}", *(_cell(s, k, notes) for k in KINDS), shown]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    table = f":::{{table}} {caption}\n:name: {name}\n:class: evidence-table\n\n" + "\n".join(rows) + "\n:::\n"
    out = [long_table_for_pdf(table, (6, 4, 6, 7, 6, 4))]
    if notes:
        out.append(f"\nThe notes of {{numref}}`{name}`: why a kind of evidence is missing.\n")
    for number, (s, kind) in enumerate(notes, 1):
        reason = linked(s.reasons[kind].rstrip("."), labels, f"the reason of {s.label} for no {kind}")
        out.append(f"\n({_note_target(s, kind)})=\n**Note {number}.** {{prf:ref}}`{s.label}`, {kind}: {reason}.\n")
    return "".join(out)


def _parts(root: Path) -> list[tuple[str, list[str]]]:
    """``[(caption, [notebook stems])]``: the parts of ``_toc.yml`` in order."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    return [(p["caption"], [Path(c["file"]).name for c in p.get("chapters", [])]) for p in toc["parts"]]


def _grouped(root: Path, statements: Sequence[Statement]) -> list[tuple[str, str, list[Statement]]]:
    """``[(part caption, table name, statements)]``: the statements of each part of the book that has any."""
    by_chapter: dict[str, list[Statement]] = {}
    for s in statements:
        by_chapter.setdefault(s.chapter, []).append(s)
    groups = []
    for caption, chapters in _parts(root):
        rows = [s for chapter in chapters for s in by_chapter.get(chapter, [])]
        if rows:
            groups.append((caption, f"tbl-evidence-{len(groups) + 1}", rows))
    return groups


def index_tables(root: str | Path, statements: Sequence[Statement] | None = None) -> dict[str, str]:
    """``{label: name of the index table that lists it}``, for the link from each statement to its evidence."""
    root = Path(root)
    statements = collect(root) if statements is None else statements
    return {s.label: name for _, name, rows in _grouped(root, statements) for s in rows}


def render(root: str | Path) -> str:
    """The index page (``book/evidence.md``): one table of statements per part of the book, each with the notes
    of its missing evidence, then the experiments' verdicts."""
    root = Path(root)
    statements = collect(root)
    labels = book_labels(root)
    reasons = sum(len(s.reasons) for s in statements)
    out = [
        # no page contents on the right: the tables take the width (at 1280 px they scrolled sideways beside it)
        "---\nhtml_theme.sidebar_secondary.remove: true\n---\n\n(evidence-index)=\n# Claims and evidence\n\n",
        f"Every labelled statement of the book ({len(statements)} in all), with the evidence that stands behind it: "
        "its proof, its symbolic check (sympy), its numerical check (PyTorch, on the layers of the package), the unit "
        "tests that assert it (the test functions in `tests/` whose name or docstring carries its label, counted "
        "per file: `layers (2)` means two tests in `tests/test_layers.py`; tests of how the book displays a result "
        "are not counted) and the figures and tables that "
        "show it: those whose caption refers to the statement or to an equation it numbers, those the statement "
        "refers to, and those that stand among its checks. "
        "A check is named by the package functions its cells call. "
        "Where a kind of evidence is missing, its cell links to a note after the table that states the reason "
        f"({reasons} such notes); a definition has no proof. "
        "This page is generated from the notebooks and the tests by `symbreak.evidence` at every build of the book, "
        "and a test fails when it is stale or when a statement lacks evidence without a reason.\n",
    ]
    for caption, name, rows in _grouped(root, statements):
        part, _, name_of_part = caption.partition(":")
        out.append(_KEEP_WITH_TABLE + f"\n## {name_of_part.strip() or part} ({part})\n\n")
        title = f"{part}, {name_of_part.strip()}," if name_of_part else part
        out.append(_table(rows, name, f"The labelled statements of {title} and their evidence.", labels))
    rows = ["| chapter | comparison | verdict | numbers in |", "|---|---|---|---|"]
    for e, verdict in experiments(root):
        number = int(e.chapter.split("_", 1)[0])
        rows.append(f"| {{doc}}`{number} <{e.chapter}>` | {e.question} | {verdict} | {{numref}}`{e.table}` |")
    out.append(
        _KEEP_WITH_TABLE
        + "\n## The experiments\n\nThe verdicts of the experiments of Part V, as their chapters computed them from "
        "the stored runs (primary comparisons Holm-corrected within their family).\n\n"
        + long_table_for_pdf(
            ":::{table} The experiments' verdicts, with the table that gives their numbers.\n"
            ":name: tbl-evidence-experiments\n:class: evidence-table\n\n" + "\n".join(rows) + "\n:::\n",
            (3, 12, 13, 4),
        )
    )
    return "".join(out)


def write(root: str | Path) -> bool:
    """Write ``root/book/evidence.md`` from :func:`render`; whether its text changed."""
    page = Path(root) / "book" / "evidence.md"
    text = render(root)
    if page.exists() and page.read_text(encoding="utf-8") == text:
        return False
    page.write_text(text, encoding="utf-8")
    return True
