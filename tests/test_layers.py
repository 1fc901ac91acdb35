"""Layering: each layer imports only the ones below it, and only the UI imports UI libraries.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked
by import-linter's ``lint-imports``, on the import statements of every module.
The tests below also check, at run time, that the engine, the measurement layer
and the Lab's state really run without loading a widget or plotting library.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import adlab

UI_LIBRARIES = ("ipywidgets", "bokeh", "jupyter_bokeh", "anywidget")
PACKAGE = Path(adlab.__file__).parent
ROOT = PACKAGE.parent
#: the layers, bottom first: the packages ``lint-imports`` keeps in order
LAYERS = ("engine", "catalog", "accuracy", "measure", "report", "plots", "lab", "tutorial", "cli")
MAX_LINES = 400


def test_import_contracts_hold():
    exe = shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extra: pip install -e '.[test]'"
    out = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and " 0 broken" in out.stdout, out.stdout[-2000:]


def test_the_layers_are_packages_and_few_modules_sit_flat():
    assert all((PACKAGE / name / "__init__.py").is_file() for name in LAYERS)
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(flat) <= 6, flat


def test_no_module_is_over_400_lines():
    long = {
        p.relative_to(PACKAGE).as_posix(): n
        for p in PACKAGE.rglob("*.py")
        if "catalog" not in p.parts and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these by idea: {long}"


def _modules_after(code: str) -> list[str]:
    script = code + (
        "\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {UI_LIBRARIES!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
        timeout=300,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_engine_and_measurement_run_without_ui_libraries():
    code = """
import adlab
model = adlab.load_model("normal_logpdf")
theta, data = model.setup(3)
adlab.derivative(model, theta, data, mode="reverse")
records = list(adlab.bench(model, [1, 2], ["forward", "numeric[central](numpy)"],
                     budget_s=0.5, repeats=2, target_s=0.001))
assert records and all(r.skipped is None for r in records), records
steps = list(adlab.step_errors(model, 2, schemes=("central",)))
assert steps
"""
    assert _modules_after(code) == []


def test_the_lab_state_imports_no_ui_library():
    code = """
import adlab.lab.state
from adlab.lab.state import LabState
state = LabState("normal_logpdf", edits=__import__("tempfile").mkdtemp())
assert state.model is not None
"""
    assert _modules_after(code) == []


def test_lab_is_exported_lazily():
    assert _modules_after("import adlab") == []
    assert "ipywidgets" in _modules_after("import adlab\nadlab.Lab")
