"""The exported gradient in a page of its own: no adlab, no TF.js, timed in the page's frame.

``frame_page`` writes ``adlab.export_js``'s module and a plain ``index.html`` that imports
only that module and counts, inside ``requestAnimationFrame``, how many gradients finish in
one 16 ms frame. Where headless Chromium and Playwright are here, it serves the folder from
localhost (Chromium refuses a module from ``file://``), opens the page, reads its figures
and checks its gradient against JAX's float64 one; where they are not, it writes the files
and says how to open the page yourself.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import jax
import numpy as np

from ..accuracy.reference import reference
from ..catalog import resolve_model
from ..engine.model.source import Model
from ..report.export_js import export_js
from ..report.table import Table

#: a frame's budget (60 frames a second)
FRAME_MS = 16
#: how close the page's float64 gradient must come to JAX's (relative to its largest entry)
AGREES = 1e-12
#: the longest the browser may take, in seconds, before the page is given up
TIMEOUT_S = 60.0
#: where Chromium is looked for (``ADLAB_CHROMIUM`` first, then the PATH)
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"]  # fmt: skip

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>%(title)s</title><link rel="icon" href="data:,">
</head><body>
<h1>%(title)s</h1>
<p id="figures">timing...</p>
<script type="module">
// this page imports only the exported module: no adlab, no framework
import { grad } from "./%(module)s";
const inputs = %(inputs)s.map((a) => Float64Array.from(a));
const FRAMES = %(frames)d, FRAME_MS = %(frame_ms)d;
let sink = 0;
// in one frame's callback: gradients one after another until FRAME_MS have passed;
// the call that ends past it does not count
function fill() {
  const t0 = performance.now();
  let count = 0, t = 0;
  for (;;) {
    sink += grad(...inputs)[0];
    t = performance.now() - t0;
    if (t > FRAME_MS) break;
    count++;
  }
  return { count, ms: t, calls: count + 1 };
}
const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(fill())));
const median = (v) => { const s = [...v].sort((a, b) => a - b), h = s.length >> 1;
                        return s.length %% 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
async function main() {
  await frame();  // a warm-up frame: V8 compiles the gradient
  const frames = [];
  for (let i = 0; i < FRAMES; i++) frames.push(await frame());
  const perFrame = median(frames.map((f) => f.count));
  const us = median(frames.map((f) => (1000 * f.ms) / f.calls));
  document.getElementById("figures").textContent =
    `${perFrame} gradients per ${FRAME_MS} ms frame (median of ${FRAMES} frames), ` +
    `${us.toPrecision(3)} \\u00b5s per gradient`;
  window.frameResult = { perFrame, us, frames, grad: Array.from(grad(...inputs)), sink };
}
main().catch((err) => {
  document.getElementById("figures").textContent = `error: ${err}`;
  window.frameResult = { error: String(err.stack || err) };
});
</script></body></html>
"""


@dataclass(frozen=True, repr=False)
class FramePage:
    """What ``frame_page`` wrote and, where a browser was here, what its pages measured.

    Attributes:
        folder: the folder served (one sub-folder per n: ``n10/index.html`` beside
            ``<model>.grad.mjs``).
        sizes: the n of each page.
        measured: per n, ``(gradients per frame, µs per gradient, agrees)``; empty where
            the pages were not opened.
        why_not: why the pages were not opened or measured ("" where they were).
        shown: per n, the line the page shows.
    """

    folder: Path
    model: str
    sizes: tuple[int, ...]
    measured: dict
    why_not: str = ""
    shown: dict = field(default_factory=dict)

    @property
    def agrees(self) -> bool | None:
        """Every page's gradient equals JAX's float64 one (to 1e-12); None: none was run."""
        return all(m[2] for m in self.measured.values()) if self.measured else None

    def how_to_open(self) -> str:
        """How to open the pages in a browser of your own (a module needs a server)."""
        return (f"to open the pages yourself: cd {self.folder} && python -m http.server, "
                f"then http://localhost:8000/n{self.sizes[0]}/ in a browser")  # fmt: skip

    def table(self) -> Table:
        rows = []
        for n in self.sizes:
            got = self.measured.get(n)
            if got is None:
                rows.append((n, "-", "-", "not run", f"n{n}/index.html"))
                continue
            per_frame, us, agrees = got
            rows.append((n, f"{per_frame:,.0f}", f"{us:.3g}", "yes" if agrees else "NO",
                         f"n{n}/index.html"))  # fmt: skip
        notes = [f"the pages import only {self.model}.grad.mjs; in {self.folder}"]
        if self.why_not:
            notes += [f"not measured here: {self.why_not}", self.how_to_open()]
        return Table.of(("n", f"gradients per {FRAME_MS} ms frame", "µs per gradient",
                         f"agrees with JAX float64 to {AGREES:.0e}", "page"), rows,
                        title=f"The exported gradient of {self.model} in a page's frame",
                        notes=notes)  # fmt: skip

    def __str__(self) -> str:
        return str(self.table())

    __repr__ = __str__  # a notebook's plain-text output: the table

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def chromium() -> str | None:
    """Chromium's path here (``ADLAB_CHROMIUM``, the usual places, the PATH), or None."""
    for path in (os.environ.get("ADLAB_CHROMIUM"), *CHROMIUM_PATHS):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _write(folder: Path, model: Model, n: int, frames: int) -> np.ndarray:
    """One page and its module in ``folder``; the gradient the page must give."""
    args = model.setup(n)
    folder.mkdir(parents=True, exist_ok=True)
    module = f"{model.name}.grad.mjs"
    (folder / module).write_text(export_js(model, n=n))
    inputs = [np.ravel(a).tolist() for a in jax.tree_util.tree_leaves(args)]
    (folder / "index.html").write_text(PAGE % {
        "title": f"The gradient of {model.name} at n = {n}, in a frame", "module": module,
        "inputs": json.dumps(inputs), "frames": frames, "frame_ms": FRAME_MS})  # fmt: skip
    return np.ravel(reference(model, *args).value)


