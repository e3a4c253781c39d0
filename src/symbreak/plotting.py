"""One figure style for the book, and the recurring figure kinds.

This module draws numbers handed to it; it never sees a layer.  Figures go
into the book through :func:`glue_figure`, which stores a PNG under a name for
a captioned ``{glue:figure}`` and shows the same PNG to a reader running the
notebook, without a ``<Figure …>`` text repr.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["STYLE", "PNG", "figure", "glue_figure", "coefficient_bars", "chain_diagram"]

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


def coefficient_bars(
    ax, coefficients: np.ndarray, labels: Sequence[str], *, xlabel: str = "memory unit $j$", ylabel: str = ""
) -> None:
    """Grouped bars: ``coefficients[i, j]`` for input ``i`` (one colour per input) and unit ``j``."""
    coefficients = np.asarray(coefficients)
    n, m = coefficients.shape
    width = 0.8 / n
    for i in range(n):
        ax.bar(np.arange(m) + (i - (n - 1) / 2) * width, coefficients[i], width=width, label=labels[i])
    ax.set_xticks(np.arange(m))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(fontsize=8)


def chain_diagram(ax, stages: Sequence[tuple[str, str]], steps: Sequence[str]) -> None:
    """A top-to-bottom chain of stages ``(title, formula)`` joined by arrows labelled ``steps``."""
    n = len(stages)
    if len(steps) != n - 1:
        raise ValueError(f"steps: expected {n - 1} labels for {n} stages, got {len(steps)}")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.5, n - 0.5)
    ax.invert_yaxis()
    ax.axis("off")
    box = {"boxstyle": "round,pad=0.45", "fc": "#eef3fb", "ec": "#4a6fa5"}
    for i, (title, formula) in enumerate(stages):
        ax.text(0.2, i, title, ha="center", va="center", fontsize=11, weight="bold", bbox=box)
        ax.text(0.42, i, formula, ha="left", va="center", fontsize=12)
    for i, label in enumerate(steps):
        ax.annotate("", xy=(0.2, i + 0.72), xytext=(0.2, i + 0.28), arrowprops={"arrowstyle": "->", "lw": 1.4})
        ax.text(0.23, i + 0.5, label, ha="left", va="center", fontsize=9.5, style="italic", color="#444444")
