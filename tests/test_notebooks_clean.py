"""The tutorial notebooks are committed clean: no outputs except the references nbval checks.

nbval compares a cell's new output with the output stored in the notebook, and
only for cells whose stored ``execution_count`` is set (an unrun reference
cell is never compared, see nbval's ``plugin.py``). So the rule is:

- a cell marked ``# NBVAL_CHECK_OUTPUT`` keeps its reference output (plain
  text printed on stdout, the same on every machine) and an execution count;
- every other code cell has no output and no execution count;
- no widget state, no cell metadata left by a run, and kernelspec metadata.

To refresh the references after changing a notebook: run it top to bottom
with ``ADLAB_QUICK=1``, save, then ``python tests/test_notebooks_clean.py
notebooks/NAME.ipynb`` strips everything else in place.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
MARK = "# NBVAL_CHECK_OUTPUT"


def checked(cell) -> bool:
    return cell.cell_type == "code" and MARK in cell.source.splitlines()


def strip(nb):
    """The notebook as it must be committed (see the module docstring)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("tags",)}
        if checked(cell):
            cell.outputs = [o for o in cell.outputs
                            if o.output_type == "stream" and o.name == "stdout"]  # fmt: skip
        else:
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


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
        if cell.cell_type != "code":
            continue
        where = f"{path.name} cell {i} ({cell.get('id')})"
        if checked(cell):
            assert cell.execution_count is not None, f"{where}: nbval skips a checked cell never run"
            assert cell.outputs, f"{where}: a checked cell needs its reference output"
            for out in cell.outputs:
                assert out.output_type == "stream" and out.name == "stdout", (
                    f"{where}: a checked cell's reference is text printed on stdout, "
                    f"got {out.output_type}"
                )
                assert out.text.strip(), f"{where}: empty reference output"
        else:
            assert cell.outputs == [], f"{where}: has outputs; commit it stripped"
            assert cell.execution_count is None, f"{where}: has an execution count"
    assert strip(nb) == nb, f"{path.name}: not as strip() leaves it (cell metadata?)"


#: the quickstart is opened fresh by the browser test (tests/browser), whose Run All detection
#: takes any stored execution count for a cell that has run: it stores no reference output
FRESH = {"00_quickstart.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_tutorial_checks_something(path: Path):
    """A tutorial whose findings are never compared could drift without a test failing."""
    nb = nbformat.read(path, as_version=4)
    if path.name in FRESH:
        assert not any(c.get("execution_count") for c in nb.cells), f"{path.name} must be fresh"
    else:
        assert any(checked(c) for c in nb.cells), f"{path.name} has no {MARK} cell"


def test_strip_removes_outputs_but_keeps_references():
    nb = nbformat.v4.new_notebook()
    plain = nbformat.v4.new_code_cell("1 + 1", execution_count=3)
    plain.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                            execution_count=3)]  # fmt: skip
    ref = nbformat.v4.new_code_cell(f"{MARK}\nprint(2)", execution_count=4)
    ref.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n"),
                   nbformat.v4.new_output("stream", name="stderr", text="warning\n")]  # fmt: skip
    nb.cells = [plain, ref]
    out = strip(nb)
    assert out.cells[0].outputs == [] and out.cells[0].execution_count is None
    assert [o.text for o in out.cells[1].outputs] == ["2\n"] and out.cells[1].execution_count == 4


if __name__ == "__main__":  # strip notebooks in place: python tests/test_notebooks_clean.py NB...
    for name in sys.argv[1:]:
        nbformat.write(strip(nbformat.read(name, as_version=4)), name)
        print("stripped", name)
