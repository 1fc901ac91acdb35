"""Another run drawn over the Lab's plots: ``overlay(plots, run, name)``.

Each series of the other run (a saved run: ``adlab.load``) is drawn on the time, memory,
ratio and error plots in the colour the same series has in this run, dashed, with open
markers; its primal is dashed black. One legend entry per plot names the other run's
machine ("dashed: gpu-box: run.json"), so the two runs read apart at a glance. Hovering
a point shows it in full, as a point of this run does. No widgets here.
"""

from __future__ import annotations

from collections.abc import Iterable

from bokeh.models import ColumnDataSource, HoverTool, LegendItem

from .._vocab import Record
from .live import LabPlots
from .rows import RECORD_COLUMNS, columns, record_row

#: the line dash of another run's series
DASH = "dashed"
_TIPS = [("run", "@run"), ("series", "@label"), ("n", "@n"), ("time", "@median_text"),
         ("ratio to primal", "@ratio_text"), ("error", "@error_text"),
         ("peak memory", "@peak_text")]  # fmt: skip
_Y = {"time": "median_s", "memory": "peak_bytes", "ratio": "ratio_to_primal",
      "error": "error_plot"}  # fmt: skip


def overlay(plots: LabPlots, records: Iterable[Record], name: str) -> dict[str, list]:
    """Draw ``records`` (another run) over ``plots``, dashed, each series in the colour it
    has in ``plots`` (claimed now, so this run's series of the same label take it too).

    Returns figure key ("time", "memory", "ratio", "error") -> the glyphs drawn there.
    """
    by_label: dict[str, list[Record]] = {}
    for r in records:
        if not r.skipped and r.median_s:
            by_label.setdefault(r.label, []).append(r)
    drawn: dict[str, list] = {key: [] for key in _Y}
    for label, recs in by_label.items():
        primal = recs[0].mode == "primal"
        color = "black" if primal else plots.color(label)
        rows = [record_row(r) for r in sorted(recs, key=lambda r: r.n)]
        data = columns(rows, RECORD_COLUMNS)
        data["run"] = [name] * len(rows)
        source = ColumnDataSource(data, name="overlay")
        for key, y in _Y.items():
            if (primal and key in ("ratio", "error")) or not any(v == v for v in data[y]):
                continue  # nothing to draw there (NaN, a gap, is not equal to itself)
            fig = plots.figures[key]
            line = fig.line("n", y, source=source, color=color, line_width=2, line_dash=DASH,
                            line_alpha=0.8)  # fmt: skip
            marks = fig.scatter("n", y, source=source, line_color=color, fill_color="white",
                                size=6)  # fmt: skip
            fig.add_tools(HoverTool(renderers=[marks], tooltips=_TIPS))
            drawn[key] += [line, marks]
    for key, glyphs in drawn.items():
        if glyphs:
            legend = plots.figures[key].legend[0]
            lines = [g for g in glyphs if g.glyph.__class__.__name__ == "Line"]
            legend.items = [*legend.items, LegendItem(label=f"dashed: {name}",
                                                      renderers=lines[:1])]  # fmt: skip
    return drawn
