"""Figures of sparsity: a pattern as a picture, colored, and colors against n.

A pattern is drawn as a matrix (row 0 at the top): one square per structural
nonzero, colored by the group of the pass that computes it: its column's color
for forward mode and a star-colored Hessian, its row's for reverse mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from bokeh.models import ColumnDataSource, HoverTool, Range1d
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from ..engine.coloring import Coloring
from ..measure.colorings import ColoringRow
from .figures import lines

SIDE = 420


def pattern_figure(pattern: Any, coloring: Coloring | None = None, *, title: str = "Pattern",
                   size: int = SIDE) -> Any:  # fmt: skip
    """The nonzeros of ``pattern`` (a scipy sparse matrix), colored by ``coloring``."""
    p = sp.coo_array(pattern)
    rows, cols = p.row.astype(int), p.col.astype(int)
    group = np.zeros(p.nnz, dtype=int)
    if coloring is not None:
        group = coloring.colors[rows] if coloring.kind == "rows" else coloring.colors[cols]
    m, n = p.shape
    fig = figure(title=title, width=size, height=max(160, int(size * m / max(n, 1))),
                 x_range=Range1d(-0.5, n - 0.5), y_range=Range1d(m - 0.5, -0.5),
                 tools="pan,wheel_zoom,reset,save", toolbar_location="above")  # fmt: skip
    fig.toolbar.logo = None
    src = ColumnDataSource({"x": cols, "y": rows, "group": group,
                            "color": [Category10_10[g % 10] for g in group]})  # fmt: skip
    squares = fig.rect("x", "y", width=0.9, height=0.9, color="color", source=src)
    tips = [("row", "@y"), ("column", "@x"), ("color", "@group")]
    fig.add_tools(HoverTool(renderers=[squares], tooltips=tips))
    fig.xaxis.axis_label, fig.yaxis.axis_label = "input (column)", "output (row)"
    fig.grid.visible = False
    fig.title.text_font_size = "11pt"
    return fig


def colors_figure(rows: Sequence[ColoringRow], *, title: str | None = None) -> Any:
    """Passes against n: the colorings' and the dense count (log-log)."""
    hessian = bool(rows) and rows[0].kind == "hessian"
    names = (("star coloring (HVPs)", "column coloring", "dense (n HVPs)") if hessian
             else ("columns (forward)", "rows (reverse)", "dense forward (n)"))  # fmt: skip
    series = {
        names[0]: [(r.n, r.colors) for r in rows],
        names[1]: [(r.n, r.rows) for r in rows],
        names[2]: [(r.n, r.dense) for r in rows],
    }
    what = "Hessian" if hessian else "Jacobian"
    name = rows[0].model if rows else ""
    return lines(series, title=title or f"{name}: passes for the {what}, colored or dense",
                 x_label="n", y_label="passes", dashed=[names[2]], y_format="{0,0}")  # fmt: skip
