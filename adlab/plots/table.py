"""The Lab's table of records: one row per record, each value as people read it.

Times carry their unit ("5.75 µs"), ratios read "1.4x" or "at the floor", and
every column is wide enough for its whole name. The text comes from
``adlab._format`` through the rows' text columns (``rows.record_row``); a column
still sorts by its number. Hovering a row shows its record in full.
"""

from __future__ import annotations

from bokeh.models import ColumnDataSource, DataTable, HTMLTemplateFormatter, TableColumn

#: (field it sorts by, title, field it shows, width in pixels, text-align); the
#: widths fit the title (and a sort arrow) whole, and 940 pixels in all: the Lab's
#: two plots side by side
_SPEC = (
    ("label", "series", "label", 180, "left"),  # "hessian[forward-over-reverse](sparse)"
    ("backend", "framework", "backend", 80, "left"),
    ("jit", "jit", "jit", 45, "left"),
    ("precision", "precision", "precision", 70, "left"),
    ("n", "n", "n", 50, "right"),
    ("median_s", "time", "median_text", 70, "right"),
    ("iqr_s", "IQR", "iqr_text", 60, "right"),
    ("ratio_to_primal", "ratio to f", "ratio_text", 85, "right"),  # "8.6x", "at the floor"
    ("compile_s", "compile", "compile_text", 65, "right"),
    ("f_evals", "f evals", "f_evals", 60, "right"),
    ("error", "error", "error_text", 55, "right"),
    ("colors", "colors", "colors", 50, "right"),  # a sparse series' passes
    ("nnz", "nonzeros", "nnz", 70, "right"),
)


def _template(shown: str, align: str) -> str:
    """A cell: the shown field's text ("-" for a missing number), and the record in full
    as the title, which the browser shows on hovering (``<%- %>`` escapes it)."""
    text = f'(typeof {shown} === "number" && isNaN({shown})) ? "-" : {shown}'
    return (f'<div title="<%- record_text %>" style="text-align: {align}">'
            f"<%- {text} %></div>")  # fmt: skip


def record_table(source: ColumnDataSource, width: int, height: int = 220) -> DataTable:
    """A table of the record rows in ``source`` (``rows.RECORD_COLUMNS``)."""
    return DataTable(
        source=source,
        columns=_table_columns(),
        width=width,
        height=height,
        index_position=None,
        autosize_mode="none",  # the widths above, whole titles: never squeezed to fit
    )


def _table_columns() -> list[TableColumn]:
    return [
        TableColumn(field=field, title=title, width=width,
                    formatter=HTMLTemplateFormatter(template=_template(shown, align)))
        for field, title, shown, width, align in _SPEC
    ]  # fmt: skip
