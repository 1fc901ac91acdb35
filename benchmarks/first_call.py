"""The first derivative, the first ``adlab demo`` and the first Lab run on a fresh machine.

Issue 31: what a new user waits for. Each measurement is a fresh process. *Cold*: a new
empty ``ADLAB_CACHE_DIR`` (adlab's compiled programs and JAX's persistent compilation
cache both live there), as on a fresh machine; *warm*: a second fresh process on that
same directory, now filled. Goals (2 cores):

- ``adlab.derivative(model, *model.setup(n), mode="reverse", backend=B)`` on PyTorch,
  TensorFlow and autograd: the first call, cold, at most 1 s more than the same call with
  the cross-check off (``check=False``). The call is timed alone: importing adlab and the
  framework, and the model's setup, are before it (and reported apart). JAX's own
  float64 reverse mode is the reference itself: its check is a test of finiteness only.
- ``adlab demo`` (the CLI), whole process, cold and warm.
- The quickstart's Lab, headless (``adlab.Lab()`` with its defaults, no browser, as
  ``tests/lab`` drive it): from Run clicked to the first point applied, and to the end of
  the run. First point within 3 s cold; the whole run cold within 2x its warm time.

    python benchmarks/first_call.py [--models rosenbrock,normal_logpdf,mlp_batched]
        [--backends torch,tensorflow,autograd,jax] [--n 100] [--runs 1] [--skip-lab]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

DERIVATIVE = r"""
import json, sys, time
t0 = time.perf_counter()
import adlab
t1 = time.perf_counter()
model_name, backend, check, n = sys.argv[1], sys.argv[2], sys.argv[3] == "on", int(sys.argv[4])
if backend != "jax":  # the framework's own import, apart from the call
    __import__(backend)
t2 = time.perf_counter()
model = adlab.load_model(model_name)
args = model.setup(n)
t3, c3 = time.perf_counter(), time.process_time()
value, info = adlab.derivative(model, *args, mode="reverse", backend=backend, check=check,
                               full_output=True)
t4, c4 = time.perf_counter(), time.process_time()
print(json.dumps({"import_s": t1 - t0, "framework_s": t2 - t1, "call_s": t4 - t3,
                  "cpu_s": c4 - c3,
                  "trusted": info.trusted, "note": info.note}))
"""

# The quickstart's second cell, adlab.Lab(), and its Run button, without a browser: the
# records are applied on this thread while it waits, as the kernel applies them for the view.
LAB = r"""
import json, time
t0 = time.perf_counter()
import adlab
lab = adlab.Lab()
t1 = time.perf_counter()
lab.run_button.click()
while not lab.results:
    lab.wait(timeout=0.005)
first = time.perf_counter() - t1
lab.wait()
done = time.perf_counter() - t1
print(json.dumps({"open_s": t1 - t0, "first_s": first, "total_s": done,
                  "points": len(lab.results), "status": lab.status_label.value}))
"""

DEMO = "import sys\nfrom adlab.cli import main\nsys.argv = ['adlab', 'demo']\nmain()\n"


def load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # pragma: no cover
        return "?"


def child(code: str, cache: str, *argv: str, cwd: str | None = None) -> tuple[dict, float]:
    """(the JSON the child prints last, or {}; the child's whole wall time)."""
    env = {**os.environ, "ADLAB_CACHE_DIR": cache}
    env.pop("ADLAB_CACHE", None)  # the cache on, as a user has it
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=900)  # fmt: skip
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"child failed ({argv}):\n{out.stderr[-3000:]}")
    lines = out.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]), wall
    except (IndexError, json.JSONDecodeError):
        return {}, wall


