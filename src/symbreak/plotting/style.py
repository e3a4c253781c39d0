"""The book's figure style: ``STYLE``, new figures, and figures glued into the book as PNG.

Figures go into the book through :func:`glue_figure`, which stores a PNG under
a name for a captioned ``{glue:figure}`` and shows the same PNG to a reader
running the notebook, without a ``<Figure …>`` text repr.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

__all__ = ["STYLE", "FAMILY_COLOURS", "DPI", "CSS_DPI", "MAX_WIDTH_PX", "MIN_FONT_PT", "PNG", "png_size", "figure"]
__all__ += ["SIGMA_LINESTYLES", "glue_figure", "legend_below"]

#: Pixels per inch of every PNG of the book (twice a standard screen's, so sharp on high-density screens).
DPI = 200
#: CSS pixels per inch: a figure is shown at its size in inches, so its text at its size in points.
CSS_DPI = 96
#: The widest a figure is shown without being scaled down: the width of the book's figure column in CSS pixels.
MAX_WIDTH_PX = 768
#: The smallest text of any figure, in points at the displayed size.
MIN_FONT_PT = 9

#: rcParams used for every figure of the book.
STYLE: dict[str, object] = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "image.cmap": "RdBu_r",
    "svg.hashsalt": "symbreak",
}


#: One colour per family of forms, for every figure that compares forms (members of a family differ by line
#: style): standard MLPs, symmetric forms (rank 1), the bilinear layer (gated in shape, σ = id), the gated forms
#: with a nonlinear σ, the symmetrised controls, and symmetric forms of rank R > 1.  Each keeps a contrast of 3:1 with
#: the page in light mode and, through the dark-mode filter of ``_static/book.css``, in dark mode (a test).
FAMILY_COLOURS: dict[str, str] = {
    "kv": "#7f7f7f",
    "symmetric": "#1f77b4",
    "bilinear": "#2ca02c",
    "gated": "#d62728",
    "symmetrised": "#9467bd",
    "rank R": "#00838f",
}


#: A marker along the line for a family whose colour is close in hue to another's at the displayed size: the
#: rank-R family's teal beside the symmetric forms' blue, both drawn dotted for σ = SiLU (small multiples draw it
#: every few points, :func:`symbreak.plotting.curves.curve_panel`).
FAMILY_MARKERS: dict[str, str] = {"rank R": "D"}


#: One line style per activation σ, for the members of a family of forms (:data:`FAMILY_COLOURS`): a family's forms
#: differ by σ, so colour says the family and line style the σ in every figure of the book.  No two nonlinear σ share
#: a rhythm (solid, dashes, long dashes, dots, dash and dot), since the gated family draws all five in one colour
#: (a test); σ = identity is drawn solid like ReLU, as it is the σ of one family only, the bilinear layer, whose
#: colour is its own.
SIGMA_LINESTYLES: dict[str, object] = {
    "identity": "-",
    "relu": "-",
    "gelu": "--",
    "silu": ":",
    "sigmoid": "-.",
    "tanh": (0, (10, 3)),
}


class PNG:
    """A rendered figure: PNG bytes at :data:`DPI`, shown ``width`` CSS pixels wide (its size in inches at
    :data:`CSS_DPI`), with a short, stable text repr."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name
        self.width = round(png_size(data)[0] * CSS_DPI / DPI)

    def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
        return self.data, {"width": self.width}

    def __repr__(self) -> str:
        return f"[figure {self.name}]"


def figure(
    ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6, **kwargs
) -> tuple[Figure, np.ndarray]:
    """A new figure in the book's style, ``width`` × ``height`` inches; ``axes`` is always an array.

    ``width`` is at most :data:`MAX_WIDTH_PX` / :data:`CSS_DPI` inches, the widest a figure is shown unscaled.
    """
    if not (isinstance(width, (int, float)) and 0 < width <= MAX_WIDTH_PX / CSS_DPI):
        raise ValueError(f"width: expected inches in (0, {MAX_WIDTH_PX / CSS_DPI:g}], got {width!r}")
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)
    return fig, axes.ravel()


