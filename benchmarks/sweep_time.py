"""How long the default sweep takes, cold and warm, how soon its first record arrives, and
where the time goes.

The default sweep: ``adlab.bench("normal_logpdf")``, 5 modes (forward,
reverse, numeric[central], numeric[richardson], complex-step) x 7 sizes
(1, 3, 10, 30, 100, 300, 1000), plus the primal at each size: 42 records,
with the reference (float64 reverse, checked against forward) at each size,
the dispatch floor beside each size and the machine's noise before the first.

Each run is a fresh process. A *cold* run starts with an empty compilation
cache (a new ``ADLAB_CACHE_DIR``): every program is compiled, as on a user's
first run. The *warm* run after it is a second fresh process on the same
cache: the programs are loaded from disk instead (``adlab.engine.backends.jax.disk_cache``).
Goals on a 2-core machine (issue 13): at most 6 s cold and 2 s warm for the
whole sweep, the first record within 1 s. The time to import adlab is
reported apart. The Lab's first point is timed the same way, cold and warm, in a
fresh process: its state with its defaults, from ``run()`` until the first record
is applied.

A point takes at least 5 repeats of about 2 ms (``sweep.TARGET_S``; ``--target-s``),
more (to 15) until its median's interval is within 10% (``adlab.measure.intervals``);
the table says how many it took.

Where the time goes, per run (seconds, each counted once, in the outermost
of these it falls in): the noise check (the floor's repeats after the first
size's, to 9), ``prepare`` (tracing, lowering and XLA's compile or the
cache's load, the derivatives of a size two at a time; "of which XLA" is XLA's compile
alone, summed over both threads (so it can exceed prepare): JAX's cache loads inside it,
adlab's own cache skips it), warm-up calls and
autorange, the timed repeats (the floor's beside them included), and the
rest (setup, references' arithmetic, records).

    python benchmarks/sweep_time.py [--runs 3] [--no-cache] [--target-s 0.002]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import adlab
t1 = time.perf_counter()
import jax
from adlab.engine import derivative
from adlab.measure import floor, preparing, sweep, timing

spent = {"noise check": 0.0, "prepare": 0.0, "warm-up + autorange": 0.0, "timed repeats": 0.0}
xla = [0.0]
active = []

def outermost(owner, name, phase):
    # time a function into a phase, unless a phase is already being timed
    f = getattr(owner, name)
    def timed(*a, **k):
        if active:
            return f(*a, **k)
        active.append(phase)
        s = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[phase] += time.perf_counter() - s
            active.pop()
    setattr(owner, name, timed)

outermost(sweep, "machine_noise", "noise check")
outermost(derivative, "prepare", "prepare")  # the floor's (imported when first called)
for name in ("compile_all", "compile", "prepare"):  # a size's, one's, the references'
    outermost(preparing.Preparing, name, "prepare")
outermost(timing.Stopwatch, "start", "warm-up + autorange")
outermost(timing.Stopwatch, "repeat", "timed repeats")
compile_ = jax.stages.Lowered.compile
def compile_timed(self, *a, **k):
    s = time.perf_counter()
    try:
        return compile_(self, *a, **k)
    finally:
        xla[0] += time.perf_counter() - s
jax.stages.Lowered.compile = compile_timed

t_start = time.perf_counter()
target = {"target_s": float(sys.argv[1])} if len(sys.argv) > 1 else {}
sweep_ = adlab.bench("normal_logpdf", warn=False, **target)
first = None
for r in sweep_:
    if first is None:
        first = time.perf_counter() - t_start
t2 = time.perf_counter()
from adlab.engine.backends.jax.disk_cache import use_cache
print(json.dumps({"import_s": t1 - t0, "first_s": first, "total_s": t2 - t_start,
                  "records": len(sweep_.records), "spent": spent, "xla_s": xla[0],
                  "skipped": sum(r.skipped is not None for r in sweep_.records),
                  "loaded": sum(bool(r.compile_loaded) for r in sweep_.records),
                  "repeats": [r.repeats for r in sweep_.records if r.repeats],
                  "cache": use_cache(), "env": sweep_.records[0].env}))
"""


