"""Memory in the tables: each point's peak and, for reverse mode, its residuals, beside
its time, in the decimal units ``adlab._format.human_bytes`` writes (1 KB = 1000 bytes).

The text table (``format_table``) gets a second grid under the time's, of the same
rows and columns: a time cell is already "4.56 ms (8.6x)^~", and a size beside it
would put a 7-size sweep into three blocks. The HTML table has room: each cell shows
the memory under the time and the ratio. Records without memory (``bench(memory=False)``,
records read from an older JSON file) leave both as they were.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._format import human_bytes
from .._vocab import Record

#: what the text's memory grid shows, on the line above it
MEMORY_CAPTION = (
    "memory per call: peak above the inputs (residuals: what a reverse pass's forward sweep\n"
    "keeps for its backward sweep); 1 KB = 1000 bytes"
)
#: the same for the HTML's cells, said under its table
MEMORY_HTML_CAPTION = (
    "under that, its memory: the peak above the inputs and, for a reverse pass, the "
    "residuals (what its forward pass keeps for the backward pass); 1 KB = 1000 bytes"
)


def has_memory(records: Sequence[Record]) -> bool:
    """Whether any point's memory was measured."""
    return any(r.peak_bytes is not None or r.residual_bytes is not None for r in records)


def memory_text(r: Record) -> str:
    """A text cell: '3.2 MB', '3.2 MB (1.1 MB)' with residuals, '-' where not measured,
    '' for a skipped point (its time cell says why)."""
    if r.skipped:
        return ""
    if r.peak_bytes is None and r.residual_bytes is None:
        return "-"
    text = human_bytes(r.peak_bytes)
    return text + (f" ({human_bytes(r.residual_bytes)})" if r.residual_bytes is not None else "")


def memory_lines(r: Record) -> list[str]:
    """An HTML cell's lines under the time: ['3.2 MB peak', '1.1 MB residuals'] (the
    residuals for a reverse pass only); none where not measured."""
    if r.skipped:
        return []
    out = [f"{human_bytes(r.peak_bytes)} peak"] if r.peak_bytes is not None else []
    if r.residual_bytes is not None:
        out.append(f"{human_bytes(r.residual_bytes)} residuals")
    return out


def memory_details(r: Record) -> list[tuple[str, str]]:
    """(what, value) for a record in full: peak, residuals and how they were counted."""
    if r.peak_bytes is None and r.residual_bytes is None:
        return []
    out = [("peak memory", human_bytes(r.peak_bytes))]
    if r.residual_bytes is not None:
        out.append(("residuals", human_bytes(r.residual_bytes)))
    if r.memory_counter:
        out.append(("memory counter", r.memory_counter))
    return out
