"""The book's API reference page, ``book/api.md``, generated from the package and ARCHITECTURE.md.

The page documents every public module of ``symbreak`` in the order of the layer table of ARCHITECTURE.md (the
table ``tests/test_architecture.py`` enforces), each layer under its heading with its job from the table:

* a top-level module or subpackage with its members (``automodule``: the names of its ``__all__``), followed,
  for a subpackage, by the docstrings of its public modules, each with the names of its own ``__all__`` that the
  subpackage does not re-export;
* its data (constants and tables such as ``REGISTRY``), which ``automodule`` leaves out when they are re-exported
  or have no doc-comment, as ``py:data`` entries with the ``#:`` comment of the module that defines them.

The PDF keeps only the page's title and a note that the reference is in the HTML edition.

At ``builder-inited`` the extension writes the page when its text differs (so a new public name or module shows
up at the next build); ``tests/test_api_reference.py`` checks that the committed page is the generated one.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import sys
import types
from pathlib import Path

from api_values import named_value_documenter, process_signature, short_value_documenter

from symbreak.citation import BOOK

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "api.md"

_INTRO = """\
(api-reference)=
# API reference

```{only} html
Every public name of the package `symbreak`, generated from its docstrings (Sphinx `autodoc`), in the order of its
layers: a module may import only from its own layer or the layers before it (the layer table of `ARCHITECTURE.md` in
the repository gives each layer's job).
Each form's formula is written in the book's notation: rows $q_j, k_j$ of $Q, K \\in \\mathbb{R}^{m\\times d}$,
rows $v_j$ of $V \\in \\mathbb{R}^{m\\times d_{\\mathrm{out}}}$, the activation `activation` ($\\sigma$) and the
`rank` $R$.
The names most readers want are re-exported at the top, `from symbreak import GatedMLP, BilinearMLP, KeyValueMLP,
exchange, inverse_scale, gauge, output_change, REGISTRY`, and documented under the module that defines them
(`symbreak.layers.GatedMLP`, `symbreak.symmetry.exchange`, …, each below).
Bad input raises `ValueError` or `TypeError` naming the argument, the expected and the given value.
```
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
    candidates += sorted(m for m in sys.modules if m.startswith("symbreak.") and m not in candidates)
    for candidate in candidates:
        defining = importlib.import_module(candidate)
        names = [name] + [n for n, v in vars(defining).items() if v is value and n != name]  # or imported as
        names = [n for n in names if getattr(defining, n, None) is value]
        if not names:
            continue
        docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        for known in names:
            if ("", known) in docs:
                return " ".join(line.strip() for line in docs[("", known)] if line.strip())
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
        doc = link_labels([_data_doc(module, name)], book_labels())[0]
        blocks.append(f".. py:data:: {name}\n   :module: {module.__name__}\n" + (f"\n   {doc}\n" if doc else ""))
    return "".join(f"\n```{{eval-rst}}\n{b}```\n" for b in blocks)


def _module_block(name: str, members: bool | list[str] = True) -> str:
    """An ``automodule`` of ``name``: all its members (those of its ``__all__``), the ``members`` listed, or none."""
    if members is True:
        options = "   :members:\n   :undoc-members:\n"
    elif members:
        options = f"   :members: {', '.join(members)}\n   :undoc-members:\n"
    else:
        options = "   :no-members:\n"
    return f"\n```{{eval-rst}}\n.. automodule:: {name}\n{options}```\n"


def own_names(package: types.ModuleType, sub: str) -> list[str]:
    """The public names of the submodule ``sub`` of ``package`` that the package does not re-export: they are
    documented under the submodule (the re-exported ones under the package)."""
    exported = set(getattr(package, "__all__", []))
    module = importlib.import_module(sub)
    return [n for n in getattr(module, "__all__", []) if not n.startswith("__") and n not in exported]


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
                parts.append(
                    f"\nThe modules of `{module.__name__}`, each with the public names that `{module.__name__}` "
                    "does not re-export:\n"
                )
                for sub in _public_submodules(module):
                    block = _module_block(sub, own_names(module, sub))
                    if sub.rsplit(".", 1)[1] in getattr(module, "__all__", []):  # a function of the same name
                        block = block.replace("   :no-members:\n", "   :no-members:\n   :no-index:\n")
                    parts.append(block)
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
def book_labels() -> dict[str, str]:
    """``label -> role`` for the book's statements (``prf:ref``: ``:label:`` of a ``prf`` directive) and numbered
    equations (``eq``: ``$$ (label)``), as the chapters define them."""
    labels: dict[str, str] = {}
    for path in sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "book").glob("*.ipynb")):
        text = path.read_text().replace("\\n", "\n")
        for label in re.findall(r"^\s*\"?\s*\$\$\s*\(([A-Za-z][-\w]*)\)", text, re.M):
            labels[label] = "eq"
        for label in re.findall(r"^\s*\"?\s*:label:\s*([A-Za-z][-\w]*)", text, re.M):
            labels.setdefault(label, "prf:ref")
    return labels


