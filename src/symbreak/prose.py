"""Put computed values into the book's prose (myst-nb ``glue``), never typed by hand.

* :func:`glue_text` stores a string for ``{glue:md}`key``` — shown without quotes;
* :func:`glue_value` stores a number, formatted once here, for ``{glue:md}`key```.
"""

from __future__ import annotations

__all__ = ["glue_text", "glue_value"]


def glue_text(name: str, text: str) -> str:
    """Glue ``text`` under ``name`` as Markdown (paste with ``{glue:md}`name```); return it."""
    from IPython.display import Markdown
    from myst_nb import glue

    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    glue(name, Markdown(text), display=False)
    return text


def glue_value(name: str, value: float | int, fmt: str = ",") -> str:
    """Glue ``format(value, fmt)`` under ``name`` (paste with ``{glue:md}`name```); return the text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"value: expected a real number, got {type(value).__name__}")
    return glue_text(name, format(value, fmt))
