"""Tables people can read in a notebook: ``format_table`` and a sweep shown as HTML, the
text cut into blocks that do not wrap, and the Lab's table with units and whole names.

Internals: the lines and marks the HTML is checked for, from their one home: crossover_lines
(measure.findings), AT_FLOOR (measure.floor), and the Table the report builds
(report.table), which report's __init__ uses without exporting.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import pickle
import re
import warnings

import adlab
from adlab import NoisyMachineWarning, Record
from adlab.measure import Sweep
from adlab.measure.findings import crossover_lines
from adlab.measure.floor import AT_FLOOR
from adlab.report import TEXT_WIDTH, format_table, record_text
from adlab.report.table import Table

MICRO = "\u00b5s"
SIZES = (1, 3, 10, 30, 100, 300, 1000)


def rec(label: str, n: int, t: float, **kw) -> Record:
    kw.setdefault("mode", label)
    return Record(model="m", n=n, label=label, scheme=None, jit=True, precision="float64",
                  backend="jax", median_s=t, median_lo_s=t * 0.98, median_hi_s=t * 1.02,
                  floor_s=4e-6, **kw)  # fmt: skip


def sweep_records() -> list[Record]:
    """Seven sizes as the quickstart sweeps them: f, a reverse mode flat at the floor
    and a forward mode growing with n, so that reverse overtakes it."""
    out = []
    for n in SIZES:
        f = 5.75e-6 * (1 + (n - 1) / 100)
        out.append(rec("primal", n, f, ratio_to_primal=1.0))
        out.append(rec("reverse", n, 6e-6 + n * 1e-8, primal_s=f, at_floor=n < 100,
                       ratio_to_primal=(6e-6 + n * 1e-8) / f, unstable=n == 3))  # fmt: skip
        out.append(rec("forward", n, 5e-6 * n, primal_s=f, at_floor=n == 1,
                       ratio_to_primal=5e-6 * n / f))  # fmt: skip
    return out


def test_format_table_is_the_text_and_shows_as_html_with_units_ratios_and_findings():
    records = sweep_records()
    table = format_table(records)
    assert isinstance(table, str) and str(table) == table  # print() gives the text
    assert "5.75 us" in table and MICRO not in table  # the terminal keeps ASCII
    page = table._repr_html_()
    assert "<table" in page and "5.75 " + MICRO in page and not re.search(r"\d us\b", page)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    assert any(AT_FLOOR in c for c in cells)  # the ratio words under the time
    assert any(re.search(r">\d+(\.\d)?x<", c) for c in cells)  # and a ratio "14x"
    assert not any("(" in c for c in cells)  # not the text's "(8.6x)"
    found = crossover_lines(records)
    assert any("reverse" in line and "forward" in line for line in found)
    end = page.index("</table>")
    for line in found:  # the findings sit under the table
        assert page.index(html.escape(line)) > end
    assert page.index("dispatch floor (x + 1") > end and page.index("~ unstable") > end


def test_hovering_a_cell_shows_its_record_in_full():
    records = sweep_records()
    page = format_table(records)._repr_html_()
    titles = [html.unescape(t) for t in re.findall(r'title="([^"]*)"', page)]
    assert len(titles) == len(records)
    floored = next(r for r in records if r.label == "reverse" and r.n == 3)
    full = record_text(floored)
    assert full.replace(" us", " " + MICRO) in titles
    assert "ratio to f: at the floor" in full and "primal f: " in full and "unstable:" in full


def test_the_text_is_cut_into_blocks_no_wider_than_a_notebook_and_keeps_every_cell():
    records = sweep_records()
    narrow, wide = format_table(records), format_table(records, width=None)
    grid = [x for x in wide.splitlines() if x.startswith(("primal ", "reverse ", "forward "))]
    assert max(map(len, grid)) > TEXT_WIDTH  # one line per series: it would wrap
    rows = [x for x in narrow.splitlines() if x.startswith(("primal ", "reverse ", "forward "))]
    assert max(map(len, rows)) <= TEXT_WIDTH and len(rows) > len(grid)
    for r in records:
        assert f"n = {r.n}" in narrow
    cells = lambda text: sorted(re.findall(r"\d[\d.]* [mun]?s\b[^ \n]*", text))  # noqa: E731
    assert cells(narrow) == cells(wide)  # the same cells, in blocks
    # a table that fits stays one block, as before
    small = Table.of(["", "n = 1"], [["reverse", "5 us"]])
    assert small.text(TEXT_WIDTH) == str(small)


def test_the_text_is_a_str_where_a_str_was_used():
    table = format_table(sweep_records())
    assert type(pickle.loads(pickle.dumps(table))) is str
    assert copy.copy(table) == table and table.splitlines()[0].startswith("m | float64")
    assert adlab.format_table([]) == "(no records)"

    class Printer:  # IPython's text view: the table itself, not its quoted repr
        out = ""

        def text(self, s: str) -> None:
            self.out += s

    p = Printer()
    table._repr_pretty_(p, False)
    assert p.out == str(table)


def test_a_sweep_shown_in_a_notebook_runs_to_its_end_and_shows_its_table():
    records = sweep_records()

    def measure():  # as bench does: the noise is warned of before the second size
        yield records[0]
        warnings.warn("this machine is noisy", NoisyMachineWarning, stacklevel=2)
        yield from records[1:]

    sweep = Sweep(measure(), len(records))
    next(sweep)
    page = sweep._repr_html_()  # not warned (an error here): the table says it, in HTML
    assert sweep.records == records  # measured to the end, as list() would
    assert page == format_table(records)._repr_html_()


def test_tutorial_tables_say_microseconds_in_html():
    t = Table.of(["way", "time"], [["reverse", "5.75 us"]], notes=["floor: 4 us"])
    assert "5.75 " + MICRO in t._repr_html_() and "floor: 4 " + MICRO in t._repr_html_()
    assert "5.75 us" in str(t)


def test_the_lab_table_has_whole_column_names_units_and_the_record_on_hover():
    from adlab.plots import LabPlots

    # NumPy's f has nothing to compile (0), the others took 0.2 s
    records = [dataclasses.replace(r, compile_s=0.0 if r.label == "primal" else 0.2)
               for r in sweep_records()]  # fmt: skip
    plots = LabPlots()
    plots.add_records(records)
    table = plots.table
    titles = [c.title for c in table.columns]
    assert {"series", "framework", "time", "IQR", "ratio to f", "compile", "error"} <= set(titles)
    # widths as given, never squeezed to fit ("framewo", "at the flo"): each holds its
    # title (6.5 pixels a character of the header's font in Chromium, and the cell's
    # padding) and the table fits the plots above
    assert table.autosize_mode == "none"
    assert all(c.width >= 6 * len(c.title) + 10 for c in table.columns)
    assert sum(c.width for c in table.columns) <= table.width
    data = plots.records.data
    k = next(i for i, r in enumerate(records) if r.label == "reverse" and r.n == 3)
    assert data["median_text"][k] == "6.03 " + MICRO and data["ratio_text"][k] == AT_FLOOR
    assert data["record_text"][k] == record_text(records[k]).replace(" us", " " + MICRO)
    assert set(data["compile_text"]) == {"-", "200 ms"}  # nothing compiled: not "0 ns"
    time = next(c for c in table.columns if c.title == "time")
    assert time.field == "median_s"  # sorts by the number ...
    assert "median_text" in time.formatter.template  # ... shows the text
    assert all("record_text" in c.formatter.template for c in table.columns)  # hover
