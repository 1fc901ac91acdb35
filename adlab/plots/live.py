"""Bokeh figures of a sweep, fed record by record. No widgets here.

``LabPlots`` holds four figures and a table, and the ``ColumnDataSource``s
behind them. Records arrive with ``add_records`` and are appended with
``ColumnDataSource.stream``, so a plot shown in a notebook grows point by point
without being redrawn:

1. time per derivative against n (log-log): one line per series, the primal,
   the dispatch floor, a 16 ms frame budget, compile times (toggled) and the
   crossovers between series;
2. the ratio of each series to the primal against n;
3. the error of each series against n;
4. the error against the step size at one n, per scheme (the V-curves;
   complex step's flat tail below ``MIN_STEP_DRAWN`` is not drawn).

Every method here must run on one thread at a time: a Bokeh document is not
thread-safe. The Lab calls them from the kernel's main thread only.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from typing import Any

from bokeh.core.properties import value
from bokeh.layouts import column, row
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    HoverTool,
    Label,
    Legend,
    LegendItem,
    NumberFormatter,
    ScientificFormatter,
    Span,
    TableColumn,
)
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from .._vocab import Record, StepRecord
from ..accuracy.steps import STEP_SCHEMES
from ..measure.findings import crossovers

#: the time of one frame at 60 frames per second (question 1)
FRAME_BUDGET_S = 0.016
#: errors are drawn on a log axis; an exact 0 is drawn here (the table shows 0)
ERROR_FLOOR = 1e-17
#: complex step is swept down to 1e-300; below this its curve is flat and would
#: squeeze the other schemes' V-curves into a sliver of the axis
MIN_STEP_DRAWN = 1e-20

RECORD_COLUMNS = (
    "label", "mode", "scheme", "backend", "precision", "jit", "n",
    "median_s", "iqr_s", "min_s", "compile_s", "primal_s", "ratio_to_primal", "floor_s",
    "f_evals", "flops_ratio", "error", "error_norm", "error_plot", "unstable", "skipped", "note",
)  # fmt: skip
STEP_COLUMNS = ("scheme", "n", "precision", "h", "error", "error_plot", "optimal_h", "is_default")

_SERIES_COLORS = {
    "forward": Category10_10[0],
    "reverse": Category10_10[3],
    "numeric": Category10_10[2],
    "complex-step": Category10_10[4],
}
_NUMPY_COLOR = Category10_10[1]
_STEP_COLORS = {
    "forward": Category10_10[0],
    "central": Category10_10[2],
    "richardson": Category10_10[3],
    "complex-step": Category10_10[4],
}
_TIME = "{0.000a}s"  # bokeh's numeral format: 1.234ms, 56.7us


def _num(x: Any) -> float:
    """A float for a plot column: None and non-numbers become NaN (a gap)."""
    if x is None or isinstance(x, bool):
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _pos(x: Any) -> float:
    """A value for a log axis: anything not positive and finite becomes NaN."""
    v = _num(x)
    return v if v > 0 and math.isfinite(v) else math.nan


def _error_plot(error: Any) -> float:
    v = _num(error)
    if v == 0:
        return ERROR_FLOOR
    return v if v > 0 and math.isfinite(v) else math.nan


def record_row(r: Record) -> dict[str, Any]:
    """One record as a row of the plot and table sources."""
    return {
        "label": r.label,
        "mode": r.mode,
        "scheme": r.scheme or "",
        "backend": r.backend,
        "precision": r.precision,
        "jit": "jit" if r.jit else "eager",
        "n": r.n,
        "median_s": _pos(r.median_s),
        "iqr_s": _num(r.iqr_s),
        "min_s": _pos(r.min_s),
        "compile_s": _pos(r.compile_s),
        "primal_s": _pos(r.primal_s),
        "ratio_to_primal": _pos(r.ratio_to_primal),
        "floor_s": _pos(r.floor_s),
        "f_evals": _num(r.f_evals),
        "flops_ratio": _num(r.flops_ratio),
        "error": _num(r.error),
        "error_norm": _num(r.error_norm),
        "error_plot": _error_plot(r.error),
        "unstable": "unstable" if r.unstable else "",
        "skipped": r.skipped or "",
        "note": r.note or "",
    }


def step_row(s: StepRecord) -> dict[str, Any]:
    """One step-sweep point as a row of the step sources."""
    return {
        "scheme": s.scheme,
        "n": s.n,
        "precision": s.precision,
        "h": _pos(s.h),
        "error": _num(s.error),
        "error_plot": _error_plot(s.error),
        "optimal_h": _num(s.optimal_h),
        "is_default": "yes" if s.is_default else "",
    }


def _columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, list]:
    return {k: [r[k] for r in rows] for k in names}


def _empty(names: Sequence[str]) -> dict[str, list]:
    return {k: [] for k in names}


def series_color(label: str, index: int) -> str:
    """A stable color: by mode for the usual series, else from the palette."""
    if "numpy" in label:
        return _NUMPY_COLOR
    for mode, color in _SERIES_COLORS.items():
        if label == mode or label.startswith(mode + "[") or label.startswith(mode + "("):
            return color
    return Category10_10[(5 + index) % 10]


_RECORD_TIPS = [
    ("series", "@label"),
    ("n", "@n"),
    ("time", f"@median_s{_TIME} \u00b1 @iqr_s{_TIME} (IQR)"),
    ("compile", f"@compile_s{_TIME}"),
    ("primal", f"@primal_s{_TIME}"),
    ("ratio to primal", "@ratio_to_primal{0.00}"),
    ("f evals", "@f_evals"),
    ("error", "@error{0.0e}"),
    ("note", "@unstable @note"),
]


def _figure(title: str, x_label: str, y_label: str, width: int, height: int, **kw: Any):
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
    # below the plot, in columns: inside it, ten series would hide the data
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


class _Slot:
    """One series' source and glyphs, made once and reused by run after run.

    Adding glyphs to a shown document costs a full recount of its models
    (about 0.1 s each) and a patch per change; a fixed pool costs nothing per
    run: a new run only renames and recolors the slots it uses.
    """

    def __init__(self, source: ColumnDataSource, glyphs: dict[str, list], items: list[LegendItem]):
        self.source = source
        self.glyphs = glyphs
        self.items = items
        self.label: str | None = None

    def assign(self, label: str, color: str, show_compile: bool) -> None:
        self.label = label
        for part, glyphs in self.glyphs.items():
            for g in glyphs:
                g.glyph.line_color = color
                if hasattr(g.glyph, "fill_color"):
                    g.glyph.fill_color = color
                g.visible = show_compile if part == "compile" else True
        for item in self.items:
            item.label = value(label)  # a plain string would name a data column
            item.visible = True

    def release(self) -> None:
        self.label = None
        self.source.data = _empty(list(self.source.data))
        for item in self.items:
            item.visible = False


class LabPlots:
    """The Lab's figures and table, and the data sources they draw.

    Attributes:
        layout: the Bokeh layout of all four figures and the table.
        figures: "time", "ratio", "error", "steps" -> figure.
        records: every record of the current run (the table's source).
        series: label -> the source of that derivative series' points.
        primals: label -> the source of a primal's points (f itself, per options).
        floor: the dispatch floor, per n.
        crossings: the crossovers between series in the current run.
        step_series: scheme -> the source of its error-vs-step points.
        step_defaults: the points at each scheme's default step.
    """

    #: derivative series and primals drawn at once (more are added when needed)
    SERIES_SLOTS = 6
    PRIMAL_SLOTS = 2

    def __init__(self, *, show_compile: bool = False, width: int = 470, height: int = 370):
        self.show_compile = show_compile
        self._records: list[Record] = []
        self._colors: dict[str, str] = {}
        self.records = ColumnDataSource(_empty(RECORD_COLUMNS), name="records")
        self.floor = ColumnDataSource(_empty(("n", "floor_s")), name="floor")
        self.crossings = ColumnDataSource(_empty(("n", "time_s", "text")), name="crossings")
        self.step_defaults = ColumnDataSource(_empty(STEP_COLUMNS), name="step_defaults")
        self.step_series: dict[str, ColumnDataSource] = {}
        self._step_items: dict[str, LegendItem] = {}
        self._series_slots: list[_Slot] = []
        self._primal_slots: list[_Slot] = []
        self._build(width, height)
        for _ in range(self.SERIES_SLOTS):
            self._series_slots.append(self._new_series_slot())
        for _ in range(self.PRIMAL_SLOTS):
            self._primal_slots.append(self._new_primal_slot())

    @property
    def series(self) -> dict[str, ColumnDataSource]:
        return {s.label: s.source for s in self._series_slots if s.label is not None}

    @property
    def primals(self) -> dict[str, ColumnDataSource]:
        return {s.label: s.source for s in self._primal_slots if s.label is not None}

    # ---------------------------------------------------------------- build
    def _build(self, width: int, height: int) -> None:
        t, self._time_legend = _figure(
            "Time per derivative", "n (inputs)", "seconds per derivative", width, height
        )
        t.add_layout(
            Span(
                location=FRAME_BUDGET_S, dimension="width", line_color="#888888", line_dash="dashed"
            )  # fmt: skip
        )
        t.add_layout(
            Label(
                x=5,
                y=FRAME_BUDGET_S,
                x_units="screen",
                text="16 ms frame",
                text_font_size="8pt",
                text_color="#666666",
                y_offset=2,
            )  # fmt: skip
        )
        floor = t.line("n", "floor_s", source=self.floor, color="#999999", line_dash="dotted")
        marks = t.scatter(
            "n", "time_s", source=self.crossings, marker="diamond", size=14,
            fill_color="gold", line_color="black",
        )  # fmt: skip
        t.add_tools(HoverTool(renderers=[marks], tooltips=[("crossover", "@text")]))
        self._time_legend.items = [
            LegendItem(label="dispatch floor", renderers=[floor]),
            LegendItem(label="crossover", renderers=[marks]),
        ]
        self._time_hover = HoverTool(renderers=[], tooltips=_RECORD_TIPS)
        t.add_tools(self._time_hover)

        r, self._ratio_legend = _figure(
            "Ratio to the primal", "n (inputs)", "time / primal time", width, height,
            x_range=t.x_range,
        )  # fmt: skip
        r.add_layout(Span(location=1.0, dimension="width", line_color="black", line_dash="dashed"))
        self._ratio_hover = HoverTool(renderers=[], tooltips=_RECORD_TIPS)
        r.add_tools(self._ratio_hover)

        e, self._error_legend = _figure(
            "Error against n", "n (inputs)", "max relative error", width, height,
            x_range=t.x_range,
        )  # fmt: skip
        self._error_hover = HoverTool(renderers=[], tooltips=_RECORD_TIPS)
        e.add_tools(self._error_hover)

        s, self._step_legend = _figure(
            "Error against step h", "step h", "max relative error", width, height
        )
        defaults = s.scatter(
            "h", "error_plot", source=self.step_defaults, size=12, marker="circle",
            fill_color=None, line_color="black", line_width=2,
        )  # fmt: skip
        step_items = [LegendItem(label="default step", renderers=[defaults])]
        step_glyphs = [defaults]
        for i, scheme in enumerate(STEP_SCHEMES):
            source = ColumnDataSource(_empty(STEP_COLUMNS), name=f"steps:{scheme}")
            color = _STEP_COLORS.get(scheme, Category10_10[(6 + i) % 10])
            glyphs = [
                s.line("h", "error_plot", source=source, color=color, line_width=2),
                s.scatter("h", "error_plot", source=source, color=color, size=5),
            ]
            item = LegendItem(label=scheme, renderers=glyphs, visible=False)
            step_items.append(item)
            step_glyphs.append(glyphs[1])
            self.step_series[scheme] = source
            self._step_items[scheme] = item
        self._step_legend.items = step_items
        s.add_tools(
            HoverTool(
                renderers=step_glyphs,
                tooltips=[
                    ("scheme", "@scheme"),
                    ("h", "@h{0.0e}"),
                    ("error", "@error{0.0e}"),
                    ("optimal h", "@optimal_h{0.0e}"),
                    ("default step", "@is_default"),
                ],
            )
        )

        self.table = DataTable(
            source=self.records,
            columns=_table_columns(),
            width=2 * width,
            height=220,
            index_position=None,
        )
        self.figures = {"time": t, "ratio": r, "error": e, "steps": s}
        self.layout = column(row(t, r), row(e, s), self.table)

    def _color(self, label: str) -> str:
        if label not in self._colors:
            self._colors[label] = series_color(label, len(self._colors))
        return self._colors[label]

    def _new_series_slot(self) -> _Slot:
        source = ColumnDataSource(_empty(RECORD_COLUMNS), name="series")
        t, r, e = self.figures["time"], self.figures["ratio"], self.figures["error"]
        style = {"source": source, "color": "gray"}
        glyphs = {
            "time": [t.line("n", "median_s", line_width=2, **style),
                     t.scatter("n", "median_s", size=6, **style)],
            "compile": [t.line("n", "compile_s", line_dash="dashed", **style),
                        t.scatter("n", "compile_s", marker="triangle", size=7, **style)],
            "ratio": [r.line("n", "ratio_to_primal", line_width=2, **style),
                      r.scatter("n", "ratio_to_primal", size=6, **style)],
            "error": [e.line("n", "error_plot", line_width=2, **style),
                      e.scatter("n", "error_plot", size=6, **style)],
        }  # fmt: skip
        for g in glyphs["compile"]:
            g.visible = self.show_compile
        items = []
        for legend, key in (
            (self._time_legend, "time"),
            (self._ratio_legend, "ratio"),
            (self._error_legend, "error"),
        ):
            item = LegendItem(label="", renderers=glyphs[key], visible=False)
            legend.items = [*legend.items, item]
            items.append(item)
        self._time_hover.renderers = [
            *self._time_hover.renderers,
            glyphs["time"][1],
            glyphs["compile"][1],
        ]
        self._ratio_hover.renderers = [*self._ratio_hover.renderers, glyphs["ratio"][1]]
        self._error_hover.renderers = [*self._error_hover.renderers, glyphs["error"][1]]
        return _Slot(source, glyphs, items)

    def _new_primal_slot(self) -> _Slot:
        source = ColumnDataSource(_empty(RECORD_COLUMNS), name="primal")
        t = self.figures["time"]
        dash = ["solid", "dashed", "dotdash", "dotted"][len(self._primal_slots) % 4]
        glyphs = {
            "primal": [
                t.line(
                    "n", "median_s", source=source, color="black", line_width=2, line_dash=dash
                ),  # fmt: skip
                t.scatter("n", "median_s", source=source, color="black", size=4),
            ]
        }
        item = LegendItem(label="", renderers=glyphs["primal"], visible=False)
        self._time_legend.items = [*self._time_legend.items, item]
        self._time_hover.renderers = [*self._time_hover.renderers, glyphs["primal"][1]]
        return _Slot(source, glyphs, [item])

    def _slot(self, slots: list[_Slot], label: str, primal: bool) -> ColumnDataSource:
        for slot in slots:
            if slot.label == label:
                return slot.source
        free = next((s for s in slots if s.label is None), None)
        if free is None:  # more series than slots: grow the pool (slow, but rare)
            with _frozen(self.layout):
                free = self._new_primal_slot() if primal else self._new_series_slot()
            slots.append(free)
        free.assign(label, "black" if primal else self._color(label), self.show_compile)
        return free.source

    # ------------------------------------------------------------- records
    def clear_records(self) -> None:
        """Forget the current run: empty every source and release its series."""
        self._records = []
        for slot in (*self._series_slots, *self._primal_slots):
            if slot.label is not None or slot.source.data["n"]:
                slot.release()
        for source in (self.records, self.floor, self.crossings):
            source.data = _empty(list(source.data))

    def add_records(self, records: Iterable[Record]) -> None:
        """Append records (one stream per source, however many records)."""
        records = list(records)
        if not records:
            return
        rows = [record_row(r) for r in records]
        self.records.stream(_columns(rows, RECORD_COLUMNS))
        by_label: dict[tuple[bool, str], list[dict[str, Any]]] = {}
        for rec, row_ in zip(records, rows, strict=True):
            if not rec.skipped:
                by_label.setdefault((rec.mode == "primal", rec.label), []).append(row_)
        for (is_primal, label), group in by_label.items():
            slots = self._primal_slots if is_primal else self._series_slots
            self._slot(slots, label, is_primal).stream(_columns(group, RECORD_COLUMNS))
        self._stream_per_n(self.floor, "floor_s", rows)
        self._records.extend(records)
        found = crossovers(r for r in self._records if r.mode != "primal")
        if found or self.crossings.data["n"]:
            self.crossings.data = {
                "n": [c.n for c in found],
                "time_s": [c.time_s for c in found],
                "text": [c.describe() for c in found],
            }

    @staticmethod
    def _stream_per_n(source: ColumnDataSource, key: str, rows: list[dict[str, Any]]) -> None:
        """One point per n (the first measured), kept in order of n for the line."""
        seen = dict(zip(source.data["n"], source.data[key], strict=True))
        new = {r["n"]: r[key] for r in rows if r["n"] not in seen and not math.isnan(r[key])}
        if not new:
            return
        if all(n > max(seen, default=0) for n in new):
            ns = sorted(new)
            source.stream({"n": ns, key: [new[n] for n in ns]})
        else:  # an n below the last one (e.g. an explicit, unsorted size list)
            merged = {**seen, **new}
            ns = sorted(merged)
            source.data = {"n": ns, key: [merged[n] for n in ns]}

    def labels(self) -> set[str]:
        """The labels of the derivative series drawn now (primals not included)."""
        return set(self.series)

    def set_show_compile(self, show: bool) -> None:
        """Show or hide the compile-time glyphs."""
        self.show_compile = bool(show)
        for slot in self._series_slots:
            for glyph in slot.glyphs["compile"]:
                glyph.visible = self.show_compile and slot.label is not None

    # --------------------------------------------------------------- steps
    def clear_steps(self, n: int | None = None, precision: str | None = None) -> None:
        """Forget the step-size curves; title the plot for size ``n``."""
        for scheme, source in self.step_series.items():
            if source.data["h"]:
                source.data = _empty(STEP_COLUMNS)
            self._step_items[scheme].visible = False
        if self.step_defaults.data["h"]:
            self.step_defaults.data = _empty(STEP_COLUMNS)
        title = "Error against step h"
        if n is not None:
            title += f" at n = {n}"
        if precision:
            title += f" ({precision})"
        self.figures["steps"].title.text = title

    def add_steps(self, steps: Iterable[StepRecord]) -> None:
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
            if scheme not in self.step_series:
                continue  # a scheme this plot does not know
            self.step_series[scheme].stream(_columns(group, STEP_COLUMNS))
            self._step_items[scheme].visible = True
        if defaults:
            self.step_defaults.stream(_columns(defaults, STEP_COLUMNS))


def _frozen(layout: Any):
    """Defer the document's model recount while several models are added."""
    doc = getattr(layout, "document", None)
    return doc.models.freeze() if doc is not None else contextlib.nullcontext()


def _table_columns() -> list[TableColumn]:
    sci = ScientificFormatter(precision=3, nan_format="-")
    ratio = NumberFormatter(format="0.00", nan_format="-")
    whole = NumberFormatter(format="0", nan_format="-")
    spec = [
        ("label", "series", None, 150),
        ("n", "n", whole, 60),
        ("median_s", "time (s)", sci, 80),
        ("iqr_s", "IQR (s)", sci, 80),
        ("compile_s", "compile (s)", sci, 80),
        ("primal_s", "primal (s)", sci, 80),
        ("ratio_to_primal", "ratio", ratio, 60),
        ("f_evals", "f evals", whole, 60),
        ("error", "error", sci, 80),
        ("precision", "precision", None, 70),
        ("skipped", "skipped", None, 160),
    ]
    return [
        TableColumn(field=f, title=t, width=w, **({"formatter": fmt} if fmt else {}))
        for f, t, fmt, w in spec
    ]
