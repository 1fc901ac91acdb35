"""Issue 32's goals M1-M5: memory measured on every framework, checkpointing, the sweep.

- M1: ``residual_bytes`` of eager reverse mode (PyTorch, TensorFlow, autograd) on a
  chain of k elementwise steps over n float64 (``x = np.tanh(1.01 * x)``: each step
  keeps one array), against k * n * 8; k = 10, 50 and n = 1e4, 1e6. JAX's and the
  JavaScript backends' are shown beside them.
- M2: ``peak_bytes`` against the process's peak resident memory growth over one call
  (Linux: ``5`` written to ``/proc/self/clear_refs`` resets ``VmHWM``), each in a fresh
  process, at sizes where the derivative holds >= 200 MB. glibc's malloc is held to
  returning large blocks (``MALLOC_MMAP_THRESHOLD_``) and the measured call is the
  first after ``prepare`` (TensorFlow's allocator keeps what it grew).
- M3: checkpointing lstm (GradBench's l = 4, c = 1024) and ode at a large size,
  reverse mode on JAX and PyTorch: peak memory and time against no checkpointing, the
  time in interleaved pairs of calls (``--repeats``), as the machine's load moves both.
- M4: a sweep's wall time with memory measured against without, fresh processes in turn.
- M5: points that would not fit: ``ba`` with a dense Jacobian and ``mlp_per_sample`` at
  large n, in a child process: the skip reasons and the child's peak resident memory.

    python benchmarks/memory.py [--goals m1,m2,m3,m4,m5] [--quick] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

import adlab
from adlab._format import human_bytes

CHAIN = """
K = 10

def setup(n, rng):
    return rng.normal(size=n),

def f(x):
    for _ in range(K):
        x = np.tanh(1.01 * x)
    return np.sum(x)
"""
EAGER = ("torch", "tensorflow", "autograd")
#: a derivative that holds >= 200 MB on NumPy, whose differences go in chunks of points:
#: each evaluation of f makes a temporary of k values (k = 3e7: 240 MB)
WIDE = """
K = 30_000_000

def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=K)

def f(x, d):
    return np.sum(np.tanh(d * x[0] + x[-1]))
"""


def chain(k: int) -> adlab.Model:
    return adlab.Model.from_source(CHAIN, name="chain", K=k)


def wide(k: int) -> adlab.Model:
    return adlab.Model.from_source(WIDE, name="wide", K=k)


def m1(quick: bool) -> None:
    print("M1: residual_bytes of reverse mode on the chain, against k * n * 8 (float64)")
    print(f"{'backend':>10} {'k':>3} {'n':>9} {'residuals':>10} {'k n 8':>10} {'ratio':>6}")
    sizes = (10_000,) if quick else (10_000, 1_000_000)
    for backend in (*EAGER, "jax", "js", "tfjs"):
        for k in (10, 50):
            for n in sizes:
                if backend in ("js", "tfjs") and n > 10_000:
                    continue  # the same count at every n; Node's pipe is slow for 1e6
                x = np.random.default_rng(0).normal(size=n)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p = adlab.prepare(chain(k), x, backend=backend)
                mem = p.memory()
                itemsize = 4 if backend == "tfjs" else 8  # TF.js computes in float32
                want = k * n * itemsize
                got = mem["residual_bytes"]
                print(f"{backend:>10} {k:>3} {n:>9} {human_bytes(got):>10} "
                      f"{human_bytes(want):>10} {got / want:>6.3f}")  # fmt: skip
                del p


CHILD = r"""
import json, os, sys, warnings
warnings.simplefilter("ignore")
import numpy as np, adlab
sys.path.insert(0, os.path.dirname(sys.argv[5]))
import memory
backend, mode, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
model = (memory.wide if backend == "numpy" else memory.chain)(k)
p = adlab.prepare(model, *model.setup(n), mode=mode, backend=backend)

