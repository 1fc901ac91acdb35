"""Does adlab's timer agree with timeit on the same callable?

For a few jitted derivatives (``adlab.prepare``) and a plain ``jax.jit``
function, each round times the same callable twice: ``adlab.time_call``
(5 repeats of ~10 ms, autorange's loop count) and ``timeit`` as its command
line does (autorange to 0.2 s, 5 repeats) on the statement
``fn(*args).block_until_ready()``. The ratio of the two medians is taken per
round, and the median over rounds is reported; rounds alternate the timers so
a busy machine disturbs both alike. The check: median ratio within 0.9-1.1.
A third column times with adlab's timer at timeit's 0.2 s per repeat: on a
busy machine, short repeats and long ones sample the interference differently
(a 10 ms window often sees none; a 0.2 s window always sees some).

    python benchmarks/timing_vs_timeit.py [--rounds 7] [--inline]
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import jax
import jax.numpy as jnp

import adlab


def timeit_median(fn, args) -> float:
    """timeit's command-line protocol: autorange (>= 0.2 s), then 5 repeats; median per call.

    The statement is the call and its wait, written out as a user would.
    """
    timer = timeit.Timer("fn(*args).block_until_ready()", globals={"fn": fn, "args": args})
    loops, _ = timer.autorange()
    return statistics.median(timer.repeat(5, loops)) / loops


def callables():
    model = adlab.load_model("normal_logpdf")
    for n, mode in ((10, "reverse"), (1000, "reverse"), (100, "forward"), (100, "numeric")):
        point = model.setup(n)
        p = adlab.prepare(model, *point, mode=mode)
        # the arguments as a sweep passes them: float64, already on the device
        yield f"prepare(normal_logpdf, mode={mode!r}), n={n}", p, p.inputs
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) * jnp.exp(x)))
    x = jnp.linspace(-1.0, 1.0, 1000, dtype=jnp.float32)
    yield "jax.jit(sum(sin(x) exp(x))), float32, n=1000", f, (x,)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--inline",
        action="store_true",
        help="run every JAX program on the calling thread (no async dispatch)",
    )
    args = ap.parse_args()
    if args.inline:
        from adlab.measure.env import run_inline

        run_inline()
    env = adlab.environment()
    print(f"# {env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs), jax {env['jax']}, "
          f"async dispatch {env['cpu_async_dispatch']}")  # fmt: skip
    print("| callable | timeit | adlab.time_call | ratio | adlab, 0.2 s repeats | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = []
    for name, fn, call_args in callables():
        times: dict[str, list[float]] = {"timeit": [], "adlab": [], "adlab_long": []}
        for _ in range(args.rounds):
            times["adlab"].append(adlab.time_call(fn, call_args).median_s)
            times["timeit"].append(timeit_median(fn, call_args))
            times["adlab_long"].append(adlab.time_call(fn, call_args, target_s=0.2).median_s)
        med = {k: statistics.median(v) for k, v in times.items()}
        r1 = statistics.median(a / b for a, b in zip(times["adlab"], times["timeit"], strict=True))
        r2 = statistics.median(
            a / b for a, b in zip(times["adlab_long"], times["timeit"], strict=True)
        )
        worst.append(r1)
        sec = adlab.report.seconds
        print(f"| {name} | {sec(med['timeit'])} | {sec(med['adlab'])} | {r1:.3f} | "
              f"{sec(med['adlab_long'])} | {r2:.3f} |")  # fmt: skip
    ok = all(0.9 <= r <= 1.1 for r in worst)
    print(f"\nadlab's default timing within 0.9-1.1 of timeit for every callable: "
          f"{'yes' if ok else 'NO'} (ratios {min(worst):.2f}-{max(worst):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
