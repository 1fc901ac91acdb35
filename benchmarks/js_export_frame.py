"""Gradients per 16 ms frame in headless Chromium's requestAnimationFrame loop.

``g9_graphics`` (dragging the tip of a linkage: the case G9.js was made for) at n = 10, 100
and 1,000, in a page served from localhost (``_js_page``): how many gradients fit in one
frame's 16 ms, counted inside a ``requestAnimationFrame`` callback (calls made one after
another until 16 ms have passed since the callback began; the call that ends past 16 ms does
not count), one method per frame, the methods taken in turn, a warm-up frame each and then
``--frames`` frames each; the median count. The methods:

- ``exported``: the module ``adlab.export_js("g9_graphics", n=n)`` writes, imported by the
  page from the server (its ``grad``, checked against JAX's gradient first);
- ``reverse(tfjs)``, ``reverse(tfjs,wasm)``: ``tf.grad`` of adlab's TF.js translation of the
  model, on TF.js's cpu and wasm backends (float32, TF.js's precision);
- ``reverse(jaxjs,jit)``, ``reverse(jaxjs,jit,float32)``: jax-js's ``jit(grad)`` of adlab's
  jax-js translation, on its wasm backend;
- ``numeric[g9](js)``: G9.js's own gradient (its central differences, adaptive step) of the
  emitted f;
- ``reverse(js)``: the exported module's program as adlab's runtime calls it (a reference:
  the same code without the module's argument checks and copy).

The runtime's series are the programs ``js_frame.py --chromium`` replays (prepared in Python,
their requests recorded in Node, replayed in the page under the Lab page runner's stand-ins
for Node); a stand-in for ``timing.js``'s ``Watch`` hands the page the function each one
times (runtime.js's ``work``: the program's driver at its inputs), after its warm-up.

The page is not cross-origin isolated (as JupyterLab's is not): its clock ticks at 0.1 ms,
fine at 16 ms. Run: ``python benchmarks/js_export_frame.py [--sizes 10,100,1000] [--frames 15]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from datetime import UTC, datetime

import jax
import numpy as np
from _js_page import chromium, page_runner, recorded, serve_once  # beside this script

import adlab
from adlab.catalog import load_model

EXPORTED = "exported"
SERIES = ["reverse(tfjs)", "reverse(tfjs,wasm)", "reverse(jaxjs,jit)",
          "reverse(jaxjs,jit,float32)", "numeric[g9](js)", "reverse(js)"]  # fmt: skip
REFERENCE = "reverse(js)"  # the exported program itself: not a rival
FRAME_MS = 16

# timing.js's Watch, keeping the function it is given: the page calls it itself
WATCH = """
const real = require("./timing_real.js");
class Watch extends real.Watch {
  constructor(fn, options) { super(fn, options); globalThis.watched = fn; }
}
module.exports = { ...real, Watch };
"""

PAGE = """<!doctype html><html><body><script>
%(runner)s
const payload = %(payload)s;
const FRAMES = %(frames)d, FRAME_MS = %(frame_ms)d;
let rt = null, waiting = null, sink = 0;
const ask = (msg) => new Promise((resolve) => {
  waiting = resolve;
  rt.line(JSON.stringify({ ...msg, seq: 1 }));
});
const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(fill())));
let current = null;
// in a frame's callback: calls of `current` until FRAME_MS have passed; those that ended in it
function fill() {
  const t0 = performance.now();
  let count = 0, t = 0;
  try {
    for (;;) {
      sink += current();
      t = performance.now() - t0;
      if (t > FRAME_MS) break;
      count++;
    }
  } catch (err) {
    return { error: String(err.message || err) };
  }
  return { count, ms: t, calls: count + 1 };
}
async function main() {
  rt = boot(payload.modules, "runtime", (line) => {
    const w = waiting;
    waiting = null;
    w(JSON.parse(line));
  });
  for (const msg of payload.replay) {
    const a = await ask(msg);
    if (a.error) throw new Error(`replaying ${msg.op} ${msg.id}: ${a.error}`);
  }
  const out = { describe: await ask({ op: "describe" }), sizes: {}, checks: {},
                isolated: self.crossOriginIsolated };
  for (const [n, ids] of Object.entries(payload.sizes)) {
    const fns = {};
    const mod = await import(`/g9-${n}.mjs`);
    const ins = payload.inputs[n].map((a) => Float64Array.from(a));
    const g = mod.grad(...ins), want = payload.expected[n];
    let diff = 0, scale = 0;
    for (let i = 0; i < want.length; i++) {
      diff = Math.max(diff, Math.abs(g[i] - want[i]));
      scale = Math.max(scale, Math.abs(want[i]));
    }
    out.checks[n] = diff / scale;
    fns["%(exported)s"] = () => mod.grad(...ins)[0];
    for (const [label, id] of Object.entries(ids)) {  // each warmed up by timing.js
      const s = await ask({ op: "time_start", id, target_s: 0.002, budget_s: 0.5 });
      if (s.error) fns[label] = s.error;
      else { const w = globalThis.watched; fns[label] = () => (w(), 1); }
    }
    const got = {};
    for (const [label, fn] of Object.entries(fns)) {
      got[label] = typeof fn === "string" ? { error: fn } : { frames: [] };
    }
    const live = Object.keys(fns).filter((k) => typeof fns[k] !== "string");
    for (let r = -1; r < FRAMES; r++) {  // r = -1: a warm-up frame each, not kept
      for (const label of live) {
        current = fns[label];
        const f = await frame();
        if (f.error) got[label] = { error: f.error };
        else if (r >= 0 && !got[label].error) got[label].frames.push(f);
      }
    }
    out.sizes[n] = got;
  }
  return out;
}
main().catch((err) => ({ error: String(err.stack || err) }))
  .then((out) => fetch("/result", { method: "POST", body: JSON.stringify({ ...out, sink }) }));
