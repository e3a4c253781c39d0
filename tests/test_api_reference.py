"""The API reference (book/api.md): every module of the package documented, in the order of its layers
(ARCHITECTURE.md), and every public name (each module's ``__all__``) with its entry in the built page."""

from __future__ import annotations

import importlib
import inspect
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


def _entry_module(module_name: str, name: str) -> str:
    """The module under which the page documents ``name`` of ``module_name``'s ``__all__``: its package where the
    package re-exports it, else the module itself."""
    parent = module_name.rsplit(".", 1)[0]
    if parent != "symbreak" and name in _public(parent):
        return parent
    return module_name


def _members_on_page(module_name: str) -> set[str] | None:
    """The names the page's ``automodule`` of ``module_name`` documents (None: all of its ``__all__``)."""
    match = re.search(rf"\.\. automodule:: {re.escape(module_name)}\n   :members:(.*)\n", API)
    if not match:
        return set()
    listed = match.group(1).strip()
    return {n.strip() for n in listed.split(",")} if listed else None


@pytest.mark.parametrize("module_name", [m for m in PUBLIC_MODULES if m != "symbreak"])
def test_every_public_name_is_on_the_page(module_name):
    """Every name of every public module's ``__all__`` (chapters 14-16 call ``experiments.sweep.load_small``,
    ``language.compare.form_summaries``, ...) is a member of an ``automodule`` of the page: its own module's, or its
    package's where the package re-exports it."""
    missing = []
    for name in _public(module_name):
        where = _entry_module(module_name, name)
        members = _members_on_page(where)
        if members is not None and name not in members:
            missing.append(name)
    assert not missing, f"{module_name}: public names without an entry on the API page: {missing}"