def legend_below(fig: Figure, ax, ncol: int = 3, tight: bool = True) -> None:
    """One legend for the whole figure, below its axes, with the entries of ``ax`` (an axes, or a list of them,
    each label once) in ``ncol`` columns (a figure stays within :data:`MAX_WIDTH_PX`, where a legend beside the
    axes would widen it).  With ``tight`` the axes are first laid out by ``tight_layout``; a figure that sets its
    own spacing (``gridspec_kw``) passes ``tight=False``."""
    handles, labels = [], []
    for one in ax if isinstance(ax, (list, tuple)) else [ax]:
        for h, label in zip(*one.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if not handles:
        raise ValueError("ax: expected an axes with labelled artists, got none")
    if tight:
        fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, frameon=False)


def log_ticks(ax, axis: str = "y", *, most: int = 5) -> list[float]:
    """Label a log axis at values a reader can read off, whatever its span; return them.

    Powers of ten where at least two lie inside the axis's limits; else the values 1, 2 and 5 times a power of ten
    inside them (a panel that spans less than a decade still shows two or more), no more than ``most`` of them (every
    second, third, … where there are more); plain numbers where all lie in [0.001, 10 000), else powers of ten;
    minor ticks stay unlabelled.  Call it once the limits are final.
    """
    from matplotlib.ticker import NullFormatter

    if axis not in ("x", "y"):
        raise ValueError(f"axis: expected 'x' or 'y', got {axis!r}")
    if isinstance(most, bool) or not isinstance(most, int) or most < 2:
        raise ValueError(f"most: expected an int of at least 2, got {most!r}")
    lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    if lo <= 0:
        raise ValueError(f"ax: expected a log {axis} axis with positive limits, got ({lo}, {hi})")
    powers = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    values = [10.0**k for k in powers if lo <= 10.0**k <= hi]
    if len(values) < 2:
        values = [c * 10.0**k for k in powers for c in (1, 2, 5) if lo <= c * 10.0**k <= hi]
    values = values[:: -(-len(values) // most)]
    plain = all(1e-3 <= v < 1e4 for v in values)  # one notation per axis
    labels = [f"{v:g}" if plain else "${}10^{{{}}}$".format(*_mantissa_times(v)) for v in values]
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_ticks(values, labels=labels)
    target.set_minor_formatter(NullFormatter())
    return values


def _mantissa_times(value: float) -> tuple[str, int]:
    """``2e-05 → ("2{\\times}", -5)``, ``1e-05 → ("", -5)``: a value 1, 2 or 5 times a power of ten, for mathtext."""
    mantissa, exponent = f"{value:.0e}".split("e")
    return ("" if mantissa == "1" else f"{mantissa}{{\\times}}"), int(exponent)


def png_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels from a PNG's header."""
    if not isinstance(data, bytes) or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError(f"data: expected the bytes of a PNG file, got {data[:16]!r}")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    with plt.rc_context(STYLE):
        fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def glue_figure(name: str, fig: Figure, save_to: str | Path | None = None) -> None:
    """Glue ``fig`` as a PNG under ``name`` (for ``{glue:figure}``) and display it in Jupyter.

    The notebook cell calling this should carry the ``remove-output`` tag, so
    the book shows the figure once, in its captioned ``{glue:figure}``.  With
    ``save_to``, the PNG is also written there (only when its bytes changed),
    for pages that are not notebooks and so cannot paste a glued figure.
    """
    from IPython.display import display
    from myst_nb import glue

    png = PNG(_png(fig), name)
    if png.width > MAX_WIDTH_PX:
        raise ValueError(
            f"fig: expected a figure at most {MAX_WIDTH_PX} CSS px wide (legends and labels included), "
            f"got {png.width} px for {name!r}"
        )
    if save_to is not None:
        path = Path(save_to)
        if not path.exists() or path.read_bytes() != png.data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png.data)
    glue(name, png, display=False)
    display(png)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
