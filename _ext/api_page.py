"""The book's API reference page, ``book/api.md``, generated from the package and ARCHITECTURE.md.

The page documents every public module of ``symbreak`` in the order of the layer table of ARCHITECTURE.md (the
table ``tests/test_architecture.py`` enforces), each layer under its heading with its job from the table:

* a top-level module or subpackage with its members (``automodule``: the names of its ``__all__``), followed,
  for a subpackage, by the docstrings of its public modules;
* its data (constants and tables such as ``REGISTRY``), which ``automodule`` leaves out when they are re-exported
  or have no doc-comment, as ``py:data`` entries with the ``#:`` comment of the module that defines them.

The PDF keeps the page's introduction and a note that the reference is in the HTML edition.

At ``builder-inited`` the extension writes the page when its text differs (so a new public name or module shows
up at the next build); ``tests/test_api_reference.py`` checks that the committed page is the generated one.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
from pathlib import Path

from symbreak.citation import BOOK

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "api.md"

_INTRO = """\
(api-reference)=
# API reference

Every public name of the package `symbreak`, generated from its docstrings (Sphinx `autodoc`), in the order of its
layers: a module may import only from its own layer or the layers before it (the layer table of `ARCHITECTURE.md` in
the repository gives each layer's job).
Each form's formula is written in the book's notation: rows $q_j, k_j$ of $Q, K \\in \\mathbb{R}^{m\\times d}$,
rows $v_j$ of $V \\in \\mathbb{R}^{m\\times d_{\\mathrm{out}}}$, the activation `activation` ($\\sigma$) and the
`rank` $R$.
The names most readers want are re-exported at the top, `from symbreak import GatedMLP, BilinearMLP, KeyValueMLP,
exchange, inverse_scale, gauge, output_change, REGISTRY`, and documented under the module that defines them
({py:class}`symbreak.layers.GatedMLP`, {py:func}`symbreak.symmetry.exchange`, …).
Bad input raises `ValueError` or `TypeError` naming the argument, the expected and the given value.
"""


def layer_table() -> list[tuple[int, str, str, list[str]]]:
    """``[(number, name, job, modules)]``: the rows of ARCHITECTURE.md's layer table."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    table = text.split("<!-- layers:", 1)[1].split("\n\n", 1)[0]
    rows = []
    for row in table.splitlines():
        match = re.match(r"\| (\d+) ([^|]+)\| ([^|]+)\| ([^|]+)\|", row)
        if match:
            modules = list(dict.fromkeys(m for m in re.findall(r"`(\w+)`", match.group(3)) if _is_module(m)))
            rows.append((int(match.group(1)), match.group(2).strip(), match.group(4).strip(), modules))
    return rows


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(f"symbreak.{name}")
    except ImportError:
        return False  # a class named in the table's text, not a module
    return True


def _public_submodules(package: types.ModuleType) -> list[str]:
    return [
        f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")
    ]


def _is_data(value: object) -> bool:
    return not (inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value) or callable(value))


def _data_doc(module: types.ModuleType, name: str) -> str:
    """The ``#:`` doc-comment of ``name`` where it is defined: ``module`` itself or one of its submodules."""
    from sphinx.pycode import ModuleAnalyzer

    value = getattr(module, name)
    candidates = [module.__name__]
    if hasattr(module, "__path__"):
        candidates += [f"{module.__name__}.{m.name}" for m in pkgutil.iter_modules(module.__path__)]
    for candidate in candidates:
        defining = importlib.import_module(candidate)
        if getattr(defining, name, None) is not value:
            continue
        docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        if ("", name) in docs:
            return " ".join(line.strip() for line in docs[("", name)] if line.strip())
    return ""


