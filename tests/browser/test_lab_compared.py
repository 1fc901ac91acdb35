"""The Lab with another run over it (``compare_to=``), seen in JupyterLab in Chromium: the
saved run's series drawn dashed on the time plot, a legend entry naming its machine, and,
after Run, the table of both times and their ratio under the plots.

The other run is written here: records of a "gpu-box" (a machine this one is not), saved
as ``adlab.save`` does, beside the notebook.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

import adlab
from adlab import Record

from .test_lab_browser import (
    DONE,
    REACT_S,
    assert_rendered_cleanly,
    open_and_run_lab,
    wait_until,
    watch_status,
)

NOTEBOOK = "lab_compared.ipynb"
CELL = ("import adlab\n"
        "lab = adlab.Lab('normal_logpdf', sizes=[3, 10], n=10, modes=['reverse'],\n"
        "                steps=False, budget_s=2.0, compare_to='gpu-box.json')\n"
        "lab")  # fmt: skip
#: the time plot's dashed lines (Bokeh's "dashed" is [6]) and its legend's labels
_OVERLAY_JS = """() => {
  const docs = (window.Bokeh && window.Bokeh.documents) || [];
  const models = docs.flatMap(d => [...d.all_models]);
  const time = models.filter(m => m.type === "Figure"
                                  && (m.css_classes || []).includes("adlab-time-plot"));
  const out = {dashed: [], legend: []};
  for (const fig of time) {
    for (const r of fig.renderers)
      if (r.data_source && r.data_source.name === "overlay" && r.glyph.type === "Line"
          && JSON.stringify(r.glyph.line_dash) === '{"value":[6]}')
        out.dashed.push(Array.from(r.data_source.data.label)[0]);
    for (const side of ["center", "below", "right", "left", "above"])
      for (const legend of fig[side].filter(c => c.type === "Legend"))
        for (const item of legend.items)
          if (item.label) out.legend.push(item.label.value ?? item.label);
  }
  return out;
}"""


@pytest.fixture
def compared_notebook(lab_folder: Path) -> Path:
    records = [Record(model="normal_logpdf", mode=mode, n=n, label=mode if mode != "primal"
                      else "primal", scheme=None, jit=True, precision="float64",
                      backend="jax", median_s=t * n, median_lo_s=t * n * 0.98,
                      median_hi_s=t * n * 1.02, env={"noise": 0.05, "sweep": "gpu"})
               for n in (3, 10) for mode, t in (("primal", 1e-6), ("reverse", 2e-6))]  # fmt: skip
    path = adlab.save(records, lab_folder / "gpu-box.json")
    data = json.loads(path.read_text())
    data["env"]["host"] = "gpu-box"
    path.write_text(json.dumps(data))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}  # fmt: skip
    nbformat.write(nb, lab_folder / NOTEBOOK)
    return lab_folder / NOTEBOOK


@pytest.mark.timeout(480, method="signal")
def test_the_lab_draws_a_saved_run_dashed_and_compares_it(compared_notebook, lab_server,
                                                          browser_page, screenshots):  # fmt: skip
    page, console = browser_page
    lab = open_and_run_lab(page, lab_server.lab_url(compared_notebook))

    def overlaid() -> dict | None:
        seen = page.evaluate(_OVERLAY_JS)
        return seen if sorted(seen["dashed"]) == ["primal", "reverse"] else None

    seen = wait_until("the saved run dashed on the time plot", overlaid, timeout=REACT_S)
    assert "dashed: gpu-box: gpu-box.json" in seen["legend"], seen
    compared = lab.locator(".adlab-compared")
    assert "Run to compare" in compared.inner_text()

    lab.locator(".adlab-run button, button.adlab-run").first.click()
    watch_status(lab.locator(".adlab-status"), until=DONE, timeout=300)
    wait_until("the table of both runs", lambda: "new/base" in compared.inner_text(),
               timeout=REACT_S)  # fmt: skip
    text = compared.inner_text()
    assert "This run against gpu-box: gpu-box.json" in text and "reverse" in text, text
    assert_rendered_cleanly(page, console)
    lab.locator(".adlab-plots").first.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "lab-compared.png", full_page=False, timeout=30_000)
    compared.scroll_into_view_if_needed()
    page.screenshot(path=screenshots / "lab-compared-table.png", timeout=30_000)
