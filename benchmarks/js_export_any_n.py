"""An exported module that takes any n against one built for its n, timed inside Node.

Where JAX traces the model at a symbolic n, ``adlab export`` writes one module for every n:
its sizes are expressions of n, its buffers made at the first call at an n. This script
exports each model twice at each n (``fixed=True``: the sizes written in as numbers;
default: any n), checks in Node that both give the same gradient, and times ``grad`` of
both in one Node, interleaved (``performance.now()`` around loops of >= 20 ms after 200
calls of warm-up; three repeats each, the median): the cost of the sizes being variables.

Run: ``python benchmarks/js_export_any_n.py [--models rosenbrock,g9_graphics]
[--sizes 10,100,1000]``. Compare the ratios of one run: the machine's load swings the
times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

import jax
import numpy as np

import adlab
from adlab.engine.backends.js.node import node_path

MODELS = ("rosenbrock", "g9_graphics", "mlp_batched", "ode")

HARNESS = """
import fs from "fs";
const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let sink = 0;  // every result is read, so no loop is optimised away
function time(fn, a) {  // microseconds a call: a loop of >= 20 ms
  for (let k = 0; k < 200; k++) sink += fn(...a)[0];
  for (let reps = 1; ; reps *= 2) {
    const t = performance.now();
    for (let k = 0; k < reps; k++) sink += fn(...a)[0];
    const took = performance.now() - t;
    if (took > 20) return (took / reps) * 1e3;
  }
}
const median = (ts) => ts.sort((p, q) => p - q)[ts.length >> 1];
const rows = [];
for (const [key, leaves] of Object.entries(cases)) {
  const a = leaves.map((l) => Float64Array.from(l));
  const fixed = await import(`./${key}_fixed.mjs`), any = await import(`./${key}_any.mjs`);
  const g1 = fixed.grad(...a), g2 = any.grad(...a);
  const same = g1.every((v, i) => v === g2[i]);
  const t = { fixed: [], any: [] };
  for (let r = 0; r < 3; r++) { t.fixed.push(time(fixed.grad, a)); t.any.push(time(any.grad, a)); }
  rows.push({ key, same, fixed: median(t.fixed), any: median(t.any) });
}
console.log(JSON.stringify({ rows, sink }));
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--sizes", default="10,100,1000")
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="adlab-any-n-") as tmp:
        d = Path(tmp)
        cases = {}
        for name in a.models.split(","):
            for n in sizes:
                key = f"{name}_{n}"
                for fixed in (True, False):
                    source = adlab.export_js(name, n=n, fixed=fixed)
                    if not fixed and "// Any size" not in source:
                        raise SystemExit(f"{name} is not exported for any n: see its header")
                    (d / f"{key}_{'fixed' if fixed else 'any'}.mjs").write_text(source)
                args = adlab.load_model(name).setup(n)
                cases[key] = [np.ravel(x).tolist() for x in jax.tree_util.tree_leaves(args)]
        (d / "cases.json").write_text(json.dumps(cases))
        (d / "run.mjs").write_text(HARNESS)
        load = os.getloadavg()[0]
        done = subprocess.run([node_path(), "run.mjs", "cases.json"], cwd=d, check=True,
                              capture_output=True, text=True)  # fmt: skip
    rows = json.loads(done.stdout)["rows"]
    print(f"grad of a module for any n / one built for its n, in Node; load {load:.1f} at the "
          f"start, {os.getloadavg()[0]:.1f} at the end\n")  # fmt: skip
    print("| model | n | built for n | any n | any / built | same gradient |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        name, n = r["key"].rsplit("_", 1)
        print(f"| {name} | {n} | {r['fixed']:.2f} us | {r['any']:.2f} us | "
              f"{r['any'] / r['fixed']:.2f}x | {'yes' if r['same'] else 'NO'} |")  # fmt: skip


if __name__ == "__main__":
    main()
