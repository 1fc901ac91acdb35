"""nbval's reference outputs, kept beside the notebooks instead of inside them.

nbval compares a ``# NBVAL_CHECK_OUTPUT`` cell's new output with the output
stored in the notebook, and only when the stored cell has an execution count.
Our notebooks are committed stripped (no outputs anywhere), so the reference
text of each checked cell lives in ``notebooks/expected/<notebook>.json``
(cell id -> expected stdout) and is put back into the cell when nbval collects
it. The notebook files stay clean; the comparison stays nbval's own.

Imported by the root ``conftest.py``; also usable as ``-p tests.nbval_expected``.

To refresh the references after changing a notebook: run it top to bottom
with ``ADLAB_QUICK=1`` and save it (outputs included), then
``python tests/nbval_expected.py notebooks/NAME.ipynb`` writes the sidecar
from the checked cells' stdout and strips the notebook in place.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbval.plugin import IPyNbFile

MARK = "# NBVAL_CHECK_OUTPUT"


def checked(cell) -> bool:
    return cell.cell_type == "code" and MARK in cell.source.splitlines()


def sidecar(notebook: Path) -> Path:
    return notebook.parent / "expected" / f"{notebook.stem}.json"


def load(notebook: Path) -> dict[str, str]:
    path = sidecar(notebook)
    return json.loads(path.read_text()) if path.exists() else {}


def _collect_with_expected(self):
    expected = load(Path(str(self.fspath)))
    for item in _nbval_collect(self):
        text = expected.get(item.cell.get("id"))
        if text is not None:
            item.cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            item.cell.execution_count = 1  # nbval compares only cells it sees as run
        yield item


if getattr(IPyNbFile.collect, "__name__", "") != "_collect_with_expected":  # install once
    _nbval_collect = IPyNbFile.collect
    IPyNbFile.collect = _collect_with_expected


def strip(nb):
    """The notebook as committed: no outputs, execution counts or widget state."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
    nb.metadata.pop("widgets", None)
    return nb


def refresh(path: Path) -> None:
    """Write the sidecar from a run notebook's checked cells, then strip it."""
    nb = nbformat.read(path, as_version=4)
    expected = {}
    for cell in nb.cells:
        if checked(cell):
            text = "".join(o.text for o in cell.outputs
                           if o.output_type == "stream" and o.name == "stdout")  # fmt: skip
            if not text.strip():
                raise SystemExit(f"{path}: checked cell {cell.id} has no stdout: run it first")
            expected[cell.id] = text
    out = sidecar(path)
    if expected:
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    else:
        out.unlink(missing_ok=True)
    nbformat.write(strip(nb), path)
    print(f"{path}: {len(expected)} reference(s) -> {out}; notebook stripped")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        refresh(Path(name))
