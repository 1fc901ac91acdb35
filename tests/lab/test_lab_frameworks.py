"""The Lab's frameworks: each ticked mode on each ticked framework, one look per framework.

Runs here use autograd and PyTorch beside JAX and NumPy (the test extra installs
them all), at n <= 3 with a short budget. A framework that is not installed is
simulated by patching the one place that asks (``importlib.util.find_spec``).

Internals: the Lab's own tables and plan (lab.choices, lab.plan.plan), the plots' looks per
framework (plots.colors: FRAMEWORK_LOOKS, mode_color) and the registry's cache of loaded
backends (_registry: installed, _LOADED, patched so a framework looks not installed); none
is public.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from _lab_helpers import FAST, measured, series_points
from bokeh.models import Line
from traitlets import TraitError

import adlab
from adlab.engine.backends import _registry
from adlab.lab import LabState, choices
from adlab.lab.plan import plan
from adlab.measure import parse_variant
from adlab.plots.colors import FRAMEWORK_LOOKS, mode_color


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _not_installed(monkeypatch, *names: str) -> None:
    """As if ``names`` were not installed: for the checkboxes and for loading a backend."""
    real = _registry.installed

    def installed(name: str) -> bool:
        return name not in names and real(name)

    monkeypatch.setattr(choices, "installed", installed)
    monkeypatch.setattr(_registry, "installed", installed)
    for name in names:
        monkeypatch.delitem(_registry._LOADED, name, raising=False)


def test_a_framework_not_installed_is_greyed_out_with_its_pip_command(monkeypatch):
    _not_installed(monkeypatch, "torch", "tensorflow", "js")
    lab = adlab.Lab(n=3, frameworks=["jax"], steps=False, **FAST)
    boxes = lab.framework_checkboxes
    assert list(boxes) == ["jax", "numpy", "torch", "tensorflow", "autograd", "js", "tfjs",
                           "jaxjs"]
    for name, extra in (("torch", "torch"), ("tensorflow", "tensorflow")):
        assert boxes[name].disabled and not boxes[name].value
        assert f"pip install 'adlab[{extra}]'" in boxes[name].description
        assert f"pip install 'adlab[{extra}]'" in boxes[name].tooltip
    # plain JavaScript needs Node, which pip does not install
    assert boxes["js"].disabled and "apt-get install -y nodejs" in boxes["js"].tooltip
    assert not any(boxes[n].disabled for n in ("jax", "numpy", "autograd"))
    assert [boxes[n].description for n in ("jax", "numpy", "autograd")] == [
        "JAX", "NumPy", "autograd"]  # fmt: skip


def test_a_framework_asked_for_from_code_but_not_installed_is_left_out_with_the_command(
    monkeypatch,
):
    _not_installed(monkeypatch, "tensorflow")
    state = LabState(n=3, modes=["reverse"], frameworks=["jax", "tensorflow"], steps=False,
                     **FAST)  # fmt: skip
    state.run(wait=True, timeout=300)
    assert {r.label for r in state.results if r.mode != "primal"} == {"reverse"}
    assert "Not run: reverse(tensorflow): " in state.status
    assert "pip install 'adlab[tensorflow]'" in state.status


def test_building_the_lab_imports_no_framework():
    # Binder has ~2 GB: a framework is loaded by the first run that uses it, never before
    code = ("import sys, adlab\n"
            "lab = adlab.Lab(steps=False)\n"
            "print(sorted(m for m in ('torch', 'tensorflow', 'autograd') "
            "if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_each_mode_runs_on_each_framework_and_the_plots_say_which():
    lab = adlab.Lab(n=3, modes=["forward", "reverse", "numeric"],
                    frameworks=["jax", "numpy", "autograd"], steps=False, **FAST)  # fmt: skip
    lab.run(wait=True, timeout=300)
    assert lab.status.startswith("Done")
    want = {"forward", "reverse", "numeric[central]", "numeric[central](numpy)",
            "forward(autograd)", "reverse(autograd)", "numeric[central](autograd)"}  # fmt: skip
    assert set(measured(lab)) == want == set(lab.plots.series)
    assert series_points(lab) == measured(lab)
    assert set(lab.plots.primals) == {"primal", "primal(numpy)", "primal(autograd)"}
    # NumPy has no AD: left out, with the engine's reason, once for the framework
    assert "Not run: forward(numpy) and reverse(numpy): mode 'forward' needs forward-mode AD, " \
        "which backend='numpy' does not have" in lab.status  # fmt: skip
    # the table says which framework, and how it ran
    table = lab.plots.records.data
    assert [(label, b) for label, b in zip(table["label"], table["backend"], strict=True)] == [
        (r.label, r.backend) for r in lab.results]  # fmt: skip
    assert {r.backend for r in lab.results} == {"jax", "numpy", "autograd"}
    assert {"backend", "jit"} <= {c.field for c in lab.plots.table.columns}
    # one color per mode, one marker and dash per framework
    for label in want:
        slot = next(s for s in lab.plots._series_slots if s.label == label)
        framework = next(r.backend for r in lab.results if r.label == label)
        line, dots = slot.glyphs["time"]
        assert dots.glyph.marker == FRAMEWORK_LOOKS[framework][0]
        assert line.glyph.line_dash == Line(line_dash=FRAMEWORK_LOOKS[framework][1]).line_dash
        assert line.glyph.line_color == mode_color(parse_variant(label).mode)
    assert len({s.glyphs["time"][1].glyph.marker for s in lab.plots._series_slots
                if s.label}) == 3  # fmt: skip


def test_as_usual_runs_jax_jitted_and_pytorch_eagerly():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    state = LabState(n=3, sizes=[3], modes=["reverse"], frameworks=["jax", "torch"],
                     steps=False, **FAST)  # fmt: skip
    assert state.jit is None  # "as usual"
    state.run(wait=True, timeout=300)
    got = {(r.label, r.jit) for r in state.results}
    assert got == {("primal", True), ("reverse", True),
                   ("primal(torch)", False), ("reverse(torch)", False)}  # fmt: skip
    assert all(not r.skipped for r in state.results), [r.skipped for r in state.results]


def test_the_jit_choice_is_three_way():
    lab = adlab.Lab(n=3, steps=False, **FAST)
    assert lab.jit_toggle.options == ("as usual", "jit", "eager")
    assert lab.jit_toggle.value == "as usual" and lab.jit is None
    lab.jit_toggle.value = "eager"
    assert lab.jit is False
    lab.jit = True
    assert lab.jit_toggle.value == "jit"


def test_numpy_is_a_framework_now_and_the_error_says_so():
    with pytest.raises(TraitError, match=r"'numpy' is a framework now.*frameworks="):
        LabState(modes=["numpy"])
    with pytest.raises(TraitError, match="unknown framework"):
        LabState(frameworks=["julia"])


def test_plan_keeps_what_runs_and_words_the_rest():
    defaults = dict(scheme="central", jit=None, precision="float64", backend="jax")
    got = plan(["forward", "forward(numpy)", "reverse(numpy)", "numeric[central](numpy)"],
               **defaults)  # fmt: skip
    assert got.variants == ("forward", "numeric[central](numpy)")
    assert [(spec, fw) for spec, fw, _ in got.left_out] == [
        ("forward(numpy)", "numpy"), ("reverse(numpy)", "numpy")]  # fmt: skip
    note = got.note()
    assert note.startswith("Not run: forward(numpy) and reverse(numpy): mode 'forward' needs")
    assert "use backend=" not in note  # the advice to a caller of prepare is the tick here
    assert plan(["reverse"], **defaults).note() == ""


def test_the_lab_draws_the_issue_bench_command_series():
    # adlab bench --modes "reverse,reverse(torch),reverse(tensorflow),reverse(autograd),
    # forward,forward(torch)": the same series, ticked as modes and frameworks
    for name in ("torch", "tensorflow", "autograd"):  # find_spec: adlab imports them in order
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed")
    lab = adlab.Lab(n=3, sizes=[3], modes=["forward", "reverse"],
                    frameworks=["jax", "torch", "tensorflow", "autograd"], steps=False,
                    **{**FAST, "budget_s": 60.0})  # fmt: skip
    lab.run(wait=True, timeout=600)
    bench_series = {"reverse", "reverse(torch)", "reverse(tensorflow)", "reverse(autograd)",
                    "forward", "forward(torch)"}  # fmt: skip
    assert bench_series <= set(measured(lab)) == set(lab.plots.series)
    assert set(lab.plots.primals) == {"primal", "primal(torch)", "primal(tensorflow)",
                                      "primal(autograd)"}  # fmt: skip
    markers = {label: slot.glyphs["time"][1].glyph.marker
               for slot in lab.plots._series_slots if (label := slot.label)}  # fmt: skip
    assert markers["reverse(tensorflow)"] == FRAMEWORK_LOOKS["tensorflow"][0]
    assert markers["forward(torch)"] == markers["reverse(torch)"] != markers["reverse"]