def _open_pages(exe: str, base: Path, sizes: tuple[int, ...]) -> dict:
    """Each page's ``window.frameResult``, read in headless Chromium from a localhost server."""
    import http.server

    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # no line per request in the notebook
            pass

    handler = partial(Quiet, directory=str(base))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    ms = int(TIMEOUT_S * 1000)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, headless=True,
                                         args=CHROMIUM_FLAGS, timeout=ms)  # fmt: skip
            try:
                page = browser.new_page()
                out = {}
                for n in sizes:
                    page.goto(f"{url}/n{n}/", wait_until="load", timeout=ms)
                    page.wait_for_function("() => window.frameResult !== undefined", timeout=ms)
                    out[n] = page.evaluate("() => window.frameResult")
                    out[n]["shown"] = page.inner_text("#figures")
                return out
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


def _in_thread(fn, *args) -> dict:
    """``fn(*args)`` in a thread of its own: Playwright's sync API refuses a thread with a
    running event loop (a notebook's kernel); given up after ``TIMEOUT_S`` per page."""
    box: dict = {}

    def run() -> None:
        try:
            box["out"] = fn(*args)
        except Exception as err:  # noqa: BLE001  (said in the table, never raised)
            box["error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(TIMEOUT_S * (len(args[-1]) + 1))
    if t.is_alive():
        return {"error": f"the browser gave no result within {TIMEOUT_S:.0f} s a page"}
    return box


def frame_page(model: str | Model, sizes: tuple[int, ...] | list[int] = (10, 100),
               folder: str | Path | None = None, frames: int = 7) -> FramePage:  # fmt: skip
    """The exported gradient of ``model`` in a page of its own, timed in the page's frame.

    Writes, per n, ``<folder>/n<n>/<model>.grad.mjs`` (``adlab.export_js(model, n=n)``) and
    an ``index.html`` that imports only it and, in ``requestAnimationFrame``, counts how
    many gradients finish within 16 ms (the median over ``frames`` frames, after a warm-up
    frame) and the time per gradient, and shows them. Then, where headless Chromium and
    Playwright are here, serves the folder on a free localhost port, opens each page, reads
    its figures and checks its gradient against JAX's float64 one to 1e-12; server and
    browser are closed before it returns. Where they are not here, the files are still
    written and the result says how to open the pages yourself.

    Args:
        model: a catalog name, a model file's path, model source, or a ``Model``.
        sizes: the n of each page.
        folder: where to write (default: a new temporary folder).
        frames: the frames counted per page.

    Returns:
        A ``FramePage``: shows as a table in a notebook, prints as text; ``agrees`` says
        whether every page's gradient equals JAX's (None where none was run).
    """
    m = resolve_model(model)
    sizes = tuple(int(n) for n in sizes)
    base = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="adlab-page-"))
    expected = {n: _write(base / f"n{n}", m, n, frames) for n in sizes}
    exe = chromium()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        why = "Playwright is not installed (python -m pip install playwright)"
    else:
        why = "" if exe else "no Chromium here (set ADLAB_CHROMIUM to its path)"
    if why:
        return FramePage(base, m.name, sizes, {}, why)
    got = _in_thread(_open_pages, exe, base, sizes)
    if "error" in got:
        return FramePage(base, m.name, sizes, {}, got["error"])
    measured, errors, shown = {}, [], {}
    for n, page in got["out"].items():
        shown[n] = page["shown"]
        if "error" in page:
            errors.append(f"n = {n}: {page['error'].splitlines()[0]}")
            continue
        want = expected[n]
        diff = np.max(np.abs(np.asarray(page["grad"]) - want)) / max(np.max(np.abs(want)), 1e-300)
        measured[n] = (page["perFrame"], page["us"], bool(diff <= AGREES))
    return FramePage(base, m.name, sizes, measured, "; ".join(errors), shown)
