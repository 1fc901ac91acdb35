"""How long the default sweep takes, and how soon its first record arrives.

The default sweep: ``adlab.bench("normal_logpdf")``, 5 modes (forward,
reverse, numeric[central], numeric[richardson], complex-step) x 7 sizes
(1, 3, 10, 30, 100, 300, 1000), plus the primal at each size: 42 records,
every compile included (each point is compiled afresh), with the reference
(float64 reverse, checked against forward) at each size and the dispatch
floor. Goal on a 2-core machine: <= 10 s in all, first record within 1 s.

Each run is a fresh process, so JAX's caches start cold as a user's would;
the time to import adlab is reported apart.

    python benchmarks/sweep_time.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, time
t0 = time.perf_counter()
import adlab
t1 = time.perf_counter()
sweep = adlab.bench("normal_logpdf")
first = None
compile_s = 0.0
for r in sweep:
    if first is None:
        first = time.perf_counter() - t1
    compile_s += r.compile_s or 0.0
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_s": first, "total_s": t2 - t1,
                  "records": len(sweep.records), "compile_s": compile_s,
                  "skipped": sum(r.skipped is not None for r in sweep.records),
                  "env": sweep.records[0].env}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                             check=True)  # fmt: skip
        runs.append(json.loads(out.stdout))
    env = runs[0]["env"]
    print(f"# {env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs), jax {env['jax']}")
    print("| run | import adlab | first record | whole sweep | of which compiling | records |")
    print("|---:|---:|---:|---:|---:|---:|")
    for i, r in enumerate(runs, 1):
        print(f"| {i} | {r['import_s']:.2f} s | {r['first_s']:.2f} s | {r['total_s']:.1f} s | "
              f"{r['compile_s']:.1f} s | {r['records']} ({r['skipped']} skipped) |")  # fmt: skip
    total = statistics.median(r["total_s"] for r in runs)
    first = statistics.median(r["first_s"] for r in runs)
    print(f"\nmedian: whole sweep {total:.1f} s (goal <= 10 s), first record {first:.2f} s "
          f"(goal <= 1 s)")  # fmt: skip


if __name__ == "__main__":
    main()