def status(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024

with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
before = status("VmRSS")
out = p(*p.inputs)
if backend == "jax":
    import jax
    jax.block_until_ready(out)
peak = status("VmHWM")
del out
mem = p.memory()
print(json.dumps({"peak_bytes": mem["peak_bytes"], "rss_growth": peak - before,
                  "counter": mem["memory_counter"]}))
"""


def m2(quick: bool) -> None:
    print("M2: peak_bytes against the peak resident memory growth over one call (fresh "
          "processes)")  # fmt: skip
    cases = [("jax", "forward", 10, 6_000), ("torch", "reverse", 30, 1_000_000),
             ("tensorflow", "reverse", 30, 1_000_000), ("autograd", "reverse", 30, 1_000_000),
             ("numpy", "numeric", 30_000_000, 2)]  # fmt: skip
    if quick:
        cases = [(b, m, k // 4, n) if b == "numpy" else (b, m, k, n // 4) for b, m, k, n in cases]
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    print(f"{'backend':>10} {'mode':>8} {'k':>3} {'n':>9} {'peak_bytes':>10} {'RSS growth':>10} "
          f"{'ratio':>6}  counter")  # fmt: skip
    for backend, mode, k, n in cases:
        cmd = [sys.executable, "-c", CHILD, backend, mode, str(k), str(n), __file__]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
        if not line.startswith("{"):
            print(f"{backend:>10} failed: {out.stderr[-300:]}")
            continue
        r = json.loads(line)
        ratio = r["peak_bytes"] / r["rss_growth"] if r["rss_growth"] else float("inf")
        print(f"{backend:>10} {mode:>8} {k:>3} {n:>9} {human_bytes(r['peak_bytes']):>10} "
              f"{human_bytes(r['rss_growth']):>10} {ratio:>6.3f}  "
              f"{r['counter'].split(';')[0]}")  # fmt: skip


def _pairs(plain: adlab.Prepared, other: adlab.Prepared, repeats: int) -> list[float]:
    """``other``'s time over ``plain``'s, per pair of calls made one after the other (the
    order swapped every round), so that both calls of a pair meet the same load."""
    from adlab.measure.timing import awaited_call

    ratios = []
    for i in range(repeats):
        first, second = (plain, other) if i % 2 == 0 else (other, plain)
        a, _ = awaited_call(first, first.inputs)
        b, _ = awaited_call(second, second.inputs)
        ratios.append(b / a if first is plain else a / b)
    return ratios


def m3(quick: bool, repeats: int = 7) -> None:
    print(f"M3: checkpointing, reverse mode: peak memory against none (each call's "
          f"counter), time in {repeats} interleaved pairs (the ratio's median, range)")  # fmt: skip
    cases = [("lstm", {"LAYERS": 4}, 256 if quick else 1024),
             ("ode", {"S": 100 if quick else 1000}, 1000 if quick else 10_000)]  # fmt: skip
    for name, settings, n in cases:
        model = adlab.load_model(name, **settings)
        args = model.setup(n)
        for backend in ("jax", "torch"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                plain = adlab.prepare(model, *args, mode="reverse", backend=backend)
                base = plain.memory()["peak_bytes"]
                print(f"  {name} {settings} n={n} on {backend}: none {human_bytes(base)} peak")
                for ck in (True, "sqrt"):
                    p = adlab.prepare(model, *args, mode="reverse", backend=backend,
                                      checkpoint=ck)  # fmt: skip
                    peak = p.memory()["peak_bytes"]
                    load = os.getloadavg()[0]
                    ratios = _pairs(plain, p, repeats)
                    print(f"    checkpoint={ck}: {human_bytes(peak)} peak ({base / peak:.1f}x "
                          f"less), {statistics.median(ratios):.2f}x the time (range "
                          f"{min(ratios):.2f}-{max(ratios):.2f}; load {load:.1f}-"
                          f"{os.getloadavg()[0]:.1f})")  # fmt: skip


SWEEP_MODES = ["forward", "reverse", "numeric[central]", "complex-step", "reverse(torch)",
               "reverse(tensorflow)", "reverse(autograd)"]  # fmt: skip
SWEEP = r"""
import sys, time, warnings
warnings.simplefilter("ignore")
import adlab
memory = sys.argv[1] == "on"
sys.path.insert(0, sys.argv[2])
from memory import SWEEP_MODES as modes
t = time.perf_counter()
list(adlab.bench("rosenbrock", [1, 10, 100, 1000], modes, memory=memory, warn=False))
print(time.perf_counter() - t)
"""


def m4(quick: bool) -> None:
    print("M4: a sweep's wall time with memory measured against without (fresh processes, "
          "in turn, each after a warm-up of adlab's cache)")  # fmt: skip
    here = os.path.dirname(os.path.abspath(__file__))
    run = lambda on: float(subprocess.run([sys.executable, "-c", SWEEP, on, here],  # noqa: E731
                                          capture_output=True, text=True,
                                          check=True).stdout.split()[-1])  # fmt: skip
    run("on")  # adlab's compiled programs cached: both arms load them alike
    pairs = 2 if quick else 4
    walls: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(pairs):
        for arm in ("on", "off") if i % 2 == 0 else ("off", "on"):
            walls[arm].append(run(arm))
    on, off = statistics.median(walls["on"]), statistics.median(walls["off"])
    print(f"  with memory {on:.1f} s (runs {', '.join(f'{w:.1f}' for w in walls['on'])}); "
          f"without {off:.1f} s (runs {', '.join(f'{w:.1f}' for w in walls['off'])}); "
          f"ratio {on / off:.3f}")  # fmt: skip
    # the walls swing with the machine's load more than memory adds: the seconds spent
    # measuring it, clocked inside the same sweep, say what it adds
    from adlab.engine.prepared import Prepared

    measure, spent = Prepared.memory, []

    def clocked(self):
        start = time.perf_counter()
        try:
            return measure(self)
        finally:
            spent.append(time.perf_counter() - start)

    Prepared.memory = clocked
    try:
        for _ in range(2):  # the first loads what this process has not yet
            spent.clear()
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                list(adlab.bench("rosenbrock", [1, 10, 100, 1000], SWEEP_MODES, warn=False))
            wall = time.perf_counter() - start
            print(f"  in one process: {sum(spent):.2f} s of a {wall:.1f} s sweep measuring "
                  f"memory ({len(spent)} points): {wall / (wall - sum(spent)):.3f}x")  # fmt: skip
    finally:
        Prepared.memory = measure


M5_SWEEP = r"""
import json, resource, sys, warnings
warnings.simplefilter("ignore")
import adlab
model, sizes, modes = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3]
for r in adlab.bench(model, sizes, modes.split(";"), budget_s=120, repeats=3, reference=None,
                     warn=False):
    print(json.dumps({"label": r.label, "n": r.n, "peak": r.peak_bytes, "skipped": r.skipped}),
          flush=True)
