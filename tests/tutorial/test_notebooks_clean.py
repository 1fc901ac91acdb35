"""The tutorial notebooks are committed clean, and nbval's references live beside them.

Every code cell is stored with no output and no execution count. The expected
output of each ``# NBVAL_CHECK_OUTPUT`` cell is kept in
``notebooks/expected/<notebook>.json`` and put back at collection time by
``tests/nbval_expected.py`` (see its docstring for how to refresh them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.nbval_expected import checked, load, sidecar

ROOT = Path(__file__).parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MARK = "# NBVAL_CHECK_OUTPUT"


def test_there_are_tutorials():
    names = [p.name for p in NOTEBOOKS]
    assert "00_quickstart.ipynb" in names
    assert len(names) >= 7, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_valid_with_kernelspec(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    spec = nb.metadata.get("kernelspec", {})
    assert spec.get("name") == "python3" and spec.get("language") == "python", spec
    assert spec.get("display_name"), spec
    assert nb.metadata.get("language_info", {}).get("name") == "python"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stripped(path: Path):
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, "widget state saved: clear it"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            where = f"{path.name} cell {i} ({cell.get('id')})"
            assert cell.outputs == [], f"{where}: has outputs; commit it stripped"
            assert cell.execution_count is None, f"{where}: has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_checked_cells_have_exactly_their_references(path: Path):
    nb = nbformat.read(path, as_version=4)
    ids = {c.id for c in nb.cells if checked(c)}
    expected = load(path)
    assert set(expected) == ids, f"{sidecar(path)} is out of step with the checked cells"
    assert all(text.strip() for text in expected.values())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_tutorial_checks_something(path: Path):
    """A tutorial whose findings are never compared could drift without a test failing."""
    if path.name == "00_quickstart.ipynb":  # the Lab's live timings: nothing deterministic
        return
    nb = nbformat.read(path, as_version=4)
    assert any(checked(c) for c in nb.cells), f"{path.name} has no {MARK} cell"


def _tiny_notebook(tmp_path: Path, expected_text: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}  # fmt: skip
    cell = nbformat.v4.new_code_cell(f"{MARK}\nprint(6 * 7)")
    cell.id = "answer"
    nb.cells = [cell]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    (tmp_path / "expected").mkdir()
    (tmp_path / "expected" / "tiny.json").write_text(json.dumps({"answer": expected_text}))
    return path


@pytest.mark.parametrize(("expected", "passes"), [("42\n", True), ("41\n", False)])
def test_sidecar_references_are_compared_by_nbval(tmp_path: Path, expected: str, passes: bool):
    """A wrong reference in the sidecar makes nbval fail: the check can fail."""
    path = _tiny_notebook(tmp_path, expected)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.nbval_expected", "--nbval-lax",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert (run.returncode == 0) == passes, run.stdout[-3000:] + run.stderr[-2000:]
