"""The emitted JavaScript against the same function written by hand, timed inside Node.

Goal X1 for ``backend="js"``: the emitted gradient (the program of ``jax.grad(f)``)
within 1.5x of a hand-written gradient, the emitted primal within 1.2x of f written by
hand. Three models: rosenbrock, ``mlp_batched`` (a product of matrices) and ``ode`` (a
loop); their hand-written f and gradient, as a careful person writes them, are in
``js_emitted_hand.js``. Each pair is checked equal (to 1e-12 of its largest value)
before it is timed by Node itself (``performance.now()`` around loops of >= 10 ms after
200 ms of warm-up; the emitted and hand-written repeats interleaved; the median), so
the pipe from Python does not count: this is the arithmetic. The machine's load
average is printed before and after.

Run: ``python benchmarks/js_emitted.py [--sizes 10,100,1000,10000] [--models ...]``.
On a loaded machine the figures swing; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from adlab.catalog import load_model
from adlab.engine.backends.js.node import node_path
from adlab.engine.backends.js.program import emitted

MODELS = ("rosenbrock", "mlp_batched", "ode")
HAND = Path(__file__).resolve().with_name("js_emitted_hand.js")

HARNESS = """
const os = require("os");
const { hand } = require(process.argv[3]);
const cases = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const load = [os.loadavg()[0]];
let sink = 0;  // every result is read, so no loop is optimised away
function loops(fn) {  // calls per repeat: a repeat lasts >= 10 ms
  let k = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < k; i++) sink += fn();
    if (performance.now() - t > 10) return k;
    k *= 2;
  }
}
function warm(fn) {  // >= 200 ms and >= 5 calls
  const t = performance.now();
  for (let i = 0; i < 5 || performance.now() - t < 200; i++) sink += fn();
}
function once(fn, k) {
  const t = performance.now();
  for (let i = 0; i < k; i++) sink += fn();
  return (performance.now() - t) / k;
}
const median = (ts) => ts.sort((a, b) => a - b)[ts.length >> 1] * 1e3;  // microseconds
const rows = [];
for (const c of cases) {
  const prog = (0, eval)(c.source)(c.consts.map((a) => Float64Array.from(a)));
  const ins = c.inputs.map((a) => Float64Array.from(a));
  const h = hand[c.model], t = h.scratch(ins), g = new Float64Array(ins[0].length);
  const [a, b] = ins;  // called as written (a spread call costs more than a small f)
  const emitted = ins.length === 1 ? () => prog(a)[0][0] : () => prog(a, b)[0][0];
  const byHand = c.driver === "grad" ? () => { h.grad(ins, g, t); return g[0]; }
                                     : () => h.f(ins, t);
  // the same values first: the largest difference, relative to the largest value
  const mine = c.driver === "grad" ? (h.grad(ins, g, t), g) : [h.f(ins, t)];
  const theirs = prog(...ins)[0];
  let diff = 0, scale = 0;
  for (let i = 0; i < mine.length; i++) {
    diff = Math.max(diff, Math.abs(mine[i] - theirs[i]));
    scale = Math.max(scale, Math.abs(mine[i]));
  }
  warm(emitted);  // V8 compiles in tiers: the first calls of a long loop run slower
  warm(byHand);
  const ke = loops(emitted), kh = loops(byHand), te = [], th = [];
  for (let r = 0; r < c.repeats; r++) {  // interleaved: a change of load falls on both
    te.push(once(emitted, ke));
    th.push(once(byHand, kh));
  }
  rows.push({ model: c.model, n: c.n, driver: c.driver, emitted: median(te),
              hand: median(th), error: diff / (scale || 1) });
}
load.push(os.loadavg()[0]);
console.log(JSON.stringify({ rows, load, sink: Number.isFinite(sink) }));
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    cases = []
    for name in opts.models.split(","):
        m = load_model(name)
        f = m.function("js")
        for n in sizes:
            args = m.setup(n)
            for driver in ("once", "grad"):
                source, consts, _ = emitted(f, args, 0, driver)
                cases.append({"model": name, "n": n, "driver": driver, "source": source,
                              "consts": [c.tolist() for c in consts], "repeats": opts.repeats,
                              "inputs": [np.ravel(a).tolist() for a in args]})  # fmt: skip
    print(subprocess.check_output(["uptime"], text=True).strip())
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp, "cases.json"), Path(tmp, "harness.js")
        data.write_text(json.dumps(cases))
        script.write_text(HARNESS)
        done = subprocess.run([node_path() or "node", str(script), str(data), str(HAND)],
                              check=True, capture_output=True, text=True)  # fmt: skip
    result = json.loads(done.stdout)
    node = subprocess.check_output([node_path() or "node", "--version"], text=True).strip()
    print(
        f"Node {node}, us per call (median of {opts.repeats} interleaved repeats of "
        f">= 10 ms loops); load average {result['load'][0]:.2f} -> {result['load'][1]:.2f}"
    )
    print(f"{'model':>12} {'n':>6} {'program':>9} {'emitted':>11} {'by hand':>11} {'ratio':>6}")
    for r in result["rows"]:
        # the same values, or the times mean nothing
        assert r["error"] <= 1e-12, f"{r['model']} n={r['n']} {r['driver']}: {r['error']:.2e}"
        what = "f" if r["driver"] == "once" else "gradient"
        print(
            f"{r['model']:>12} {r['n']:>6} {what:>9} {r['emitted']:>11.3f} {r['hand']:>11.3f} "
            f"{r['emitted'] / r['hand']:>5.2f}x"
        )
    print(subprocess.check_output(["uptime"], text=True).strip())


if __name__ == "__main__":
    main()