</script></body></html>
"""


def report(out: dict, sizes: list[int], load: tuple, frames: int) -> None:
    d = out["describe"]
    print(f"g9_graphics in {d['runtime_version']}; clock {d['timer_resolution_s']:.0e} s, "
          f"cross-origin isolated: {out['isolated']}; {frames} frames per method, in turn; "
          f"load {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on "
          f"{os.cpu_count()} cores; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")  # fmt: skip
    print("\ngradients per 16 ms frame, median (range), and ms per gradient in the frames\n")
    labels = [EXPORTED, *SERIES]
    print("| n | " + " | ".join(f"`{lab}`" for lab in labels) + " | goal |")
    print("|---:|" + "---:|" * len(labels) + "---|")
    for n in map(str, sizes):
        got, med = out["sizes"][n], {}
        cells = []
        for lab in labels:
            g = got.get(lab, {"error": "not run"})
            if "error" in g:
                cells.append(f"error: {g['error'][:60]}")
                continue
            counts = [f["count"] for f in g["frames"]]
            ms = statistics.median(f["ms"] / f["calls"] for f in g["frames"])
            med[lab] = statistics.median(counts)
            cells.append(f"{med[lab]:,.0f} ({min(counts):,}-{max(counts):,}; {ms:.3g} ms)")
        rivals = {k: v for k, v in med.items() if k not in (EXPORTED, REFERENCE)}
        best = max(rivals, key=rivals.get, default=None)
        ok = EXPORTED in med and best is not None and med[EXPORTED] > rivals[best]
        x = med.get(EXPORTED, 0) / max(rivals.get(best, 0), 1)
        goal = f"met ({x:,.0f}x `{best}`)" if ok else f"NOT met (`{best}`)"
        print(f"| {n} | " + " | ".join(cells) + f" | {goal} |")
    print("\nexported gradient against JAX's, max relative difference: "
          + ", ".join(f"n={n}: {c:.0e}" for n, c in out["checks"].items()))  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10,100,1000")
    p.add_argument("--frames", type=int, default=15, help="frames per method per size")
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    run = chromium()
    if run is None:
        raise SystemExit("no chromium on the PATH")
    load = os.getloadavg()
    m = load_model("g9_graphics")
    files, inputs, expected = {}, {}, {}
    for n in sizes:
        args = m.setup(n)
        files[f"/g9-{n}.mjs"] = adlab.export_js("g9_graphics", n=n)
        inputs[str(n)] = [np.ravel(a).tolist() for a in jax.tree_util.tree_leaves(args)]
        expected[str(n)] = np.ravel(adlab.derivative(m, *args)).tolist()
    payload = recorded("g9_graphics", sizes, SERIES)
    payload["modules"]["timing_real"] = payload["modules"]["timing"]
    payload["modules"]["timing"] = WATCH
    payload |= {"inputs": inputs, "expected": expected}
    page = PAGE % {"runner": page_runner(), "frames": a.frames, "frame_ms": FRAME_MS,
                   "exported": EXPORTED,
                   "payload": json.dumps(payload).replace("</", "<\\/")}  # fmt: skip
    out = serve_once(page, False, run, files=files)
    if "error" in out:
        raise SystemExit(f"the page failed: {out['error']}")
    report(out, sizes, load, a.frames)


if __name__ == "__main__":
    main()