@pytest.mark.skipif(not HTML.exists(), reason=f"the book is not built ({HTML} missing): API page test skipped")
@pytest.mark.parametrize("module_name", [m for m in PUBLIC_MODULES if m != "symbreak"])
def test_every_public_name_has_its_entry(module_name):
    ids = set(re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', HTML.read_text()))
    missing = [n for n in _public(module_name) if f"{_entry_module(module_name, n)}.{n}" not in ids]
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
    from api_values import SHORT_VALUE, short_value

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


def _api_page():
    sys.path.insert(0, str(ROOT / "_ext"))
    import api_page

    return api_page


def test_a_private_path_resolves_to_the_documented_name():
    """A docstring's ``:func:`~symbreak.layers._base.tie_terms``` links to ``symbreak.layers.tie_terms``, its entry;
    a member of a re-exported class and a bare name in its module's context too."""
    api = _api_page()
    objects = {"symbreak.layers.tie_terms", "symbreak.layers.GatedMLP", "symbreak.layers.GatedMLP.from_terms",
               "symbreak.dynamics.KEPT_RESCALINGS", "symbreak.language.corpus.strip_line"}
    import symbreak.layers as layers

    by_object = {id(layers.GatedMLP): "symbreak.layers.GatedMLP"}
    assert api.public_target("~symbreak.layers._base.tie_terms", objects, by_object) == "symbreak.layers.tie_terms"
    assert api.public_target("symbreak.layers.gated.GatedMLP.from_terms", objects, by_object) == (
        "symbreak.layers.GatedMLP.from_terms"
    )
    assert api.public_target("symbreak.dynamics.charges.KEPT_RESCALINGS", objects, by_object) == (
        "symbreak.dynamics.KEPT_RESCALINGS"
    )
    assert api.public_target("strip_line", objects, by_object, ["symbreak.language.corpus"]) == (
        "symbreak.language.corpus.strip_line"
    )
    assert api.public_target("symbreak.layers._base._check", objects, by_object) is None


def test_references_to_the_package_are_nitpicked():
    """Only third-party targets are exempt from nitpicking: an unresolved reference to a name of symbreak fails the
    build."""
    config = (ROOT / "_config.yml").read_text()
    pattern = re.search(r'nitpick_ignore_regex:\n\s+- \["py:\.\*", "([^"]+)"\]', config).group(1).replace("\\\\", "\\")
    assert re.fullmatch(pattern, "torch.Tensor") and re.fullmatch(pattern, "sympy.core.expr.Expr")
    for target in ("symbreak.layers._base.tie_terms", "tie_terms", "GatedMLP.from_terms", "KEPT_RESCALINGS"):
        assert not re.fullmatch(pattern, target), target


def test_a_statement_label_reads_as_its_reference():
    """``thm-conservation`` in a docstring becomes :prf:ref:`thm-conservation` ("Theorem 6.1", a link), a bare
    equation label its :eq: reference; doctest lines stay as written."""
    api = _api_page()
    labels = api.book_labels()
    assert labels["thm-conservation"] == "prf:ref" and labels["eq-gated-rank-R-wide"] == "eq"
    lines = api.link_labels(["by ``thm-conservation`` and eq-gated-rank-R-wide.", '>>> s = "thm-exchange"'], labels)
    assert lines == ["by :prf:ref:`thm-conservation` and :eq:`eq-gated-rank-R-wide`.", '>>> s = "thm-exchange"']


@pytest.mark.skipif(not HTML.exists(), reason="the book is not built")
def test_no_label_shows_as_code():
    text = re.sub(r"<[^>]+>", "", HTML.read_text())
    shown = [label for label in _api_page().book_labels() if re.search(rf"(?<![-\w]){re.escape(label)}(?![-\w])", text)]
    assert not shown, f"labels shown as text on the API page: {shown}"


def test_a_signature_is_made_parseable():
    """Review 8: a dataclass's ``__init__`` (``witness: dict[~sympy…] = <factory>``) and ``glue_convex``, whose
    default ``"bilinear (σ = id)"`` came with a second ``)``, failed Sphinx's parser and showed as raw text
    ("~torch.Tensor"); they parse now, and a signature that parsed is left as it is."""
    fix = __import__("api_values").parseable_signature
    assert fix('(form: str = "bilinear (σ = id)"))') == '(form: str = "bilinear (σ = id)")'
    assert fix("(witness: dict[~sympy.Symbol, int] = <factory>)") == "(witness: dict[~sympy.Symbol, int] = ...)"
    assert fix("(a, b=(1, 2))") == "(a, b=(1, 2))"


def test_a_dataclass_signature_shows_defaults_a_reader_can_read():
    """Round 9: a dataclass field's factory default read "= ..." and ``Protocol``'s ``forms`` a 600-character repr;
    they read ``[]``, ``ModelShape()`` and ``FORMS`` now."""
    values = __import__("api_values")
    from symbreak.dynamics import History
    from symbreak.language import Protocol
    from symbreak.language.protocol import FORMS

    history = values.parseable_signature("(steps: list[int] = <factory>, loss: list[float] = <factory>)", History)
    assert history == "(steps: list[int] = [], loss: list[float] = [])"
    fixed = values.parseable_signature(str(inspect.signature(Protocol.__init__)), Protocol.__init__)
    assert "= ModelShape()," in fixed and "= FORMS," in fixed
    assert "FormSpec(name=" not in fixed and "<factory>" not in fixed
    assert values.constant_name(FORMS, sys.modules["symbreak.language.protocol"]) == "FORMS"
    assert values.constant_name(3, sys.modules["symbreak.language.protocol"]) is None


@pytest.mark.skipif(not HTML.exists(), reason="the book is not built")
def test_no_signature_shows_raw_annotations():
    """Every signature on the page was parsed: none shows a raw ``~module.Name`` annotation."""
    signatures = re.findall(r'<dt class="sig sig-object py" id="([^"]+)">(.*?)</dt>', HTML.read_text(), re.S)
    raw = [name for name, body in signatures if "~" in re.sub(r"<[^>]+>", "", body)]
    assert not raw, f"signatures with raw annotations: {raw}"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_data_name_has_its_description(module_name):
    """``REGISTRY``, ``costs.FORMS``, ``benchmark.N`` ...: each constant of an ``__all__`` has a ``#:`` doc-comment
    (where it is defined), which its entry shows."""
    api = _api_page()
    module = importlib.import_module(module_name)
    bare = [n for n in _public(module_name) if api._is_data(getattr(module, n)) and not api._data_doc(module, n)]
    assert not bare, f"{module_name}: data without a description: {bare}"


def test_the_pdf_keeps_only_the_pointer_to_the_html():
    """The introduction ("Every public name ...") is HTML-only; the PDF reads the note pointing to the HTML edition."""
    head = API.split("\n## Layer ", 1)[0]
    html_only = re.findall(r"```\{only\} html\n(.*?)```", head, re.S)
    assert html_only and "Every public name" in html_only[0]
    outside = re.sub(r"```\{only\} html\n.*?```", "", head, flags=re.S)
    assert "Every public name" not in outside and "```{only} latex" in outside
