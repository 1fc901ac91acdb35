"""JavaScript series in the Lab's own page: ticked in JupyterLab in Chromium, run and timed there.

The notebook (written here, not one of the tutorials) shows a Lab with JAX ticked. The test
ticks JavaScript, TF.js and jax-js as a person would, presses Run,
and checks from the kernel that the series ran in the page: its page runner answered, the
records say where="browser", their values agree with JAX's
(the record's error against the float64 reference), and the legends name the series. The
Lab's line on where JavaScript runs names the page's browser, and says WebGL is software.
Their memory was measured there too: TF.js's by its counters in the page (tf.profile, its
tape), jax-js's by its own count of its buffers, js's by its emitter. Then a model with a
loop (ode) runs as a js series in the page: its loop is a JavaScript loop there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from .test_lab_browser import (
    BUDGET_S,
    DONE,
    REACT_S,
    assert_rendered_cleanly,
    legend_labels,
    open_and_run_lab,
    open_tab,
    wait_for_kernel_idle,
    wait_until,
    watch_status,
)

NOTEBOOK = "javascript_in_the_page.ipynb"
# budget_s: a point whose prepare (tracing, emitting, loading in the page) overran 1 s was
# skipped on a cold machine, and the test wants every reverse series measured: a budget only
# a hang reaches (test_lab_browser.BUDGET_S)
CELLS = [
    "import adlab\n"
    "lab = adlab.Lab('normal_logpdf', sizes=[3, 10], n=10, modes=['reverse'],\n"
    f"                frameworks=['jax'], steps=False, budget_s={BUDGET_S})\n"
    "lab",
]
# what the kernel prints of the run, read back from the cell's output
REPORT = (
    "import json\n"
    "print('REPORT' + json.dumps({\n"
    "    'ran': bool(lab.results) and not lab.running,\n"
    "    'answered': lab.page_runner.answered,\n"
    "    'facts': lab.page_runner.facts,\n"
    "    'records': [dict(label=r.label, backend=r.backend, error=r.error, model=r.model,\n"
    "                     where=r.where, device=r.device, median_s=r.median_s,\n"
    "                     skipped=r.skipped, webgl_software=r.env.get('webgl_software'),\n"
    "                     peak_bytes=r.peak_bytes, residual_bytes=r.residual_bytes,\n"
    "                     memory_counter=r.memory_counter,\n"
    "                     jaxjs_version=r.env.get('jaxjs_version'))\n"
    "                for r in lab.results],\n"
    "}))"
)


@pytest.fixture
def javascript_notebook(lab_folder: Path) -> Path:
    cells = [nbformat.v4.new_code_cell(c) for c in (*CELLS, REPORT)]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}  # fmt: skip
    path = lab_folder / NOTEBOOK
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
@pytest.mark.timeout(480, method="signal")
def test_javascript_series_run_in_the_page(javascript_notebook, lab_server, browser_page,
                                           screenshots):  # fmt: skip
    page, console = browser_page
    frameworks = ["js", "tfjs", "jaxjs"]

    lab = open_and_run_lab(page, lab_server.lab_url(javascript_notebook))

    # the page has said hello: the Lab's line names the browser and WebGL's renderer
    where = lab.locator(".adlab-where")
    wait_until("the Lab's line on where JavaScript runs",
               lambda: "run in this page" in where.inner_text(), timeout=REACT_S)  # fmt: skip
    line = where.inner_text()
    assert "Chrome" in line and "not cross-origin isolated" in line, line
    assert "WebGL is software" in line and "SwiftShader" in line, line

    # tick JavaScript, TF.js and jax-js as a person does, then Run
    open_tab(lab, "Frameworks")
    tick(lab, frameworks)
    status = lab.locator(".adlab-status")
    run = lab.locator(".adlab-run button, button.adlab-run").first
    run.click()
    seen = watch_status(status, until=DONE, timeout=300)
    assert "run in this page" in seen[-1], seen[-1]
    page.screenshot(path=screenshots / "ran.png", timeout=30_000)

    # the series are drawn: the legends name them (TF.js's says float32 in a float64 sweep)
    series = {name: re.compile(rf"reverse\({name}\b[^)]*\)") for name in frameworks}

    def drawn() -> bool:
        legends = legend_labels(page)
        return all(any(p.fullmatch(label) for label in legends) for p in series.values())

    wait_until(f"reverse series of {frameworks} in the legends", drawn, timeout=REACT_S)
    assert_rendered_cleanly(page, console)

    # from the kernel: the page answered, and the records say where and agree with JAX
    report = kernel_report(page)
    assert report["answered"] > 0, report
    float32 = {"tfjs": "tf.profile", "jaxjs": "jax-js's own count"}  # and their counters
    for name in frameworks:
        rows = js_rows(report, name, series[name])
        for r in rows:
            assert r["where"] == "browser", r
            assert r["median_s"] and r["median_s"] > 0, r
            assert r["error"] is not None, r  # its error against JAX float64's reference
            assert r["error"] < (1e-4 if name in float32 else 1e-10), r
            # memory, measured once per point where it ran (TF.js, jax-js: in the page); js's
            # emitter may fuse normal_logpdf's gradient into one loop that keeps no buffer
            assert r["residual_bytes"] is not None and r["peak_bytes"] > 0, r
            assert r["residual_bytes"] > 0 or name == "js", r
            assert r["peak_bytes"] >= r["residual_bytes"], r
            counter = float32.get(name, "emitted program's own buffers")
            assert counter in r["memory_counter"], r
            if name == "jaxjs":  # jax-js's wasm backend, in the page; its version recorded
                assert r["device"] == "wasm" and r["jaxjs_version"] == "0.1.25", r
    print("page facts:", json.dumps(report["facts"]))
    print("records:", *report["records"], sep="\n  ")

    # a model with a loop (ode: a fori_loop of Euler steps) as a js series: its emitted loop
    # runs in the page, and its gradient is JAX's to float64's rounding. jax-js on webgpu
    # beside it: headless Chromium has no WebGPU adapter (its software one reads back
    # zeros), so that series is refused with the reason, never a wrong number
    tick(lab, ["tfjs"], on=False)
    lab.locator(".adlab-device-jaxjs button", has_text="webgpu").click()
    lab.locator(".adlab-model select").select_option(LOOP_MODEL)
    wait_until("the status line to accept the model",
               lambda: LOOP_MODEL in status.inner_text(), timeout=REACT_S)  # fmt: skip
    run.click()
    watch_status(status, until=DONE, timeout=300)
    report = kernel_report(page, model=LOOP_MODEL)
    for r in js_rows(report, "js", series["js"], model=LOOP_MODEL):
        assert r["where"] == "browser" and r["median_s"] > 0, r
        assert r["error"] is not None and r["error"] < 1e-10, r
    for r in js_rows(report, "jaxjs", re.compile(r"reverse\(jaxjs,float32,webgpu\)"),
                     model=LOOP_MODEL):  # fmt: skip
        assert r["median_s"] is None and r["error"] is None, r
        assert "webgpu" in r["skipped"] and "device 'wasm'" in r["skipped"], r
    assert_rendered_cleanly(page, console)


#: the loop model run in the page (its S Euler steps are a JavaScript for loop there)
LOOP_MODEL = "ode"


def tick(lab, frameworks: list[str], on: bool = True) -> None:
    """Tick (or untick) the frameworks' boxes, as a person does."""
    for name in frameworks:
        box = lab.locator(f".adlab-framework-{name} input[type=checkbox]")
        box.scroll_into_view_if_needed()
        assert box.is_enabled(), f"the {name} checkbox is greyed out"
        box.check() if on else box.uncheck()


