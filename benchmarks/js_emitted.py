"""The emitted JavaScript against the same function written by hand, timed inside Node.

Issue 25's goals for ``backend="js"``: the emitted primal within 1.5x of f written
by hand in JavaScript, the emitted gradient (the program of ``jax.grad(f)``) within
3x of a hand-written gradient. Both are timed by Node itself (``performance.now()``
around loops lasting ~20 ms, the median of 7 repeats), so the pipe from Python
does not count: this is the arithmetic. Rosenbrock is the model (its hand-written
f and gradient below are the textbook loops).

Run: ``python benchmarks/js_emitted.py [--sizes 10,100,1000]``. On a loaded machine
the figures swing; compare ratios from one run.
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

HAND = """
function handF(x) {
  let s = 0;
  for (let i = 0; i < x.length - 1; i++) {
    const a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    s += 100 * a * a + b * b;
  }
  return s;
}
function handGrad(x, g) {
  g.fill(0);
  for (let i = 0; i < x.length - 1; i++) {
    const a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    g[i + 1] += 200 * a;
    g[i] += -400 * a * x[i] - 2 * b;
  }
  return g;
}
"""

HARNESS = (
    HAND
    + """
const cases = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
let sink = 0;  // every result is read, so no loop is optimised away
function time(fn) {
  let loops = 1;
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < loops; i++) sink += fn()[0];
    if (performance.now() - t > 20) break;
    loops *= 2;
  }
  const ts = [];
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    for (let i = 0; i < loops; i++) sink += fn()[0];
    ts.push((performance.now() - t) / loops);
  }
  return ts.sort((a, b) => a - b)[3] * 1e3;  // microseconds
}
const rows = [];
for (const c of cases) {
  const prog = (0, eval)(c.source)(c.consts.map((a) => Float64Array.from(a)));
  const ins = c.inputs.map((a) => Float64Array.from(a));
  const x = ins[0], g = new Float64Array(x.length), one = new Float64Array(1);
  const hand = c.driver === "grad" ? () => handGrad(x, g)
                                   : () => { one[0] = handF(x); return one; };
  const emitted = time(() => prog(...ins)[0]);
  rows.push({ n: c.n, driver: c.driver, emitted, hand: time(hand) });
}
console.log(JSON.stringify({ rows, sink: Number.isFinite(sink) }));
"""
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    m = load_model("rosenbrock")
    f = m.function("js")
    cases = []
    for n in sizes:
        args = m.setup(n)
        for driver in ("once", "grad"):
            source, consts, _ = emitted(f, args, 0, driver)
            cases.append({"n": n, "driver": driver, "source": source,
                          "consts": [c.tolist() for c in consts],
                          "inputs": [np.ravel(a).tolist() for a in args]})  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp, "cases.json"), Path(tmp, "harness.js")
        data.write_text(json.dumps(cases))
        script.write_text(HARNESS)
        done = subprocess.run([node_path() or "node", str(script), str(data)], check=True,
                              capture_output=True, text=True)  # fmt: skip
    rows = json.loads(done.stdout)["rows"]
    print(
        f"rosenbrock in Node {subprocess.check_output(['node', '--version'], text=True).strip()}"
        " (us per call, median of 7 repeats of ~20 ms loops)"
    )
    print(f"{'n':>6} {'program':>10} {'emitted':>10} {'by hand':>10} {'ratio':>7}")
    for r in rows:
        what = "f" if r["driver"] == "once" else "gradient"
        print(
            f"{r['n']:>6} {what:>10} {r['emitted']:>10.3f} {r['hand']:>10.3f} "
            f"{r['emitted'] / r['hand']:>6.1f}x"
        )


if __name__ == "__main__":
    main()