def _data_entries(module: types.ModuleType) -> str:
    """``py:data`` entries for the data of ``module``'s ``__all__`` that ``automodule`` leaves out: all of a
    package's (re-exported), and a module's own without a doc-comment."""
    from sphinx.pycode import ModuleAnalyzer

    own = set() if hasattr(module, "__path__") else set(ModuleAnalyzer.for_module(module.__name__).find_attr_docs())
    names = [
        n
        for n in getattr(module, "__all__", [])
        if not n.startswith("__") and _is_data(getattr(module, n)) and ("", n) not in own
    ]
    blocks = []
    for name in names:
        doc = _data_doc(module, name)
        blocks.append(f".. py:data:: {name}\n   :module: {module.__name__}\n" + (f"\n   {doc}\n" if doc else ""))
    return "".join(f"\n```{{eval-rst}}\n{b}```\n" for b in blocks)


def _module_block(name: str, members: bool = True) -> str:
    options = "   :members:\n   :undoc-members:\n" if members else "   :no-members:\n   :no-index:\n"
    return f"\n```{{eval-rst}}\n.. automodule:: {name}\n{options}```\n"


#: What the PDF shows in place of the reference (the HTML edition has it; a PDF of every docstring helps no reader),
#: with the address of the HTML's page (the book's address from :data:`symbreak.citation.BOOK`).
_PDF_NOTE = """
```{{only}} latex
The API reference is part of the HTML edition of the book, <{url}book/api.html>, generated from the docstrings of
the package; in Python, `help(symbreak.GatedMLP)` shows the same text.
```
"""


def render() -> str:
    """The text of ``book/api.md``: the introduction, then (in the HTML edition only) every layer's modules."""
    parts = [_INTRO, _PDF_NOTE.format(url=BOOK["url"])]
    for number, name, job, modules in layer_table():
        parts.append(f"\n## Layer {number}: {name}\n\n{job[0].upper()}{job[1:]}.\n")
        for short in modules:
            module = importlib.import_module(f"symbreak.{short}")
            parts.append(f"\n### `{module.__name__}`\n")
            if short == "pages":  # one module per chapter, each with its own public names
                parts.append(_module_block(module.__name__, members=False))
                for sub in _public_submodules(module):
                    parts.append(f"\n#### `{sub}`\n" + _module_block(sub))
                continue
            parts.append(_module_block(module.__name__) + _data_entries(module))
            if hasattr(module, "__path__"):
                parts.append(f"\nThe modules of `{module.__name__}`:\n")
                parts.extend(_module_block(sub, members=False) for sub in _public_submodules(module))
    return "".join(parts)


def _html_only(app, docname: str, source: list[str]) -> None:
    """In the PDF the page keeps its introduction and the note of :data:`_PDF_NOTE`: its layers' sections go (the
    ``only`` directive cannot hold sections).  They are cut from the source as it is read, so that the PDF build
    does not run autodoc over the whole package for nothing."""
    if app.builder.format != "latex" or docname != PAGE.relative_to(ROOT).with_suffix("").as_posix():
        return
    head, _, _ = source[0].partition("\n## Layer ")
    source[0] = head


def _write_page(app) -> None:
    text = render()
    if not PAGE.exists() or PAGE.read_text() != text:
        PAGE.write_text(text)


#: The longest value an entry of the page shows after its name; a longer one (a table such as ``REGISTRY``) would be
#: a raw repr many lines long, which its doc-comment describes better.
SHORT_VALUE = 60


def short_value(value: object) -> bool:
    """Whether an entry shows ``value`` after its name: a repr of at most :data:`SHORT_VALUE` characters that is
    Python a reader can read (not ``<function …>``, nor strings with doubled backslashes of LaTeX)."""
    text = repr(value)
    return len(text) <= SHORT_VALUE and "<" not in text and "\\\\" not in text


def _short_value_documenter():
    from sphinx.ext.autodoc import DataDocumenter

    class ShortValueDataDocumenter(DataDocumenter):
        """autodoc's module data, with the value shown only where :func:`short_value` says so."""

        priority = DataDocumenter.priority + 1

        def should_suppress_value_header(self) -> bool:
            return super().should_suppress_value_header() or not short_value(self.object)

    return ShortValueDataDocumenter


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(_short_value_documenter(), override=True)
    app.connect("builder-inited", _write_page)
    app.connect("source-read", _html_only)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
