"""The Lab fits a 1400x1000 window: Run and the time and memory plots in view at once, and
the memory plot draws a JavaScript series (run in the page) beside a Python one.

The notebook (written here) shows a Lab with JAX and plain JavaScript ticked, reverse mode
at n = 3 and 10. The test scrolls the Lab to the top of the notebook, as a person does
once, and reads the bounding boxes of Run and the two plots; then runs, and reads through
BokehJS the points each series' glyphs draw on the memory plot. A screenshot of the window
is saved (``lab-1400x1000.png``); with ``ADLAB_DOCS_SCREENSHOT=1`` it is also the picture of
the Lab that the README and the docs show, ``docs/_static/lab.png`` (commit it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest

from .test_lab_browser import (
    BUDGET_S,
    DONE,
    REACT_S,
    assert_rendered_cleanly,
    open_and_run_lab,
    wait_until,
    watch_status,
)

NOTEBOOK = "lab_layout.ipynb"
#: the README's and the docs' picture of the Lab, taken here when ADLAB_DOCS_SCREENSHOT=1
DOCS_PICTURE = Path(__file__).resolve().parents[2] / "docs" / "_static" / "lab.png"
#: the Lab's parts, each pictured alone beside it (docs/lab.md): element class -> file
DOCS_PARTS = {"adlab-editor": "lab-editor.png", "adlab-tabs": "lab-tabs.png",
              "adlab-time-plot": "lab-time.png", "adlab-memory-plot": "lab-memory.png"}  # fmt: skip
WINDOW = {"width": 1400, "height": 1000}
CELL = ("import adlab\n"
        "lab = adlab.Lab('normal_logpdf', sizes=[3, 10], n=10, modes=['reverse'],\n"
        f"                frameworks=['jax', 'js'], steps=False, budget_s={BUDGET_S})\n"
        "lab")  # fmt: skip
# label -> how many finite points that series' visible glyphs draw on the memory plot
_MEMORY_POINTS_JS = """() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  const plots = docs.flatMap(d => [...d.all_models]).filter(m => m.name === "memory");
  const out = {};
  for (const plot of plots) for (const r of plot.renderers) {
    const data = r.data_source && r.data_source.data;
    const y = r.glyph && r.glyph.y;
    if (!r.visible || !data || !data.label || !y || y.field !== "peak_bytes") continue;
    if (r.glyph.type !== "Scatter") continue;
    const ys = Array.from(data.peak_bytes), labels = Array.from(data.label);
    ys.forEach((v, i) => {
      if (Number.isFinite(v) && v > 0) out[labels[i]] = (out[labels[i]] || 0) + 1;
    });
  }
  return out;
}"""


@pytest.fixture
def layout_notebook(lab_folder: Path) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}  # fmt: skip
    path = lab_folder / NOTEBOOK
    nbformat.write(nb, path)
    return path


@pytest.mark.timeout(480, method="signal")
def test_run_and_both_plots_fit_the_window_and_memory_draws_js_and_python(layout_notebook,  # noqa: E501
        lab_server, browser_page, screenshots):  # fmt: skip
    page, console = browser_page
    page.set_viewport_size(WINDOW)
    lab = open_and_run_lab(page, lab_server.lab_url(layout_notebook))
    where = lab.locator(".adlab-where")
    wait_until("the page's hello", lambda: "run in this page" in where.inner_text(),
               timeout=REACT_S)  # fmt: skip

    status = lab.locator(".adlab-status")
    lab.locator(".adlab-run button, button.adlab-run").first.click()
    watch_status(status, until=DONE, timeout=300)

    # every series with a memory figure is drawn on the memory plot: JAX's and JavaScript's
    want = {"reverse", "reverse(js)"}

    def drawn() -> dict | None:
        points = page.evaluate(_MEMORY_POINTS_JS)
        return points if all(points.get(label, 0) == 2 for label in want) else None

    points = wait_until(f"{want} on the memory plot, two sizes each", drawn, timeout=REACT_S)
    print("memory plot points:", points)
    assert_rendered_cleanly(page, console)

    # scrolled to the Lab's top once, Run and both plots are in the window, whole
    lab.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    page.screenshot(path=screenshots / "lab-1400x1000.png", timeout=30_000)
    if os.environ.get("ADLAB_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(screenshots / "lab-1400x1000.png", DOCS_PICTURE)
        for hook, name in DOCS_PARTS.items():  # each part alone, for the Lab's docs page
            lab.locator(f".{hook}").first.screenshot(path=DOCS_PICTURE.with_name(name),
                                                     timeout=30_000)  # fmt: skip
    bottom = page.locator(".jp-StatusBar-Widget, #jp-main-statusbar").first.bounding_box()
    floor = bottom["y"] if bottom else WINDOW["height"]
    for hook in ("adlab-run", "adlab-time-plot", "adlab-memory-plot"):
        box = lab.locator(f".{hook}").first.bounding_box()
        assert box, f"{hook} is not laid out"
        assert 0 <= box["y"] and box["y"] + box["height"] <= floor, (hook, box, floor)
        assert 0 <= box["x"] and box["x"] + box["width"] <= WINDOW["width"], (hook, box)
