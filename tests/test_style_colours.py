"""The family colours of ``symbreak.plotting.style`` read on the light page and on the dark one.

In dark mode the book shows every figure through the CSS filter of ``_static/book.css`` (an inversion, then a half
turn of hue).  Each family colour must keep a contrast of at least 3:1 with the page's ground in both modes: the
WCAG 2.1 minimum for graphical objects (success criterion 1.4.11), a stated convention.  The filter is read from
the stylesheet and applied by the Filter Effects spec's matrices, in sRGB as Chromium applies CSS filter functions;
the contrast is WCAG's relative luminance ratio.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from symbreak.plotting import FAMILY_COLOURS

ROOT = Path(__file__).resolve().parents[1]
#: WCAG 2.1, 1.4.11 (non-text contrast): graphical objects need 3:1 against adjacent colours.
MIN_CONTRAST = 3.0


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    h = hex_colour.lstrip("#")
    return tuple(int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))


def _luminance(rgb) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour with channels in [0, 1]."""
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def dark_filter() -> tuple[float, float]:
    """``(invert amount, hue-rotate degrees)`` of the dark-mode figure filter in ``_static/book.css``."""
    css = (ROOT / "_static" / "book.css").read_text()
    rule = r'data-theme="dark"\][^{]*figure img[^{]*\{[^}]*'
    m = re.search(rule + r"filter:\s*invert\(([\d.]+)\)\s*hue-rotate\((\d+)deg\)", css)
    assert m, "the dark-mode figure filter is not in _static/book.css"
    return float(m.group(1)), float(m.group(2))


def filtered(rgb, amount: float, degrees: float) -> tuple[float, float, float]:
    """``rgb`` through ``invert(amount) hue-rotate(degrees)`` (Filter Effects Module Level 1, section 13)."""
    inv = [amount * (1 - c) + (1 - amount) * c for c in rgb]
    cs, sn = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    rows = [
        (0.213 + 0.787 * cs - 0.213 * sn, 0.715 - 0.715 * cs - 0.715 * sn, 0.072 - 0.072 * cs + 0.928 * sn),
        (0.213 - 0.213 * cs + 0.143 * sn, 0.715 + 0.285 * cs + 0.140 * sn, 0.072 - 0.072 * cs - 0.283 * sn),
        (0.213 - 0.213 * cs - 0.787 * sn, 0.715 - 0.715 * cs + 0.715 * sn, 0.072 + 0.928 * cs + 0.072 * sn),
    ]
    return tuple(min(1.0, max(0.0, sum(r * c for r, c in zip(row, inv, strict=True)))) for row in rows)


def test_the_filter_model_matches_chromium():
    # Pixels read from a Chromium screenshot of swatches under invert(0.93) hue-rotate(180deg):
    # #17becf became #008593 and white became #121212.
    assert [round(255 * c) for c in filtered(_rgb("#17becf"), 0.93, 180)] == [0, 133, 147]
    assert [round(255 * c) for c in filtered((1.0, 1.0, 1.0), 0.93, 180)] == [18, 18, 18]


def test_the_contrast_check_can_fail():
    # The old colour of the rank-R family: 2.3:1 on white.
    assert contrast(_rgb("#17becf"), (1.0, 1.0, 1.0)) < MIN_CONTRAST


@pytest.mark.parametrize("family", sorted(FAMILY_COLOURS))
def test_family_colour_reads_in_light_and_dark_mode(family):
    colour = _rgb(FAMILY_COLOURS[family])
    white = (1.0, 1.0, 1.0)
    amount, degrees = dark_filter()
    light = contrast(colour, white)
    dark = contrast(filtered(colour, amount, degrees), filtered(white, amount, degrees))
    assert light >= MIN_CONTRAST and dark >= MIN_CONTRAST, f"{family}: {light:.2f}:1 light, {dark:.2f}:1 dark"


def _rhythm(style) -> str:
    """What a reader sees along a line drawn in ``style``: "solid", "dots", "dashes", "long dashes" or "dash and
    dot" (any number of dots), from matplotlib's dash pattern at line width 1: an "on" segment of at most 1.5 points
    is a dot, one of 6 points or more a long dash.  Two dash-and-dot patterns read alike whatever their dot count."""
    from matplotlib.lines import _get_dash_pattern

    _, dashes = _get_dash_pattern(style)
    if not dashes:
        return "solid"
    on = dashes[0::2]
    dots, dashes_ = [s for s in on if s <= 1.5], [s for s in on if s > 1.5]
    if dots and dashes_:
        return "dash and dot"
    if dots:
        return "dots"
    return "long dashes" if max(dashes_) >= 6 else "dashes"


def test_the_rhythm_tells_the_old_tanh_from_nothing():
    # The old tanh style, dash-dot-dot, read as the sigmoid's dash-dot along a curve (review of Figs. 14.1, 15.1).
    assert _rhythm((0, (3, 1, 1, 1, 1, 1))) == _rhythm("-.") == "dash and dot"
    assert [_rhythm(s) for s in ("-", ":", "--", (0, (10, 3)))] == ["solid", "dots", "dashes", "long dashes"]


def test_no_two_sigmas_share_a_line_style():
    """Colour says the family, line style the σ (``SIGMA_LINESTYLES``): the gated family draws ReLU, GELU, SiLU,
    sigmoid and tanh in one colour, so no two of them may share a rhythm; σ = identity is the σ of one family only (the
    bilinear layer, a colour of its own) and is the one σ drawn solid like ReLU."""
    from symbreak.plotting import SIGMA_LINESTYLES

    nonlinear = {sigma: _rhythm(style) for sigma, style in SIGMA_LINESTYLES.items() if sigma != "identity"}
    alike = [(a, b) for a in nonlinear for b in nonlinear if a < b and nonlinear[a] == nonlinear[b]]
    assert alike == [], f"σ drawn alike: {alike} ({nonlinear})"
    assert _rhythm(SIGMA_LINESTYLES["identity"]) == "solid"


def test_the_faint_background_lines_stand_apart_from_the_mlp_grey():
    """The faint lines behind each panel of the small multiples (``plotting.curves.FAINT``) keep a contrast of 3:1
    with the standard MLPs' grey, on the light page and through the dark-mode filter, so a grey MLP line is not read
    as one of them; the old faint grey, 0.82, failed it on the light page."""
    from symbreak.plotting.curves import FAINT

    amount, degrees = dark_filter()
    mlp = _rgb(FAMILY_COLOURS["kv"])

    def both(grey: float) -> tuple[float, float]:
        faint = (grey, grey, grey)
        dark = contrast(filtered(mlp, amount, degrees), filtered(faint, amount, degrees))
        return contrast(mlp, faint), dark

    assert min(both(float(FAINT))) >= MIN_CONTRAST > min(both(0.82))
