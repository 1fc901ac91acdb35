"""``adlab.Lab(..., compare_to=path)``: a saved run drawn dashed over the Lab's plots, in
its series' colours, with a legend entry naming its machine, and a table of both times
and their ratio under the plots once this run has points."""

from __future__ import annotations

import pytest
from _lab_helpers import FAST

import adlab


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_a_saved_run_is_drawn_dashed_and_compared(tmp_path):
    first = adlab.Lab(n=3, sizes=[2, 3], modes=["reverse"], steps=False, **FAST)
    first.run(wait=True)
    _, saved = first.export(tmp_path / "other")
    lab = adlab.Lab(n=3, sizes=[2, 3], modes=["reverse"], steps=False, compare_to=saved,
                    **FAST)  # fmt: skip
    name = lab.compared.run.name
    assert name.endswith("other.json")
    time_plot = lab.plots.figures["time"]
    dashed = [r for r in time_plot.renderers if r.data_source.name == "overlay"
              and type(r.glyph).__name__ == "Line" and r.glyph.line_dash == [6]]  # fmt: skip
    assert len(dashed) == 2  # reverse and f (Bokeh's "dashed" is [6])
    labels = [item.label["value"] for item in time_plot.legend[0].items if item.label]
    assert f"dashed: {name}" in labels
    # the same colour as this run's series of the same label
    reverse = next(r for r in dashed if r.data_source.data["label"][0] == "reverse")
    assert "Run to compare" in lab.compared.widget.value
    lab.run(wait=True)
    drawn = next(r for r in time_plot.renderers
                 if r.data_source is lab.plots.series.get("reverse") and r.visible
                 and type(r.glyph).__name__ == "Line")  # fmt: skip
    assert drawn.glyph.line_color == reverse.glyph.line_color
    table = lab.compared.widget.value
    assert "This run against" in table and "new/base" in table and "reverse" in table
