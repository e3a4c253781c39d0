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

__all__ = ["STYLE", "FAMILY_COLOURS", "PNG", "figure", "glue_figure"]


#: rcParams used for every figure of the book.
STYLE: dict[str, object] = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "image.cmap": "RdBu_r",
    "svg.hashsalt": "symbreak",
}


#: One colour per family of forms, for every figure that compares forms (members of a family differ by line
#: style): plain MLPs, symmetric forms (rank 1), the bilinear layer (gated in shape, σ = id), the gated forms
#: with a nonlinear σ, the symmetrised controls, and symmetric forms of rank R > 1.
FAMILY_COLOURS: dict[str, str] = {
    "kv": "#7f7f7f",
    "symmetric": "#1f77b4",
    "bilinear": "#2ca02c",
    "gated": "#d62728",
    "symmetrised": "#9467bd",
    "rank R": "#17becf",
}


class PNG:
    """A rendered figure: PNG bytes with a short, stable text repr."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name

    def _repr_png_(self) -> bytes:
        return self.data

    def __repr__(self) -> str:
        return f"[figure {self.name}]"


def figure(
    ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6, **kwargs
) -> tuple[Figure, np.ndarray]:
    """A new figure in the book's style; ``axes`` is always an array."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, **kwargs)
    return fig, axes.ravel()


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
    if save_to is not None:
        path = Path(save_to)
        if not path.exists() or path.read_bytes() != png.data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png.data)
    glue(name, png, display=False)
    display(png)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
