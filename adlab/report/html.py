"""``format_table`` as a notebook shows it: an HTML table of the same cells.

Each cell holds the time ("5.75 µs", marks after it) with its ratio to f under it
("1.4x", "at the floor"), so seven sizes fit a notebook's width; the machine is
named above, and the notes (the floor, the noise, each mark, each skip) and the
crossovers sit under the table. Hovering a cell shows its record in full
(``record_fields``, in the cell's ``title``). Nothing here computes: every word
comes from the functions the text table uses.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from .._format import for_browser, seconds
from .._vocab import Record
from ..engine.model.userline import without_where
from ..measure.findings import crossover_lines
from . import (
    describe_environment,
    floor_lines,
    legend,
    pivot,
    ratio_cell,
    record_text,
    skip_lines,
    time_marks,
)
from .memory import MEMORY_HTML_CAPTION, has_memory, memory_lines

# Inline styles, not a <style> block: JupyterLab's sanitizer keeps them in a notebook
# opened untrusted, and they beat its table CSS. A cell never wraps (a wrapped time
# reads as two); names sit left, numbers right.
_TD = ' style="white-space: nowrap; text-align: right; vertical-align: top"'
_TH = ' style="white-space: nowrap; text-align: left"'
_RATIO = ' style="font-size: 85%; opacity: 0.75"'
_NOTES = ' style="font-size: 85%; margin: 0.2em 0"'


def _esc(text: str) -> str:
    return html.escape(for_browser(text))


def _cell(r: Record | None, reasons: dict[str, int]) -> str:
    if r is None:
        return f"<td{_TD}></td>"
    tip = f' title="{_esc(record_text(r))}"'
    if r.skipped:
        return f"<td{_TD}{tip}>skipped [{reasons[without_where(r.skipped)]}]</td>"
    ratio = ratio_cell(r)
    under = f"<br><span{_RATIO}>{_esc(ratio)}</span>" if ratio else ""
    under += "".join(f"<br><span{_RATIO}>{_esc(line)}</span>" for line in memory_lines(r))
    return f"<td{_TD}{tip}>{_esc(seconds(r.median_s))}{_esc(time_marks(r))}{under}</td>"


def _list(lines: Sequence[str]) -> str:
    items = "".join(f"<li>{_esc(line)}</li>" for line in lines)
    return f"<ul{_NOTES}>{items}</ul>" if lines else ""


def table_html(records: Sequence[Record]) -> str:
    """The records as ``format_table``'s HTML (see the module docstring)."""
    ns, labels, cell, reasons = pivot(records)
    head = "".join(f"<th{_TD}>n = {n}</th>" for n in ns)
    body = "".join(
        f"<tr><th{_TH}>{_esc(label)}</th>"
        + "".join(_cell(cell.get((label, n)), reasons) for n in ns)
        + "</tr>"
        for label in labels
    )
    notes = (floor_lines(records) + legend(records, ["^", "~", "*", "floor"])
             + skip_lines(records))  # fmt: skip
    found = crossover_lines(records)
    return (
        '<div class="adlab-table">'  # a hook for tests and users' CSS
        f"<div><small>{_esc(describe_environment(records))}</small></div>"
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
        "<div><small>time per call: median over repeats; under it, the ratio to the "
        "primal f at the same n"
        + (f"; {MEMORY_HTML_CAPTION}" if has_memory(records) else "")
        + "</small></div>"
        + _list(notes)
        + (f"<div><small><b>Findings</b></small></div>{_list(found)}" if found else "")
        + "</div>"
    )
