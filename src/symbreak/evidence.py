"""The claims-to-evidence index: for every labelled statement of the book, what stands behind it.

The index is read from the repository itself, never typed: the notebooks of ``book/`` and the unit tests of
``tests/``.  For each labelled ``prf:`` statement (definition, theorem, proposition, lemma, corollary, remark) it
records

* its **proof**: a ``prf:proof`` block after it, before the next statement;
* its **symbolic** and **numerical checks**: the visible code cells after a paragraph that starts
  ``**Symbolically`` or ``**Numerically`` (or ``Symbolically,`` / ``Numerically,``), up to the next statement or
  ``##`` section;
* its **unit tests**: the test functions of ``tests/`` whose name or docstring carries the label (hyphens or
  underscores);
* the **figures and tables** whose caption refers to it (``{prf:ref}`label```).

Two MyST comments in a notebook's Markdown (invisible in the book) and a cell tag adjust what the layout says:

* ``% checks of <label>`` — the checks that follow belong to ``<label>`` (the checks of a theorem written after a
  remark that follows it, say);
* a code cell tagged ``not-a-check`` (the set-up of the next experiment, say) is not a check of anything;
* ``% <label>: no <kind>: <reason>`` — ``<label>`` has no evidence of that kind (``proof``, ``symbolic check``,
  ``numerical check``, ``unit test``), for the stated reason.  A definition needs no proof.

:func:`missing` lists the statements that lack a kind of evidence without a reason (a test asserts there are
none); :func:`render` writes the index page, with one more table: the verdicts of the experiments (chapters
13–16), read from the notebooks' stored outputs, where the chapters glued them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from symbreak.plotting import long_table_for_pdf

__all__ = ["KINDS", "EXPERIMENTS", "Statement", "Experiment", "collect", "missing", "experiments", "index_tables"]
__all__ += ["render"]

#: The four kinds of evidence, as a reason names them.
KINDS = ("proof", "symbolic check", "numerical check", "unit test")

_STATEMENT = re.compile(r"^(?::{3,}|`{3,})\{prf:(\w+)\}[ \t]*(.*)\n(?::[\w-]+:.*\n)*?:label: ([\w-]+)", re.M)
_PROOF = re.compile(r"^(?::{3,}|`{3,})\{prf:proof\}", re.M)
_SYMBOLIC = re.compile(r"\*\*Symbolically|^Symbolically,|\. Symbolically,", re.M)
_NUMERICAL = re.compile(r"\*\*Numerically|^Numerically,|\. Numerically,", re.M)
_SECTION = re.compile(r"^## ", re.M)
_CHECKS_OF = re.compile(r"^% checks of ([\w-]+)\s*$", re.M)
_REASON = re.compile(r"^% ([\w-]+): no (proof|symbolic check|numerical check|unit test): (.+)$", re.M)
#: A captioned figure or table: its opening line up to its closing fence (a glued figure's fence, or the ``:::`` of
#: a table or figure, which may hold a fenced block of its own).
_BLOCK = re.compile(r"^```\{glue:figure\}.*?^```[ \t]*$|^:::\{(?:table|figure)\}.*?^:::[ \t]*$", re.M | re.S)


@dataclass
class Statement:
    """One labelled statement and its evidence (cell numbers count from 0 in the notebook's JSON)."""

    label: str
    kind: str
    title: str
    chapter: str
    proof: bool = False
    symbolic: list[int] = field(default_factory=list)
    numerical: list[int] = field(default_factory=list)
    calls: dict[str, list[str]] = field(default_factory=dict)
    tests: dict[str, int] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)

    def has(self, kind: str) -> bool:
        """Whether the statement has evidence of ``kind`` (one of :data:`KINDS`)."""
        if kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
        return {
            "proof": self.proof,
            "symbolic check": bool(self.symbolic),
            "numerical check": bool(self.numerical),
        }.get(kind, bool(self.tests))


def _notebooks(root: Path) -> list[Path]:
    book = Path(root) / "book"
    if not book.is_dir():
        raise ValueError(f"root: expected the repository's root, with a book/ folder, got {str(root)!r}")
    return sorted(book.glob("*.ipynb"))


