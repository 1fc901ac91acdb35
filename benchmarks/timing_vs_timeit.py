"""Does adlab's timer agree with timeit on the same callable, and does a sweep?

For jitted derivatives of ``normal_logpdf`` at n = 10 and 1000 (``adlab.prepare``)
and a plain ``jax.jit`` function, each round times the same callable with:

- ``adlab.time_call``: 5 repeats of ~10 ms, autorange's loop count;
- ``timeit`` as its command line does (autorange to 0.2 s, 5 repeats) on the
  statement ``fn(*args).block_until_ready()``, written out as a user would;
- ``adlab.time_call`` at timeit's 0.2 s per repeat: on a busy machine, short
  repeats and long ones sample the interference differently (a 10 ms window
  often sees none; a 0.2 s window always sees some);
- the sweep's own record for that point: ``adlab.bench`` at that one n and mode,
  whose repeats are interleaved with the primal's and the dispatch floor's (repeats
  of ~5 ms, at least 5, until the median's interval is within 10%: the stopping rule
  of ``adlab.measure.intervals``).

The timers take turns within each round, so a busy machine disturbs them alike.
The ratio of each median to timeit's is taken per round, and the median over
rounds is reported. The check: median ratios within 0.9-1.1.

    python benchmarks/timing_vs_timeit.py [--rounds 7] [--inline]
"""

from __future__ import annotations

import argparse
import os
import statistics
import timeit
import warnings

import jax
import jax.numpy as jnp

import adlab

MODEL = "normal_logpdf"


def timeit_median(fn, args) -> float:
    """timeit's command-line protocol: autorange (>= 0.2 s), then 5 repeats; median per call.

    The statement is the call and its wait, written out as a user would.
    """
    timer = timeit.Timer("fn(*args).block_until_ready()", globals={"fn": fn, "args": args})
    loops, _ = timer.autorange()
    return statistics.median(timer.repeat(5, loops)) / loops


def sweep_median(n: int, mode: str) -> float:
    """The median of the sweep's own record for this point (its noise check is ours to
    ignore: the table says the load)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adlab.NoisyMachineWarning)
        records = list(adlab.bench(MODEL, [n], [mode], reference=None))
    (r,) = [r for r in records if r.mode == mode]
    return r.median_s


def callables():
    model = adlab.load_model(MODEL)
    for n, mode in ((10, "reverse"), (10, "forward"), (1000, "reverse"), (1000, "forward")):
        p = adlab.prepare(model, *model.setup(n), mode=mode)
        # the arguments as a sweep passes them: float64, already on the device
        yield f"prepare({MODEL}, mode={mode!r}), n={n}", p, p.inputs, (n, mode)
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) * jnp.exp(x)))
    x = jnp.linspace(-1.0, 1.0, 1000, dtype=jnp.float32)
    yield "jax.jit(sum(sin(x) exp(x))), float32, n=1000", f, (x,), None


def paired(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


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
          f"async dispatch {env['cpu_async_dispatch']}, {args.rounds} rounds, "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print("| callable | timeit | adlab.time_call | ratio | adlab, 0.2 s repeats | ratio "
          "| sweep's record | ratio |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    sec = adlab.report.seconds
    ratios = []
    for name, fn, call_args, point in callables():
        times: dict[str, list[float]] = {"timeit": [], "adlab": [], "adlab_long": [], "sweep": []}
        for _ in range(args.rounds):
            times["adlab"].append(adlab.time_call(fn, call_args).median_s)
            times["timeit"].append(timeit_median(fn, call_args))
            times["adlab_long"].append(adlab.time_call(fn, call_args, target_s=0.2).median_s)
            if point is not None:
                times["sweep"].append(sweep_median(*point))
        med = {k: statistics.median(v) if v else None for k, v in times.items()}
        r1 = paired(times["adlab"], times["timeit"])
        r2 = paired(times["adlab_long"], times["timeit"])
        r3 = paired(times["sweep"], times["timeit"]) if point is not None else None
        ratios += [r1] + ([r3] if r3 is not None else [])
        sweep_cells = f"{sec(med['sweep'])} | {r3:.3f}" if r3 is not None else "- | -"
        print(f"| {name} | {sec(med['timeit'])} | {sec(med['adlab'])} | {r1:.3f} | "
              f"{sec(med['adlab_long'])} | {r2:.3f} | {sweep_cells} |")  # fmt: skip
    ok = all(0.9 <= r <= 1.1 for r in ratios)
    verdict = "yes" if ok else "NO"
    print(f"\nadlab's default timing and the sweep's records within 0.9-1.1 of timeit for "
          f"every callable: {verdict} (ratios {min(ratios):.2f}-{max(ratios):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