# The Lab's first point: a LabState with its defaults (the quickstart's Lab without its
# widgets), from run() until the first record is applied on this thread, as the view's.
LAB = r"""
import json, time
from adlab.lab.state import LabState
lab = LabState(steps=False)
t0 = time.perf_counter()
lab.run()
while not lab.results:
    lab.wait(timeout=0.005)
first = time.perf_counter() - t0
lab.wait()
print(json.dumps({"first_s": first, "total_s": time.perf_counter() - t0,
                  "points": len(lab.results)}))
"""


def child(cache_dir: str | None, code: str = CHILD, *argv: str) -> dict:
    env = dict(os.environ)
    if cache_dir is None:
        env["ADLAB_CACHE"] = "0"
    else:
        env["ADLAB_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         check=True, env=env)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def repeats_text(repeats: list[int]) -> str:
    """How the stopping rule went: the median count of repeats a point took, and how
    many points ran to the cap (their interval stayed wide: a noisy machine)."""
    from adlab.measure.intervals import MAX_REPEATS

    capped = sum(k >= MAX_REPEATS for k in repeats)
    return f"{statistics.median(repeats):g} ({capped} at {MAX_REPEATS})" if repeats else "-"


def load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # pragma: no cover
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="cold + warm pairs (default 3)")
    ap.add_argument("--no-cache", action="store_true",
                    help="no compilation cache: every run compiles")  # fmt: skip
    ap.add_argument("--target-s", type=float, default=None,
                    help="seconds per repeat in the sweep (default: adlab's, "
                         "measure.sweep.TARGET_S); the Lab keeps adlab's")  # fmt: skip
    args = ap.parse_args()
    argv = [] if args.target_s is None else [str(args.target_s)]
    runs, labs = [], []
    for i in range(args.runs):
        kinds = ["no cache"] if args.no_cache else ["cold", "warm"]
        with tempfile.TemporaryDirectory(prefix="adlab-cache-") as tmp:
            for kind in kinds:
                before = load()
                r = child(None if args.no_cache else tmp, CHILD, *argv)
                runs.append({**r, "kind": kind, "run": i + 1, "load": before})
        with tempfile.TemporaryDirectory(prefix="adlab-cache-") as tmp:
            for kind in kinds:
                before = load()
                r = child(None if args.no_cache else tmp, LAB)
                labs.append({**r, "kind": kind, "run": i + 1, "load": before})
    env = runs[0]["env"]
    print(f"# {env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs), jax {env['jax']}")
    phases = list(runs[0]["spent"])
    print("| run | cache | load | import adlab | first record | whole sweep | "
          + " | ".join(phases)
          + " | of which XLA | other | records | repeats a point |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|" + "---:|" * (len(phases) + 4))
    for r in runs:
        other = r["total_s"] - sum(r["spent"].values())
        cells = " | ".join(f"{r['spent'][p]:.2f} s" for p in phases)
        print(f"| {r['run']} | {r['kind']} | {r['load']} | {r['import_s']:.2f} s | "
              f"{r['first_s']:.2f} s | {r['total_s']:.1f} s | {cells} | {r['xla_s']:.2f} s | "
              f"{other:.2f} s | {r['records']} ({r['skipped']} skipped, "
              f"{r['loaded']} loaded) | {repeats_text(r['repeats'])} |")  # fmt: skip
    print()
    print("| run | cache | load | Lab's first point | Lab's whole run | points |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in labs:
        print(f"| {r['run']} | {r['kind']} | {r['load']} | {r['first_s']:.2f} s | "
              f"{r['total_s']:.1f} s | {r['points']} |")  # fmt: skip
    print()
    for kind, goal in (("cold", 6.0), ("warm", 2.0), ("no cache", None)):
        got = [r for r in runs if r["kind"] == kind]
        if got:
            total = statistics.median(r["total_s"] for r in got)
            first = statistics.median(r["first_s"] for r in got)
            aim = f" (goal <= {goal:g} s)" if goal else ""
            lab = statistics.median(r["first_s"] for r in labs if r["kind"] == kind)
            print(f"median {kind}: whole sweep {total:.1f} s{aim}, first record {first:.2f} s, "
                  f"Lab's first point {lab:.2f} s (goal <= 1 s)")  # fmt: skip


if __name__ == "__main__":
    main()