def link_labels(lines: list[str], labels: dict[str, str]) -> list[str]:
    """``lines`` (a docstring) with each known label written as a literal (````thm-exchange````) or as a bare word
    (``eq-gated-rank-R-wide``) turned into its reference, which reads "Theorem 6.1" or "(6.3)" and links."""
    if not labels:
        return lines
    names = "|".join(sorted(map(re.escape, labels), key=len, reverse=True))
    pattern = re.compile(rf"``({names})``|(?<![-\w`:<])({names})(?![-\w`>])")

    def ref(match: re.Match) -> str:
        label = match.group(1) or match.group(2)
        return f":{labels[label]}:`{label}`"

    return [line if line.lstrip().startswith(">>>") else pattern.sub(ref, line) for line in lines]


def _process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    if not hasattr(app, "_api_page_labels"):
        app._api_page_labels = book_labels()
    lines[:] = link_labels(lines, app._api_page_labels)


def _resolve(path: str) -> object | None:
    """The object at the dotted ``path`` (a module, then attributes), or None."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 (a module that fails to import is no target)
            return None
        for part in parts[i:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


#: ``id(env) -> _documented_by_object(env)``: built once per build, at its first unresolved reference.
_BY_OBJECT: dict[int, dict[int, str]] = {}


def _documented_by_object(env) -> dict[int, str]:
    """``id(object) -> documented name`` for the classes, functions and modules with an entry in the Python domain."""
    cache = _BY_OBJECT.get(id(env))
    if cache is None:
        cache = {}
        for name in env.get_domain("py").objects:
            obj = _resolve(name) if name.startswith("symbreak") else None
            if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
                cache.setdefault(id(obj), name)
        _BY_OBJECT.clear()
        _BY_OBJECT[id(env)] = cache
    return cache


def public_target(target: str, objects, by_object: dict[int, str], context: list[str] = ()) -> str | None:
    """The documented name a docstring's reference ``target`` means, where the name it spells has no entry: a private
    path (``symbreak.layers._base.tie_terms`` -> ``symbreak.layers.tie_terms``), a name re-exported elsewhere
    (``symbreak.verdicts.table.X`` -> ``symbreak.verdicts.X``), or a member of such a class
    (``GatedMLP.from_terms`` in ``symbreak.layers.gated`` -> ``symbreak.layers.GatedMLP.from_terms``).  ``context``:
    the prefixes the reference is read in (its module, its class).  None where no documented name fits."""
    target = target.lstrip(".~")
    for full in [f"{c}.{target}" for c in context if c] + [target]:
        if full in objects:
            return full
        parts = full.split(".")
        public = ".".join(p for p in parts if not p.startswith("_") or p.startswith("__"))
        if public != full and public in objects:
            return public
        for i in range(len(parts), 0, -1):
            name = by_object.get(id(_resolve(".".join(parts[:i]))))
            if name is not None:
                candidate = ".".join([name, *parts[i:]])
                if candidate in objects:
                    return candidate
                break
    # a bare name (``strip_line``): the one documented name ending so, nearest the context; a path through a
    # submodule (``symbreak.dynamics.charges.KEPT_RESCALINGS``): its package's entry
    head, _, last = target.rpartition(".")
    tail = "." + target if not head.startswith("symbreak") else "." + last
    ends = [o for o in objects if o.endswith(tail)]
    if head.startswith("symbreak"):
        ends = [o for o in ends if target.startswith(o.rpartition(".")[0] + ".")]
    if ends and context:
        here = next((c for c in context if c), "")
        shared = {o: len(os.path.commonprefix([o, here])) for o in ends}
        best = max(shared.values())
        ends = [o for o in ends if shared[o] == best]
    return ends[0] if len(ends) == 1 else None


def _missing_reference(app, env, node, contnode):
    """Resolves a docstring's Python reference that names a documented object by another path (see
    :func:`public_target`); the rest go on to Sphinx's warning (or its ``nitpick_ignore_regex``)."""
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    domain = env.get_domain("py")
    module, cls = node.get("py:module"), node.get("py:class")
    context = [f"{module}.{cls}" if module and cls else None, module]
    name = public_target(node["reftarget"], domain.objects, _documented_by_object(env), context)
    if name is None:
        return None
    entry = domain.objects[name]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(short_value_documenter(), override=True)
    app.add_autodocumenter(named_value_documenter(), override=True)
    app.connect("builder-inited", _write_page)
    app.connect("source-read", _html_only)
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("autodoc-process-signature", process_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
