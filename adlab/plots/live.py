"""Bokeh figures of a sweep, fed record by record. No widgets here.

``LabPlots`` holds five figures and a table, and the ``ColumnDataSource``s
behind them. Records arrive with ``add_records`` and are appended with
``ColumnDataSource.stream``, so a plot shown in a notebook grows point by point
without being redrawn:

1. time per derivative against n (log-log): one line per series, the primal,
   the dispatch floor, a 16 ms frame budget, compile times (toggled) and the
   crossovers between series;
2. beside it, the peak memory of each series against n (log-log; ``memory``), with the
   residuals of those with a reverse part;
3. the ratio of each series to the primal against n;
4. the error of each series against n;
5. the error against the step size at one n, per scheme (``steps.StepPanel``);

and, for a run with sparse series, the pattern of each sparse kind, colored
(``sparsity.PatternPanel``), hidden otherwise.

Every method here must run on one thread at a time: a Bokeh document is not
thread-safe. The Lab calls them from the kernel's main thread only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, HoverTool, Label, LegendItem, Span

from .._vocab import FRAME_S, Record, StepRecord
from ..measure.findings import crossovers, significant
from ..measure.series import SPARSE_MODES
from .axes import log_figure
from .colors import framework_look, series_color
from .memory import has_memory, memory_figure, memory_glyphs
from .rows import RECORD_COLUMNS, columns, empty, record_row
from .slots import Slot, frozen
from .sparsity import PatternPanel
from .steps import StepPanel
from .table import record_table

#: a legend holds three labels a row up to this length, two beyond it
LONG_LABEL = 24


_RECORD_TIPS = [
    ("series", "@label"),
    ("framework", "@backend (@jit)"),
    ("n", "@n"),
    ("time", "@median_text \u00b1 @iqr_text (IQR)"),  # units as in every table
    ("compile", "@compile_text"),
    ("primal", "@primal_text"),
    ("ratio to primal", "@ratio_text"),
    ("f evals", "@f_evals"),
    ("error", "@error_text"),
    ("peak memory", "@peak_text"),
    ("note", "@unstable @note"),
]


class LabPlots:
    """The Lab's figures and table, and the data sources they draw.

    Attributes:
        layout: the Bokeh layout of all five figures and the table.
        figures: "time", "memory", "ratio", "error", "steps" -> figure.
        records: every record of the current run (the table's source).
        series: label -> the source of that derivative series' points.
        primals: label -> the source of a primal's points (f itself, per options).
        floor: the dispatch floor, per n.
        crossings: the crossovers between series in the current run.
        steps: the error-against-step figure (``StepPanel``); ``step_series`` and
            ``step_defaults`` are its sources.
        patterns: sparse kind ("forward", "reverse", "hessian") -> its ``PatternPanel``.
    """

    #: derivative series and primals drawn at once (more are added when needed)
    SERIES_SLOTS = 8
    PRIMAL_SLOTS = 2

    def __init__(self, *, show_compile: bool = False, width: int = 470, height: int = 370):
        self.show_compile = show_compile
        self._records: list[Record] = []
        self._colors: dict[str, str] = {}
        self.records = ColumnDataSource(empty(RECORD_COLUMNS), name="records")
        self.floor = ColumnDataSource(empty(("n", "floor_s")), name="floor")
        self.crossings = ColumnDataSource(empty(("n", "time_s", "text")), name="crossings")
        self._series_slots: list[Slot] = []
        self._primal_slots: list[Slot] = []
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
        t, self._time_legend = log_figure(
            "Time per derivative", "n (inputs)", "seconds per derivative", width, height
        )
        t.add_layout(
            Span(
                location=FRAME_S, dimension="width", line_color="#888888", line_dash="dashed"
            )  # fmt: skip
        )
        t.add_layout(
            Label(
                x=5,
                y=FRAME_S,
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

        m, self._memory_legend, self._memory_hover = memory_figure(width, height, t.x_range)

        r, self._ratio_legend = log_figure(
            "Ratio to the primal", "n (inputs)", "time / primal time", width, height,
            x_range=t.x_range,
        )  # fmt: skip
        r.add_layout(Span(location=1.0, dimension="width", line_color="black", line_dash="dashed"))
        self._ratio_hover = HoverTool(renderers=[], tooltips=_RECORD_TIPS)
        r.add_tools(self._ratio_hover)

        e, self._error_legend = log_figure(
            "Error against n", "n (inputs)", "max relative error", width, height,
            x_range=t.x_range,
        )  # fmt: skip
        self._error_hover = HoverTool(renderers=[], tooltips=_RECORD_TIPS)
        e.add_tools(self._error_hover)

        self.steps = StepPanel(width, height)
        self.step_series, self.step_defaults = self.steps.series, self.steps.defaults
        s = self.steps.figure

        self.table = record_table(self.records, width=2 * width)
        self.figures = {"time": t, "memory": m, "ratio": r, "error": e, "steps": s}
        for key, fig in self.figures.items():  # a hook for the browser test and users' CSS
            fig.css_classes = [*fig.css_classes, f"adlab-{key}-plot"]
        self.patterns = {kind: PatternPanel(f"pattern:{kind}") for kind in SPARSE_MODES}
        shapes = row(*(p.figure for p in self.patterns.values()))
        # time and memory first, side by side: the two costs a person slides n to see
        self.layout = column(row(t, m), row(r, e), s, shapes, self.table)

    def color(self, label: str) -> str:
        """The colour of series ``label`` in every plot (claimed now if it has none yet:
        another run drawn over these plots, ``overlay``, takes its series' colours here)."""
        return self._color(label)

    def _color(self, label: str) -> str:
        if label not in self._colors:  # a mode's own color, else one no series has yet
            taken = set(self._colors.values())
            free = [i for i in range(10) if series_color("", i) not in taken]
            self._colors[label] = series_color(label, free[0] if free else len(self._colors))
        return self._colors[label]

    def _new_series_slot(self) -> Slot:
        source = ColumnDataSource(empty(RECORD_COLUMNS), name="series")
        t, r, e = self.figures["time"], self.figures["ratio"], self.figures["error"]
        m = self.figures["memory"]
        style = {"source": source, "color": "gray"}
        glyphs = {
            "time": [t.line("n", "median_s", line_width=2, **style),
                     t.scatter("n", "median_s", size=6, **style)],
            "compile": [t.line("n", "compile_s", line_alpha=0.6, **style),
                        t.scatter("n", "compile_s", marker="x", size=8, **style)],
            "ratio": [r.line("n", "ratio_to_primal", line_width=2, **style),
                      r.scatter("n", "ratio_to_primal", size=6, **style)],
            "error": [e.line("n", "error_plot", line_width=2, **style),
                      e.scatter("n", "error_plot", size=6, **style)],
            **memory_glyphs(m, source, "gray"),
        }  # fmt: skip
        for g in glyphs["compile"]:
            g.visible = self.show_compile
        items = {}
        for legend, key in (
            (self._time_legend, "time"),
            (self._memory_legend, "memory"),
            (self._ratio_legend, "ratio"),
            (self._error_legend, "error"),
        ):
            renderers = [*glyphs[key], *glyphs["residual"]] if key == "memory" else glyphs[key]
            item = LegendItem(label="", renderers=renderers, visible=False)
            legend.items = [*legend.items, item]
            items[key] = item
        self._time_hover.renderers = [
            *self._time_hover.renderers,
            glyphs["time"][1],
            glyphs["compile"][1],
        ]
        self._ratio_hover.renderers = [*self._ratio_hover.renderers, glyphs["ratio"][1]]
        self._error_hover.renderers = [*self._error_hover.renderers, glyphs["error"][1]]
        self._memory_hover.renderers = [*self._memory_hover.renderers, glyphs["memory"][1],
                                        *glyphs["residual"]]  # fmt: skip
        return Slot(source, glyphs, items)

    def _new_primal_slot(self) -> Slot:
        source = ColumnDataSource(empty(RECORD_COLUMNS), name="primal")
        t = self.figures["time"]
        glyphs = {
            "primal": [
                t.line("n", "median_s", source=source, color="black", line_width=2),
                t.scatter("n", "median_s", source=source, color="black", size=5),
            ],
            "memory": memory_glyphs(self.figures["memory"], source, "black")["memory"],
        }
        items = {}
        for legend, key in ((self._time_legend, "primal"), (self._memory_legend, "memory")):
            items[key] = LegendItem(label="", renderers=glyphs[key], visible=False)
            legend.items = [*legend.items, items[key]]
        self._time_hover.renderers = [*self._time_hover.renderers, glyphs["primal"][1]]
        self._memory_hover.renderers = [*self._memory_hover.renderers, glyphs["memory"][1]]
        return Slot(source, glyphs, items)

    def _slot(self, slots: list[Slot], label: str, primal: bool, framework: str
              ) -> Slot:  # fmt: skip
        """The slot of series ``label`` (a free slot takes it, in its look)."""
        for slot in slots:
            if slot.label == label:
                return slot
        free = next((s for s in slots if s.label is None), None)
        if free is None:  # more series than slots: grow the pool (slow, but rare)
            with frozen(self.layout):
                free = self._new_primal_slot() if primal else self._new_series_slot()
            slots.append(free)
        look = ("black" if primal else self._color(label), *framework_look(framework))
        free.assign(label, look, self.show_compile)
        if len(label) > LONG_LABEL:  # "hessian[forward-over-reverse](sparse)": 3 would overlap
            self._legend_columns(2)
        return free

    def _legend_columns(self, ncols: int) -> None:
        legends = (self._time_legend, self._memory_legend, self._ratio_legend, self._error_legend)
        for legend in legends:
            if legend.ncols != ncols:
                legend.ncols = ncols

    # ------------------------------------------------------------- records
    def clear_records(self) -> None:
        """Forget the current run: empty every source and release its series."""
        self._records = []
        for slot in (*self._series_slots, *self._primal_slots):
            if slot.label is not None or slot.source.data["n"]:
                slot.release()
        for source in (self.records, self.floor, self.crossings):
            source.data = empty(list(source.data))
        self._legend_columns(3)

    def add_records(self, records: Iterable[Record]) -> None:
        """Append records (one stream per source, however many records)."""
        records = list(records)
        if not records:
            return
        rows = [record_row(r) for r in records]
        self.records.stream(columns(rows, RECORD_COLUMNS))
        by_label: dict[tuple[bool, str, str], list[dict[str, Any]]] = {}
        for rec, row_ in zip(records, rows, strict=True):
            if not rec.skipped:
                key = (rec.mode == "primal", rec.label, rec.backend)
                by_label.setdefault(key, []).append(row_)
        for (is_primal, label, framework), group in by_label.items():
            slots = self._primal_slots if is_primal else self._series_slots
            slot = self._slot(slots, label, is_primal, framework)
            slot.source.stream(columns(group, RECORD_COLUMNS))
            # a series with no memory figure yet (a counter that failed) stays out of the
            # memory legend: an entry there with nothing drawn would read as "no memory"
            shown = has_memory(slot.source)
            if slot.items["memory"].visible != shown:
                slot.items["memory"].visible = shown
        self._stream_per_n(self.floor, "floor_s", rows)
        self._records.extend(records)
        found = significant(crossovers(self._records))  # a tie within the noise is no mark
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
        self.steps.clear(n, precision)

    def add_steps(self, steps: Iterable[StepRecord]) -> None:
        """Append step-sweep points (one stream per scheme)."""
        self.steps.add(steps)

    # ------------------------------------------------------------ patterns
    def show_pattern(self, kind: str, pattern: Any, coloring: Any, title: str) -> None:
        """Draw the pattern of sparse ``kind``, colored by ``coloring``."""
        self.patterns[kind].show(pattern, coloring, title)

    def clear_patterns(self) -> None:
        """Hide every pattern (a run without sparse series shows none)."""
        for panel in self.patterns.values():
            panel.clear()
