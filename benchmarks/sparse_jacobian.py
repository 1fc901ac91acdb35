"""How much does coloring save? The sparse forward Jacobian against the dense one.

``bvp_residual`` (the residuals of -u'' + u^3 = 1 by central differences, a
tridiagonal Jacobian) in float64, at n = 1,000, 3,000 and 10,000 by default.
Dense: ``adlab.prepare(model, u, mode="forward")``, n JVPs batched by
``jax.jacfwd``, timed to ``block_until_ready`` (the n x n array stays on the
device). Sparse: ``adlab.prepare(..., sparse=True)``, one JVP per color of the
pattern read from the program, timed to the ``scipy.sparse.csr_array`` it
returns, so its time includes the copy to the host and the CSR assembly the
dense one is spared. Both are compiled first (compile time apart, reported);
repeats are interleaved (alternating who goes first) and we report medians of
``timeit`` per-call times and the median of the paired ratios.
The goal (issue #15) is a ratio of at least 50 at n = 10,000, with the same values.

Run: ``python benchmarks/sparse_jacobian.py [--sizes 1000 10000] [--repeats 7]``.
Prints a markdown table.
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
import numpy as np

import adlab

GOAL = 50.0


def per_call(timer: timeit.Timer, loops: int) -> float:
    return timer.timeit(loops) / loops


def measure(name: str, n: int, repeats: int) -> dict:
    model = adlab.load_model(name)
    (u,) = model.setup(n)
    start = time.perf_counter()
    sparse = adlab.prepare(model, u, mode="forward", sparse=True)
    sparse_prepare = time.perf_counter() - start
    dense = adlab.prepare(model, u, mode="forward")
    x = dense.inputs[0]
    # the same values: the sparse Jacobian, made dense, against the dense one
    got, want = sparse(u).toarray(), np.asarray(dense(x))
    scale = max(float(np.max(np.abs(want))), 1.0)
    agree = float(np.max(np.abs(got - want))) / scale
    del got, want
    t_dense = timeit.Timer(lambda: dense(x).block_until_ready())
    t_sparse = timeit.Timer(lambda: sparse(u))
    t_dense.timeit(1)
    t_sparse.timeit(1)
    loops_dense, _ = t_dense.autorange()
    loops_sparse, _ = t_sparse.autorange()
    times: dict[str, list[float]] = {"dense": [], "sparse": []}
    for r in range(repeats):
        order = (("dense", t_dense, loops_dense), ("sparse", t_sparse, loops_sparse))
        for key, timer, loops in order if r % 2 == 0 else order[::-1]:
            times[key].append(per_call(timer, loops))
    ratios = [d / s for d, s in zip(times["dense"], times["sparse"], strict=True)]
    return {
        "n": n,
        "nnz": sparse.nnz,
        "colors": sparse.colors,
        "lower_bound": sparse.coloring.lower_bound,
        "dense_s": statistics.median(times["dense"]),
        "sparse_s": statistics.median(times["sparse"]),
        "ratio": statistics.median(ratios),
        "ratio_lo": min(ratios),
        "dense_compile_s": dense.compile_s,
        "sparse_compile_s": sparse.compile_s,
        "sparse_prepare_s": sparse_prepare,
        "agree": agree,
    }


def _t(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bvp_residual")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 3000, 10000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rows = [measure(args.model, n, args.repeats) for n in args.sizes]
    print(
        f"{args.model}, forward mode, float64; {args.repeats} interleaved repeats; "
        f"{datetime.date.today()}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs; jax {jax.__version__}, adlab {adlab.__version__}\n"
    )
    print("| n | nonzeros | colors (lower bound) | dense (per call) | sparse (per call) "
          "| dense / sparse (median of paired; lowest) | compile dense / sparse "
          "| sparse prepare (detect, color, compile) | max difference / max entry |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['nnz']:,} | {r['colors']} ({r['lower_bound']}) "
            f"| {_t(r['dense_s'])} | {_t(r['sparse_s'])} | {r['ratio']:.0f}x; {r['ratio_lo']:.0f}x "
            f"| {r['dense_compile_s']:.2f} s / {r['sparse_compile_s']:.2f} s "
            f"| {r['sparse_prepare_s']:.2f} s | {r['agree']:.1e} |"
        )
    at = [r for r in rows if r["n"] == 10_000]
    if at:
        verdict = "met" if at[0]["ratio"] >= GOAL and at[0]["agree"] <= 1e-12 else "NOT met"
        print(f"\nat n = 10,000: {at[0]['ratio']:.0f}x faster (goal >= {GOAL:.0f}x, "
              f"same values): {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
