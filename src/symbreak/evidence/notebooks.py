"""The evidence of every labelled statement, read from the notebooks of ``book/`` and the tests of ``tests/``.

:func:`collect` reads, for each labelled ``prf:`` statement, its proof, its symbolic and numerical checks (with the
package functions they call), its unit tests and the figures and tables that show it (the rules are in the
docstring of :mod:`symbreak.evidence`); :func:`missing` lists the kinds of evidence a statement lacks without a
stated reason; :func:`book_labels` names every label a text of the book can refer to, with the MyST role that
refers to it.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KINDS", "Statement", "collect", "missing", "book_labels"]

#: The four kinds of evidence, as a reason names them.
KINDS = ("proof", "symbolic check", "numerical check", "unit test")

_STATEMENT = re.compile(r"^(:{3,}|`{3,})\{prf:(\w+)\}[ \t]*(.*)\n(?::[\w-]+:.*\n)*?:label: ([\w-]+)", re.M)
_PROOF = re.compile(r"^(?::{3,}|`{3,})\{prf:proof\}", re.M)
_SYMBOLIC = re.compile(r"\*\*Symbolically|^Symbolically,|\. Symbolically,", re.M)
_NUMERICAL = re.compile(r"\*\*Numerically|^Numerically,|\. Numerically,", re.M)
_SECTION = re.compile(r"^## ", re.M)
_CHECKS_OF = re.compile(r"^% checks of ([\w-]+)\s*$", re.M)
_REASON = re.compile(r"^% ([\w-]+): no (proof|symbolic check|numerical check|unit test): (.+)$", re.M)
#: A captioned figure or table: its opening line up to its closing fence (a glued figure's fence, or the ``:::`` of
#: a table or figure, which may hold a fenced block of its own).
_BLOCK = re.compile(r"^```\{glue:figure\}.*?^```[ \t]*$|^:::\{(?:table|figure)\}.*?^:::[ \t]*$", re.M | re.S)
_NAME = re.compile(r"^:name: ([\w-]+)", re.M)
#: What a text refers to: a statement (``{prf:ref}``), a figure or table (``{numref}``, also as ``text <name>``),
#: a numbered equation (``{eq}``), and the equations a text numbers (``$$ … $$ (label)``).
_PRF_REF = re.compile(r"\{prf:ref\}`(?:[^`<]*<)?([\w-]+)>?`")
_NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?([\w-]+)>?`")
_EQ_REF = re.compile(r"\{eq\}`([\w-]+)`")
_EQ_LABEL = re.compile(r"\$\$[ \t]*\(([\w-]+)\)|^(?:`{3,}|:{3,})\{math\}.*\n(?::[\w-]+:.*\n)*?:label: ([\w-]+)", re.M)
_FIGURE_OR_TABLE = re.compile(
    r"^(?:`{3,}|:{3,})\{(?:figure|table|glue:figure|list-table|csv-table)\}.*\n(?::[\w-]+:.*\n)*?:name: ([\w-]+)", re.M
)


@dataclass
class Statement:
    """One labelled statement and its evidence (cell numbers count from 0 in the notebook's JSON); ``equations``
    and ``cites`` are the equations its text numbers and the figures and tables its text refers to."""

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
    equations: list[str] = field(default_factory=list)
    cites: list[str] = field(default_factory=list)

    def has(self, kind: str) -> bool:
        """Whether the statement has evidence of ``kind`` (one of :data:`KINDS`)."""
        if kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
        return {
            "proof": self.proof,
            "symbolic check": bool(self.symbolic),
            "numerical check": bool(self.numerical),
        }.get(kind, bool(self.tests))


@dataclass
class _Block:
    """A named figure or table: the statements and equations its caption refers to, and the statement whose checks
    it stands among."""

    name: str
    statements: list[str]
    equations: list[str]
    among_checks_of: str | None


def _notebooks(root: Path) -> list[Path]:
    book = Path(root) / "book"
    if not book.is_dir():
        raise ValueError(f"root: expected the repository's root, with a book/ folder, got {str(root)!r}")
    return sorted(book.glob("*.ipynb"))


def _dotted(node: ast.expr) -> list[str] | None:
    """``["symbolic", "singular_query"]`` for the expression ``symbolic.singular_query``; None for anything else
    (``REGISTRY[n].sym`` is a call of an entry, not of a name)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _call_chains(source: str) -> list[list[str]]:
    """The dotted names that ``source`` calls, in the order of the source; from its syntax tree, so that a string or
    a comment is no call (a printed label "x sym(W) xᵀ" had named ``approximation.sym``).  A line of IPython is
    skipped; a cell that is not Python calls nothing."""
    text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    return [chain for call in calls if (chain := _dotted(call.func)) is not None]


def _names_called(source: str, public: set[str], imported: dict[str, str] | None = None) -> list[str]:
    """The package's public functions and classes a check cell calls, in order of first use: first those called by
    name (``symbolic.singular_query(…)`` names ``singular_query``), then a class whose method is called
    (``GlobalQueryMLP.from_weights(…)`` names ``GlobalQueryMLP``), which says less about what the cell checks.

    With ``imported`` (:func:`_imports`: the notebook's names bound by an import from ``symbreak``), only a call
    through such a name counts: ``memory(x)`` calls a notebook's variable ``memory = KeyValueMLP(…)``, not the
    package's ``symbreak.costs.memory``; an imported name is read as what it imports (``as`` aliases undone)."""
    chains = _call_chains(source)
    if imported is not None:
        chains = [[imported[chain[0]], *chain[1:]] for chain in chains if chain[0] in imported]
    called = [chain[-1] for chain in chains if chain[-1] in public]
    through = [n for chain in chains for n in chain[:-1] if n in public]
    return list(dict.fromkeys(called + through))


def _imports(sources: Iterable[str]) -> dict[str, str]:
    """``{name bound: name imported}`` for every import from ``symbreak`` in the code cells ``sources``, outside the
    plumbing modules (:data:`_PLUMBING`): ``from symbreak import KeyValueMLP, symbolic`` binds ``KeyValueMLP`` and
    the module ``symbolic``; ``import symbreak.layers as L`` binds ``L``.  A line of IPython (``%``, ``!``) is
    skipped; a cell that is not Python binds nothing."""
    bound: dict[str, str] = {}
    for source in sources:
        text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "symbreak" or node.module.startswith(_PLUMBING):
                    continue
                for alias in node.names:
                    if not f"{node.module}.{alias.name}".startswith(_PLUMBING):
                        bound[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "symbreak" and not alias.name.startswith(_PLUMBING):
                        name = alias.asname or alias.name.split(".")[0]
                        bound[name] = alias.name.rsplit(".", 1)[-1] if alias.asname else name
    return bound


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
#: Functions of the other modules that only name things for the reader: an activation's book name, the registry's
#: ids (``from symbreak.activations import names as activation_names`` lists the activations a check runs over).
_NAMING = frozenset({"display_name", "names"})


def _public_names() -> set[str]:
    """The public functions and classes of the package's modules (not its constants, symbols or tables: a sympy
    symbol ``R`` or a size ``D`` written ``R(…)`` in a cell is not a function of the package)."""
    import importlib
    import pkgutil

    import symbreak

    names: set[str] = set()
    for info in pkgutil.walk_packages(symbreak.__path__, "symbreak."):
        if info.name.startswith(_PLUMBING):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            value = getattr(module, name, None)
            if (inspect.isroutine(value) or inspect.isclass(value)) and name not in _NAMING:
                names.add(name)
    return names


def _body(source: str, match: re.Match) -> str:
    """The text of a statement, from its opening fence to its closing one."""
    close = re.compile(rf"^{re.escape(match.group(1))}[ \t]*$", re.M).search(source, match.end())
    return source[match.end() : close.start() if close else len(source)]


def _read_notebook(path: Path, public: set[str]) -> tuple[list[Statement], list[_Block]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    imported = _imports("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    found: dict[str, Statement] = {}
    blocks: list[_Block] = []
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
            events += [(m.start(), "block", m) for m in _BLOCK.finditer(source)]
            for _, what, match in sorted(events, key=lambda e: e[0]):
                if what == "statement":
                    current = Statement(match.group(4), match.group(2), match.group(3).strip(), path.stem)
                    body = _body(source, match)
                    current.equations = [a or b for a, b in _EQ_LABEL.findall(body)]
                    current.cites = list(dict.fromkeys(_NUMREF.findall(body)))
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
                elif what == "block" and (name := _NAME.search(match.group(0))):
                    text = match.group(0)
                    owner = current.label if current is not None and marker is not None else None
                    blocks.append(_Block(name.group(1), _PRF_REF.findall(text), _EQ_REF.findall(text), owner))
            for label, kind, reason in _REASON.findall(source):
                if label not in found:
                    raise ValueError(f"{path.name}: a reason for {label!r} before that statement")
                found[label].reasons[kind] = reason.strip()
        elif cell["cell_type"] == "code" and current is not None and marker is not None:
            tags = cell.get("metadata", {}).get("tags", [])
            if {"hide-input", "remove-cell", "remove-input", "not-a-check"} & set(tags):
                continue
            getattr(current, marker).append(index)
            current.calls.setdefault(marker, [])
            names = _names_called(source, public, imported)
            current.calls[marker] += [n for n in names if n not in current.calls[marker]]
    return list(found.values()), blocks


def _shown(statement: Statement, blocks: Sequence[_Block]) -> list[str]:
    """The figures and tables that show ``statement``, in book order: those whose caption refers to it or to an
    equation its text numbers, those its text refers to, and those that stand among its checks."""
    return [
        b.name
        for b in blocks
        if statement.label in b.statements
        or set(statement.equations) & set(b.equations)
        or b.name in statement.cites
        or b.among_checks_of == statement.label
    ]


#: Test files of how the book shows its results (the presentation layer, the built book), not of what a statement
#: says: a label there names an example (``test_pdf.py`` checks that ``thm-exchange`` is shown in its title bar,
#: ``test_pages_ch06.py`` how its check's output is laid out), which is no evidence of the statement.
_PRESENTATION_TESTS = re.compile(
    r"test_(?:pages_\w+|report|prose|coarse|plotting_\w+|figures|evidence|citation|pdf|browser|html_\w+"
    r"|phone_maths|inline_math|latex_\w+|accessibility|api_reference|notebooks|stored_outputs)\.py"
)


def _tests(root: Path, labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """``{label: {test file: number of test functions naming it}}``, over the test files of what the package computes
    (not :data:`_PRESENTATION_TESTS`); a label that is the start of a longer one (``prop-rank-one`` of
    ``prop-rank-one-reach``) is not counted where the longer one matches."""
    counts: dict[str, dict[str, int]] = {label: {} for label in labels}
    for path in sorted((Path(root) / "tests").glob("test_*.py")):
        if _PRESENTATION_TESTS.fullmatch(path.name):
            continue
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
    statements: list[Statement] = []
    blocks: list[_Block] = []
    for path in _notebooks(root):
        found, named = _read_notebook(path, public)
        statements += found
        blocks += named
    labels = [s.label for s in statements]
    if len(set(labels)) != len(labels):
        raise ValueError(f"root: a label is defined twice: {sorted({x for x in labels if labels.count(x) > 1})}")
    for statement, tests in zip(statements, _tests(root, labels).values(), strict=True):
        statement.tests = tests
        statement.shown = _shown(statement, blocks)
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


def _markdown(root: Path) -> list[str]:
    """The Markdown of the book: the notebooks' Markdown cells and the pages ``book/*.md`` that are not generated
    from the book itself (the index and the API reference)."""
    texts = [
        "".join(cell["source"])
        for path in _notebooks(root)
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "markdown"
    ]
    pages = sorted(p for p in (root / "book").glob("*.md") if p.name not in ("evidence.md", "api.md"))
    return texts + [p.read_text(encoding="utf-8") for p in pages]


def book_labels(root: str | Path) -> dict[str, str]:
    """``{label: role}`` for every label of the book a text can refer to: ``prf:ref`` for a statement, ``numref``
    for a named figure or table, ``eq`` for a numbered equation."""
    labels: dict[str, str] = {}
    for text in _markdown(Path(root)):
        labels.update({m.group(4): "prf:ref" for m in _STATEMENT.finditer(text)})
        labels.update({name: "numref" for name in _FIGURE_OR_TABLE.findall(text)})
        labels.update({a or b: "eq" for a, b in _EQ_LABEL.findall(text)})
    return labels
