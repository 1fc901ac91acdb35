"""The module ``adlab export`` writes, imported by a plain page served by ``python -m
http.server``, gives JAX's float64 f and gradient in Chromium, and the page asks for
nothing beyond itself and the module (no adlab, no TF.js, no network)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import jax
import numpy as np

import adlab
from adlab.engine.model import precision_scope

PAGE = """<!doctype html><meta charset="utf-8"><title>gradient</title>
<link rel="icon" href="data:,">
<script type="module">
import { f, grad, valueAndGrad } from "./grad.mjs";
const args = %s.map((l) => Float64Array.from(l));
const [value, g] = valueAndGrad(...args);
window.result = { f: f(...args), grad: Array.from(grad(...args)), value, g: Array.from(g) };
</script>"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_exported_module_runs_alone_in_a_served_page(tmp_path, browser_page):
    page, console = browser_page
    model = adlab.load_model("g9_graphics")
    args = model.setup(8)
    (tmp_path / "grad.mjs").write_text(adlab.export_js(model, n=8))
    leaves = [np.ravel(a).tolist() for a in jax.tree_util.tree_leaves(args)]
    (tmp_path / "index.html").write_text(PAGE % leaves)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/index.html"
        for _ in range(100):  # until it listens
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(url, wait_until="load")
        page.wait_for_function("() => window.result !== undefined")
        got = page.evaluate("() => window.result")
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert not console.errors(), console.errors()
    assert requests == [url, f"http://127.0.0.1:{port}/grad.mjs"], requests
    with precision_scope("float64"):
        value = float(model.function("jax")(*args))
    grad = adlab.reference(model, *args).value
    np.testing.assert_allclose([got["f"], got["value"]], value, rtol=1e-12)
    np.testing.assert_allclose(got["grad"], grad, rtol=1e-12)
    np.testing.assert_allclose(got["g"], grad, rtol=1e-12)
