"""Edits are saved beside the notebook (``.adlab/``) and come back in a new Lab."""

from __future__ import annotations

import pytest
from _lab_helpers import FAST

import adlab
from adlab.catalog import source_of
from adlab.lab import LabState  # a reopen that only reads the state: no view to build


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_an_edit_survives_a_new_lab_and_reset_forgets_it(tmp_path):
    original = source_of("normal_logpdf")
    edited = original.replace("rng.normal(2.0, 1.0, n)", "rng.normal(3.0, 1.0, n)")
    assert edited != original

    lab = adlab.Lab(**FAST)
    assert lab.source == original and lab.editor.value == original
    lab.editor.value = edited
    saved = tmp_path / ".adlab" / "normal_logpdf.py"
    assert saved.read_text() == edited
    assert lab.error is None

    again = adlab.Lab(**FAST)  # e.g. after a kernel restart
    assert again.source == edited and again.editor.value == edited
    assert "Restored" in again.status_label.value

    again.reset_button.click()
    assert again.source == original and again.editor.value == original
    assert not saved.exists()
    assert LabState(**FAST).source == original


def test_a_broken_edit_is_saved_too_and_the_original_runs_meanwhile(tmp_path):
    broken = source_of("rosenbrock") + "\ndef oops(:\n"
    lab = adlab.Lab("rosenbrock", **FAST)
    lab.set_source(broken)
    assert lab.error is not None and lab.error.lineno == broken.count("\n")
    assert (tmp_path / ".adlab" / "rosenbrock.py").read_text() == broken

    again = adlab.Lab("rosenbrock", **FAST)
    assert again.source == broken
    assert again.error is not None and again.model is not None  # the original runs
    assert again.editor.error_line == again.error.lineno  # marked from the start
    assert "original model runs" in again.status


def test_the_dropdown_loads_any_catalog_model():
    lab = adlab.Lab(**FAST)
    assert set(adlab.list_models()) <= set(lab.model_dropdown.options)
    for name in adlab.list_models():
        lab.model_dropdown.value = name
        assert lab.source == source_of(name) == lab.editor.value
        assert lab.model.name == name and lab.error is None


def test_own_source_is_edited_and_saved_under_its_own_name(tmp_path):
    text = (
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
        "def f(x):\n    return np.sum(x**3)\n"
    )
    lab = adlab.Lab(text, **FAST)
    assert lab.model is not None and lab.error is None
    lab.set_source(text.replace("x**3", "x**4"))
    saved = list((tmp_path / ".adlab").glob("custom-*.py"))
    assert len(saved) == 1 and "x**4" in saved[0].read_text()
    assert "x**4" in LabState(text, **FAST).source  # the same cell, run again


def test_export_writes_csv_and_json(tmp_path):
    lab = adlab.Lab(n=3, modes=["reverse"], steps=False, **FAST)
    lab.run(wait=True)
    lab.export_button.click()
    assert "Exported" in lab.status
    csvs = list((tmp_path / ".adlab").glob("normal_logpdf-*.csv"))
    jsons = list((tmp_path / ".adlab").glob("normal_logpdf-*.json"))
    assert len(csvs) == len(jsons) == 1
    rows = csvs[0].read_text().splitlines()
    assert len(rows) == 1 + len(lab.results)
    assert adlab.from_json(jsons[0].read_text()) == lab.results
    run = adlab.load(jsons[0])  # the file adlab.save and adlab bench --save write
    assert run == lab.results and run.format == 1 and run.env["cpu"]
    assert "def f(" in run.source["normal_logpdf"]
    report = jsons[0].with_suffix(".html")  # adlab report's page of it, beside
    assert report.is_file() and "Machine and versions" in report.read_text()


def test_a_model_with_changed_settings_keeps_them_in_the_editor():
    """Lab(load_model(..., N1=8)) runs N1=8, shows it in the editor, keeps it through edits."""
    m = adlab.load_model("mlp_batched", N1=8, N2=3)
    lab = adlab.Lab(m, **FAST)
    assert lab.model.settings == {"N1": 8, "N2": 3}
    assert "N1 = 8\nN2 = 3" in lab.editor.value  # in place of the catalog's values
    assert lab.model.setup(2)[0].shape == (8 + 8 + 8 * 3 + 3 + 3 + 1,)
    lab.editor.value = lab.editor.value.replace("N2 = 3", "N2 = 4")
    assert lab.error is None and lab.model.settings == {"N1": 8, "N2": 4}
    # the catalog model itself is not touched, and the plain one opens as the catalog's
    assert LabState("mlp_batched", **FAST).model.settings == {"N1": 1000, "N2": 20}
    assert LabState(adlab.load_model("mlp_batched"), **FAST).source == source_of("mlp_batched")
