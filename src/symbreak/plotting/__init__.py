"""One figure style for the book, and the recurring figure kinds.

This package draws numbers handed to it; it never sees a layer.  Figures go
into the book through :func:`glue_figure`, which stores a PNG under a name for
a captioned ``{glue:figure}`` and shows the same PNG to a reader running the
notebook, without a ``<Figure …>`` text repr.

Matplotlib's ``Agg`` backend is selected here, before any of its modules
imports pyplot.  This package re-exports every public name of its modules,
which import only :mod:`.style` besides matplotlib and numpy:

* :mod:`.style` — ``STYLE`` and its sizes (``DPI``, ``MAX_WIDTH_PX``, ``MIN_FONT_PT``), :func:`figure`, the
  ``PNG`` of a figure and :func:`glue_figure`, legends below and readable log ticks;
* :mod:`.tables` — Markdown tables, their layout in the PDF, formulas in table cells, and scientific notation as text;
* :mod:`.heatmaps` — heatmap grids of ``f(a, b)`` and quadrant labels;
* :mod:`.curves` — log–log curves, two-sided ``α`` curves, mean with a band, labels at the curves' ends;
* :mod:`.points` — bars, agreement scatter, annotated points, intervals, spectra;
* :mod:`.diagrams` — a chain of stages joined by arrows.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from symbreak.plotting.curves import (  # noqa: E402
    label_ends,
    loglog_curves,
    mean_band,
    signed_alpha_curves,
    spread_positions,
)
from symbreak.plotting.diagrams import chain_diagram  # noqa: E402
from symbreak.plotting.heatmaps import annotate_quadrants, heatmap_grid  # noqa: E402
from symbreak.plotting.points import (  # noqa: E402
    agreement_scatter,
    annotated_points,
    coefficient_bars,
    interval_dots,
    sorted_bars,
    spectra_strip,
)
from symbreak.plotting.style import (  # noqa: E402
    CSS_DPI,
    DPI,
    FAMILY_COLOURS,
    MAX_WIDTH_PX,
    MIN_FONT_PT,
    PNG,
    SIGMA_LINESTYLES,
    STYLE,
    figure,
    glue_figure,
    legend_below,
    log_ticks,
    png_size,
)
from symbreak.plotting.tables import (  # noqa: E402
    constant_columns,
    formula_cell,
    long_table_for_pdf,
    markdown_table,
    scientific,
)

__all__ = [
    "STYLE",
    "FAMILY_COLOURS",
    "SIGMA_LINESTYLES",
    "DPI",
    "CSS_DPI",
    "MAX_WIDTH_PX",
    "MIN_FONT_PT",
    "PNG",
    "png_size",
    "figure",
    "glue_figure",
    "legend_below",
    "log_ticks",
    "coefficient_bars",
    "chain_diagram",
    "heatmap_grid",
    "long_table_for_pdf",
    "markdown_table",
    "constant_columns",
    "loglog_curves",
    "agreement_scatter",
    "annotated_points",
    "mean_band",
    "label_ends",
    "spread_positions",
    "sorted_bars",
    "annotate_quadrants",
    "signed_alpha_curves",
    "interval_dots",
    "spectra_strip",
    "scientific",
    "formula_cell",
]
