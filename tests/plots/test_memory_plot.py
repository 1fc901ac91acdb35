"""The Lab's memory plot: each series' peak memory against n beside its time, in the time
plot's look, residuals as open marks, sizes in KB/MB/GB; no figure, no point.

The records are a real sweep's (``adlab.bench`` at n <= 30, its memory measured), and
one sweep without memory (``memory=False``) for the points that have none.

Internals: the live plots' series slots (plots.live.LabPlots._series_slots): which glyphs
and legend entries a series has on each figure, which the Lab shows only as pixels.
"""

from __future__ import annotations

import math

import pytest

import adlab
from adlab._format import human_bytes
from adlab.plots.live import LabPlots

FAST = {"budget_s": 5.0, "repeats": 3, "target_s": 0.002, "warn": False}
MODES = ["forward", "reverse", "numeric[central](numpy)"]


@pytest.fixture(scope="module")
def records():
    return list(adlab.bench("normal_logpdf", [3, 10, 30], MODES, **FAST))


def _slot(plots, label):
    return next(s for s in plots._series_slots if s.label == label)


def test_memory_sits_beside_time_and_shares_its_n_axis(records):
    plots = LabPlots()
    plots.add_records(records)
    memory, time = plots.figures["memory"], plots.figures["time"]
    assert plots.layout.children[0].children == [time, memory]  # the first row
    assert memory.x_range is time.x_range
    assert (memory.x_scale.__class__.__name__, memory.y_scale.__class__.__name__) == (
        "LogScale", "LogScale")  # fmt: skip
    assert "adlab-memory-plot" in memory.css_classes


def test_each_series_draws_its_peak_in_its_time_look(records):
    plots = LabPlots()
    plots.add_records(records)
    for r in records:
        if r.mode == "primal" or r.skipped:
            continue
        slot = _slot(plots, r.label)
        src = slot.source.data
        i = src["n"].index(r.n)
        assert r.peak_bytes and src["peak_bytes"][i] == r.peak_bytes
        assert src["peak_text"][i] == human_bytes(r.peak_bytes)  # the hover's units
        peak_line, peak_dots = slot.glyphs["memory"]
        time_line, time_dots = slot.glyphs["time"]
        assert peak_line.glyph.line_color == time_line.glyph.line_color
        assert peak_line.glyph.line_dash == time_line.glyph.line_dash
        assert peak_dots.glyph.marker == time_dots.glyph.marker
        assert slot.items["memory"].visible
    # the primals too, in black, as on the time plot
    assert all(p.data["peak_bytes"] for p in plots.primals.values())


def test_reverse_shows_its_residuals_as_open_marks(records):
    plots = LabPlots()
    plots.add_records(records)
    reverse = _slot(plots, "reverse")
    (open_marks,) = reverse.glyphs["residual"]
    assert open_marks.glyph.fill_alpha == 0
    assert open_marks.glyph.line_color == reverse.glyphs["memory"][0].glyph.line_color
    want = [r.residual_bytes for r in records if r.label == "reverse"]
    assert all(want) and reverse.source.data["residual_bytes"] == want
    # forward keeps no tape: no residual to draw (a gap, not a 0 on a log axis)
    assert all(math.isnan(v) for v in _slot(plots, "forward").source.data["residual_bytes"])


def test_a_series_without_memory_draws_no_point_and_no_legend_entry():
    records = list(adlab.bench("normal_logpdf", [3, 10], ["reverse"], memory=False, **FAST))
    plots = LabPlots()
    plots.add_records(records)
    slot = _slot(plots, "reverse")
    assert all(math.isnan(v) for v in slot.source.data["peak_bytes"])
    assert slot.source.data["peak_text"] == ["-", "-"]
    assert not slot.items["memory"].visible and slot.items["time"].visible
    plots.clear_records()  # a new run hides it until its series has memory again
    assert not slot.items["memory"].visible
