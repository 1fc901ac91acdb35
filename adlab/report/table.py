"""A small table of text cells that shows itself as HTML in a notebook and as text elsewhere.

The tutorials show their findings as tables beside the plots, and the CLI and
``adlab.format_table`` print theirs; ``Table`` lays them all out, one way.
It holds already-formatted cells, so what a reader sees (and what a notebook
test compares) is exactly the text printed, on every machine that measures the same.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """Rows of text under column names; ``print(t)`` for text, ``t`` in a notebook for HTML.

    Attributes:
        columns: the column names.
        rows: one tuple of cells (strings) per row.
        title: a line above the table ("" for none).
        notes: lines under it (units, caveats).
        align: "l" or "r" per column; default: the first column (a name) to the
            left, the others (numbers) to the right.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str = ""
    notes: tuple[str, ...] = ()
    align: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(
                    f"row {row!r} has {len(row)} cells for {len(self.columns)} columns"
                )
        if self.align and (len(self.align) != len(self.columns) or set(self.align) - {"l", "r"}):
            raise ValueError(
                f"align must be 'l' or 'r' per column ({len(self.columns)}), got {self.align!r}"
            )

    @classmethod
    def of(
        cls,
        columns: Sequence[str],
        rows: Iterable[Sequence[object]],
        title: str = "",
        notes: Sequence[str] = (),
        align: str = "",
    ) -> Table:
        """A table from any cells (each turned into text with ``str``)."""
        return cls(tuple(columns), tuple(tuple(str(c) for c in r) for r in rows), title,
                   tuple(notes), align)  # fmt: skip

    def select(self, *columns: str) -> Table:
        """The same rows with only ``columns``, in that order (e.g. the deterministic ones)."""
        missing = [c for c in columns if c not in self.columns]
        if missing:
            raise ValueError(f"no column(s) {missing}; the columns are {list(self.columns)}")
        idx = [self.columns.index(c) for c in columns]
        align = "".join(self.align[i] for i in idx) if self.align else ""
        return Table(tuple(columns), tuple(tuple(r[i] for i in idx) for r in self.rows),
                     self.title, align=align)  # fmt: skip

    def __str__(self) -> str:
        grid = [list(self.columns), *[list(r) for r in self.rows]]
        widths = [max(len(r[i]) for r in grid) for i in range(len(self.columns))]
        # the first column (a name) to the left, numbers to the right, unless told
        align = self.align or "l" + "r" * (len(self.columns) - 1)
        lines = [self.title] if self.title else []
        for k, row in enumerate(grid):
            cells = [c.ljust(w) if a == "l" else c.rjust(w)
                     for c, w, a in zip(row, widths, align, strict=True)]  # fmt: skip
            lines.append("  ".join(cells).rstrip())
            if k == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines += self.notes
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        title = f"<p><b>{esc(self.title)}</b></p>" if self.title else ""
        notes = "".join(f"<div><small>{esc(n)}</small></div>" for n in self.notes)
        return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
