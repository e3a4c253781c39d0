"""Put computed values into the book's prose (myst-nb ``glue``), never typed by hand.

* :func:`glue_text` stores a string for ``{glue:md}`key``` — shown without quotes;
* :func:`glue_value` stores a number, formatted once here, for ``{glue:md}`key```;
* :func:`glue_all` glues a whole dictionary of named values in one call;
* :func:`glue_table` glues a Markdown table for a captioned ``{table}`` directive.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

from symbreak.coarse import percent_of
from symbreak.plotting.tables import constant_columns, markdown_table

__all__ = ["glue_text", "glue_value", "glue_all", "glue_table", "listed", "all_or_count"]


def glue_text(name: str, text: str) -> str:
    """Glue ``text`` under ``name`` as Markdown (paste with ``{glue:md}`name```); return it."""
    from IPython.display import Markdown
    from myst_nb import glue

    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    glue(name, Markdown(text), display=False)
    return text


def glue_value(name: str, value: float | int, fmt: str = ",") -> str:
    """Glue ``format(value, fmt)`` under ``name`` (paste with ``{glue:md}`name```); return the text.

    A percentage format (``".1%"``) is spaced as everywhere in the book, ``"18.6 %"`` with a no-break space
    (:func:`symbreak.coarse.percent_of`), not as Python spaces it.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"value: expected a real number, got {type(value).__name__}")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt: expected a format str such as ',' or '.1%', got {type(fmt).__name__}")
    return glue_text(name, percent_of(value, fmt[:-1] + "f") if fmt.endswith("%") else format(value, fmt))


def glue_all(values: Mapping[str, object], fmt: str = ",") -> dict[str, str]:
    """Glue every entry of ``values`` under its key; return the glued texts by key.

    A ``str`` value is glued as it is (:func:`glue_text`); a number is formatted
    with ``fmt`` (:func:`glue_value`); a pair ``(number, format)`` is formatted
    with its own format. So a chapter glues all the values its prose quotes in
    one call, ``glue_all({"n-params": 1024, "share": (0.25, ".0%")})``.
    """
    if not isinstance(values, Mapping):
        raise TypeError(f"values: expected a mapping from glue names to values, got {type(values).__name__}")
    texts: dict[str, str] = {}
    for name, value in values.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"values: expected non-empty str keys, got {name!r}")
        if isinstance(value, str):
            texts[name] = glue_text(name, value)
        elif isinstance(value, tuple):
            if len(value) != 2 or not isinstance(value[1], str):
                raise ValueError(f"values[{name!r}]: expected a pair (number, format str), got {value!r}")
            texts[name] = glue_value(name, value[0], value[1])
        else:
            texts[name] = glue_value(name, value, fmt)
    return texts


def glue_table(
    name: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    constants: str | None = None,
    among: Sequence[str] = (),
) -> str:
    """Glue a Markdown table under ``name`` for a numbered, captioned table; return its text.

    With ``constants``, those of the columns ``among`` (by header) that say the same in every row
    (:func:`symbreak.plotting.constant_columns`) leave the table and are glued under ``constants`` as a phrase
    for its caption, ``"The same in every row (where defined): $\\tau < 10^{-10}$."`` (``""`` if none is), so that
    the caption says once what every row would repeat.

    The chapter's Markdown wraps it in a ``{table}`` directive that carries the
    caption and the ``:name:`` by which ``{numref}`` refers to it::

        :::{table} The caption.
        :name: tbl-name

        ```{glue:md} name
        :format: myst
        ```
        :::
    """
    if constants is not None:
        header, rows, phrase = constant_columns(header, rows, among)
        glue_text(constants, f"The same in every row (where defined): {phrase}." if phrase else "")
    return glue_text(name, markdown_table(header, rows))


def listed(items: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``: a list as a sentence names it (glued lists of names)."""
    items = list(items)
    if not items or not all(isinstance(i, str) for i in items):
        raise ValueError(f"items: expected a non-empty sequence of str, got {items!r}")
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def all_or_count(part: int, whole: int) -> str:
    """How many of ``whole`` cases, as prose says it: "all 12", "none of the 12", "11 of the 12"."""
    for name, value in (("part", part), ("whole", whole)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not 0 <= part <= whole:
        raise ValueError(f"part: expected a count from 0 to {whole}, got {part!r}")
    return f"all {whole}" if part == whole else f"{'none' if part == 0 else part} of the {whole}"
