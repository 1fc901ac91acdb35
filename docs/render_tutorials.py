"""Run the tutorials and store their outputs for the docs, in ``docs/tutorials/NAME.nbjson``.

    python docs/render_tutorials.py                 # every notebook in notebooks/
    python docs/render_tutorials.py 00_quickstart   # one

The notebooks in ``notebooks/`` stay committed without outputs; these copies, with the
outputs of a real run (not the tests' quick mode), are what the docs show, and each opens
with the date, the machine and how long it ran. The docs build executes nothing
(``nb_execution_mode = "off"``): it shows what this script stored. Run it again after
changing a notebook, on a quiet machine, and commit what it writes.

What is stored differs from a plain run in three ways, all for size: BokehJS itself (2 MB of
JavaScript each time a notebook loads it) is left out, and the docs load it from the Bokeh
package instead (``docs/_ext/adlab_docs.py``); the widgets' state is left out (a static page
cannot run the Lab), and the Lab's output is its screenshot, ``docs/_static/lab.png``, taken
by the browser test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUT = Path(__file__).resolve().parent / "tutorials"
BOKEH_LOAD = "application/vnd.bokehjs_load.v0+json"
BOKEH_EXEC = "application/vnd.bokehjs_exec.v0+json"  # beside the script that draws a figure
WIDGET = "application/vnd.jupyter.widget-view+json"
LAB_PICTURE = (
    '<p><img src="../_static/lab.png" width="100%" alt="The Lab, as the browser test sees it '
    "at 1400x1000\"></p><p><em>The Lab is a live widget: this picture is the browser test's "
    "screenshot of it. Run the notebook to use it.</em></p>"
)


def machine() -> str:
    """The machine and software a run was made on, in one line."""
    import adlab

    env = adlab.environment()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    cpu = env.get("cpu") or env.get("device") or "unknown CPU"
    cores = env.get("cpu_count") or os.cpu_count()
    versions = ", ".join(f"{k} {env[k]}" for k in ("adlab", "jax", "numpy") if env.get(k))
    return f"{cpu}, {cores} cores; {versions}; Python {sys.version.split()[0]}; commit {commit}"


def _stored(outputs: list) -> list:
    kept = []
    for out in outputs:
        data = out.get("data", {})
        if BOKEH_LOAD in data:
            continue  # BokehJS itself: the docs load it once, from the Bokeh package
        data.pop(BOKEH_EXEC, None)
        out.get("metadata", {}).pop(BOKEH_EXEC, None)
        if WIDGET in data:
            out = nbformat.v4.new_output("display_data", data={"text/html": LAB_PICTURE})
        kept.append(out)
    return kept


#: a markdown link to another tutorial, ``](NN_name.ipynb)`` or ``...ipynb#anchor)``
_SIBLING = re.compile(r"\]\((\d\d_\w+)\.ipynb([)#])")


def render(name: str) -> float:
    """Run notebooks/NAME.ipynb and write docs/tutorials/NAME.nbjson (a notebook, outputs
    and all, under its own suffix: the project's .ipynb files are committed without
    outputs, and these copies are what the docs show); returns the seconds."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    env_quick = os.environ.pop("ADLAB_QUICK", None)
    start = time.perf_counter()
    try:
        NotebookClient(nb, timeout=1800, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()  # fmt: skip
    finally:
        if env_quick is not None:
            os.environ["ADLAB_QUICK"] = env_quick
    took = time.perf_counter() - start
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _stored(cell.outputs)
            cell.execution_count = None
        else:  # a link to another tutorial: to its rendered copy
            cell.source = _SIBLING.sub(r"](\1.nbjson\2", cell.source)
    nb.metadata.pop("widgets", None)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    note = (f"```{{note}}\nThe outputs below are from a run on {when}, on {machine()}, "
            f"in {took:.0f} s (`python docs/render_tutorials.py {name}`). On your machine the "
            f"figures will differ; the notebook is `notebooks/{name}.ipynb`.\n```")  # fmt: skip
    title = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1) + 1
    nb.cells.insert(title, nbformat.v4.new_markdown_cell(note))
    OUT.mkdir(exist_ok=True)
    nbformat.write(nb, OUT / f"{name}.nbjson")
    return took


def main(names: list[str]) -> int:
    names = names or sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    for name in names:
        print(f"{name}: {render(name):.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
