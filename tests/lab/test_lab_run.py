"""The Lab end to end, without a browser: widgets set, Run clicked, plots checked.

Every run here is real: ``adlab.bench`` and ``adlab.step_errors`` measure the
catalog's ``normal_logpdf`` at small sizes with a short budget.
"""

from __future__ import annotations

import time

import pytest
from _lab_helpers import FAST, measured, same_float, series_points

import adlab
from adlab.catalog import source_of


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # saved edits go to tmp_path/.adlab


def test_run_button_fills_the_plot_sources():
    lab = adlab.Lab(n=30, modes=["forward"], frameworks=["jax"], **FAST)
    lab.n_slider.value = 10.0
    lab.mode_checkboxes["reverse"].value = True
    lab.mode_checkboxes["numeric"].value = True
    lab.framework_checkboxes["numpy"].value = True
    lab.scheme_dropdown.value = "forward"
    assert (lab.n, lab.modes, lab.frameworks, lab.scheme) == (
        10, ["forward", "reverse", "numeric"], ["jax", "numpy"], "forward")  # fmt: skip

    lab.run_button.click()
    assert lab.running
    assert lab.wait(timeout=120)
    assert not lab.running and lab.progress_bar.value == 1.0
    assert lab.status_label.value.startswith("Done")

    # every derivative series, every n, is in its plot source, with the record's values
    want = {"forward", "reverse", "numeric[forward]", "numeric[forward](numpy)"}
    assert set(measured(lab)) == want
    # NumPy has no AD: its forward and reverse are not run, and the status says why
    assert (
        "Not run: forward(numpy) and reverse(numpy): mode 'forward' needs forward-mode AD"
        in lab.status
    )
    assert series_points(lab) == measured(lab)
    assert sorted({r.n for r in lab.results}) == [1, 3, 10]
    for r in lab.results:
        if r.mode == "primal" or r.skipped:
            continue
        src = lab.plots.series[r.label].data
        i = src["n"].index(r.n)
        assert same_float(src["median_s"][i], r.median_s)
        assert same_float(src["ratio_to_primal"][i], r.ratio_to_primal)
    # the primals (jax and numpy) are drawn, and the table holds every record
    assert set(lab.plots.primals) == {"primal", "primal(numpy)"}
    assert list(lab.plots.records.data["label"]) == [r.label for r in lab.results]
    # the step-size curves at the slider's n, per scheme
    assert lab.steps and all(s.n == 10 for s in lab.steps)
    for scheme in ("forward", "central", "richardson", "complex-step"):
        assert len(lab.plots.step_series[scheme].data["h"]) > 5
    assert "n = 10" in lab.plots.figures["steps"].title.text
    # crossovers drawn are the state's that stand out of the noise (a tie is no mark)
    assert len(lab.plots.crossings.data["n"]) == sum(c.significant for c in lab.crossovers)

    # compile time is toggled separately
    lab.compile_toggle.value = True
    slot = next(s for s in lab.plots._series_slots if s.label == "reverse")
    assert all(g.visible for g in slot.glyphs["compile"])
    lab.compile_toggle.value = False
    assert not any(g.visible for g in slot.glyphs["compile"])


def test_points_arrive_while_the_sweep_runs():
    lab = adlab.Lab(n=10, modes=["forward", "reverse"], steps=False, **FAST)
    lab.run_button.click()
    start = time.monotonic()
    while not lab.plots.records.data["n"] and time.monotonic() - start < 60:
        time.sleep(0.01)
    seen_first = len(lab.plots.records.data["n"])
    assert seen_first >= 1
    assert lab.wait(timeout=120)
    assert len(lab.plots.records.data["n"]) == len(lab.results) > seen_first


