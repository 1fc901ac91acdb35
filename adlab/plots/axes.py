"""The figures the plots are drawn on: the Lab's log-log figure, and ``lines``.

The legend goes below the plot and in columns, because inside it ten series would
hide the data; it hides a series when clicked. ``lines`` (one line per series) draws
the tutorials' figures (``figures``) and the sparsity panel's passes (``sparsity``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bokeh.models import ColumnDataSource, HoverTool, Label, Legend, Span
from bokeh.plotting import figure

from .colors import assign_colors, framework_look
from .rows import positive

WIDTH, HEIGHT = 640, 400
#: the line styles of series drawn dashed in black (the primal f, for instance)
DASHES = ("dashed", "dotdash", "dotted", "dashdot")


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


def lines(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_x: bool = True,
    log_y: bool = True,
    hlines: Sequence[tuple[float, str]] = (),
    dashed: Iterable[str] = (),
    colors: Mapping[str, str] | None = None,
    frameworks: Mapping[str, str] | None = None,
    y_format: str = "{0.000a}",
    width: int = WIDTH,
    height: int = HEIGHT,
) -> Any:
    """One line with markers per series (label -> (x, y) points), legend below, hover.

    ``hlines`` are (y, text) reference lines; series named in ``dashed`` are
    drawn dashed in black (the primal f, for instance). ``frameworks`` (label ->
    framework) give each series its framework's marker and, unless dashed, line
    dash (``colors.framework_look``). On a log axis points that are not positive
    are left out.
    """
    fig = figure(
        title=title, width=width, height=height,
        x_axis_type="log" if log_x else "linear", y_axis_type="log" if log_y else "linear",
        x_axis_label=x_label, y_axis_label=y_label,
        tools="pan,wheel_zoom,box_zoom,reset,save", toolbar_location="above",
    )  # fmt: skip
    fig.toolbar.logo = None
    legend = Legend(
        items=[], orientation="horizontal", ncols=3, click_policy="hide",
        label_text_font_size="8pt", border_line_alpha=0, spacing=2, padding=2,
    )  # fmt: skip
    fig.add_layout(legend, "below")
    dashed = list(dashed)
    frameworks = frameworks or {}
    colors = assign_colors([lab for lab in series if lab not in dashed], colors, frameworks)
    drawn = []
    xs_all: list[float] = []
    for label, pts in series.items():
        keep = [
            (x, y) for x, y in pts
            if (not log_x or positive(x) == x) and (not log_y or positive(y) == y)
        ]  # fmt: skip
        if not keep:
            continue
        keep.sort()
        src = ColumnDataSource({"x": [p[0] for p in keep], "y": [p[1] for p in keep],
                                "label": [label] * len(keep)})  # fmt: skip
        xs_all += [p[0] for p in keep]
        marker, dash = framework_look(frameworks.get(label))
        if label in dashed:
            style = {"color": "black", "line_dash": DASHES[dashed.index(label) % len(DASHES)]}
        else:
            style = {"color": colors[label], "line_dash": dash}
        line = fig.line("x", "y", source=src, line_width=2, legend_label=label, **style)
        dots = fig.scatter("x", "y", source=src, size=6, color=style["color"], marker=marker,
                           legend_label=label)  # fmt: skip
        drawn += [line, dots]
    for y, text in hlines:
        if xs_all:  # an invisible point, so that the line is inside the plot's range
            fig.scatter([min(xs_all)], [y], alpha=0)
        fig.add_layout(Span(location=y, dimension="width", line_color="#888888",
                            line_dash="dashed"))  # fmt: skip
        fig.add_layout(Label(x=5, y=y, x_units="screen", text=text, text_font_size="8pt",
                             text_color="#555555", y_offset=2))  # fmt: skip
    fig.add_tools(HoverTool(renderers=[g for g in drawn if g.glyph.__class__.__name__ == "Scatter"],
                            tooltips=[("series", "@label"), ("x", "@x{0.[000]a}"),
                                      ("y", f"@y{y_format}")]))  # fmt: skip
    fig.title.text_font_size = "11pt"
    return fig
