"""One sweep in Node and the same in the Lab's Chromium page, compared (issue #34).

The JavaScript series (plain JavaScript emitted from f's JAX programs: reverse and
forward mode, ``(js)``) are timed inside their runtime either way (``timing.js``): in
Node, started by adlab (``where="node"``), and in the page that shows the Lab, headless
Chromium at JupyterLab (``where="browser"``; the Lab's Export writes the run). Both runs
are saved (``adlab.save``'s format) and compared as ``adlab compare node.json
browser.json`` does; each row says "node vs browser".

    python benchmarks/compare_where.py [--out DIR] [--sizes 10,100,1000]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import nbformat

import adlab

REPO = Path(__file__).resolve().parents[1]
MODES = ["reverse", "forward"]


def node_run(sizes: list[int], budget_s: float) -> list[adlab.Record]:
    variants = [adlab.Series(m, backend="js") for m in MODES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adlab.NoisyMachineWarning)  # in the run's env
        return list(adlab.bench("normal_logpdf", sizes, variants, budget_s=budget_s))


def browser_run(sizes: list[int], budget_s: float, folder: Path) -> Path:
    """The Lab in JupyterLab in headless Chromium, Run with JavaScript ticked, Export."""
    sys.path.insert(0, str(REPO))
    from playwright.sync_api import sync_playwright

    from tests.browser._jupyter import JupyterLabServer

    cell = (f"import adlab\nlab = adlab.Lab('normal_logpdf', sizes={sizes}, n={max(sizes)}, "
            f"modes={MODES}, frameworks=['js'], steps=False,\n"
            f"                budget_s={budget_s})\nlab")  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}  # fmt: skip
    nbformat.write(nb, folder / "where.ipynb")
    with JupyterLabServer(folder, folder / "jupyter") as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(server.lab_url("where.ipynb"))
        page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        page.wait_for_timeout(3000)
        page.locator(".lm-MenuBar-item", has_text="Run").click()
        page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
        lab = page.locator(".jp-OutputArea-output", has=page.locator(".adlab-editor")).first
        lab.wait_for()
        where = lab.locator(".adlab-where")
        _wait(lambda: "run in this page" in where.inner_text(), 120, "the page's hello")
        lab.locator(".adlab-run button, button.adlab-run").first.click()
        status = lab.locator(".adlab-status")
        _wait(lambda: re.search(r"Done: \d+ points", status.inner_text()), 900, "the run")
        print(f"browser: {status.inner_text().strip()}", file=sys.stderr)
        lab.get_by_role("button", name="Export").click()
        _wait(lambda: "Exported" in status.inner_text(), 60, "the export")
        browser.close()
    return next((folder / ".adlab").glob("normal_logpdf-*.json"))


def _wait(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise TimeoutError(f"waited {timeout:.0f} s for {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="where-runs", help="folder for node.json, browser.json")
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--budget-s", type=float, default=2.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    node = adlab.save(node_run(sizes, args.budget_s), out / "node.json")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(browser_run(sizes, args.budget_s, Path(tmp)), out / "browser.json")
    print(f"$ adlab compare {node} {out / 'browser.json'}")
    print(adlab.compare_runs(str(node), str(out / "browser.json")))


if __name__ == "__main__":
    main()
