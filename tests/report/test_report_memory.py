"""Memory in the tables (issue 32): each point's peak and, for reverse mode, its residuals,
in KB/MB/GB beside its time, in the text table, its HTML and a record in full.

Hand-made records: what is checked is how the figures read, not how they are measured.
"""

from __future__ import annotations

import html
import re

from adlab import Record
from adlab.report import format_records, format_table, record_text


def rec(label: str, n: int, t: float, **kw) -> Record:
    kw.setdefault("mode", label)
    return Record(model="m", n=n, label=label, scheme=None, jit=True, precision="float64",
                  backend="jax", median_s=t, median_lo_s=t * 0.98, median_hi_s=t * 1.02,
                  **kw)  # fmt: skip


def records() -> list[Record]:
    """f, forward (no residuals) and reverse (residuals) at two sizes, and a point
    skipped for its memory."""
    return [
        rec("primal", 10, 1e-6, peak_bytes=800.0, memory_counter="XLA"),
        rec("forward", 10, 3e-6, peak_bytes=40e6, memory_counter="XLA"),
        rec("reverse", 10, 2e-6, peak_bytes=3.2e9, residual_bytes=1.1e9, memory_counter="XLA"),
        rec("primal", 100, 2e-6, peak_bytes=8_000.0, memory_counter="XLA"),
        rec("forward", 100, 9e-6, peak_bytes=4e9, memory_counter="XLA"),
        Record(model="m", mode="reverse", n=100, label="reverse", scheme=None, jit=True,
               precision="float64", backend="jax",
               skipped="predicted peak 320 GB; 24 GB of memory free"),
    ]  # fmt: skip


def _grid(text: str, after: str) -> list[str]:
    """The rows of the grid under the line ``after``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    return [
        x for x in lines[start:] if x.startswith(("primal ", "forward ", "reverse ", "numeric "))
    ]


def test_the_text_table_has_a_memory_grid_beside_the_times_with_units():
    table = format_table(records())
    assert "memory per call: peak above the inputs (residuals" in table
    assert "1 KB = 1000 bytes" in table
    times = _grid(table, "time per call")[:3]
    memory = _grid(table, "memory per call")
    assert [x.split()[0] for x in memory] == ["primal", "forward", "reverse"]
    assert "800 B" in memory[0] and "8 KB" in memory[0]
    assert "40 MB" in memory[1] and "4 GB" in memory[1]
    assert "3.2 GB (1.1 GB)" in memory[2]  # peak, then residuals in brackets
    assert "GB" not in " ".join(times)  # the time grid keeps its cells
    assert table.count("predicted peak 320 GB") == 1  # said once, under the table


def test_a_skipped_point_has_no_memory_cell_and_an_unmeasured_one_a_dash():
    rs = [*records()[:3], rec("numeric", 10, 5e-6)]
    memory = _grid(format_table(rs), "memory per call")
    assert memory[-1].split() == ["numeric", "-"]
    skipped = _grid(format_table(records()), "memory per call")[2]
    assert skipped.split() == ["reverse", "3.2", "GB", "(1.1", "GB)"]  # nothing at n = 100


def test_records_without_memory_have_no_memory_grid():
    plain = [rec("primal", 10, 1e-6), rec("reverse", 10, 2e-6)]
    table = format_table(plain)
    assert "memory per call" not in table and "peak" not in table._repr_html_()


def test_the_html_cell_shows_peak_and_residuals_under_the_time():
    page = format_table(records())._repr_html_()
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", page)]
    reverse = next(c for c in cells if "3.2 GB peak" in c)
    assert "1.1 GB residuals" in reverse and reverse.index("2 ") < reverse.index("3.2 GB")
    forward = next(c for c in cells if "40 MB peak" in c)
    assert "residuals" not in forward  # a forward pass keeps none
    assert "1 KB = 1000 bytes" in page[page.index("</table>") :]


def test_a_record_in_full_and_the_long_listing_say_its_memory():
    r = records()[2]
    full = record_text(r)
    assert "peak memory: 3.2 GB" in full and "residuals: 1.1 GB" in full
    assert "memory counter: XLA" in full
    assert "peak memory" not in record_text(rec("primal", 10, 1e-6))
    long = format_records(records())
    header = long.splitlines()[0].split()
    assert "peak" in header and "residuals" in header
    row = next(x for x in long.splitlines() if x.startswith("reverse") and " 10 " in x)
    assert "3.2 GB" in row and "1.1 GB" in row
