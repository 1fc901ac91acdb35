"""``backend="js"`` on models with loops: reverse / primal, and against JAX's jitted reverse.

ode (``fori_loop`` of RK4 steps), lstm (``scan`` over the characters) and particle
(``fori_loop`` of Euler steps with a ``grad`` inside each: reverse over reverse) at the
sizes GradBench's evals use (``gradbench_matrix.py``'s: ode n = 1000 with S = 10, lstm
2 layers and c = 1024 characters, particle n = 1 at w = 0; the catalog's settings, f as
the catalog defines it: ode's f is y(2)'s last component, the one the eval differentiates).
The goal: reverse(js) / primal(js) <= 4.

Two timings of each prepared program, interleaved (each round times every program in turn),
the median over ``--rounds`` rounds of each round's median, after ``WARMUP`` calls of each js
program (V8 optimises lstm's reverse program only after about 20 calls: 60-90 ms each before,
3-5 ms after, a plateau that ``time_call``'s own warm-up would take for steady):

- from Python: ``adlab.time_call`` on ``adlab.prepare(model, *args, mode=..., backend=...)``
  (for js a call goes through the pipe to Node and back), beside JAX's jitted
  ``prepare(..., backend="jax", jit=True)``;
- in Node: the js programs timed where they run, by their ``Prepared.timer`` (``timing.js``:
  ``performance.now()`` around loops of about 20 ms, as a sweep times JavaScript; the
  arithmetic, without the pipe), the ratio to JAX's reverse timed from Python.

Run: ``python benchmarks/js_loops.py [--models ode,lstm,particle] [--rounds 5]``; the load
average (``os.getloadavg``) is printed before and after. About a minute at load 5.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess

from adlab import load_model, prepare, time_call
from adlab.engine.backends.js.node import node_path

#: GradBench's sizes (``benchmarks/gradbench_matrix.py``'s SIZES): the model's n
SIZES = {"ode": 1000, "lstm": 1024, "particle": 1}

#: calls before any timing: V8 optimises lstm's reverse program after about 20 calls of
#: 60-90 ms (then 3-5 ms), a plateau ``time_call``'s warm-up takes for steady
WARMUP = 40

PROGRAMS = (("js", "primal"), ("js", "reverse"), ("jax", "reverse"), ("jax", "primal"))


def measured(models: list[str], rounds: int) -> tuple[dict, dict]:
    """Per (model, backend, mode), seconds a call timed from Python (``time_call``), and for
    js, in Node (``Prepared.timer``): each the median over rounds of a round's median."""
    prepared, python, node = {}, {}, {}
    for name in models:
        m = load_model(name)
        args = m.setup(SIZES[name])
        for backend, mode in PROGRAMS:
            jit = True if backend == "jax" else None
            p = prepare(m, *args, mode=mode, backend=backend, jit=jit)
            p(*args)  # the first call: the program built (and, for js, loaded in Node)
            for _ in range(WARMUP if backend == "js" else 0):
                p(*args)
            prepared[name, backend, mode] = (p, args)
            python[name, backend, mode], node[name, backend, mode] = [], []
    started = set()
    for _ in range(rounds):
        for key, (p, args) in prepared.items():
            python[key].append(time_call(p, args, repeats=3, target_s=0.02).median_s)
            timer = getattr(p, "timer", None)
            if timer is not None:
                p(*args)  # the timer times its program at the inputs of the last call
                if key not in started:
                    timer.start(target_s=0.02)
                    started.add(key)
                node[key].append(statistics.median(timer.repeats(3)))

    def med(d: dict) -> dict:
        return {k: statistics.median(v) for k, v in d.items() if v}

    return med(python), med(node)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="ode,lstm,particle")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    models = args.models.split(",")
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    python, node = measured(models, args.rounds)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    version = subprocess.check_output([node_path() or "node", "--version"], text=True).strip()
    print(f"medians of {args.rounds} interleaved rounds; from Python: time_call (through the "
          f"pipe for js), in Node {version}: Prepared.timer")  # fmt: skip
    print(f"{'model':>9} {'size':>5} | {'js primal':>10} {'js rev':>10} {'rev/pr':>7} "
          f"{'jax rev':>10} {'js/jax':>7} {'jax r/p':>7} | {'node f':>9} {'node rev':>9} "
          f"{'rev/pr':>7} {'/jax':>6}")  # fmt: skip
    for name in models:
        jp, jr = python[name, "js", "primal"], python[name, "js", "reverse"]
        xr, xp = python[name, "jax", "reverse"], python[name, "jax", "primal"]
        nf, nr = node[name, "js", "primal"], node[name, "js", "reverse"]
        print(f"{name:>9} {SIZES[name]:>5} | {us(jp):>10} {us(jr):>10} {jr / jp:>6.1f}x "
              f"{us(xr):>10} {jr / xr:>6.1f}x {xr / xp:>6.1f}x | {us(nf):>9} {us(nr):>9} "
              f"{nr / nf:>6.1f}x {nr / xr:>5.1f}x")  # fmt: skip


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} us"


if __name__ == "__main__":
    main()
