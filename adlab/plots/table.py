"""The Lab's table of records: one row per record, numbers formatted, "-" for none."""

from __future__ import annotations

from bokeh.models import (
    ColumnDataSource,
    DataTable,
    NumberFormatter,
    ScientificFormatter,
    TableColumn,
)


def record_table(source: ColumnDataSource, width: int, height: int = 220) -> DataTable:
    """A table of the record rows in ``source`` (``rows.RECORD_COLUMNS``)."""
    return DataTable(
        source=source, columns=_table_columns(), width=width, height=height, index_position=None
    )


def _table_columns() -> list[TableColumn]:
    sci = ScientificFormatter(precision=3, nan_format="-")
    whole = NumberFormatter(format="0", nan_format="-")
    spec = [
        ("label", "series", None, 200),  # "hessian[forward-over-reverse](sparse)"
        ("backend", "framework", None, 75),
        ("jit", "jit", None, 45),
        ("n", "n", whole, 60),
        ("median_s", "time (s)", sci, 80),
        ("iqr_s", "IQR (s)", sci, 80),
        ("compile_s", "compile (s)", sci, 80),
        ("primal_s", "primal (s)", sci, 80),
        ("ratio_text", "ratio", None, 80),  # "8.6x", or "at the floor"
        ("f_evals", "f evals", whole, 60),
        ("colors", "colors", whole, 55),  # a sparse series' passes
        ("nnz", "nonzeros", whole, 70),
        ("error", "error", sci, 80),
        ("precision", "precision", None, 70),
        ("skipped", "skipped", None, 160),
    ]
    return [
        TableColumn(field=f, title=t, width=w, **({"formatter": fmt} if fmt else {}))
        for f, t, fmt, w in spec
    ]
