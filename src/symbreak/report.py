"""Text for the book's checks that does not depend on rounding: verdicts, margins and coarse magnitudes.

A stored output must be the same on every processor and in every numeric environment (vector
kernels, BLAS code paths, thread counts), so a check never prints the digits that rounding sets: a
count of units of roundoff, or a residual near ``1e-16``.  It prints what the number *says*:

* :func:`bound_check` — the verdict of ``difference ≤ bound`` entry by entry, and the verdict of
  ``difference ≤ fraction · bound`` for a share the author states (``within 10% of it: True``), so
  that the margin is shown as a verdict, not as the measured share; optionally the bound's own size
  to two significant digits (a derived quantity, not a rounding error);
* :func:`below` — the verdict of ``value ≤ threshold`` for a number that is rounding-sized, with the
  threshold (stated, not measured) printed instead of the value;
* :func:`share` — a ratio as the rung of a decade ladder above it (``below 1% of the bound``): only
  for ratios that rounding does not set, since a ratio near a rung moves across it.

The assertions behind the text are as strict as before: the verdict is computed on the full
numbers, only their presentation is coarse.  Whether a printed margin stays on its rung in every
environment is what ``make test`` checks, by running the notebooks in several numeric environments.
"""

from __future__ import annotations

import math

import torch

__all__ = ["MARGINS", "margin", "margin_check", "bound_check", "below", "share", "within_bound"]

#: The rungs of the margin ladder, as shares of a bound (the printed text names the smallest rung
#: above the measured share).  Decades: a share moves across one only if rounding changes it tenfold.
MARGINS: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)


def _as_tensor(name: str, value) -> torch.Tensor:
    if isinstance(value, bool) or not isinstance(value, (torch.Tensor, int, float)):
        raise TypeError(f"{name}: expected a tensor or a real number, got {type(value).__name__}")
    return torch.as_tensor(value, dtype=torch.float64) if not isinstance(value, torch.Tensor) else value.detach()


def within_bound(difference, bound) -> bool:
    """``True`` iff ``|difference| ≤ bound`` entry by entry (shapes broadcast)."""
    difference, bound = _as_tensor("difference", difference), _as_tensor("bound", bound)
    if bool((bound < 0).any()):
        raise ValueError("bound: expected non-negative entries, got a negative one")
    return bool((difference.abs() <= bound).all())


def margin(difference, bound) -> float:
    """The largest share ``|difference| / bound`` over the entries (``0/0`` counts as ``0``, ``x/0`` as ``inf``)."""
    difference, bound = _as_tensor("difference", difference), _as_tensor("bound", bound)
    d, b = torch.broadcast_tensors(difference.abs().double(), bound.double())
    ratio = torch.where(b > 0, d / b.clamp_min(torch.finfo(torch.float64).tiny), torch.where(d > 0, math.inf, 0.0))
    return float(ratio.max()) if ratio.numel() else 0.0


def share(ratio: float, of: str = "the bound") -> str:
    """``'below 1 % of the bound'``: the smallest rung of :data:`MARGINS` above ``ratio``, or ``'above the bound'``."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or math.isnan(ratio) or ratio < 0:
        raise ValueError(f"ratio: expected a real number >= 0, got {ratio!r}")
    for rung in MARGINS:
        if ratio < rung:
            return f"below {rung:.0%} of {of}" if rung >= 0.01 else f"below {rung:.1%} of {of}"
    return f"above {of}" if ratio > 1 else f"at {of}"


def _check_fraction(fraction: float) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(f"fraction: expected a real number in (0, 1], got {fraction!r}")
    return fraction


def margin_check(margins, what: str = "every entry", *, fraction: float = 0.1) -> str:
    """``'every entry within the rounding bound: True; within 10% of it: True'`` from shares already measured.

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
        text += f"; within {fraction * 100:g}% of it: {largest <= fraction}"
    return text


def bound_check(
    difference, bound, what: str = "every entry", *, fraction: float = 0.1, show_bound: bool = False
) -> str:
    """``'every entry within the rounding bound: True; within 10% of it: True'``.

    Two verdicts, both on the full numbers: ``|difference| ≤ bound`` and ``|difference| ≤ fraction·bound``
    entry by entry (:func:`margin_check` of the largest share).  The second says how much room is left
    with a threshold the author chooses (far from the measured share, so that rounding elsewhere cannot
    move the verdict), instead of printing the share itself.  ``show_bound`` adds the largest entry of
    the bound to two significant digits (a derived quantity, stable across processors, unlike the
    difference itself).
    """
    text = margin_check(margin(difference, bound), what, fraction=_check_fraction(fraction))
    if show_bound:
        text += f" (the bound is at most {float(_as_tensor('bound', bound).max()):.1e})"
    return text


def below(value, threshold: float, what: str) -> str:
    """``'<what> below 1e-14: True'`` for a rounding-sized ``value`` (the largest entry of a tensor)."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not threshold > 0:
        raise ValueError(f"threshold: expected a real number > 0, got {threshold!r}")
    largest = float(_as_tensor("value", value).abs().max())
    return f"{what} below {threshold:.0e}: {largest < threshold}"