print(json.dumps({"maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def m5(quick: bool) -> None:
    print("M5: points that would not fit, in a child process")
    cases = [("ba", "100,300,1000,3000,10000", "forward;reverse"),
             ("mlp_per_sample", "10000,100000,1000000", "reverse")]  # fmt: skip
    if quick:
        cases = [("ba", "100,300,1000,3000", "reverse")]
    for model, sizes, modes in cases:
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", M5_SWEEP, model, sizes, modes],
                             capture_output=True, text=True)  # fmt: skip
        rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        killed = out.returncode < 0
        print(f"  {model} ({modes}) sizes {sizes}: exit {out.returncode}"
              f"{' (killed)' if killed else ''}, {time.perf_counter() - start:.0f} s")  # fmt: skip
        for r in rows:
            if "maxrss" in r:
                print(f"    the child's peak resident memory: {human_bytes(r['maxrss'])}")
            elif r["label"] != "primal":
                what = f"skipped: {r['skipped']}" if r["skipped"] else human_bytes(r["peak"])
                print(f"    {r['label']} n={r['n']}: {what}")
    mem = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(f"  largest child: {human_bytes(mem)}")


GOALS = {"m1": m1, "m2": m2, "m3": m3, "m4": m4, "m5": m5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goals", default="m1,m2,m3,m4,m5")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, to try the script")
    ap.add_argument("--repeats", type=int, default=7, help="M3's interleaved pairs of calls")
    a = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M')} adlab {adlab.__version__}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for goal in a.goals.split(","):
        goal = goal.strip()
        if goal == "m3":
            m3(a.quick, a.repeats)
        else:
            GOALS[goal](a.quick)


if __name__ == "__main__":
    main()
