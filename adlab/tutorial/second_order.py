"""What notebook 07 reads: colorings against n, and passes per composition.

``colorings_table`` lays out ``adlab.measure.colorings.coloring_rows`` (a
pattern's colorings at each size); ``passes_table`` says, per composition,
how many passes a Hessian or an HVP takes: counts every machine agrees on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._vocab import Record
from ..measure.colorings import ColoringRow
from ..report.table import Table


def colorings_table(rows: Sequence[ColoringRow]) -> Table:
    """Per size: nonzeros, and the passes each coloring needs against the dense count."""
    if not rows:
        return Table.of(("n",), [])
    hessian = rows[0].kind == "hessian"
    heads = ("n", "nonzeros", "star colors (HVPs)", "column colors", "dense (n HVPs)")
    if not hessian:
        heads = ("n", "nonzeros", "column colors (forward)", "row colors (reverse)", "dense (n)")
    body = [(r.n, f"{r.nnz:,}", r.colors, r.rows, f"{r.dense:,}") for r in rows]
    bound = sorted({r.lower_bound for r in rows})
    notes = [f"the most nonzeros in one row: {', '.join(map(str, bound))} (no column coloring "
             "needs fewer colors)"]  # fmt: skip
    return Table.of(heads, body, title=f"{rows[0].model}: {rows[0].kind} pattern", notes=notes)


def passes_table(records: Iterable[Record]) -> Table:
    """Per second-order series and n: passes (``f_evals``) of the composed program."""
    keep = [r for r in records if r.order == 2]
    ns = sorted({r.n for r in keep})
    by: dict[str, dict[int, int | None]] = {}
    for r in keep:
        by.setdefault(r.label, {})[r.n] = r.f_evals
    body = [(label, *(by[label].get(n, "-") for n in ns)) for label in by]
    return Table.of(("series", *(f"n = {n}" for n in ns)), body,
                    title="passes per derivative (f evals)")  # fmt: skip