def _names_called(source: str, public: set[str]) -> list[str]:
    """The package's public names a check cell uses, in order of first use."""
    return list(dict.fromkeys(n for n in re.findall(r"\b([A-Za-z_]\w*)\s*\(", source) if n in public))


#: Modules whose names a check calls on every page (verdict lines, rounding bounds, glue, seeding): left out of the
#: names that say what a check checks.
_PLUMBING = (
    "symbreak.pages",
    "symbreak.report",
    "symbreak.coarse",
    "symbreak.prose",
    "symbreak.repro",
    "symbreak.plotting",
    "symbreak.numerics",
    "symbreak.timing",
    "symbreak.evidence",
)


def _public_names() -> set[str]:
    import importlib
    import pkgutil

    import symbreak

    names: set[str] = set()
    for info in pkgutil.walk_packages(symbreak.__path__, "symbreak."):
        if info.name.startswith(_PLUMBING):
            continue
        names.update(getattr(importlib.import_module(info.name), "__all__", []))
    return names


def _read_notebook(path: Path, public: set[str]) -> list[Statement]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found: dict[str, Statement] = {}
    current: Statement | None = None
    marker: str | None = None
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            events = [(m.start(), "statement", m) for m in _STATEMENT.finditer(source)]
            events += [(m.start(), "proof", m) for m in _PROOF.finditer(source)]
            events += [(m.start(), "symbolic", m) for m in _SYMBOLIC.finditer(source)]
            events += [(m.start(), "numerical", m) for m in _NUMERICAL.finditer(source)]
            events += [(m.start(), "section", m) for m in _SECTION.finditer(source)]
            events += [(m.start(), "checks-of", m) for m in _CHECKS_OF.finditer(source)]
            for _, what, match in sorted(events, key=lambda e: e[0]):
                if what == "statement":
                    current = Statement(match.group(3), match.group(1), match.group(2).strip(), path.stem)
                    found[current.label] = current
                    marker = None
                elif what == "proof" and current is not None:
                    current.proof = True
                elif what == "section":
                    marker = None
                elif what == "checks-of":
                    current = found.get(match.group(1))
                    if current is None:
                        raise ValueError(f"{path.name}: '% checks of {match.group(1)}' before that statement")
                elif what in ("symbolic", "numerical"):
                    marker = what
            for label, kind, reason in _REASON.findall(source):
                if label not in found:
                    raise ValueError(f"{path.name}: a reason for {label!r} before that statement")
                found[label].reasons[kind] = reason.strip()
            for block in _BLOCK.findall(source):
                name = re.search(r"^:name: ([\w-]+)", block, re.M)
                for label in re.findall(r"\{prf:ref\}`([\w-]+)`", block) if name else []:
                    if label in found and name.group(1) not in found[label].shown:
                        found[label].shown.append(name.group(1))
        elif cell["cell_type"] == "code" and current is not None and marker is not None:
            tags = cell.get("metadata", {}).get("tags", [])
            if {"hide-input", "remove-cell", "remove-input", "not-a-check"} & set(tags):
                continue
            getattr(current, marker).append(index)
            current.calls.setdefault(marker, [])
            current.calls[marker] += [n for n in _names_called(source, public) if n not in current.calls[marker]]
    return list(found.values())