def js_rows(report: dict, backend: str, label: re.Pattern[str], model: str | None = None
            ) -> list[dict]:  # fmt: skip
    """The report's records of ``backend``'s series ``label`` (of ``model``); at least one."""
    rows = [r for r in report["records"] if r["backend"] == backend
            and label.fullmatch(r["label"]) and model in (None, r["model"])]  # fmt: skip
    assert rows, f"no {backend} records of {model or 'the model'}: {report['records']}"
    return rows


def kernel_report(page, model: str | None = None) -> dict:
    """Run the notebook's last cell again (it prints the run's facts as JSON) and read them
    (once the run has records of ``model``, where one is named)."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(len(CELLS))
    cell.scroll_into_view_if_needed()

    def report() -> dict | None:
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")  # runs it in place
        wait_for_kernel_idle(page, timeout=REACT_S)
        shown = cell.locator(".jp-OutputArea").inner_text()
        text = re.search(r"REPORT(\{.*\})", shown, re.S)
        facts = json.loads(text.group(1)) if text else {}
        ran = facts.get("ran") and any(model in (None, r["model"]) for r in facts["records"])
        return facts if ran else None

    return wait_until("the kernel's report of the run", report, timeout=REACT_S, every=1)


@pytest.mark.slow
@pytest.mark.timeout(480, method="signal")
def test_tfjs_on_webgl_in_the_page_says_it_is_software(javascript_notebook, lab_server,
                                                       browser_page, screenshots):  # fmt: skip
    """TF.js's device choice set to webgl: the series runs on WebGL in the page, and its
    records say the renderer is software (SwiftShader in headless Chromium)."""
    page, console = browser_page
    lab = open_and_run_lab(page, lab_server.lab_url(javascript_notebook))
    where = lab.locator(".adlab-where")
    wait_until("the page's hello", lambda: "run in this page" in where.inner_text(),
               timeout=REACT_S)  # fmt: skip

    open_tab(lab, "Frameworks")
    lab.locator(".adlab-framework-tfjs input[type=checkbox]").check()
    lab.locator(".adlab-device button", has_text="webgl").click()
    status = lab.locator(".adlab-status")
    lab.locator(".adlab-run button, button.adlab-run").first.click()
    watch_status(status, until=DONE, timeout=300)
    page.screenshot(path=screenshots / "webgl.png", timeout=30_000)
    assert_rendered_cleanly(page, console)

    report = kernel_report(page)
    rows = [
        r for r in report["records"] if r["backend"] == "tfjs" and r["label"].startswith("reverse")
    ]
    assert rows, report["records"]
    for r in rows:
        assert (r["device"], r["where"], r["webgl_software"]) == ("webgl", "browser", True), r
        assert r["median_s"] and r["median_s"] > 0, r
        assert r["error"] is not None and r["error"] < 1e-4, r
        # TF.js's counters on WebGL: the engine counts its tensors' bytes on any backend
        assert 0 < r["residual_bytes"] <= r["peak_bytes"], r
    print("records:", *rows, sep="\n  ")
