"""How the API page's entries show values and signatures: defaults a reader can read, and signatures Sphinx parses.

* a constant or class attribute shows its value where the value is short Python (:func:`short_value`), or the
  name of the module constant it is (:func:`constant_name`), and else no value;
* a signature's dataclass defaults read as a reader would write them (:func:`factory_default`), and every
  signature parses (:func:`parseable_signature`), so its annotations are links.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import types

SHORT_VALUE = 60


def short_value(value: object) -> bool:
    """Whether an entry shows ``value`` after its name: a repr of at most :data:`SHORT_VALUE` characters that is
    Python a reader can read (not ``<function …>``, nor strings with doubled backslashes of LaTeX)."""
    text = repr(value)
    return len(text) <= SHORT_VALUE and "<" not in text and "\\\\" not in text


def short_value_documenter():
    from sphinx.ext.autodoc import DataDocumenter

    class ShortValueDataDocumenter(DataDocumenter):
        """autodoc's module data, with the value shown only where :func:`short_value` says so."""

        priority = DataDocumenter.priority + 1

        def should_suppress_value_header(self) -> bool:
            return super().should_suppress_value_header() or not short_value(self.object)

    return ShortValueDataDocumenter


def named_value_documenter():
    from sphinx.ext.autodoc import AttributeDocumenter

    class NamedValueAttributeDocumenter(AttributeDocumenter):
        """autodoc's class attribute, whose value is shown where :func:`short_value` says so, or by the name of
        the module constant it is (:func:`constant_name`), and else not at all."""

        priority = AttributeDocumenter.priority + 1

        def should_suppress_value_header(self) -> bool:
            return super().should_suppress_value_header() or not short_value(self.object)

        def add_directive_header(self, sig: str) -> None:
            super().add_directive_header(sig)
            if not super().should_suppress_value_header() and not self.options.get("no-value"):
                name = constant_name(self.object, sys.modules.get(getattr(self.parent, "__module__", "")))
                if name is not None:
                    self.add_line(f"   :value: {name}", self.get_sourcename())

    return NamedValueAttributeDocumenter


def _dataclass_of(obj: object) -> type | None:
    """The dataclass whose signature autodoc is writing: ``obj`` itself, or the class of its ``__init__``."""
    if inspect.isfunction(obj) and obj.__name__ == "__init__":
        owner = sys.modules.get(obj.__module__)
        for part in obj.__qualname__.split(".")[:-1]:
            owner = getattr(owner, part, None)
        obj = owner
    return obj if inspect.isclass(obj) and dataclasses.is_dataclass(obj) else None


def factory_default(field: dataclasses.Field) -> str:
    """A dataclass field's ``default_factory`` as a reader would write the default: ``[]``, ``{}`` for a built-in
    container, ``ModelShape()`` for a class, the value where it is short, else the factory's name called."""
    factory = field.default_factory
    if inspect.isclass(factory) and factory.__module__ != "builtins":
        return f"{factory.__name__}()"
    value = factory()
    return repr(value) if short_value(value) else f"{getattr(factory, '__name__', 'factory')}()"


def constant_name(value: object, module: types.ModuleType | None) -> str | None:
    """The public upper-case constant of ``module`` that is ``value`` (the object itself), where ``value`` is too
    long to show (:func:`short_value`): ``Protocol.forms`` defaults to ``FORMS``, a tuple of nine specs."""
    if module is None or short_value(value):
        return None
    names = [n for n, v in vars(module).items() if v is value and n.isupper() and not n.startswith("_")]
    return names[0] if len(names) == 1 else None


def parseable_signature(signature: str, obj: object = None) -> str:
    """``signature`` as Sphinx can parse it, so that its annotations are links and not raw text ("~torch.Tensor"),
    with the defaults a reader can read:

    * a dataclass field's default ``<factory>`` (the sentinel's repr) written as :func:`factory_default` says,
      where ``obj`` is the dataclass or its ``__init__``, else ``...``;
    * a long default that is a constant of the dataclass's module written by that constant's name;
    * the ``)`` that ``autodoc_preserve_defaults`` repeats after a default on a line with a character beyond ASCII
      (it slices the source by the parser's byte offsets: ``form: str = "bilinear (σ = id)"))``) taken back."""
    cls = _dataclass_of(obj)
    if cls is not None:
        from sphinx.util.inspect import object_description

        module = sys.modules.get(cls.__module__)
        for field in dataclasses.fields(cls):
            if field.init and field.default_factory is not dataclasses.MISSING:
                signature = signature.replace("<factory>", factory_default(field), 1)
            elif field.init and field.default is not dataclasses.MISSING:
                name = constant_name(field.default, module)
                if name is not None:
                    signature = signature.replace(f"= {object_description(field.default)}", f"= {name}", 1)
    signature = signature.replace("<factory>", "...")
    for candidate in (signature, signature[:-1] if signature.endswith("))") else signature):
        try:
            ast.parse(f"def f{candidate}: pass")
        except SyntaxError:
            continue
        return candidate
    return signature


def process_signature(app, what, name, obj, options, signature, return_annotation):
    return (parseable_signature(signature, obj), return_annotation) if signature else None
