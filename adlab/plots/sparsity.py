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
from bokeh.models import BasicTicker, ColumnDataSource, HoverTool, Range1d
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from ..engine.sparsity.coloring import Coloring
from ..measure.colorings import ColoringRow
from .axes import lines

SIDE = 420


def pattern_figure(pattern: Any, coloring: Coloring | None = None, *, title: str = "Pattern",
                   size: int = SIDE) -> Any:  # fmt: skip
    """The nonzeros of ``pattern`` (a scipy sparse matrix), colored by ``coloring``."""
    m, n = pattern.shape
    fig = _pattern_axes(title, size, max(160, int(size * m / max(n, 1))), m, n)
    _draw(fig, ColumnDataSource(pattern_columns(pattern, coloring)))
    return fig


def pattern_columns(pattern: Any, coloring: Coloring | None = None) -> dict[str, Any]:
    """The columns a pattern figure draws: each nonzero's place, color group and color."""
    p = sp.coo_array(pattern)
    rows, cols = p.row.astype(int), p.col.astype(int)
    group = np.zeros(p.nnz, dtype=int)
    if coloring is not None:
        group = coloring.colors[rows] if coloring.kind == "rows" else coloring.colors[cols]
    return {"x": cols, "y": rows, "group": group,
            "color": [Category10_10[g % 10] for g in group]}  # fmt: skip


class PatternPanel:
    """A pattern figure whose pattern is replaced run after run (the Lab's); hidden while
    it has none. One figure and source, reused, as the Lab's series slots are."""

    def __init__(self, name: str, size: int = SIDE * 3 // 4) -> None:
        self.name, self.size = name, size
        self.source = ColumnDataSource(pattern_columns(sp.csr_array((0, 0))), name=name)
        self.figure = _pattern_axes(name, size, size, 1, 1)
        self.figure.title.text_font_size = "8pt"  # three side by side: a long title's room
        _draw(self.figure, self.source)
        self.figure.visible = False

    def show(self, pattern: Any, coloring: Coloring | None, title: str) -> None:
        """Draw ``pattern`` colored by ``coloring`` under ``title``."""
        m, n = pattern.shape
        self.source.data = pattern_columns(pattern, coloring)
        # as tall as the pattern is, up to square: a gradient's 1 x n is a strip
        self.figure.height = max(120, min(self.size, int(self.size * m / max(n, 1))))
        self.figure.x_range.update(start=-0.5, end=n - 0.5)
        self.figure.y_range.update(start=m - 0.5, end=-0.5)
        self.figure.title.text = title
        self.figure.visible = True

    def clear(self) -> None:
        """Hide the figure and forget its pattern."""
        if len(self.source.data["x"]):
            self.source.data = pattern_columns(sp.csr_array((0, 0)))
        self.figure.visible = False


def _pattern_axes(title: str, width: int, height: int, m: int, n: int) -> Any:
    """A figure with row 0 at the top, one unit per entry."""
    fig = figure(title=title, width=width, height=height,
                 x_range=Range1d(-0.5, n - 0.5), y_range=Range1d(m - 0.5, -0.5),
                 tools="pan,wheel_zoom,reset,save", toolbar_location="above")  # fmt: skip
    fig.toolbar.logo = None
    for axis in (fig.xaxis, fig.yaxis):  # rows and columns are whole numbers
        axis.ticker = BasicTicker(min_interval=1)
        axis.minor_tick_line_color = None
    fig.xaxis.axis_label, fig.yaxis.axis_label = "input (column)", "output (row)"
    fig.grid.visible = False
    fig.title.text_font_size = "11pt"
    return fig


def _draw(fig: Any, source: ColumnDataSource) -> None:
    squares = fig.rect("x", "y", width=0.9, height=0.9, color="color", source=source)
    tips = [("row", "@y"), ("column", "@x"), ("color", "@group")]
    fig.add_tools(HoverTool(renderers=[squares], tooltips=tips))


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
