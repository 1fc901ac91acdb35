"""Bokeh figures of finished results, for the tutorials; ``show`` draws one inline.

``adlab.plots.live`` streams a live sweep into the Lab; this module draws results
that are already complete (records, step sweeps, XLA costs, the fused
descent) as static figures. ``show`` loads BokehJS inline the way the Lab does
(the same resources, from the kernel, no CDN), once per kernel, so the
figures draw offline. No widgets here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Label, Span
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from .._vocab import FRAME_S, Record, StepRecord
from ..accuracy.precision_table import PrecisionRow
from ..accuracy.steps import RichardsonPoint
from ..measure.costs import CostRow
from ..measure.findings import crossovers, significant
from ..measure.fused import FusedDescent
from .axes import WIDTH, lines
from .colors import assign_colors
from .live import LabPlots
from .rows import ERROR_FLOOR, MIN_STEP_DRAWN, error_plot

_shown = False


# ------------------------------------------------------------------- display
def show(obj: Any) -> None:
    """Draw a Bokeh figure or layout in the notebook's output; nothing outside a kernel.

    The first call in a kernel loads BokehJS inline (the Lab's own resources,
    so no internet is needed); later calls only draw.
    """
    from bokeh.io import output_notebook
    from bokeh.io import show as bokeh_show

    from .bokehjs import in_kernel, inline_resources

    global _shown
    if not in_kernel():
        return
    if not _shown:
        output_notebook(resources=inline_resources(), hide_banner=True)
        _shown = True
    bokeh_show(obj)


# ------------------------------------------------------------------ building
def _by_label(records: Iterable[Record], field: str, primal: bool) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in records:
        if r.skipped or (r.mode == "primal" and not primal):
            continue
        out.setdefault(r.label, []).append((r.n, getattr(r, field)))
    return out


def records_figure(
    records: Iterable[Record],
    y: str = "median_s",
    *,
    title: str,
    y_label: str,
    primal: bool = False,
    hlines: Sequence[tuple[float, str]] = (),
    **kw: Any,
) -> Any:
    """A ``Record`` field (``median_s``, ``ratio_to_primal``, ``flops_ratio``, ``error`` ...)
    against n, one line per series; primals (when drawn) black and dashed."""
    records = list(records)
    series = _by_label(records, y, primal)
    primals = [r.label for r in records if r.mode == "primal"]
    # colors from every derivative series of the records, so all figures of one sweep agree
    derivs = list(dict.fromkeys(r.label for r in records if r.mode != "primal"))
    kw.setdefault("frameworks", {r.label: r.backend for r in records})
    kw["colors"] = assign_colors(derivs, kw.get("colors"), kw["frameworks"])
    return lines(series, title=title, x_label="n", y_label=y_label, hlines=hlines,
                 dashed=dict.fromkeys(primals), **kw)  # fmt: skip


def time_figure(
    records: Iterable[Record], *, title: str = "Time per derivative", frame: bool = False,
    **kw: Any,
) -> Any:  # fmt: skip
    """Time per call against n (log-log): every series, the primal dashed, the dispatch
    floor dotted, the 16 ms frame when ``frame``, and a gold diamond at each crossover."""
    records = list(records)
    hlines = [(FRAME_S, "16 ms frame")] if frame else []
    fig = records_figure(records, "median_s", title=title, y_label="seconds per call",
                         primal=True, hlines=hlines, y_format="{0.000a}s", **kw)  # fmt: skip
    floors = sorted({(r.n, r.floor_s) for r in records if r.floor_s and not r.skipped})
    if floors:
        best: dict[int, float] = {}
        for n, s in floors:
            best[n] = min(s, best.get(n, s))
        fig.line(list(best), list(best.values()), color="#999999", line_dash="dotted",
                 line_width=2, legend_label="dispatch floor")  # fmt: skip
    found = significant(crossovers(records))  # a tie within the noise is no mark
    if found:
        src = ColumnDataSource({"x": [c.n for c in found], "y": [c.time_s for c in found],
                                "text": [c.describe() for c in found]})  # fmt: skip
        marks = fig.scatter("x", "y", source=src, marker="diamond", size=14, fill_color="gold",
                            line_color="black", legend_label="crossover")  # fmt: skip
        fig.add_tools(HoverTool(renderers=[marks], tooltips=[("crossover", "@text")]))
    return fig


def ratio_figure(
    records: Iterable[Record],
    *,
    title: str = "Ratio to the primal",
    hlines: Sequence[tuple[float, str]] = ((1.0, "f itself"),),
    **kw: Any,
) -> Any:
    """Each derivative's time over its primal's (same n, same options) against n."""
    return records_figure(records, "ratio_to_primal", title=title,
                          y_label="time / primal time", hlines=hlines, y_format="{0.00}",
                          **kw)  # fmt: skip


def error_figure(records: Iterable[Record], *, title: str = "Error against n", **kw: Any) -> Any:
    """Max relative error against the reference; an exact 0 is drawn at 1e-17."""
    records = [r for r in records if r.error is not None]
    series = {lab: [(n, error_plot(e)) for n, e in pts]
              for lab, pts in _by_label(records, "error", False).items()}  # fmt: skip
    kw.setdefault("frameworks", {r.label: r.backend for r in records})
    kw["colors"] = assign_colors(list(series), kw.get("colors"), kw["frameworks"])
    return lines(series, title=title, x_label="n", y_label="max relative error",
                 y_format="{0.0e}", **kw)  # fmt: skip


def costs_figure(
    rows: Sequence[CostRow], y: str = "flops_ratio", *, title: str, y_label: str,
    hlines: Sequence[tuple[float, str]] = (), zero_at: float | None = None, **kw: Any,
) -> Any:  # fmt: skip
    """A ``CostRow`` field (``flops_ratio``, ``temp_bytes``, ...) against n, per mode
    (per model and mode when the rows hold several models). A log axis cannot show 0:
    with ``zero_at`` zeros are drawn there (say so in the title), else left out."""
    several = len({r.model for r in rows}) > 1
    series: dict[str, list] = {}
    for r in rows:
        key = f"{r.model}: {r.label}" if several else r.label
        value = getattr(r, y)
        if zero_at is not None and value == 0:
            value = zero_at
        series.setdefault(key, []).append((r.n, value))
    return lines(series, title=title, x_label="n", y_label=y_label, hlines=hlines, **kw)


def bars(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    x_label: str,
    log: bool = True,
    vline: tuple[float, str] | None = None,
    width: int = WIDTH,
    height: int | None = None,
) -> Any:
    """Horizontal bars, one per (name, value), top to bottom in the order given."""
    names = [name for name, _ in items]
    values = [v for _, v in items]
    smallest = min((v for v in values if v > 0), default=1.0)
    fig = figure(
        title=title, y_range=list(reversed(names)), width=width,
        height=height or 90 + 40 * len(items), x_axis_type="log" if log else "linear",
        x_axis_label=x_label, tools="save", toolbar_location="above",
    )  # fmt: skip
    fig.toolbar.logo = None
    colors = [Category10_10[i % 10] for i in range(len(items))]
    src = ColumnDataSource({"name": names, "value": values, "color": colors})
    fig.hbar(y="name", right="value", left=smallest / 10 if log else 0, height=0.7,
             color="color", source=src)  # fmt: skip
    fig.add_tools(HoverTool(tooltips=[("", "@name"), ("value", "@value{0.000a}")]))
    if vline:
        fig.add_layout(Span(location=vline[0], dimension="height", line_color="#555555",
                            line_dash="dashed"))  # fmt: skip
        fig.add_layout(Label(x=vline[0], y=5, y_units="screen", text=vline[1],
                             text_font_size="8pt", x_offset=3))  # fmt: skip
    fig.title.text_font_size = "11pt"
    return fig


def grouped_bars(
    items: Sequence[tuple[str, str, float]], *, title: str, x_label: str, unit: str = "s",
    width: int = WIDTH,
) -> Any:  # fmt: skip
    """Horizontal bars grouped by the first key, one bar per second key (log axis)."""
    factors = [(g, k) for g, k, _ in items]
    kinds = list(dict.fromkeys(k for _, k, _ in items))
    values = [v for _, _, v in items]
    smallest = min((v for v in values if v > 0), default=1.0)
    colors = [Category10_10[kinds.index(k) % 10] for _, k, _ in items]
    fig = figure(
        title=title, y_range=FactorRange(*reversed(factors)), width=width,
        height=90 + 22 * len(items), x_axis_type="log", x_axis_label=x_label,
        tools="save", toolbar_location="above",
    )  # fmt: skip
    fig.toolbar.logo = None
    src = ColumnDataSource({"f": factors, "value": values, "color": colors,
                            "kind": [k for _, k, _ in items]})  # fmt: skip
    fig.hbar(y="f", right="value", left=smallest / 10, height=0.8, color="color", source=src)
    fig.yaxis.group_label_orientation = "horizontal"  # group names read across, not up
    fmt = "{0.000a}s" if unit == "s" else "{0.0e}"
    fig.add_tools(HoverTool(tooltips=[("", "@kind"), ("value", f"@value{fmt}")]))
    fig.title.text_font_size = "11pt"
    return fig


# ---------------------------------------------------------------- per study
def precision_figure(rows: Sequence[PrecisionRow]) -> Any:
    """Each mode's error at its default step, float64 beside float32 (an exact 0 at 1e-17)."""
    items = []
    for r in rows:
        for precision, error in (("float64", r.error_float64), ("float32", r.error_float32)):
            if error is not None:
                items.append((r.label, precision, max(error, ERROR_FLOOR)))
    model = rows[0].model if rows else ""
    n = rows[0].n if rows else ""
    return grouped_bars(items, title=f"Error at the default step, float64 vs float32 ({model}, "
                        f"n = {n})", x_label="max relative error (log)", unit="")  # fmt: skip


