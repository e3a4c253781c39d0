"""The API reference (book/api.md): every module of the package documented, in the order of its layers
(ARCHITECTURE.md), and every public name (each module's ``__all__``) with its entry in the built page."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from pathlib import Path

import pytest
from tests.test_architecture import LAYERS

import symbreak

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "book" / "api.md").read_text()
HTML = Path(os.environ.get("BOOK_BUILD", ROOT / "_build")) / "html" / "book" / "api.html"
#: Every module automodule'd by the page, in order; the documented ones (with members) first among equals.
DOCUMENTED = re.findall(r"\.\. automodule:: (\S+)\n   :members:", API)
LISTED = re.findall(r"\.\. automodule:: (\S+)", API)
PUBLIC_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(symbreak.__path__, "symbreak.")
    if not m.name.rsplit(".", 1)[1].startswith("_")
)


def test_the_page_is_the_generated_one():
    """book/api.md is what _ext/api_page.py generates from the package and ARCHITECTURE.md (the build rewrites it)."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from api_page import render

    assert API == render(), "book/api.md is stale: build the book (make book) and commit the page"


def test_every_module_of_the_package_is_on_the_page():
    assert set(LISTED) == set(PUBLIC_MODULES), (
        f"missing: {sorted(set(PUBLIC_MODULES) - set(LISTED))}; "
        f"not in the package: {sorted(set(LISTED) - set(PUBLIC_MODULES))}"
    )
    assert len(LISTED) == len(set(LISTED)), "a module is on the page twice"


def test_the_page_follows_the_layers():
    """The modules with members come in the order of the layer table; each under its layer's heading."""
    top = [name.split(".")[1] for name in DOCUMENTED]
    assert sorted(set(top)) == sorted(LAYERS), "every top-level module and subpackage of the layer table is documented"
    layer_of = [LAYERS[name] for name in top]
    assert layer_of == sorted(layer_of), "the page's modules are out of layer order"
    for number in sorted(set(LAYERS.values())):
        assert re.search(rf"^## Layer {number}: ", API, re.M), f"no heading for layer {number}"


def _public(module_name: str) -> list[str]:
    return [n for n in getattr(importlib.import_module(module_name), "__all__", []) if not n.startswith("__")]


@pytest.mark.skipif(not HTML.exists(), reason=f"the book is not built ({HTML} missing): API page test skipped")
@pytest.mark.parametrize("module_name", DOCUMENTED)
def test_every_public_name_has_its_entry(module_name):
    ids = set(re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', HTML.read_text()))
    missing = [n for n in _public(module_name) if f"{module_name}.{n}" not in ids]
    assert not missing, f"{module_name}: public names without an entry on the API page: {missing}"


@pytest.mark.skipif(not HTML.exists(), reason=f"the book is not built ({HTML} missing): API page test skipped")
def test_the_top_level_names_are_documented_where_they_are_defined():
    """``from symbreak import GatedMLP`` and the rest: each has its entry under the module that defines it, with its
    signature, its formula (GatedMLP's, in the book's notation) and an example."""
    html = HTML.read_text()
    for name in _public("symbreak"):
        if name == "setup":  # the notebooks' one-line set-up, documented in symbreak.repro
            continue
        assert re.search(rf'id="symbreak\.[\w.]+\.{name}"', html), f"symbreak.{name} has no entry"
    entry = html.split('id="symbreak.layers.GatedMLP"', 1)[1].split('<dl class="py', 1)[0]
    text = re.sub(r"<[^>]+>", "", entry)
    assert "σ(x·q_j)(x·k_j) v_j" in text and "&gt;&gt;&gt; layer = GatedMLP(" in text and "activation" in text


def test_an_entry_shows_a_value_only_where_it_reads():
    """A short value stays after its name; a long table, a function's repr or LaTeX with doubled backslashes goes."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from api_page import SHORT_VALUE, short_value

    assert short_value(200) and short_value((1, 2, 4)) and short_value("standard MLP")
    assert not short_value(list(range(SHORT_VALUE)))
    assert not short_value({"R": ((1, 2), lambda r: r)})
    assert not short_value("full, packed $\\mathrm{sym}(W_j)$")


@pytest.mark.skipif(not HTML.exists(), reason="the book is not built")
def test_the_page_shows_no_raw_repr_and_no_torch_text():
    """No entry shows a function's repr, a tensor with its autograd node, or nn.Module's inherited docstrings."""
    html = HTML.read_text()
    for raw in ("&lt;function", "grad_fn=", "To print customized extra information"):
        assert raw not in html, raw
