"""Inline maths in running text: a symbol and its value as one formula; the parenthesis before a formula and the
punctuation after it kept with it.

``$d$ = {glue:md}`d``` reads ``$d = 6$``.

The prose writes a configured or measured value after its symbol as ``$d$ = 6``, the value
glued from code, which cannot go inside the dollars.  Typeset as written, the symbol is maths
(italic, the maths font) and ``= 6`` text (upright, the body font, its own spacing), and a line
may break between them.  After every reference and glued value is resolved, for the HTML and the
PDF alike, a formula followed by ``" = "`` (ordinary or no-break spaces) and a number becomes one
formula, ``d = 6``; a thousands separator is kept (``11{,}008``) and a true minus becomes TeX's.

A formula that ends in its relation, ``$\\alpha = \\pm$ 1.7`` (the value glued after it), takes the
number in the same way: ``\\alpha = \\pm 1.7``.  Where the value is not a number (``$\\sigma$ = GELU``,
``$Q$ = `w1.weight```), the spaces around ``=`` become no-break spaces: no line starts with ``= GELU``.

A value that continues past its digits (``25 %``, ``8 × 10⁻⁴``, ``10⁻⁴``, ``0.3e-5``) is left as
it is, as is a formula that holds a relation of its own (``$m = 4d$ = 16`` does not occur, and
would stay apart).

An opening parenthesis or bracket right before a formula, ``($d = 32$, 128 draws)``, ends a line
on a narrow screen when the formula does not fit after it, and the punctuation right after a
formula (``, . ; : )``), a word joined to it by a hyphen (``$t$‑interval``) or the value after its
" = " (``σ = identity``, ``Q = w1.weight``: no-break spaces alone do not hold a line together at a
typeset formula) starts the next line (a browser breaks around a typeset formula as around an
image).  They are wrapped with the formula in an element that the HTML does not break
(``span.sb-nowrap``, ``_static/book.css``); the PDF ignores the class (TeX does not break before
the punctuation, and breaks after a hyphen as in any word).
"""

from __future__ import annotations

import re

