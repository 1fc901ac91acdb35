"""The Lab's figure of the error against the step size h at one n, one curve per scheme
(the V-curves of finite differences; complex step's flat tail below ``MIN_STEP_DRAWN``
is not drawn), fed step record by step record. No widgets here.

Kept apart from ``live.LabPlots``' figures against n: it draws another kind of record
(``StepRecord``), on its own x axis, and is cleared and titled per size.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bokeh.models import ColumnDataSource, HoverTool, LegendItem
from bokeh.palettes import Category10_10

from .._vocab import StepRecord
from ..accuracy.steps import STEP_SCHEMES
from .axes import log_figure
from .colors import STEP_COLORS
from .rows import MIN_STEP_DRAWN, STEP_COLUMNS, columns, empty, step_row

TITLE = "Error against step h"
_STEP_TIPS = [
    ("scheme", "@scheme"),
    ("h", "@h{0.0e}"),
    ("error", "@error{0.0e}"),
    ("optimal h", "@optimal_h{0.0e}"),
    ("default step", "@is_default"),
]


class StepPanel:
    """The error-against-step figure and its sources.

    Attributes:
        figure: the Bokeh figure.
        series: scheme -> the source of its error-vs-step points.
        defaults: the points at each scheme's default step.
    """

    def __init__(self, width: int, height: int) -> None:
        self.figure, legend = log_figure(TITLE, "step h", "max relative error", width, height)
        self.defaults = ColumnDataSource(empty(STEP_COLUMNS), name="step_defaults")
        self.series: dict[str, ColumnDataSource] = {}
        self._items: dict[str, LegendItem] = {}
        marks = self.figure.scatter(
            "h", "error_plot", source=self.defaults, size=12, marker="circle",
            fill_color=None, line_color="black", line_width=2,
        )  # fmt: skip
        items = [LegendItem(label="default step", renderers=[marks])]
        hovered = [marks]
        for i, scheme in enumerate(STEP_SCHEMES):
            source = ColumnDataSource(empty(STEP_COLUMNS), name=f"steps:{scheme}")
            color = STEP_COLORS.get(scheme, Category10_10[(6 + i) % 10])
            glyphs = [
                self.figure.line("h", "error_plot", source=source, color=color, line_width=2),
                self.figure.scatter("h", "error_plot", source=source, color=color, size=5),
            ]
            item = LegendItem(label=scheme, renderers=glyphs, visible=False)
            items.append(item)
            hovered.append(glyphs[1])
            self.series[scheme] = source
            self._items[scheme] = item
        legend.items = items
        self.figure.add_tools(HoverTool(renderers=hovered, tooltips=_STEP_TIPS))

    def clear(self, n: int | None = None, precision: str | None = None) -> None:
        """Forget the curves; title the figure for size ``n``."""
        for scheme, source in self.series.items():
            if source.data["h"]:
                source.data = empty(STEP_COLUMNS)
            self._items[scheme].visible = False
        if self.defaults.data["h"]:
            self.defaults.data = empty(STEP_COLUMNS)
        title = TITLE
        if n is not None:
            title += f" at n = {n}"
        if precision:
            title += f" ({precision})"
        self.figure.title.text = title

    def add(self, steps: Iterable[StepRecord]) -> None:
        """Append step-sweep points (one stream per scheme)."""
        by_scheme: dict[str, list[dict[str, Any]]] = {}
        defaults = []
        for s in steps:
            if s.h < MIN_STEP_DRAWN:
                continue
            row_ = step_row(s)
            by_scheme.setdefault(s.scheme, []).append(row_)
            if s.is_default:
                defaults.append(row_)
        for scheme, group in by_scheme.items():
            if scheme not in self.series:
                continue  # a scheme this plot does not know
            self.series[scheme].stream(columns(group, STEP_COLUMNS))
            self._items[scheme].visible = True
        if defaults:
            self.defaults.stream(columns(defaults, STEP_COLUMNS))