def fused_figure(result: FusedDescent) -> Any:
    """Seconds per gradient-descent step, four ways, against the 16 ms frame."""
    return bars(result.rows(), title=f"One gradient step on {result.model}, n = {result.n}",
                x_label="seconds per step (log)", vline=(FRAME_S, "16 ms frame"))  # fmt: skip


def warmup_figure(records: Iterable[Record], n: int | None = None) -> Any:
    """Compile, first call and steady call per series, at ``n`` (default: the largest)."""
    records = [r for r in records if not r.skipped and r.mode != "primal"]
    n = n if n is not None else max(r.n for r in records)
    items = []
    for r in records:
        if r.n != n:
            continue
        for kind, value in (("compile", r.compile_s), ("first call", r.first_call_s),
                            ("steady call", r.median_s)):  # fmt: skip
            if value:  # eager runs compile nothing up front
                items.append((r.label, kind, value))
    return grouped_bars(items, title=f"Compile and warm-up against the steady state, n = {n}",
                        x_label="seconds (log)")  # fmt: skip


def steps_figure(steps: Iterable[StepRecord], *, title: str | None = None, **kw: Any) -> Any:
    """The V-curves: error against step h per scheme; each default step circled."""
    steps = [s for s in steps if s.h >= MIN_STEP_DRAWN]
    series: dict[str, list] = {}
    for s in steps:
        series.setdefault(s.scheme, []).append((s.h, error_plot(s.error)))
    first = steps[0] if steps else None
    title = title or (f"Error against step h: {first.model}, n = {first.n} ({first.precision})"
                      if first else "Error against step h")  # fmt: skip
    fig = lines(series, title=title, x_label="step h", y_label="max relative error",
                y_format="{0.0e}", **kw)  # fmt: skip
    defaults = [s for s in steps if s.is_default]
    if defaults:
        fig.scatter([s.h for s in defaults], [error_plot(s.error) for s in defaults],
                    size=13, fill_color=None, line_color="black", line_width=2,
                    legend_label="default step")  # fmt: skip
    return fig


def richardson_figure(points: Sequence[RichardsonPoint], **kw: Any) -> Any:
    """Richardson's own error estimate beside its true error and that of D(h/2)."""
    series = {
        "estimate |R - D(h/2)|": [(p.h, p.estimate) for p in points],
        "error of R (Richardson)": [(p.h, p.error) for p in points],
        "error of D(h/2) (central)": [(p.h, p.error_central_half) for p in points],
    }
    colors = dict(zip(series, (Category10_10[1], Category10_10[3], Category10_10[2]),
                      strict=True))  # fmt: skip
    return lines(series, title="Richardson's error estimate against the true errors",
                 x_label="step h", y_label="relative error", colors=colors,
                 y_format="{0.0e}", **kw)  # fmt: skip


def lab_figures(records: Iterable[Record], steps: Iterable[StepRecord] = ()) -> Any:
    """The Lab's four plots and its table, filled with finished results (no widgets)."""
    plots = LabPlots()
    records, steps = list(records), list(steps)
    plots.add_records(records)
    if steps:
        plots.clear_steps(steps[0].n, steps[0].precision)
        plots.add_steps(steps)
    return plots.layout


def stack(*figs: Any) -> Any:
    """Figures one under the other, as one output."""
    return column(*figs)
