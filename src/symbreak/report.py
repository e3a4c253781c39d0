"""Text for the book's checks that does not depend on rounding: verdicts, margins and coarse magnitudes.

A stored output must be the same on every processor and in every numeric environment (vector
kernels, BLAS code paths, thread counts), so a check never prints the digits that rounding sets: a
count of units of roundoff, or a residual near ``1e-16``.  It prints what the number *says*:

* :func:`bound_check` — the verdict of ``difference ≤ bound`` entry by entry, and the verdict of
  ``difference ≤ fraction · bound`` for a share the author states (``within 10 % of it: True``), so
  that the margin is shown as a verdict, not as the measured share; optionally the bound's own size
  to two significant digits (a derived quantity, not a rounding error);
* :func:`below` — the verdict of ``value ≤ threshold`` for a number that is rounding-sized, with the
  threshold (stated, not measured) printed instead of the value;
* :func:`margin_check` — the two verdicts of :func:`bound_check` from shares measured earlier;
* :func:`vanishes` and :func:`holds_for` — one verdict line for exact (sympy) results, instead of
  their raw repr (``Matrix([[0, 0]])``, a dictionary of booleans);
* :func:`stacked` — a displayed result over lines, a heading and one formula per indented line, for a phone's width.

The assertions behind the text are as strict as before: the verdict is computed on the full
numbers, only their presentation is coarse.  Whether a stated share stays far enough from the measured one in
every environment is what ``make test`` checks, by running the notebooks in several numeric environments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy as sp

from symbreak.coarse import magnitude, percent
from symbreak.numerics import margin, real_tensor

__all__ = ["margin_check", "bound_check", "below", "vanishes", "holds_for", "stacked", "VERDICT_WIDTH"]

#: The longest verdict line that the desktop page's output column shows on one line whatever its characters: about
#: 100 ASCII characters fit at 1280 px, fewer of σ, −, ⱼ, which come from wider fallback fonts; a convention.
VERDICT_WIDTH = 84


def _check_fraction(fraction: float) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(f"fraction: expected a real number in (0, 1], got {fraction!r}")
    return fraction


def margin_check(margins, what: str = "every entry", *, fraction: float = 0.1) -> str:
    """``'every entry within the rounding bound: True; within 10 % of it: True'`` from shares already measured.

    ``margins`` are shares ``|difference| / bound`` (:func:`margin`), one per check or one for all;
    the two verdicts are: every share at most 1, and every share at most ``fraction``, a share the
    author states far from the measured ones (so that rounding elsewhere cannot move the verdict).
    The shares themselves are rounding errors and are not printed.
    """
    _check_fraction(fraction)
    values = [margins] if isinstance(margins, (int, float)) and not isinstance(margins, bool) else list(margins)
    if not values:
        raise ValueError("margins: expected at least one share, got none")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
            raise ValueError(f"margins: expected real numbers >= 0, got {value!r}")
    largest = max(values)
    text = f"{what} within the rounding bound: {largest <= 1}"
    if fraction < 1:
        text += f"; within {percent(fraction)} of it: {largest <= fraction}"
    return text


def bound_check(
    difference, bound, what: str = "every entry", *, fraction: float = 0.1, show_bound: bool = False
) -> str:
    """``'every entry within the rounding bound: True; within 10 % of it: True'``.

    Two verdicts, both on the full numbers: ``|difference| ≤ bound`` and ``|difference| ≤ fraction·bound``
    entry by entry (:func:`margin_check` of the largest share).  The second says how much room is left
    with a threshold the author chooses (far from the measured share, so that rounding elsewhere cannot
    move the verdict), instead of printing the share itself.  ``show_bound`` adds the largest entry of
    the bound to two significant digits (a derived quantity, stable across processors, unlike the
    difference itself).
    """
    text = margin_check(margin(difference, bound), what, fraction=_check_fraction(fraction))
    if show_bound:
        text += f" (the bound is at most {magnitude(float(real_tensor('bound', bound).max()))})"
    return text


def below(value, threshold: float, what: str) -> str:
    """``'<what> below 10⁻¹⁴: True'`` for a rounding-sized ``value`` (the largest entry of a tensor).

    The threshold is printed by :func:`symbreak.coarse.magnitude` (two significant digits, no e-notation).
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 0:
        raise ValueError(f"threshold: expected a real number > 0, got {threshold!r}")
    largest = float(real_tensor("value", value).abs().max())
    return f"{what} below {magnitude(threshold)}: {largest < threshold}"


def _is_zero(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_zero(item) for item in value)
    if isinstance(value, sp.MatrixBase):
        return all(entry == 0 for entry in value)
    if isinstance(value, (int, float, sp.Basic)) and not isinstance(value, bool):
        return sp.sympify(value) == 0
    raise TypeError(f"value: expected a sympy expression or matrix, or a tuple of them, got {type(value).__name__}")


def vanishes(value, what: str) -> str:
    """``'<what> identically zero: True'`` for an exact result (expression, matrix, or a tuple of them).

    The verdict is structural: every entry must already be the number 0 (the identities of
    :mod:`symbreak.symbolic` return their difference simplified), so an unsimplified zero reads False.
    """
    return f"{what} identically zero: {_is_zero(value)}"


def holds_for(verdicts, what: str) -> str:
    """``'<what>: holds for relu, gelu; fails for identity'`` from ``{name: verdict}``, in the given order; a line
    longer than :data:`VERDICT_WIDTH` puts ``holds for …`` and ``fails for …`` on indented lines of their own."""
    if not isinstance(verdicts, dict) or not verdicts:
        raise ValueError(f"verdicts: expected a non-empty dict of name -> bool, got {verdicts!r}")
    if not all(isinstance(v, bool) for v in verdicts.values()):
        raise TypeError(f"verdicts: expected bool values, got {list(verdicts.values())!r}")
    held = [str(name) for name, verdict in verdicts.items() if verdict]
    failed = [str(name) for name, verdict in verdicts.items() if not verdict]
    parts = [f"holds for {', '.join(held)}"] if held else []
    parts += [f"fails for {', '.join(failed)}"] if failed else []
    line = f"{what}: {'; '.join(parts)}"
    return line if len(line) <= VERDICT_WIDTH else f"{what}:\n  " + ";\n  ".join(parts)


def stacked(head: str, lines: Sequence[str], *, sep: str = ",") -> str:
    """LaTeX of ``head`` on a line of its own and each of ``lines`` on an indented line below it, ended by ``sep``
    but the last, for a display.

    On one line some displayed results ran past a phone's column (chapter 10's differences of the rank-d and full
    forms, chapter 9's gauge verdicts); the caller keeps their words (``head`` ends with ``:``, a line may begin
    with ``=``).
    """
    if isinstance(lines, str) or not isinstance(head, str) or not head or not lines:
        raise TypeError(f"head, lines: expected a string and a sequence of strings of LaTeX, got {head!r}, {lines!r}")
    if not all(isinstance(line, str) and line for line in lines):
        raise TypeError(f"lines: expected non-empty strings of LaTeX, got {lines!r}")
    body = (sep + r"\\ &\quad ").join(lines)
    return r"\begin{aligned}&" + head + r"\\ &\quad " + body + r"\end{aligned}"
