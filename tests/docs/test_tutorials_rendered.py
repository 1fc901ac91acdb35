"""The docs' tutorials are the notebooks as they are now.

``docs/tutorials/NAME.nbjson`` is ``notebooks/NAME.ipynb`` run by ``docs/render_tutorials.py``,
outputs and all; the docs show it, not the notebook. A notebook edited after its copy was
rendered would show readers code that is no longer the tutorial's, so the code cells must
match, in number, order and text. Markdown is left out: rendering adds a note and points the
links between tutorials at their rendered copies. Nothing runs here: JSON only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _code(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def test_there_are_notebooks_to_check():
    assert NOTEBOOKS, "no notebooks found: the check below would pass on nothing"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_rendered_copy_has_the_notebooks_code(notebook):
    rendered = ROOT / "docs" / "tutorials" / f"{notebook.stem}.nbjson"
    again = f"run `python docs/render_tutorials.py {notebook.stem}` and commit what it writes"
    assert rendered.is_file(), f"no rendered copy of {notebook.name}: {again}"
    assert _code(rendered) == _code(notebook), f"{rendered.name} is stale: {again}"


def test_a_changed_cell_is_caught(tmp_path):
    notebook = NOTEBOOKS[0]
    cells = json.loads(notebook.read_text())
    code = next(c for c in cells["cells"] if c["cell_type"] == "code")
    code["source"] = "".join(code["source"]) + "\n# edited after rendering"
    edited = tmp_path / notebook.name
    edited.write_text(json.dumps(cells))
    assert _code(edited) != _code(notebook)