def test_stop_ends_a_long_sweep_within_one_measurement():
    sizes = list(range(1, 200))  # far more points than the test will wait for
    lab = adlab.Lab(sizes=sizes, n=199, modes=["forward", "reverse", "numeric"], **FAST)
    lab.run_button.click()
    start = time.monotonic()
    while len(lab.results) < 3 and time.monotonic() - start < 60:
        time.sleep(0.01)
    lab.stop_button.click()
    at_stop = len(lab.results)
    assert at_stop >= 3 and not lab.running
    assert lab.wait(timeout=60), "the worker did not end the sweep after Stop"
    assert len(lab.results) - at_stop <= 1
    assert len(lab.results) < len(sizes)
    assert lab.status.startswith("Stopped")
    assert len(lab.plots.records.data["n"]) == len(lab.results)


def test_broken_edit_shows_its_line_and_keeps_results_and_model():
    lab = adlab.Lab(n=3, modes=["reverse"], steps=False, **FAST)
    lab.run_button.click()
    assert lab.wait(timeout=120)
    results, model = lab.results, lab.model
    drawn = series_points(lab)
    assert drawn

    good = source_of("normal_logpdf")
    lines = good.splitlines()
    k = next(i for i, line in enumerate(lines, 1) if "z = " in line)
    broken = "\n".join(lines[: k - 1] + ["    z = (data['y'] - theta) / data['s'] +"] + lines[k:])
    lab.editor.value = broken  # as typed in the editor
    assert isinstance(lab.error, adlab.ModelError)
    assert lab.error.lineno == k and lab.editor.error_line == k  # marked in the editor
    assert f"line {k}" in lab.error_box.value
    assert lab.model is model and lab.results == results
    assert series_points(lab) == drawn

    # an error only running f finds (a misspelt name) also names its line
    misspelt = good.replace("z**2", "zz**2")
    lab.set_source(misspelt)
    line = next(i for i, t in enumerate(misspelt.splitlines(), 1) if "zz**2" in t)
    assert lab.error.lineno == line and lab.model is model
    assert lab.editor.error_line == line

    # the last good model keeps running
    lab.run_button.click()
    assert lab.wait(timeout=120)
    assert lab.results and {r.model for r in lab.results} == {"normal_logpdf"}
    assert lab.error is not None  # the editor's text is still broken

    lab.set_source(good)
    assert lab.error is None and lab.error_box.value == "" and lab.editor.error_line == 0
    assert lab.model is not model


def test_the_browser_echo_of_a_stream_is_not_applied_again():
    """jupyter_bokeh's view sends back the events our own patches cause; a streamed
    point applied again would be doubled in the kernel's copy of the plot."""
    from bokeh.core.serialization import Serializer
    from bokeh.document.events import ColumnsStreamedEvent, ModelChangedEvent
    from jupyter_bokeh import BokehModel

    lab = adlab.Lab(n=3, modes=["reverse"], steps=False, **FAST)
    lab.run(wait=True)
    source = lab.plots.series["reverse"]
    doc = source.document
    encode = Serializer(references={m: m.ref for m in doc.models}).encode
    first = {k: v[:1] for k, v in source.data.items()}
    echo = dict(encode(ColumnsStreamedEvent(doc, source, "data", first, None, None)))
    points = len(source.data["n"])

    lab.plot_widget._sync_model(lab.plot_widget, {**echo, "event": "jsevent"}, [])
    assert len(source.data["n"]) == points
    BokehModel._sync_model(lab.plot_widget, lab.plot_widget, {**echo, "event": "jsevent"}, [])
    assert len(source.data["n"]) == points + 1  # what the stock widget would do

    # a legend click in the browser (a renderer hidden) still reaches the kernel
    glyph = next(s for s in lab.plots._series_slots if s.label == "reverse").glyphs["time"][0]
    hide = ModelChangedEvent(doc, glyph, "visible", False)
    lab.plot_widget._sync_model(lab.plot_widget, {**encode(hide), "event": "jsevent"}, [])
    assert glyph.visible is False


def test_step_curves_are_capped_at_steps_n_max():
    lab = adlab.Lab(n=30, modes=["reverse"], steps_n_max=10, **FAST)
    lab.run(wait=True)
    assert lab.steps and {s.n for s in lab.steps} == {10}
    assert max(r.n for r in lab.results) == 30
    assert "n = 10" in lab.plots.figures["steps"].title.text
    assert "Step-size curves at n = 10, not 30" in lab.status
