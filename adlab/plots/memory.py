"""The Lab's memory figure: each series' peak memory against n, log-log, beside its time.

Its series are the time plot's (``live.LabPlots``' slots: one color per mode, one marker
and dash per framework, ``colors``); this module only builds the figure and the glyphs
each slot draws on it. A derivative with a reverse part also shows its residuals (what
the forward pass keeps for the backward pass) as open markers of the same look, under
the filled ones of its peak: the tape is the part of the peak that checkpointing trades
for time. Sizes read as ``adlab._format.human_bytes`` writes them, on the axis and on
hover. A point with no memory figure is a gap (``rows.positive``), never a 0.
"""

from __future__ import annotations

from typing import Any

from bokeh.models import ColumnDataSource, HoverTool

from .._format import human_bytes
from .axes import log_figure

#: the hover of a memory point: the series, and its sizes as people read them
MEMORY_TIPS = [
    ("series", "@label"),
    ("framework", "@backend (@jit)"),
    ("n", "@n"),
    ("peak", "@peak_text"),
    ("residuals", "@residual_text"),
    ("counted by", "@memory_counter"),
]
#: powers of ten labelled on the bytes axis, 1 B to 1 TB
_DECADES = range(0, 13)


def memory_figure(width: int, height: int, x_range: Any) -> tuple[Any, Any, HoverTool]:
    """The memory figure (sharing the time plot's n axis), its legend and its hover."""
    # the title says what the open markers are: a legend entry drawn from no data has no icon
    fig, legend = log_figure("Peak memory (open marks: residuals)", "n (inputs)",
                             "bytes at peak, above the inputs", width, height,
                             x_range=x_range, name="memory")  # fmt: skip
    # the axis in the units the hover and the tables use (one home: human_bytes)
    fig.yaxis.major_label_overrides = {float(10**k): human_bytes(10**k) for k in _DECADES}
    hover = HoverTool(renderers=[], tooltips=MEMORY_TIPS)
    fig.add_tools(hover)
    return fig, legend, hover


def memory_glyphs(fig: Any, source: ColumnDataSource, color: str) -> dict[str, list]:
    """A series' glyphs on ``fig``: its peak (line and filled markers) and its residuals
    (open markers, no line: the framework's dash stays the peak's)."""
    return {
        "memory": [fig.line("n", "peak_bytes", source=source, color=color, line_width=2),
                   fig.scatter("n", "peak_bytes", source=source, color=color, size=6)],
        "residual": [fig.scatter("n", "residual_bytes", source=source, line_color=color,
                                 fill_color=color, fill_alpha=0, size=9, line_width=1.5)],
    }  # fmt: skip


def has_memory(source: ColumnDataSource) -> bool:
    """Whether a series' source holds a memory figure to draw (NaN is a gap)."""
    return any(v == v for v in source.data.get("peak_bytes", ()))  # NaN != NaN
