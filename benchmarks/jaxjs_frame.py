"""jax-js against adlab's emitted JavaScript: a gradient of G9's linkage, in the same Node.

The goal (issue 39, JS4): ``reverse(js)`` (JAX's gradient program emitted as plain
JavaScript) at least 10x faster than ``reverse(jaxjs)`` (jax-js's own ``grad`` of the model
translated to jax-js) at n = 10 and 100 on ``g9_graphics``, both timed inside Node by
``timing.js`` (first call apart, warm-up, interval stopping). jax-js's series are eager
(its default) and under its ``jit``, float64 (as ``js``) and float32 (jax-js's default).

Then what jax-js's ``jit`` does with a loop: it has no loop primitive (0.1.25), so the
translation's loop is JavaScript's and ``jit`` traces it whole, unrolled: ``ode``'s
reverse mode at S = 10, 40 and 160 steps, its first call (the trace and the kernels'
compiles) and its later calls, eager and jitted.

``--chromium``: the same programs replayed in headless Chromium (``_js_page``: the Lab page
runner's stand-ins for Node), jax-js on its wasm backend.

Run: ``python benchmarks/jaxjs_frame.py [--sizes 10,100] [--chromium]``. On a loaded machine
the figures swing: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np
from _js_page import in_chromium  # beside this script

from adlab.catalog import load_model
from adlab.engine.derivative import prepare
from adlab.measure.series import parse_variant
from adlab.measure.sweep import bench

JS = "reverse(js)"
JAXJS = ["reverse(jaxjs)", "reverse(jaxjs,jit)", "reverse(jaxjs,float32)",
         "reverse(jaxjs,jit,float32)"]  # fmt: skip
STEPS = (10, 40, 160)


def ms(s: float) -> str:
    return f"{s * 1e3:.4f}" if s < 1e-2 else f"{s * 1e3:.2f}"


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def frame(sizes: list[int]) -> None:
    modes = [JS, *JAXJS]
    named = [replace(parse_variant(m), label=m) for m in modes]
    load = os.getloadavg()
    records = [r for r in bench("g9_graphics", sizes, named, warn=False) if r.mode != "primal"]
    r0 = records[0]
    print(f"g9_graphics, ms per gradient (median), in {r0.env['js_runtime']} "
          f"{r0.env['js_runtime_version']}; load {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
          f"on {os.cpu_count()} cores")  # fmt: skip
    at = {(r.label, r.n): r for r in records if not r.skipped}
    print(f"{'n':>5} " + " ".join(f"{m:>27}" for m in modes))
    for n in sizes:
        cells = [at.get((m, n)) for m in modes]
        print(f"{n:>5} " + " ".join(f"{ms(r.median_s) if r else 'skipped':>27}" for r in cells))
    print("\nGoal JS4: reverse(js) >= 10x faster than reverse(jaxjs) (each jax-js series):")
    for n in sizes:
        js = at.get((JS, n))
        for m in JAXJS:
            other = at.get((m, n))
            if js and other:
                x = other.median_s / js.median_s
                print(f"  n={n:>4} {m:<27} {x:8.1f}x  {met(x >= 10)}")


def chromium(sizes: list[int]) -> None:
    out = in_chromium(sizes, [JS, *JAXJS])
    if isinstance(out, str):
        print(f"\nChromium: not measured: {out}")
        return
    print(f"\nIn Chromium ({out['describe']['runtime_version']}), ms per gradient, median of "
          "15 repeats in turn")  # fmt: skip
    for n, got in out["sizes"].items():
        js = float(np.median(got[JS]["samples"]))
        for label in JAXJS:
            g = got[label]
            if "error" in g:
                print(f"  n={n:>4} {label:<27} error: {g['error'][:80]}")
                continue
            t = float(np.median(g["samples"]))
            print(f"  n={n:>4} {label:<27} {ms(t):>9} ms, {t / js:8.1f}x reverse(js)'s "
                  f"{ms(js)} ms: {met(t / js >= 10)}")  # fmt: skip


def loops() -> None:
    print(f"\node's reverse mode, n = 4: a loop of S steps under jax-js (load "
          f"{os.getloadavg()[0]:.1f})")  # fmt: skip
    print(f"{'S':>5} {'':>6} {'first call ms':>14} {'later ms':>10}")
    for steps in STEPS:
        m = load_model("ode", S=steps)
        args = m.setup(4)
        for jit in (False, True):
            start = time.perf_counter()
            p = prepare(m, *args, backend="jaxjs", jit=jit, precision="float64")
            first = time.perf_counter() - start
            x = p.inputs[0]
            p(x)
            later = []
            for _ in range(5):
                t = time.perf_counter()
                p(x)
                later.append(time.perf_counter() - t)
            print(f"{steps:>5} {'jit' if jit else 'eager':>6} {ms(first):>14} "
                  f"{ms(sorted(later)[2]):>10}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100")
    parser.add_argument("--chromium", action="store_true", help="also in headless Chromium")
    a = parser.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    frame(sizes)
    if a.chromium:
        chromium(sizes)
    loops()
    print(f"\nload {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
