"""The log-log figure every plot of the Lab is drawn on, with its legend below.

Below the plot and in columns, because inside it ten series would hide the
data; the legend hides a series when clicked.
"""

from __future__ import annotations

from typing import Any

from bokeh.models import Legend
from bokeh.plotting import figure


def log_figure(title: str, x_label: str, y_label: str, width: int, height: int, **kw: Any):
    """A log-log figure and its (empty) legend, below it; ``kw`` go to ``figure``."""
    fig = figure(
        title=title,
        x_axis_type="log",
        y_axis_type="log",
        x_axis_label=x_label,
        y_axis_label=y_label,
        width=width,
        height=height,
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location="above",
        **kw,
    )
    legend = Legend(
        items=[],
        orientation="horizontal",
        ncols=3,
        click_policy="hide",
        border_line_alpha=0,
        label_text_font_size="8pt",
        glyph_height=12,
        glyph_width=18,
        label_standoff=3,
        spacing=2,
        padding=2,
        margin=4,
    )
    fig.add_layout(legend, "below")
    fig.title.text_font_size = "10pt"
    fig.toolbar.logo = None  # room for the title beside the tools
    return fig, legend
