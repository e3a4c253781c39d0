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
* :func:`margin_check` — the two verdicts of :func:`bound_check` from shares measured earlier.

The assertions behind the text are as strict as before: the verdict is computed on the full
numbers, only their presentation is coarse.  Whether a stated share stays far enough from the measured one in
every environment is what ``make test`` checks, by running the notebooks in several numeric environments.
"""

from __future__ import annotations

import math

from symbreak.coarse import percent
from symbreak.numerics import margin, real_tensor

__all__ = ["margin_check", "bound_check", "below"]


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
        text += f" (the bound is at most {float(real_tensor('bound', bound).max()):.1e})"
    return text


def below(value, threshold: float, what: str) -> str:
    """``'<what> below 1e-14: True'`` for a rounding-sized ``value`` (the largest entry of a tensor)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 0:
        raise ValueError(f"threshold: expected a real number > 0, got {threshold!r}")
    largest = float(real_tensor("value", value).abs().max())
    return f"{what} below {threshold:.0e}: {largest < threshold}"