def _tests(root: Path, labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """``{label: {test file: number of test functions naming it}}``; a label that is the start of a longer one
    (``prop-rank-one`` of ``prop-rank-one-reach``) is not counted where the longer one matches."""
    counts: dict[str, dict[str, int]] = {label: {} for label in labels}
    for path in sorted((Path(root) / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.startswith("test_"):
                continue
            text = node.name + " " + (ast.get_docstring(node) or "")
            hits = [label for label in labels if re.search(rf"{re.escape(label)}(?![\w-])", text)]
            hits += [
                label for label in labels if re.search(rf"(?<![a-z]){re.escape(label.replace('-', '_'))}", node.name)
            ]
            hits = {h for h in hits if not any(o != h and o.startswith(h) and o in hits for o in hits)}
            for label in hits:
                counts[label][path.name] = counts[label].get(path.name, 0) + 1
    return counts


def collect(root: str | Path) -> list[Statement]:
    """Every labelled statement of the notebooks under ``root/book``, in book order, with its evidence."""
    root = Path(root)
    public = _public_names()
    statements = [s for path in _notebooks(root) for s in _read_notebook(path, public)]
    labels = [s.label for s in statements]
    if len(set(labels)) != len(labels):
        raise ValueError(f"root: a label is defined twice: {sorted({x for x in labels if labels.count(x) > 1})}")
    for statement, tests in zip(statements, _tests(root, labels).values(), strict=True):
        statement.tests = tests
    return statements


def missing(statements: Iterable[Statement]) -> list[str]:
    """``"<label>: no <kind>"`` for every kind of evidence a statement lacks without a stated reason."""
    out = []
    for s in statements:
        for kind in KINDS:
            if s.has(kind) or kind in s.reasons or (kind == "proof" and s.kind == "definition"):
                continue
            out.append(f"{s.label}: no {kind}")
    return out


@dataclass(frozen=True)
class Experiment:
    """A verdict of an experiment: ``chapter`` (notebook stem), what it compares, the glued key that holds the
    verdict (or a text with glued keys in braces, ``"{a} of {b}"``) and the table that shows its numbers."""

    chapter: str
    question: str
    key: str
    table: str


def _contrasts():
    from symbreak.language import PRIMARY_CONTRASTS

    return PRIMARY_CONTRASTS


#: The verdicts of the experiments, each where its chapter glued it.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "13_flat_directions",
        "zero-loss minima whose flat dimension matches the prediction",
        "{flat-zero-cases-match} of {flat-cases}",
        "tbl-flat-zero-loss",
    ),
    Experiment(
        "13_flat_directions",
        "noisy minima, of those that settled, whose flat dimension matches the prediction",
        "{flat-noisy-match} of {flat-noisy-settled}",
        "tbl-flat-noisy",
    ),
    *(
        Experiment("14_training_comparison", f"{question}, {task}", f"{prefix}{key}-{suffix}", table)
        for prefix, table, tasks in (
            ("", "tbl-matched-pairs", (("teacher", "bilinear teacher"), ("odd", "odd target"))),
            ("lr-", "tbl-lowrank-primary", (("quad", "full-rank quadratic"), ("odd", "quadratic + odd"))),
        )
        for suffix, task in tasks
        for key, question in (
            ("p1", "P1: gated against symmetric rank-1, same σ"),
            ("p2", "P2: the bilinear layer against the nonlinear gated forms"),
            ("control", "control: GEGLU and SwiGLU against their symmetrised forms"),
        )
    ),
    Experiment("15_digits", "P1: gated against symmetric rank-1, same σ (digits)", "p1", "tbl-matched-pairs-digits"),
    Experiment(
        "15_digits",
        "P2: the bilinear layer against the nonlinear gated forms (digits)",
        "p2",
        "tbl-matched-pairs-digits",
    ),
    Experiment(
        "15_digits",
        "control: GEGLU and SwiGLU against their symmetrised forms (digits)",
        "control",
        "tbl-matched-pairs-digits",
    ),
    *(
        Experiment(
            "16_language_model",
            f"{c.name}: {c.question} (language model)",
            f"lm-{c.name.lower()}-verdict",
            "tbl-lm-primary",
        )
        for c in _contrasts()
    ),
)


def _glued(path: Path) -> dict[str, str]:
    """The values a notebook glued, as their stored Markdown or plain text."""
    values = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            data = out.get("data", {})
            text = data.get("application/papermill.record/text/markdown") or data.get(
                "application/papermill.record/text/plain"
            )
            if name and text is not None:
                values[name] = "".join(text).strip().strip("'")
    return values


def experiments(root: str | Path) -> list[tuple[Experiment, str]]:
    """Each of :data:`EXPERIMENTS` with its verdict as its chapter's stored outputs give it."""
    glued = {path.stem: _glued(path) for path in _notebooks(Path(root))}
    out = []
    for e in EXPERIMENTS:
        keys = re.findall(r"\{([\w-]+)\}", e.key) or [e.key]
        values = glued.get(e.chapter, {})
        absent = [k for k in keys if k not in values]
        if absent:
            raise ValueError(f"EXPERIMENTS: {e.chapter} glued no {absent}")
        text = e.key if "{" in e.key else "{" + e.key + "}"
        out.append((e, re.sub(r"\{([\w-]+)\}", lambda m, v=values: v[m.group(1)], text)))
    return out


def _parts(root: Path) -> list[tuple[str, list[str]]]:
    """``[(caption, [notebook stems])]``: the parts of ``_toc.yml`` in order."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    return [(p["caption"], [Path(c["file"]).name for c in p.get("chapters", [])]) for p in toc["parts"]]


def _reason(reason: str | None) -> str:
    return f"— {reason}" if reason else "**missing**"


def _cell(statement: Statement, kind: str) -> str:
    reason = statement.reasons.get(kind)
    if kind == "proof":
        if statement.proof:
            return "✓"
        return "— (a definition)" if statement.kind == "definition" and not reason else _reason(reason)
    if kind == "unit test":
        if statement.tests:
            return ", ".join(f"`{name[5:-3]}` ({n})" for name, n in statement.tests.items())
        return _reason(reason)
    cells = statement.symbolic if kind == "symbolic check" else statement.numerical
    if not cells:
        return _reason(reason)
    names = statement.calls.get("symbolic" if kind == "symbolic check" else "numerical", [])[:2]
    count = f"{len(cells)} cell{'s' if len(cells) > 1 else ''}"
    return f"{', '.join(f'`{n}`' for n in names)} ({count})" if names else count


def _table(statements: Sequence[Statement], name: str, caption: str) -> str:
    rows = [
        "| statement | proof | symbolic check | numerical check | unit tests | shown in |",
        "|---|---|---|---|---|---|",
    ]
    for s in statements:
        shown = ", ".join(f"{{numref}}`{n}`" for n in s.shown) or "—"
        title = f" ({s.title})" if s.title else ""
        cells = [f"{{prf:ref}}`{s.label}`{title}", *(_cell(s, k) for k in KINDS), shown]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    table = f":::{{table}} {caption}\n:name: {name}\n:class: evidence-table\n\n" + "\n".join(rows) + "\n:::\n"
    return long_table_for_pdf(table, (6, 4, 6, 6, 5, 5))


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
    """The index page (``book/evidence.md``): one table of statements per part of the book, then the experiments'
    verdicts."""
    root = Path(root)
    statements = collect(root)
    reasons = sum(len(s.reasons) for s in statements)
    out = [
        "(evidence-index)=\n# Claims and evidence\n\n",
        f"Every labelled statement of the book ({len(statements)} in all), with the evidence that stands behind it: "
        "its proof, its symbolic check (sympy), its numerical check (PyTorch, on the layers of the package), the unit "
        "tests that assert it (test functions of the repository's `tests/` whose name or docstring carries its "
        "label, each file `tests/test_<name>.py` by its name, with their number) and the figures and tables that "
        "show it. "
        "A check is named by the package functions its cells call. "
        f"Where a kind of evidence is missing, the reason is stated in its place ({reasons} such reasons); "
        "a definition has no proof. "
        "This page is generated from the notebooks and the tests by `symbreak.evidence` at every build of the book, "
        "and a test fails when it is stale or when a statement lacks evidence without a reason.\n",
    ]
    for caption, name, rows in _grouped(root, statements):
        part, _, name_of_part = caption.partition(":")
        out.append(f"\n## {name_of_part.strip() or part} ({part})\n\n")
        title = f"{part}, {name_of_part.strip()}," if name_of_part else part
        out.append(_table(rows, name, f"The labelled statements of {title} and their evidence."))
    rows = ["| chapter | comparison | verdict | numbers in |", "|---|---|---|---|"]
    for e, verdict in experiments(root):
        number = int(e.chapter.split("_", 1)[0])
        rows.append(f"| {{doc}}`{number} <{e.chapter}>` | {e.question} | {verdict} | {{numref}}`{e.table}` |")
    out.append(
        "\n## The experiments\n\nThe verdicts of the experiments of Part V, as their chapters computed them from "
        "the stored runs (primary comparisons Holm-corrected within their family).\n\n"
        + long_table_for_pdf(
            ":::{table} The experiments' verdicts, with the table that gives their numbers.\n"
            ":name: tbl-evidence-experiments\n:class: evidence-table\n\n" + "\n".join(rows) + "\n:::\n",
            (3, 12, 13, 4),
        )
    )
    return "".join(out)
