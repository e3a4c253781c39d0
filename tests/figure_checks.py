"""Checks of drawn figures for what a reader stumbles on, from matplotlib's renderer extents.

``clashes(fig)`` lists each text whose box meets another's, each legend or text over data, and each label of an axes
that crosses its frame.  The page tests of the chapters call it on their figures; tests/test_figures.py shows it finds
each kind of fault.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox


def _drawn_texts(fig):
    """``(text, box in pixels)`` for every text of ``fig`` that is drawn: titles, axis labels, annotations, legend
    entries and the tick labels inside the view (matplotlib keeps labels of ticks outside it, undrawn)."""
    undrawn = set()
    for ax in [*fig.axes, *(child for a in fig.axes for child in a.child_axes)]:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = high - low
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not low - 1e-9 * span <= tick.get_loc() <= high + 1e-9 * span:
                    undrawn.update({id(tick.label1), id(tick.label2)})
    out, seen = [], set()
    for text in fig.findobj(Text):
        if id(text) in seen or id(text) in undrawn or not text.get_visible() or not text.get_text().strip():
            continue
        seen.add(id(text))
        box = text.get_window_extent()
        if box.width > 0 and box.height > 0:
            out.append((text, box))
    return out


def _data_marks(ax):
    """The data of ``ax`` in pixels, inside its frame: points along its lines and error bars (about a pixel apart), and
    the boxes of its markers, scatter points and bars.  Images and contours are the ground labels stand on, not data."""
    points, boxes = [np.zeros((0, 2))], []
    px_per_pt = ax.figure.dpi / 72

    def along(xy):
        for a, b in zip(xy[:-1], xy[1:], strict=True):
            steps = int(np.ceil(np.hypot(*(b - a)))) + 1
            points.append(a + np.linspace(0.0, 1.0, steps)[:, None] * (b - a))

    def square(centre, half):
        boxes.append(Bbox([centre - half, centre + half]))

    for line in ax.get_lines():
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if line.get_linestyle() not in ("None", "", " "):
            along(xy)
        if line.get_marker() not in (None, "None", "", " "):
            for centre in xy:
                square(centre, line.get_markersize() * px_per_pt / 2)
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            for segment in collection.get_segments():
                along(collection.get_transform().transform(segment))
        elif isinstance(collection, PathCollection):
            sizes = collection.get_sizes()
            offsets = collection.get_offset_transform().transform(collection.get_offsets())
            for i, centre in enumerate(offsets):
                square(centre, np.sqrt(sizes[i % len(sizes)]) * px_per_pt / 2)
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible():
            box = patch.get_window_extent()
            if box.width > 0 and box.height > 0:
                boxes.append(box)
    # A line clipped by the axes (the default) shows nothing outside them: only its points inside are data.
    points = np.concatenate(points)
    frame = ax.get_window_extent()
    inside = (
        (frame.x0 <= points[:, 0])
        & (points[:, 0] <= frame.x1)
        & (frame.y0 <= points[:, 1])
        & (points[:, 1] <= frame.y1)
    )
    return points[inside], boxes


def _covers(box, marks) -> bool:
    points, boxes = marks
    inside = (box.x0 <= points[:, 0]) & (points[:, 0] <= box.x1) & (box.y0 <= points[:, 1]) & (points[:, 1] <= box.y1)
    return bool(inside.any()) or any(box.overlaps(b) for b in boxes)


def clashes(fig, pad_pt: float = 1.0) -> list[str]:
    """Every fault of ``fig`` a reader would stumble on, one line each (none: an empty list), once it is drawn:

    * two drawn texts (tick labels, axis labels, titles, annotations, legend entries) whose boxes, grown by
      ``pad_pt`` points, meet;
    * a legend whose box covers data of any axes (a line, a marker, a bar, a scatter point or an error bar);
    * a text, grown by ``pad_pt``, over data (a legend entry over data counts as its legend's);
    * an annotation of an axes that crosses the axes' frame (half inside, half out).
    """
    fig.canvas.draw()
    pad = pad_pt * fig.dpi / 72
    texts = _drawn_texts(fig)
    marks = [(ax, _data_marks(ax)) for ax in fig.axes]
    legends = fig.findobj(Legend)
    in_legend = {id(t) for legend in legends for t in [*legend.get_texts(), legend.get_title()]}
    found = []
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            if box_a.padded(pad).overlaps(box_b.padded(pad)):
                found.append(f"texts meet: {a.get_text()!r} and {b.get_text()!r}")
    for legend in legends:
        box = legend.get_window_extent()
        found += [f"a legend covers data of {ax.get_title()!r}" for ax, m in marks if _covers(box, m)]
    for text, box in texts:
        if id(text) not in in_legend:
            found += [
                f"{text.get_text()!r} over data of {ax.get_title()!r}" for ax, m in marks if _covers(box.padded(pad), m)
            ]
    for ax in fig.axes:
        frame = ax.get_window_extent()
        for text in ax.texts:
            box = text.get_window_extent()
            if box.overlaps(frame) and not (
                frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            ):
                found.append(f"{text.get_text()!r} crosses the frame of its axes {ax.get_title()!r}")
    return found
