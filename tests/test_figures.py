"""Every figure of the book legible at the size it is shown: its PNG at DPI pixels per inch, shown at its size in
inches (so never scaled down, at most MAX_WIDTH_PX wide), with no text smaller than MIN_FONT_PT points.

A stored figure is a notebook output with a PNG (glued, ``application/papermill.record/image/png``, or
displayed); its displayed width is the ``width`` the book's figure style puts into the output's metadata,
which the HTML's ``<img>`` takes.
"""

from __future__ import annotations

import ast
import base64
import json
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pytest

from figure_checks import clashes
from symbreak.plotting import (
    CSS_DPI,
    DPI,
    FAMILY_COLOURS,
    MAX_WIDTH_PX,
    MIN_FONT_PT,
    PNG,
    STYLE,
    figure,
    label_ends,
    mean_band,
    png_size,
    spread_positions,
)
from symbreak.plotting.curves import BAND_ALPHA, FAINT, curve_panel

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
SOURCES = sorted((ROOT / "src" / "symbreak").rglob("*.py"))
PNG_KEYS = ("application/papermill.record/image/png", "image/png")


def _figures(path: Path):
    for cell in json.loads(path.read_text())["cells"]:
        for out in cell.get("outputs", []):
            for key in PNG_KEYS:
                if key in out.get("data", {}):
                    yield base64.b64decode(out["data"][key]), out.get("metadata", {}).get("image/png", {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_stored_figure_is_shown_at_its_size_at_200_dpi(path):
    for data, meta in _figures(path):
        px, _ = png_size(data)
        assert "width" in meta, f"{path.name}: a figure without a displayed width"
        assert meta["width"] <= MAX_WIDTH_PX, f"{path.name}: a figure {meta['width']} px wide, wider than the column"
        assert px / meta["width"] * CSS_DPI >= 200 - 1, f"{path.name}: {px} px shown at {meta['width']} px"


def test_the_book_has_figures_to_check():
    assert sum(1 for p in NOTEBOOKS for _ in _figures(p)) >= 25


def test_the_style_sizes():
    assert DPI >= 200 and STYLE["savefig.dpi"] == DPI
    sizes = {k: v for k, v in STYLE.items() if k.endswith(("size", "fontsize")) and not k.startswith("figure.")}
    points = [mpl.font_manager.FontProperties(size=v).get_size_in_points() for v in sizes.values()]
    assert sizes and min(points) >= MIN_FONT_PT


def _literal_sizes(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("fontsize", "size", "labelsize"):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, (int, float, str)):
                yield node.value.value


def test_no_text_in_the_package_below_the_smallest_size():
    """Every literal font size in the package's drawing code (``fontsize=…``, ``size=…``) is at least
    MIN_FONT_PT points (named sizes such as "small" resolved against the style's 10 pt)."""
    small = []
    for path in SOURCES:
        for value in _literal_sizes(ast.parse(path.read_text())):
            with mpl.rc_context({"font.size": STYLE["font.size"]}):
                points = mpl.font_manager.FontProperties(size=value).get_size_in_points()
            if points < MIN_FONT_PT:
                small.append(f"{path.relative_to(ROOT)}: {value!r}")
    assert not small, small


def test_png_carries_its_displayed_width_and_figures_refuse_to_be_too_wide():
    fig, _ = figure(width=4.0, height=2.0)
    from symbreak.plotting.style import _png

    png = PNG(_png(fig), "test")
    data, meta = png._repr_png_()
    assert meta["width"] == png.width == round(png_size(data)[0] * CSS_DPI / DPI)
    assert abs(png.width - 4.0 * CSS_DPI) < 0.2 * 4.0 * CSS_DPI  # tight bounding box: about its size in inches
    with pytest.raises(ValueError, match="width"):
        figure(width=MAX_WIDTH_PX / CSS_DPI + 0.5)
    with pytest.raises(ValueError, match="PNG"):
        png_size(b"not a png")


def test_the_intro_shows_the_chain_figure_at_its_size():
    """The intro is not a notebook: its ``{figure}`` states the width, which must be the PNG's size in inches."""
    import re

    text = (ROOT / "book" / "intro.md").read_text()
    found = re.search(r"```\{figure\} (figures/[\w.-]+\.png)\n(?::[a-z]+: .*\n)*?:width: (\d+)px", text)
    assert found, "intro.md: expected the chain figure with a width in px"
    px, _ = png_size((ROOT / "book" / found.group(1)).read_bytes())
    assert int(found.group(2)) == round(px * CSS_DPI / DPI) <= MAX_WIDTH_PX


def test_spread_positions_keeps_order_and_gap_and_moves_nothing_already_apart():
    """Spaced positions stay where they are; crowded ones end at least the gap apart, in their order, within the
    bounds; a crowd at the top is pushed down, not out."""
    assert np.array_equal(spread_positions([0.1, 0.9, 0.5], 0.1), [0.1, 0.9, 0.5])
    crowded = spread_positions([0.50, 0.49, 0.51, 0.98, 0.99], 0.05)
    order = np.argsort([0.50, 0.49, 0.51, 0.98, 0.99], kind="stable")
    assert (np.diff(crowded[order]) >= 0.05 - 1e-12).all()
    assert crowded.min() >= 0.0 and crowded.max() <= 1.0
    assert crowded[4] == 1.0 and crowded[3] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="positions"):
        spread_positions([0.1, float("nan")], 0.1)
    with pytest.raises(ValueError, match="gap"):
        spread_positions([0.1], -1.0)


def test_label_ends_writes_each_label_in_its_lines_colour_spread_apart():
    """Two curves ending at the same height get two labels at least ``gap_pt`` points apart, each in its line's
    colour, right of the axes; a label that is not a line is refused."""
    fig, (ax,) = figure(width=4.0, height=3.0)
    fig.subplots_adjust(right=0.7)
    a = ax.plot([0, 1], [0, 1], color="#ff0000")[0]
    b = ax.plot([0, 1], [1, 1], color="#0000ff")[0]
    label_ends(ax, {"a": a, "b": b}, gap_pt=12.0)
    ta, tb = ax.texts
    (_, ya), (_, yb) = ta.get_position(), tb.get_position()
    assert (ta.get_text(), ta.get_color(), tb.get_text(), tb.get_color()) == ("a", "#ff0000", "b", "#0000ff")
    height_pt = ax.get_position().height * fig.get_figheight() * 72
    assert abs(ya - yb) * height_pt >= 12.0 - 1e-9 and ta.get_position()[0] > 1.0
    with pytest.raises(TypeError, match="labels"):
        label_ends(ax, {"c": "not a line"})


def test_label_ends_labels_a_line_that_leaves_the_panel_where_it_was_last_seen():
    """A line cut by the axes' limits is labelled level with its last point inside them, not with the point off the
    panel; a line with no point inside is refused."""
    fig, (ax,) = figure(width=4.0, height=3.0)
    fig.subplots_adjust(right=0.7)
    line = ax.plot([0, 1, 2], [0.2, 0.6, 5.0])[0]
    ax.set(xlim=(0, 2), ylim=(0, 1))
    label_ends(ax, {"cut": line})
    (text,) = ax.texts
    assert text.get_position()[1] == pytest.approx(0.6)  # axes coordinates: y = 0.6 of the range 0..1
    gone = ax.plot([0, 2], [3.0, 4.0])[0]
    with pytest.raises(ValueError, match="inside the axes"):
        label_ends(ax, {"gone": gone})
    label_ends(ax, {"gone": gone, "cut again": line}, hidden="skip")  # the line off the panel goes unnamed
    assert [t.get_text() for t in ax.texts] == ["cut", "cut again"]
    with pytest.raises(ValueError, match="hidden: expected 'raise' or 'skip'"):
        label_ends(ax, {"cut": line}, hidden="drop")


def test_label_ends_names_never_clash_even_for_lines_ending_at_one_point():
    """Twelve lines ending at one point (and four off the top of the panel's range, cut) get twelve labels whose
    boxes, measured by the renderer at the book's smallest size, neither intersect nor touch the panel."""
    fig, (ax,) = figure(width=5.0, height=3.0)
    fig.subplots_adjust(right=0.6)
    lines = {f"form {i}": ax.plot([0, 1], [i / 11, 0.5])[0] for i in range(12)}
    lines |= {f"cut {i}": ax.plot([0, 1, 2], [0.5, 0.9 + 0.02 * i, 3.0])[0] for i in range(4)}
    ax.set(xlim=(0, 2), ylim=(0, 1))
    label_ends(ax, lines)
    assert len(ax.texts) == 16 and clashes(fig, pad_pt=0) == []


def test_every_family_colour_reads_over_its_own_band_in_light_and_dark_mode():
    """The bands of the small multiples (``curve_panel``: Figs. 14.1 and 15.1) are lighter than their lines: each
    family's line keeps a contrast of 3:1 over its own band (its colour at ``BAND_ALPHA`` over the white page), on the
    light page and through the dark-mode filter; the old opacity of 0.18 failed it for the bilinear layer's green."""
    from test_style_colours import MIN_CONTRAST, _rgb, contrast, dark_filter, filtered

    amount, degrees = dark_filter()

    def worst(alpha: float) -> float:
        out = []
        for hex_colour in FAMILY_COLOURS.values():
            line = _rgb(hex_colour)
            band = tuple(alpha * c + (1 - alpha) for c in line)
            out += [contrast(line, band), contrast(filtered(line, amount, degrees), filtered(band, amount, degrees))]
        return min(out)

    assert worst(BAND_ALPHA) >= MIN_CONTRAST > worst(0.18)


def test_curve_panel_draws_its_curves_over_the_others_faint():
    """``curve_panel``: the curves shown get a line in their colour and style and a band at ``BAND_ALPHA``; the others
    one thin faint line each, beneath; a curve shown but not given is refused."""
    _, (ax,) = figure(width=4.0, height=3.0)
    x = np.arange(1, 6)
    samples = np.stack([1.0 / (x + s) for s in range(3)], axis=1)
    styles = {"a": ("#7f7f7f", "--"), "b": ("#d62728", "-")}
    lines = curve_panel(ax, {"a": (x, samples), "b": (x, 2 * samples)}, ["a"], styles)
    (band,) = ax.collections
    faint, shown = ax.get_lines()
    assert lines == {"a": shown} and band.get_alpha() == BAND_ALPHA
    assert (shown.get_color(), shown.get_linestyle(), faint.get_color()) == ("#7f7f7f", "--", FAINT)
    assert faint.get_zorder() < band.get_zorder() < shown.get_zorder()
    assert np.allclose(faint.get_ydata(), (2 * samples).mean(axis=1))
    with pytest.raises(ValueError, match="shown"):
        curve_panel(ax, {"b": (x, samples)}, ["a"], styles)


def test_curve_panel_marks_the_rank_r_family_and_draws_the_background_thin():
    """The rank-R family's teal reads close to the symmetric forms' blue at the displayed size (Fig. 14.1, SiLU row),
    so its line carries a marker along it (``style.FAMILY_MARKERS``), the others none; the faint background lines are
    thinner than half a panel's own."""
    from symbreak.plotting.curves import FAINT_LW
    from symbreak.plotting.style import FAMILY_MARKERS

    _, (ax,) = figure(width=4.0, height=3.0)
    x = np.arange(1, 31)
    samples = np.stack([1.0 / (x + s) for s in range(3)], axis=1)
    styles = {"rank": (FAMILY_COLOURS["rank R"], ":"), "sym": (FAMILY_COLOURS["symmetric"], ":")}
    lines = curve_panel(ax, {"rank": (x, samples), "sym": (x, samples), "other": (x, samples)}, ["rank", "sym"], styles)
    assert lines["rank"].get_marker() == FAMILY_MARKERS["rank R"] and lines["sym"].get_marker() in ("", "None", None)
    (faint,) = [line for line in ax.get_lines() if line.get_color() == FAINT]
    assert faint.get_linewidth() == FAINT_LW < lines["sym"].get_linewidth() / 2
    with pytest.raises(ValueError, match="alpha"):
        mean_band(ax, x, samples, label="c", alpha=0.0)


def test_clashes_finds_texts_that_meet_and_legends_and_labels_over_data():
    """A clean figure has none; a label on a tick label, a legend over a line, a label over a bar and an annotation
    across the frame are each found; a tick label outside the view (undrawn) is no fault."""
    fig, (ax,) = figure(width=4.0, height=3.0)
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_yticks([-1.0, 0.0, 0.5, 1.0])  # the tick at -1 is outside the view, so its label is not drawn
    ax.set(xlim=(-0.1, 1.1), ylim=(-0.1, 1.1), title="clean")
    ax.legend(loc="upper left")
    ax.annotate("apart", (0.9, 0.1), ha="right")
    assert clashes(fig) == []
    ax.legend(loc="center")  # over the line's middle
    ax.annotate("on a tick", (0.0, 0.5), xytext=(-8, 0), textcoords="offset points", ha="right", va="center")
    ax.bar([0.3], [0.2], width=0.2)
    ax.text(0.25, 0.05, "on a bar")
    ax.annotate("across", (1.1, 0.3), ha="center")
    found = "\n".join(clashes(fig))
    assert "'apart'" not in found
    assert "a legend covers data" in found
    assert "texts meet: '0.5' and 'on a tick'" in found or "texts meet: 'on a tick' and '0.5'" in found
    assert "'on a bar' over data" in found and "'across' crosses the frame" in found
