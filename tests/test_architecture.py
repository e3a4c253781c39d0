"""The package's layout rules (ARCHITECTURE.md): layered imports, small modules, one job named per module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "symbreak"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))
#: The size the guide allows ("about 400 lines").
MAX_LINES = 420


def _layers() -> dict[str, int]:
    """Module name → layer number, from the layer table of ARCHITECTURE.md."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    table = text.split("<!-- layers:", 1)[1].split("\n\n", 1)[0]
    layers = {}
    for row in table.splitlines():
        match = re.match(r"\| (\d+) [^|]+\| ([^|]+)\|", row)
        if match:
            for name in re.findall(r"`(\w+)`", match.group(2)):
                layers[name] = int(match.group(1))
    return layers


LAYERS = _layers()


def _module_name(path: Path) -> str:
    """``symbreak.x`` for src/symbreak/x.py and for every module of the subpackage src/symbreak/x/."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    """Every ``symbreak.<module>`` that the file imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] == "symbreak":
                found |= {parts[1]} if len(parts) > 1 else {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            raise AssertionError(f"{path.relative_to(ROOT)}: relative import (imports run one way: absolute)")
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("symbreak.")}
    return found


def test_every_module_has_a_layer():
    names = {_module_name(p) for p in MODULES} - {"__init__"}
    assert names == set(LAYERS), f"not in ARCHITECTURE.md: {names - set(LAYERS)}; gone: {set(LAYERS) - names}"


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "__init__.py" or p.parent != PACKAGE], ids=str)
def test_imports_run_one_way(path):
    own = _module_name(path)
    for imported in _imports(path) - {own}:
        assert imported in LAYERS, f"{path.name} imports symbreak.{imported}, which has no layer"
        assert LAYERS[imported] <= LAYERS[own], (
            f"{path.relative_to(PACKAGE)} (layer {LAYERS[own]}) imports symbreak.{imported} (layer {LAYERS[imported]})"
        )


def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        if path.parent == PACKAGE and path.name == "__init__.py":
            continue
        graph.setdefault(_module_name(path), set()).update(_imports(path) - {_module_name(path)})
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 1:
            raise AssertionError(f"import cycle: {' → '.join([*trail, node])}")
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*trail, node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_size(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)}: {lines} lines (at most about 400)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_first_docstring_line_names_the_job(path):
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and doc.splitlines()[0].strip(), f"{path.relative_to(PACKAGE)}: no docstring naming its job"
    assert len(doc.splitlines()[0]) <= 120, f"{path.relative_to(PACKAGE)}: the first docstring line is not one line"
