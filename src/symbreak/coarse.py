"""Coarse, environment-stable presentation of measured numbers and stated thresholds (chapter 5, Parts IV–V).

A stored notebook output must be the same in every numeric environment, and the numbers of Part IV
and V come from long float computations (training, settling, Hessians) whose last digits move with
the vector kernels and BLAS code paths.  This module complements :mod:`symbreak.report` with the
presentations these chapters need:

* :func:`magnitude` — a stated threshold or a coarse magnitude as text without e-notation
  (``1e-14 → "10⁻¹⁴"``, ``2.2e-14 → "2.2·10⁻¹⁴"``), for printed verdicts;
* :func:`percent` and :func:`percent_of` — shares as percentages, spaced one way (``"25 %"``, the
  space a no-break space, :data:`PERCENT_SIGN`, so that a line never breaks between a number and its sign);
* :func:`below_share` — the verdict ``ratio < threshold`` for a rounding-sized ratio to its bound,
  against a threshold *stated* in the notebook (a fixed share such as 25 %), not a rung picked from
  the measured value, so that the text does not depend on where the value falls;
* :func:`snap_log`, :func:`snap_linear` and :func:`bucket_below` — figure data rounded (to four
  significant digits, or to a multiple of a step) finer than the eye can see and far coarser than
  the spread of the values across environments.  A PNG drawn by Agg changes with the last bits of
  its data (a change of 1e-15 in one point of a straight line, or in an axis limit, moves pixels),
  so a figure compared by nbval is drawn from snapped values: equal snapped values, equal pixels.

The assertions stay on the full numbers; only their presentation is coarse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from symbreak.costs import latex_count

#: The book's percent sign as it follows a number: a no-break space (U+00A0), then ``%``.  Every
#: percentage the package prints, glues or tabulates ends with it, so no line (HTML or PDF) starts
#: with a lone ``%``; the PDF's LaTeX receives it as ``~%``.
PERCENT_SIGN = "\u00a0%"

__all__ = [
    "PERCENT_SIGN",
    "magnitude",
    "percent",
    "percent_of",
    "below_share",
    "snap_log",
    "snap_linear",
    "bucket_below",
]


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name}: expected a number, got nan")
    return value


def magnitude(value: float, digits: int = 2) -> str:
    """``value`` to at most ``digits`` significant digits, in plain text without e-notation.

    ``1e-14 → "10⁻¹⁴"``, ``2.2e-14 → "2.2·10⁻¹⁴"``, ``2.5e3 → "2.5·10³"``; from ``10⁻³`` to below
    ``10³`` a plain decimal (``"0.005"``, ``"3"``, ``"250"``).  Zero is ``"0"``; a negative value has a
    leading ``"−"``.  Trailing zeros of the mantissa are dropped, so a stated
    power of ten reads as one.  The powers are :func:`symbreak.costs.latex_count`'s plain-text form.
    """
    value = _real("value", value)
    if not math.isfinite(value):
        raise ValueError(f"value: expected a finite number, got {value!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits: expected an int >= 1, got {digits!r}")
    if value == 0:
        return "0"
    mantissa, exponent = f"{abs(value):.{digits - 1}e}".split("e")
    if -3 <= int(exponent) < 3:  # "0.005", "3", "250": no power of ten
        return f"{float(f'{value:.{digits}g}'):g}".replace("-", "−")
    decimals = len(mantissa.rstrip("0").rstrip(".").partition(".")[2])
    text = latex_count(abs(value), decimals, unicode=True)
    if text.startswith("1·"):  # a power of ten: "10⁻¹⁴", not "1·10⁻¹⁴"
        text = text[2:]
    return ("−" if value < 0 else "") + text


def percent(share: float) -> str:
    """``0.25 → "25 %"``, ``0.001 → "0.1 %"``: a stated share in ``(0, 1]`` as a percentage (two significant digits)."""
    share = _real("share", share)
    if not 0 < share <= 1:
        raise ValueError(f"share: expected a number in (0, 1], got {share!r}")
    return f"{float(f'{100 * share:.2g}'):g}{PERCENT_SIGN}"


def percent_of(share: float, spec: str = ".1f") -> str:
    """``(0.1862, ".1f") → "18.6 %"``: ``100 · share`` in the format ``spec``, then the book's spaced sign.

    Every percentage the book prints or glues is spaced this way (as :func:`percent` spaces it);
    ``spec`` is a float format (``".0f"``, ``"+.1f"``, ``"6.1f"``), its width counting the number only;
    a negative share has a true minus, ``"−0.1 %"``, as in the book's tables.
    """
    share = _real("share", share)
    if not isinstance(spec, str):
        raise TypeError(f"spec: expected a format str such as '.1f', got {type(spec).__name__}")
    try:
        number = format(100 * share, spec)
    except ValueError:
        raise ValueError(f"spec: expected a float format such as '.1f', got {spec!r}") from None
    return f"{number.replace('-', '−')}{PERCENT_SIGN}"


def below_share(ratio: float, threshold: float, of: str = "the bound") -> str:
    """``"below 25 % of the bound"`` if ``ratio < threshold``, else ``"not below 25 % of the bound"``.

    ``ratio`` is a measured ``|difference| / bound`` (at least 0); ``threshold`` is stated by the
    caller, in ``(0, 1]``.  The text names the threshold, never the measured ratio.
    """
    ratio = _real("ratio", ratio)
    if ratio < 0:
        raise ValueError(f"ratio: expected a number >= 0, got {ratio!r}")
    text = f"below {percent(threshold)} of {of}"
    return text if ratio < threshold else "not " + text


def snap_log(values: Sequence[float] | np.ndarray, digits: int = 4) -> np.ndarray:
    """``values`` rounded to ``digits`` significant decimal digits, for a log axis (zeros stay zero).

    Four digits move a value by at most 0.05 % — a small fraction of a pixel on any axis of the
    book — and far more than the relative spread of the values the chapters plot.  The rounding goes
    through Python's correctly rounded decimal conversion, so equal inputs give bitwise equal
    outputs on every processor.
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 15:
        raise ValueError(f"digits: expected an int in [1, 15], got {digits!r}")
    v = np.asarray(values, dtype=float)
    if np.isnan(v).any() or (v < 0).any():
        raise ValueError("values: expected numbers >= 0 for a log axis")
    return np.array([float(f"{x:.{digits - 1}e}") for x in v.ravel()], dtype=float).reshape(v.shape)


