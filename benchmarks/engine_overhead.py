"""How much does adlab's engine add on top of JAX itself?

A ``prepare``d reverse-mode gradient against raw ``jax.jit(jax.grad(f))`` on
``normal_logpdf`` in float64, at n = 1, 10 and 100. Both get the same NumPy
inputs and are synchronised with ``block_until_ready``; the raw one runs
inside ``with jax.enable_x64(True):``, as a user would write it, while adlab
sets the precision itself on each call. Per-call times come from
``timeit`` (loops chosen by ``autorange``), several repeats interleaved (and
alternated in order) so that drift in machine load hits both alike; we report
medians. The goal is a median ratio <= 1.10.

Run: ``python benchmarks/engine_overhead.py [--repeats 21] [--clock cpu]``.
Prints a markdown table; the figures in the README came from this script.
On a machine shared with other work, ``--clock cpu`` (this process's CPU
time, ``time.process_time``) is far steadier than wall time.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
import timeit

import jax

import adlab


def per_call(timer: timeit.Timer, loops: int, x64: bool = False) -> float:
    """Seconds per call; ``x64``: inside ``jax.enable_x64(True)`` (the raw side)."""
    if x64:
        with jax.enable_x64(True):
            return timer.timeit(loops) / loops
    return timer.timeit(loops) / loops


def measure(n: int, repeats: int, clock=time.perf_counter) -> dict[str, float]:
    model = adlab.load_model("normal_logpdf")
    theta, data = model.setup(n)  # NumPy float64 arrays, for both contenders

    # adlab, as a user calls it: no context, precision set per call by adlab
    p = adlab.prepare(model, theta, data, mode="reverse", precision="float64")
    engine = timeit.Timer(lambda: p(theta, data).block_until_ready(), timer=clock)

    # raw JAX, as a user writes it: the same f bound to jax.numpy, x64 on
    f = model.function("jax")
    with jax.enable_x64(True):
        raw_grad = jax.jit(jax.grad(f))
        raw = timeit.Timer(lambda: raw_grad(theta, data).block_until_ready(), timer=clock)
        raw.timeit(3)  # compile and warm up
        # sanity: the two compute the same float64 gradient
        assert abs(raw_grad(theta, data) - p(theta, data)).max() <= 1e-12
        loops, _ = raw.autorange()
    engine.timeit(3)

    # for context only: raw JAX made per-call too, with the public context manager
    def raw_scoped():
        with jax.enable_x64(True):
            return raw_grad(theta, data).block_until_ready()

    scoped = timeit.Timer(raw_scoped, timer=clock)

    engine_times, raw_times, scoped_times, ratios = [], [], [], []
    for r in range(repeats):
        if r % 2 == 0:  # alternate who goes first
            e, w = per_call(engine, loops), per_call(raw, loops, x64=True)
        else:
            w, e = per_call(raw, loops, x64=True), per_call(engine, loops)
        engine_times.append(e)
        raw_times.append(w)
        ratios.append(e / w)
        scoped_times.append(per_call(scoped, loops))
    return {
        "n": n,
        "loops": loops,
        "engine_us": statistics.median(engine_times) * 1e6,
        "raw_us": statistics.median(raw_times) * 1e6,
        "scoped_us": statistics.median(scoped_times) * 1e6,
        "ratio_of_medians": statistics.median(engine_times) / statistics.median(raw_times),
        "median_ratio": statistics.median(ratios),
        "ratio_of_minima": min(engine_times) / min(raw_times),
        "q1_ratio": statistics.quantiles(ratios, n=4)[0],
        "q3_ratio": statistics.quantiles(ratios, n=4)[2],
    }


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
    args = parser.parse_args()

    clock = time.perf_counter if args.clock == "wall" else time.process_time
    rows = [measure(n, args.repeats, clock) for n in args.sizes]
    print(
        f"normal_logpdf, reverse, float64; {args.repeats} interleaved repeats; "
        f"{args.clock} clock; "
        f"{datetime.date.today()}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs; jax {jax.__version__}, adlab {adlab.__version__}\n"
    )
    print("| n | adlab `prepare` (µs/call) | raw `jax.jit(jax.grad(f))` (µs/call) "
          "| median of paired ratios | ratio of medians | ratio of minima "
          "| paired ratios IQR | loops | raw + per-call `enable_x64` (µs/call) |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']} | {r['engine_us']:.2f} | {r['raw_us']:.2f} | {r['median_ratio']:.3f} "
            f"| {r['ratio_of_medians']:.3f} | {r['ratio_of_minima']:.3f} "
            f"| {r['q1_ratio']:.2f}–{r['q3_ratio']:.2f} | {r['loops']} | {r['scoped_us']:.2f} |"
        )
    worst = max(r["median_ratio"] for r in rows)
    verdict = "met" if worst <= 1.10 else "NOT met"
    print(f"\nworst median of paired ratios {worst:.3f} (goal <= 1.10): {verdict}")


if __name__ == "__main__":
    main()
