"""Layering: the engine and measurement never import a widget or plotting library.

Only the UI layer (the ``adlab/plots/`` package, ``adlab/lab/view.py`` and its
BokehJS loader) may import ipywidgets, Bokeh or jupyter_bokeh; the Lab's state
(``adlab/lab/state.py``) imports none of them.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import adlab

UI_LIBRARIES = ("ipywidgets", "bokeh", "jupyter_bokeh")
PACKAGE = Path(adlab.__file__).parent
#: the files allowed to import UI libraries, and which
UI_FILES = {
    "plots/live.py": {"bokeh"},
    "plots/figures.py": {"bokeh"},
    "lab/_bokehjs.py": {"bokeh"},
    "lab/view.py": {"ipywidgets", "bokeh", "jupyter_bokeh"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_ui_layer_imports_ui_libraries():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        used = _imports(path) & set(UI_LIBRARIES)
        assert used <= UI_FILES.get(rel, set()), f"{rel} imports {sorted(used)}"


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
steps = list(adlab.step_sweep(model, 2, schemes=("central",)))
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