def snap_linear(values: Sequence[float] | np.ndarray, step: float) -> np.ndarray:
    """``values`` rounded to the nearest multiple of ``step``, for a linear axis (NaN and inf are kept)."""
    v = np.asarray(values, dtype=float)
    if not step > 0 or math.isinf(step):
        raise ValueError(f"step: expected a finite step > 0, got {step!r}")
    return np.round(v / step) * step


def bucket_below(values: Sequence[float] | np.ndarray, threshold: float, digits: int = 4) -> tuple[np.ndarray, float]:
    """``(|values| with every entry ≤ threshold set to 0 and the rest snapped, snapped threshold)``.

    For a figure of a spectrum against a rounding threshold: the entries at or below it are set by
    rounding, so they are drawn in one bucket (as zeros, which the caller places at the axis edge),
    and the entries above it and the threshold itself at ``digits`` significant digits (:func:`snap_log`).
    """
    threshold = _real("threshold", threshold)
    if not threshold > 0:
        raise ValueError(f"threshold: expected a number > 0, got {threshold!r}")
    v = np.abs(np.asarray(values, dtype=float))
    if np.isnan(v).any():
        raise ValueError("values: expected numbers, got nan")
    shown = snap_log(np.where(v <= threshold, 0.0, v), digits)
    return shown, float(snap_log([threshold], digits)[0])
