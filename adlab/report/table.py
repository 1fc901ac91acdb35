"""A small table of text cells that shows itself as HTML in a notebook and as text elsewhere.

The tutorials show their findings as tables beside the plots, and the CLI and
``adlab.format_table`` print theirs; ``Table`` lays them all out, one way.
It holds already-formatted cells, so what a reader sees (and what a notebook
test compares) is exactly the text printed, on every machine that measures the same.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._format import for_browser


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
        return self.text()

    def text(self, width: int | None = None) -> str:
        """The table as text; wider than ``width`` characters, its columns are cut into
        blocks set one under the other, each with the first column (the row names) again.

        A row that wraps in a notebook's output (JupyterLab wraps at the window's edge)
        puts each cell under the wrong column; a block of whole rows reads as the table.
        """
        grid = [list(self.columns), *[list(r) for r in self.rows]]
        widths = [max(len(r[i]) for r in grid) for i in range(len(self.columns))]
        # the first column (a name) to the left, numbers to the right, unless told
        align = self.align or "l" + "r" * (len(self.columns) - 1)
        lines = [self.title] if self.title else []
        for k, block in enumerate(_blocks(widths, width)):
            if k:
                lines.append("")
            for j, row in enumerate(grid):
                cells = [row[i].ljust(widths[i]) if align[i] == "l" else row[i].rjust(widths[i])
                         for i in block]  # fmt: skip
                lines.append("  ".join(cells).rstrip())
                if j == 0:
                    lines.append("  ".join("-" * widths[i] for i in block))
        lines += self.notes
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        def esc(text: str) -> str:
            return html.escape(for_browser(text))

        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        title = f"<p><b>{esc(self.title)}</b></p>" if self.title else ""
        notes = "".join(f"<div><small>{esc(n)}</small></div>" for n in self.notes)
        return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"


class TableText(str):
    """A table's text that a notebook shows as HTML: ``print`` gives the text, and it is
    the text everywhere a ``str`` is used (``in``, ``==``, ``splitlines``).

    The HTML is made when a notebook asks for it (``html``, called once), so a caller that
    only prints pays nothing for it. Pickled or copied, it is the plain text.
    """

    def __new__(cls, text: str, html: Callable[[], str]) -> TableText:
        self = super().__new__(cls, text)
        self._html = html
        return self

    def _repr_html_(self) -> str:
        return self._html()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        # IPython's text view (a terminal, or a notebook without HTML): the table, not
        # the quoted string with its \n
        p.text(str(self))

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return str, (str(self),)


def _blocks(widths: Sequence[int], width: int | None) -> list[list[int]]:
    """Column indices per block: the first column, then as many more as fit in ``width``
    (at least one, however wide)."""
    if width is None or len(widths) < 2:
        return [list(range(len(widths)))]
    out: list[list[int]] = [[0]]
    used = widths[0]
    for i in range(1, len(widths)):
        if len(out[-1]) > 1 and used + 2 + widths[i] > width:
            out.append([0])
            used = widths[0]
        out[-1].append(i)
        used += 2 + widths[i]
    return out
