"""How much does adlab's engine add on top of JAX itself?

A ``prepare``d reverse-mode gradient, called as ``p(x)``, against raw
``jax.jit(jax.grad(f))`` closed over the same data on the device, on
``normal_logpdf`` in float64 at n = 1, 10 and 100. ``x`` is the device array
``p.inputs[0]`` for both, and both wait with ``block_until_ready``. The raw
one runs inside ``with jax.enable_x64(True):``, as a user would write it; adlab
is called outside any x64 context and sets the precision itself on each call.
Per-call times come from ``timeit`` (loops chosen by ``autorange``), several
repeats interleaved (and alternated in order) so that drift in machine load
hits both alike; we report medians. The goal is a median of paired ratios <= 1.10,
with ``x`` the same device array each call and with a new one each call (a pool of
64 float64 device arrays taken in turn, the same for both: an optimizer's loop).

For context, more columns per size (timed in the same rounds):
``p(*p.inputs)``, the call a sweep times (every argument, the bound ones
recognised as such); raw jit with every argument passed as a device array;
the raw closure made per-call with the public ``jax.enable_x64`` context; and
the floor of any Python object's call: the compiled program's own C++ call
that ``p`` makes (``p._call``), bare and inside a one-line Python ``__call__``
(``return self.call(x)``), each as a median of ratios paired with the raw call.
The one-line ``__call__`` is the least a Python class can do per call; ``p``
adds to it only its checks for rebinding and for a refused ``x``.

A second table, data rebound each call: ``p(x, *data)`` with new host NumPy
arrays of the prepared shapes (a minibatch each step) against the same
gradient as a user writes it, ``jax.jit(jax.grad(f))(x, *data)``, given the
same NumPy arrays, on ``normal_logpdf`` (x and a dict of data) and
``logistic_regression`` (x, X and y), at n = 10 and 1000, interleaved as above.
The goal is a median of paired ratios <= 1.2.

Run: ``python benchmarks/engine_overhead.py [--repeats 21] [--clock cpu] [--table both]``.
Prints markdown tables. On a machine shared with other work, ``--clock cpu``
(this process's CPU time, ``time.process_time``) is far steadier than wall time.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import statistics
import time
import timeit

import call_path  # beside this script: run as python benchmarks/NAME.py
import jax
import numpy as np

import adlab


def per_call(timer: timeit.Timer, loops: int, x64: bool = False) -> float:
    """Seconds per call; ``x64``: inside ``jax.enable_x64(True)`` (the raw side)."""
    if x64:
        with jax.enable_x64(True):
            return timer.timeit(loops) / loops
    return timer.timeit(loops) / loops


def measure(n: int, repeats: int, clock=time.perf_counter) -> dict[str, float]:
    model = adlab.load_model("normal_logpdf")
    theta, data = model.setup(n)

    # adlab, as a user calls it: no context, precision set per call by adlab
    p = adlab.prepare(model, theta, data, mode="reverse", precision="float64")
    x = p.inputs[0]  # float64, on the device
    engine = timeit.Timer(lambda: p(x).block_until_ready(), timer=clock)
    swept = timeit.Timer(lambda: p(*p.inputs).block_until_ready(), timer=clock)
    # a new device array each call, as an optimizer's loop hands over its next iterate
    with jax.enable_x64(True):
        pool = [x + 0.0 for _ in range(64)]
    turn = itertools.cycle(pool).__next__
    fresh = timeit.Timer(lambda: p(turn()).block_until_ready(), timer=clock)

    # raw JAX, as a user writes it: the same f bound to jax.numpy, x64 on,
    # the data put on the device once and closed over
    f = model.function("jax")
    with jax.enable_x64(True):
        data_dev = jax.device_put(data)
        raw_grad = jax.jit(jax.grad(lambda t: f(t, data_dev)))
        raw = timeit.Timer(lambda: raw_grad(x).block_until_ready(), timer=clock)
        raw_fresh = timeit.Timer(lambda: raw_grad(turn()).block_until_ready(), timer=clock)
        all_grad = jax.jit(jax.grad(f))
        raw_all = timeit.Timer(lambda: all_grad(x, data_dev).block_until_ready(), timer=clock)
        raw.timeit(3)  # compile and warm up
        raw_all.timeit(3)
        loops, _ = raw.autorange()
        want = np.asarray(raw_grad(x))
    # sanity: the two compute the same float64 gradient, adlab's outside any x64 context
    got = p(x)
    assert got.dtype == np.float64 and np.max(np.abs(np.asarray(got) - want)) <= 1e-12
    engine.timeit(3)
    swept.timeit(3)
    fresh.timeit(3)
    with jax.enable_x64(True):
        raw_fresh.timeit(3)

    def raw_scoped():
        with jax.enable_x64(True):
            return raw_grad(x).block_until_ready()

    scoped = timeit.Timer(raw_scoped, timer=clock)

    class OneLine:  # the least a Python class's __call__ can do
        def __init__(self, call):
            self.call = call

        def __call__(self, x):
            return self.call(x)

    bare, framed = p._call, OneLine(p._call)
    cpp = timeit.Timer(lambda: bare(x).block_until_ready(), timer=clock)
    frame = timeit.Timer(lambda: framed(x).block_until_ready(), timer=clock)

    names = ("engine", "raw", "fresh", "raw_fresh", "swept", "all", "scoped", "cpp", "frame")
    times: dict[str, list[float]] = {k: [] for k in names}
    ratios, fresh_ratios = [], []
    for r in range(repeats):
        if r % 2 == 0:  # alternate who goes first
            e, w = per_call(engine, loops), per_call(raw, loops, x64=True)
            fe, fw = per_call(fresh, loops), per_call(raw_fresh, loops, x64=True)
        else:
            w, e = per_call(raw, loops, x64=True), per_call(engine, loops)
            fw, fe = per_call(raw_fresh, loops, x64=True), per_call(fresh, loops)
        times["engine"].append(e)
        times["raw"].append(w)
        times["fresh"].append(fe)
        times["raw_fresh"].append(fw)
        ratios.append(e / w)
        fresh_ratios.append(fe / fw)
        times["swept"].append(per_call(swept, loops))
        times["all"].append(per_call(raw_all, loops, x64=True))
        times["scoped"].append(per_call(scoped, loops))
        times["cpp"].append(per_call(cpp, loops))
        times["frame"].append(per_call(frame, loops))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "n": n,
        "loops": loops,
        **{f"{k}_us": v * 1e6 for k, v in med.items()},
        "ratio_of_medians": med["engine"] / med["raw"],
        "median_ratio": statistics.median(ratios),
        "fresh_ratio": statistics.median(fresh_ratios),
        "ratio_of_minima": min(times["engine"]) / min(times["raw"]),
        "q1_ratio": statistics.quantiles(ratios, n=4)[0],
        "q3_ratio": statistics.quantiles(ratios, n=4)[2],
        # the same rounds' raw time as the denominator: drift hits both alike
        **{f"{k}_ratio": _paired(times[k], times["raw"]) for k in ("cpp", "frame")},
    }


#: (model, n, precision) rows of the second table
REBOUND = [
    ("normal_logpdf", 10, "float64"),
    ("normal_logpdf", 1000, "float64"),
    ("normal_logpdf", 10, "float32"),
    ("normal_logpdf", 1000, "float32"),
    ("logistic_regression", 10, "float64"),
    ("logistic_regression", 1000, "float64"),
]


def measure_rebound(name: str, n: int, precision: str, repeats: int, clock=time.perf_counter):
    """``p(x, *data)``, data new host arrays each call, vs raw jit given the same arrays."""
    model = adlab.load_model(name)
    x, *data = model.setup(n)
    p = adlab.prepare(model, x, *data, mode="reverse", precision=precision)
    x2, *data2 = model.setup(n, seed=1)  # the new minibatch: host NumPy arrays
    x64 = precision == "float64"
    engine = timeit.Timer(lambda: p(x2, *data2).block_until_ready(), timer=clock)

    grad = jax.jit(jax.grad(model.function("jax")))
    raw = timeit.Timer(lambda: grad(x2, *data2).block_until_ready(), timer=clock)
    with jax.enable_x64(x64):
        raw.timeit(3)
        loops, _ = raw.autorange()
        want = np.asarray(grad(x2, *data2))
    engine.timeit(3)
    # sanity: the same gradient, and the call rebinding without converting (kept for later)
    got = np.asarray(p(x2, *data2))
    tol = 1e-12 if x64 else 1e-5
    assert got.dtype == want.dtype and np.max(np.abs(got - want)) <= tol * np.max(np.abs(want))
    assert p._pending is not None, "p(x, *data) converted its arguments: not the fast path"

    times: dict[str, list[float]] = {"engine": [], "raw": []}
    for r in range(repeats):
        pair = [("engine", engine, False), ("raw", raw, x64)]
        for key, timer, on in pair if r % 2 == 0 else pair[::-1]:  # alternate who goes first
            times[key].append(per_call(timer, loops, x64=on))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = [e / w for e, w in zip(times["engine"], times["raw"], strict=True)]
    return {
        "model": name, "n": n, "precision": precision, "loops": loops,
        **{f"{k}_us": v * 1e6 for k, v in med.items()},
        "median_ratio": statistics.median(ratios),
        "ratio_of_minima": min(times["engine"]) / min(times["raw"]),
        "q1_ratio": statistics.quantiles(ratios, n=4)[0],
        "q3_ratio": statistics.quantiles(ratios, n=4)[2],
    }  # fmt: skip


def _paired(these: list[float], raw: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(these, raw, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 10, 100])
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall: time.perf_counter (timeit's default); cpu: time.process_time, "
        "this process's CPU time only, steadier on a machine shared with other work",
    )
    parser.add_argument(
        "--table",
        choices=["both", "call", "rebound"],
        default="both",
        help="call: p(x), data bound at prepare time; rebound: p(x, *data), new data each call",
    )
    args = parser.parse_args()

    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(
        f"{args.repeats} interleaved repeats; {args.clock} clock; "
        f"{datetime.date.today()}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs; jax {jax.__version__}, adlab {adlab.__version__}\n"
    )
    if args.table in ("both", "call"):
        call_table(args.sizes, args.repeats, clock)
    if args.table in ("both", "rebound"):
        rebound_table(args.repeats, clock)


def call_table(sizes: list[int], repeats: int, clock) -> None:
    rows = [measure(n, repeats, clock) for n in sizes]
    print("normal_logpdf, reverse, float64: data bound at prepare time\n")
    print("| n | adlab `p(x)` (µs/call) | raw `jax.jit(jax.grad(f))`, data closed over (µs/call) "
          "| median of paired ratios | ratio of medians | ratio of minima "
          "| paired ratios IQR | loops | adlab `p(*p.inputs)` | raw, every argument passed "
          "| raw + per-call `enable_x64` | C++ call alone / raw "
          "| one-line Python `__call__` / raw | new x each call: `p(x)` (µs) / raw (µs) "
          "| its median of paired ratios |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']} | {r['engine_us']:.2f} | {r['raw_us']:.2f} | {r['median_ratio']:.3f} "
            f"| {r['ratio_of_medians']:.3f} | {r['ratio_of_minima']:.3f} "
            f"| {r['q1_ratio']:.2f}–{r['q3_ratio']:.2f} | {r['loops']} "
            f"| {r['swept_us']:.2f} | {r['all_us']:.2f} | {r['scoped_us']:.2f} "
            f"| {r['cpp_ratio']:.3f} | {r['frame_ratio']:.3f} "
            f"| {r['fresh_us']:.2f} / {r['raw_fresh_us']:.2f} | {r['fresh_ratio']:.3f} |"
        )
    worst = max(max(r["median_ratio"], r["fresh_ratio"]) for r in rows)
    verdict = "met" if worst <= 1.10 else "NOT met"
    print(f"\nworst median of paired ratios, the same x or a new x each call, {worst:.3f} "
          f"(goal <= 1.10): {verdict}")
    floor = max(r["frame_ratio"] for r in rows)
    print(f"a one-line Python __call__ around the same C++ call: worst {floor:.3f}; "
          f"adlab's own checks add {worst - floor:+.3f}\n")  # fmt: skip


def rebound_table(repeats: int, clock) -> None:
    rows = [measure_rebound(name, n, prec, repeats, clock) for name, n, prec in REBOUND]
    print("data rebound each call: reverse, new host NumPy arrays of the prepared shapes\n")
    print("| model | n | precision | adlab `p(x, *data)` (µs/call) "
          "| raw `jax.jit(jax.grad(f))(x, *data)` (µs/call) | median of paired ratios "
          "| ratio of minima | paired ratios IQR | loops |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['model']} | {r['n']} | {r['precision']} | {r['engine_us']:.2f} "
            f"| {r['raw_us']:.2f} | {r['median_ratio']:.3f} | {r['ratio_of_minima']:.3f} "
            f"| {r['q1_ratio']:.2f}–{r['q3_ratio']:.2f} | {r['loops']} |"
        )
    worst = max(r["median_ratio"] for r in rows)
    verdict = "met" if worst <= 1.2 else "NOT met"
    print(f"\nworst median of paired ratios {worst:.3f} (goal <= 1.2): {verdict}")


if __name__ == "__main__":
    main()
    print(f"\ncall path {call_path.digest()} (benchmarks/call_path.py)")
