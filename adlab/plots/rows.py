"""Records as rows of plot columns: numbers a Bokeh source can draw.

A log axis cannot draw 0, a negative number, NaN or None; a ``ColumnDataSource``
wants one type per column. So each value becomes a float, and a value a log
axis cannot show becomes NaN, which Bokeh draws as a gap. An exact error of 0
is drawn at ``ERROR_FLOOR`` (the table shows the 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._format import error_text, for_browser, human_bytes, seconds
from .._vocab import Record, StepRecord
from ..measure.floor import ratio_text
from ..report import record_text

#: errors are drawn on a log axis; an exact 0 is drawn here (the table shows 0)
ERROR_FLOOR = 1e-17
#: complex step is swept down to 1e-300; below this its curve is flat and would
#: squeeze the other schemes' V-curves into a sliver of the axis
MIN_STEP_DRAWN = 1e-20

RECORD_COLUMNS = (
    "label", "mode", "scheme", "backend", "precision", "jit", "n",
    "median_s", "iqr_s", "min_s", "compile_s", "primal_s", "ratio_to_primal", "floor_s",
    "ratio_text", "f_evals", "flops_ratio", "error", "error_norm", "error_plot", "unstable",
    "skipped", "note", "colors", "nnz", "peak_bytes", "residual_bytes", "memory_counter",
    # as people read them (``adlab._format``), for the table and the tooltips
    "median_text", "iqr_text", "compile_text", "primal_text", "error_text", "record_text",
    "peak_text", "residual_text",
)  # fmt: skip
STEP_COLUMNS = ("scheme", "n", "precision", "h", "error", "error_plot", "optimal_h", "is_default")


def number(x: Any) -> float:
    """A float for a plot column: None and non-numbers become NaN (a gap)."""
    if x is None or isinstance(x, bool):
        return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def positive(x: Any) -> float:
    """A value for a log axis: anything not positive and finite becomes NaN."""
    v = number(x)
    return v if v > 0 and math.isfinite(v) else math.nan


def error_plot(error: Any) -> float:
    """An error for a log axis: an exact 0 at ``ERROR_FLOOR``, else as ``positive``."""
    return ERROR_FLOOR if number(error) == 0 else positive(error)


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
        "median_s": positive(r.median_s),
        "iqr_s": number(r.iqr_s),
        "min_s": positive(r.min_s),
        "compile_s": positive(r.compile_s),
        "primal_s": positive(r.primal_s),
        "ratio_to_primal": positive(r.ratio_to_primal),
        "ratio_text": "" if r.skipped else ratio_text(r),  # "at the floor" or "8.6x"
        "floor_s": positive(r.floor_s),
        "f_evals": number(r.f_evals),
        "flops_ratio": number(r.flops_ratio),
        "error": number(r.error),
        "error_norm": number(r.error_norm),
        "error_plot": error_plot(r.error),
        "unstable": "unstable" if r.unstable else "",
        "skipped": r.skipped or "",
        "note": r.note or "",
        "colors": number(r.colors),  # a sparse series: its passes, one per color ...
        "nnz": number(r.nnz),  # ... and its pattern's nonzeros
        # memory on a log axis: a point with no figure (or 0) is a gap, never drawn at 0
        "peak_bytes": positive(r.peak_bytes),
        "residual_bytes": positive(r.residual_bytes),
        "memory_counter": r.memory_counter or "",
        "median_text": "skipped" if r.skipped else browser_seconds(r.median_s),
        "iqr_text": browser_seconds(r.iqr_s),
        "compile_text": browser_seconds(r.compile_s) if r.compile_s else "-",  # NumPy: 0
        "primal_text": browser_seconds(r.primal_s),
        "error_text": "-" if r.skipped else error_text(r.error),
        "record_text": for_browser(record_text(r)),  # the record in full, on hover
        "peak_text": browser_bytes(r.peak_bytes),
        "residual_text": browser_bytes(r.residual_bytes),
    }


def browser_seconds(s: float | None) -> str:
    """A duration as the Lab shows it: '5.75 \u00b5s', '-' for none."""
    return for_browser(seconds(s))


def browser_bytes(b: float | None) -> str:
    """A size as the Lab shows it (``human_bytes``): '7.8 KB', '-' for none."""
    return "-" if b is None else human_bytes(b)


def step_row(s: StepRecord) -> dict[str, Any]:
    """One step-sweep point as a row of the step sources."""
    return {
        "scheme": s.scheme,
        "n": s.n,
        "precision": s.precision,
        "h": positive(s.h),
        "error": number(s.error),
        "error_plot": error_plot(s.error),
        "optimal_h": number(s.optimal_h),
        "is_default": "yes" if s.is_default else "",
    }


def columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, list]:
    """Rows as the columns a ``ColumnDataSource`` takes (or streams)."""
    return {k: [r[k] for r in rows] for k in names}


def empty(names: Sequence[str]) -> dict[str, list]:
    """Empty columns: a source with nothing in it yet."""
    return {k: [] for k in names}