#: ``" = "`` after a formula: an equals sign between ordinary or no-break spaces.
_EQUALS = re.compile(r"^[ \u00a0]=[ \u00a0]")
#: A number as the book prints one: a sign, digits grouped by commas or not, a decimal part.
_NUMBER = re.compile(r"^[−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
#: What may follow a number that is the whole value: the end, a space before a word, punctuation.
_AFTER = re.compile(r"^(?:$|[,;:.!?)\]](?!\d)|[ \u00a0\n](?![ \u00a0]*[%×·⁰¹²³⁴⁵⁶⁷⁸⁹⁻]))")
#: A formula that ends in its relation, waiting for the value after it (``\alpha = \pm``), and that value's space.
_OPEN_END = re.compile(r"(?:=|\\pm|\\approx|<|>|\\le|\\ge|\\leq|\\geq)\s*$")
_SPACE = re.compile(r"^[ \u00a0]")
#: Relations that make a formula a statement of its own, not a symbol waiting for its value.
_RELATION = re.compile(r"=|<|>|\\[lg]eq?\b|\\neq?\b|\\approx|\\sim|\\in\b|\\to\b|\\le\b|\\ge\b")


def joined(symbol: str, following: str) -> tuple[str, str] | None:
    """``(formula, rest)`` when the text ``following`` a formula ``symbol`` is ``" = "`` and a whole number;
    ``None`` when they stay apart.  ``joined("d", "\\u00a0=\\u00a011,008 units")`` is ``("d = 11{,}008", " units")``.
    """
    if not isinstance(symbol, str) or not isinstance(following, str):
        raise TypeError(f"symbol, following: expected str, got {type(symbol).__name__}, {type(following).__name__}")
    if _OPEN_END.search(symbol) and _SPACE.match(following):
        joint, rest = " ", following[1:]  # "\\alpha = \\pm" waits for its value
    else:
        equals = _EQUALS.match(following)
        if equals is None or not symbol.strip() or _RELATION.search(symbol):
            return None
        joint, rest = " = ", following[equals.end() :]
    number = _NUMBER.match(rest)
    if number is None or _AFTER.match(rest[number.end() :]) is None:
        return None
    value = number.group(0).replace("−", "-").replace(",", "{,}")
    return f"{symbol.strip()}{joint}{value}", rest[number.end() :]


def _join_values(app, doctree, docname) -> None:
    from docutils import nodes

    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        index = parent.index(math)
        # the text after the formula: a glued value is a text node of its own, after the text node " = ", and
        # what follows it (" %") decides whether the number is the whole value
        spent = []
        for node in parent.children[index + 1 : index + 4]:
            if not isinstance(node, nodes.Text):
                break
            spent.append(node)
        found = joined(math.astext(), "".join(node.astext() for node in spent)) if spent else None
        if found is None:
            if spent and _EQUALS.match(spent[0].astext()):  # "σ = GELU": no line starts with "= GELU"
                parent[index + 1] = nodes.Text("\u00a0=\u00a0" + spent[0].astext()[3:])
            continue
        formula, rest = found
        # by position: text nodes compare as strings, so ``remove`` could take an equal node elsewhere in the paragraph
        parent[index : index + 1 + len(spent)] = [nodes.math(formula, formula, **math.attributes)]
        if rest:
            parent.insert(index + 1, nodes.Text(rest))


#: What belongs to the formula before it: the first one or two characters of the text after it if punctuation, a
#: word joined to it by a hyphen (``$t$‑interval``, ``$r$-th``) or its value after " = " held by no-break spaces
#: (``$\sigma$ = identity``, from :func:`_join_values`), with the punctuation after that word.
_CLOSING = re.compile(r"^(?:[-\u2011][^\W\d_]+|\u00a0=\u00a0(?:[^\W\d_]+|$))?[,.;:!?)\]]{0,2}")
#: The text between a formula and an inline code value that it names (``$Q$ = `w1.weight```).
_EQUALS_CODE = "\u00a0=\u00a0"


def _keep_parentheses(app, doctree, docname) -> None:
    """An opening parenthesis before a formula and the punctuation after it, with the formula in one ``sb-nowrap``."""
    from docutils import nodes

    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        index = parent.index(math)
        before = parent[index - 1] if index else None
        after = parent[index + 1] if index + 1 < len(parent) else None
        opening = isinstance(before, nodes.Text) and before.astext().endswith(("(", "["))
        closing = _CLOSING.match(after.astext()) if isinstance(after, nodes.Text) else None
        closing = closing if closing and closing.end() else None
        code = parent[index + 2] if closing and closing.group(0) == _EQUALS_CODE and index + 2 < len(parent) else None
        code = code if isinstance(code, nodes.literal) else None
        if closing and closing.group(0) == _EQUALS_CODE and code is None:  # "s = 25 %": a value that stays apart
            closing = None
        if not opening and closing is None:
            continue
        # by position: text nodes compare as strings, so an equal node elsewhere could be taken
        first, last = (index - 1 if opening else index), (index + 1 + (code is not None) if closing else index)
        kept = nodes.inline("", "", classes=["sb-nowrap"])
        replacement = []
        if opening and len(before.astext()) > 1:
            replacement.append(nodes.Text(before.astext()[:-1]))
        replacement.append(kept)
        if closing and len(after.astext()) > closing.end():
            replacement.append(nodes.Text(after.astext()[closing.end() :]))
        parent[first : last + 1] = replacement
        if opening:
            kept += nodes.Text(before.astext()[-1])
        kept += math
        if closing:
            kept += nodes.Text(closing.group(0))
        if code is not None:
            kept += code


def setup(app):
    app.connect("doctree-resolved", _join_values)
    app.connect("doctree-resolved", _keep_parentheses, priority=600)  # after the values are joined
    return {"parallel_read_safe": True, "parallel_write_safe": True}
