"""The Lab end to end, without a browser: widgets set, Run clicked, plots checked.

Every run here is real: ``adlab.bench`` and ``adlab.step_sweep`` measure the
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
    lab = adlab.Lab(n=30, modes=["forward"], **FAST)
    lab.n_slider.value = 10.0
    lab.mode_checkboxes["reverse"].value = True
    lab.mode_checkboxes["numpy"].value = True
    lab.scheme_dropdown.value = "forward"
    assert (lab.n, lab.modes, lab.scheme) == (10, ["forward", "reverse", "numpy"], "forward")

    lab.run_button.click()
    assert lab.running
    assert lab.wait(timeout=120)
    assert not lab.running and lab.progress_bar.value == 1.0
    assert lab.status_label.value.startswith("Done")

    # every derivative series, every n, is in its plot source, with the record's values
    want = {"forward", "reverse", "numeric[forward](numpy)"}
    assert set(measured(lab)) == want
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
    # crossovers drawn are the state's
    assert len(lab.plots.crossings.data["n"]) == len(lab.crossovers)

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
    assert lab.error.lineno == k
    assert f"line {k}" in lab.error_box.value
    assert lab.model is model and lab.results == results
    assert series_points(lab) == drawn

    # an error only running f finds (a misspelt name) also names its line
    misspelt = good.replace("z**2", "zz**2")
    lab.set_source(misspelt)
    line = next(i for i, t in enumerate(misspelt.splitlines(), 1) if "zz**2" in t)
    assert lab.error.lineno == line and lab.model is model

    # the last good model keeps running
    lab.run_button.click()
    assert lab.wait(timeout=120)
    assert lab.results and {r.model for r in lab.results} == {"normal_logpdf"}
    assert lab.error is not None  # the editor's text is still broken

    lab.set_source(good)
    assert lab.error is None and lab.error_box.value == ""
    assert lab.model is not model