def cold_then_warm(code: str, *argv: str, cwd: str | None = None) -> list[tuple[str, str, dict,
                                                                           float]]:  # fmt: skip
    """[(cache, load, result, wall)] for a cold process and a warm one on its cache."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="adlab-first-") as cache:
        for kind in ("cold", "warm"):
            before = load()
            got, wall = child(code, cache, *argv, cwd=cwd)
            rows.append((kind, before, got, wall))
    return rows


def derivatives(models: list[str], backends: list[str], n: int, runs: int) -> None:
    print(f'## `adlab.derivative(model, *model.setup({n}), mode="reverse", backend=B)`')
    print()
    print(
        "| model | backend | run | cache | load (on / off) | call, check on | "
        "call, check off | on - off | CPU on - off | import adlab + framework | "
        "trusted (on / off) |"
    )
    print("|---|---|---:|---|---|---:|---:|---:|---:|---:|---|")
    extra: dict[tuple[str, str], list[float]] = {}
    for model in models:
        for backend in backends:
            for run in range(1, runs + 1):
                # on and off, cold then warm each: a change in load hits both alike
                on = cold_then_warm(DERIVATIVE, model, backend, "on", str(n))
                off = cold_then_warm(DERIVATIVE, model, backend, "off", str(n))
                for (kind, l_on, a, _), (_, l_off, b, _) in zip(on, off, strict=True):
                    gap = a["call_s"] - b["call_s"]
                    extra.setdefault((kind, backend), []).append(gap)
                    # CPU seconds (every thread's) are what a busy machine stretches least
                    cpu = a["cpu_s"] - b["cpu_s"]
                    imports = a["import_s"] + a["framework_s"]
                    print(f"| {model} | {backend} | {run} | {kind} | {l_on} / {l_off} | "
                          f"{a['call_s']:.2f} s | {b['call_s']:.2f} s | {gap:+.2f} s | "
                          f"{cpu:+.2f} s | {imports:.1f} s | "
                          f"{a['trusted']} / {b['trusted']} |")  # fmt: skip
    print()
    for (kind, backend), gaps in sorted(extra.items()):
        goal = " (goal <= +1 s)" if kind == "cold" and backend != "jax" else ""
        print(
            f"- {backend}, {kind}: the check costs {statistics.median(gaps):+.2f} s median, "
            f"{max(gaps):+.2f} s at most{goal}"
        )
    print()


def demo(runs: int) -> None:
    print("## `adlab demo` (the whole process)")
    print()
    print("| run | cache | load | wall |")
    print("|---:|---|---:|---:|")
    for run in range(1, runs + 1):
        for kind, before, _, wall in cold_then_warm(DEMO):
            print(f"| {run} | {kind} | {before} | {wall:.1f} s |")
    print()


def lab(runs: int) -> None:
    print("## The quickstart's Lab, headless (`adlab.Lab()`, Run)")
    print()
    print(
        "| run | cache | load | import + `Lab()` | Run to first point | Run to done | "
        "points | status |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    pairs = []
    for run in range(1, runs + 1):
        with tempfile.TemporaryDirectory(prefix="adlab-lab-") as cwd:  # its saved edits
            rows = cold_then_warm(LAB, cwd=cwd)
        for kind, before, r, _ in rows:
            status = r["status"].split(".")[0]
            print(f"| {run} | {kind} | {before} | {r['open_s']:.1f} s | {r['first_s']:.2f} s | "
                  f"{r['total_s']:.1f} s | {r['points']} | {status} |")  # fmt: skip
        pairs.append((rows[0][2], rows[1][2]))
    print()
    for cold, warm in pairs:
        print(
            f"- first point cold {cold['first_s']:.2f} s (goal <= 3 s); done cold / warm "
            f"{cold['total_s'] / warm['total_s']:.2f}x (goal <= 2x)"
        )
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="rosenbrock,normal_logpdf,mlp_batched")
    ap.add_argument("--backends", default="torch,tensorflow,autograd,jax")
    ap.add_argument("--n", type=int, default=100, help="the models' size (default 100)")
    ap.add_argument("--runs", type=int, default=1, help="cold + warm pairs of each (default 1)")
    ap.add_argument("--skip-lab", action="store_true", help="only the derivatives and demo")
    args = ap.parse_args()
    import platform

    print(f"# first calls: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {load()} at the start")  # fmt: skip
    print()
    derivatives(args.models.split(","), args.backends.split(","), args.n, args.runs)
    demo(args.runs)
    if not args.skip_lab:
        lab(args.runs)


if __name__ == "__main__":
    main()
