"""How close numeric and complex-step modes come to their own limit.

The limit: evaluating the same batch of perturbed points in one plain vmapped
call of f, the batch computed beforehand. A finite difference cannot be
cheaper than evaluating f at its points; everything above that (building the
perturbations, differencing, adlab's call path) is overhead we can remove.

Both sides go through the same call path (``adlab.prepare``; the limit is the
"primal" of a model whose f is ``vmap(f)`` over the batch) and are timed by
``adlab.time_call``, alternately, several rounds; the ratio is of the medians.

The flops column is XLA's own count for each compiled program. It matters
on CPU: JAX's CPU client runs a program inline on the calling thread only
when XLA's estimate is under 1000 flops; above that it hands the program to a
worker thread, which costs a thread wake-up (~5 us idle, tens of us on a
busy machine). See README, "Numeric modes against their limit".

    python benchmarks/numeric_limit.py [--rounds 5] [--sizes 10,100,1000] [--inline]

``--inline`` turns the worker-thread hand-off off for the whole run (JAX's
``jax_cpu_enable_async_dispatch``, as ``adlab bench --inline`` does), so the
ratios show the programs themselves rather than the 1000-flop line.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import adlab
from adlab import Model
from adlab.engine.modes.numeric import default_step

SOURCE = '''"""sum(sin(x) * exp(x))"""

def setup(n, rng):
    return (rng.uniform(-1.0, 1.0, n),)

def f(x):
    return np.sum(np.sin(x) * np.exp(x))
'''

#: (label, mode, scheme, signed multiples of the step per coordinate)
CASES = [
    ("numeric[central]", "numeric", "central", (1.0, -1.0)),
    ("numeric[richardson]", "numeric", "richardson", (1.0, -1.0, 0.5, -0.5)),
    ("complex-step", "complex-step", None, (1j,)),
]


def batch_of(x: np.ndarray, scheme: str | None, multiples, dtype) -> np.ndarray:
    """The perturbed points adlab evaluates, computed the same way, as one (k, n) array."""
    n = x.size
    if scheme is None:  # complex step: x + i h e_j, h = 1e-20
        cdtype = np.complex64 if dtype == np.float32 else np.complex128
        return (x.astype(cdtype)[None, :] + 1j * 1e-20 * np.eye(n, dtype=dtype)).astype(cdtype)
    h = default_step(x, "richardson" if scheme == "richardson" else scheme, dtype)
    h = ((x + h) - x).astype(dtype)
    hh = ((x + h / 2) - x).astype(dtype)
    rows = []
    for m in multiples:
        step = h if abs(m) == 1 else hh
        rows.append(x[None, :] + np.sign(m) * np.diag(step))
    return np.concatenate(rows).astype(dtype)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--precisions", default="float64,float32")
    ap.add_argument("--inline", action="store_true", help="no async dispatch on CPU")
    args = ap.parse_args()
    if args.inline:  # before JAX's first computation: the CPU client reads it once
        import jax

        jax.config.update("jax_cpu_enable_async_dispatch", False)
    model = Model.from_source(SOURCE, name="sin_exp")
    f_jax = model.function("jax")
    import jax
    import jax.numpy as jnp

    # The limit: f on every row of the batch, one vmapped call. For complex step
    # the batch is complex: it rides as data beside a dummy real argument, and
    # the imaginary parts come out (as complex step itself takes them).
    plain = Model.from_function(lambda X: jax.vmap(f_jax)(X), name="plain_vmap")
    plain_c = Model.from_function(lambda d, X: jnp.imag(jax.vmap(f_jax)(X)), name="plain_vmap_c")
    env = adlab.environment()
    print(f"# {env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs), jax {env['jax']}")
    print(f"# median of {args.rounds} alternating rounds of adlab.time_call each"
          f"{', every program inline (no async dispatch)' if args.inline else ''}\n")  # fmt: skip
    print("| precision | n | mode | adlab | plain vmap on the batch | ratio | flops adlab "
          "| flops plain |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for precision in args.precisions.split(","):
        dtype = np.float32 if precision == "float32" else np.float64
        for n in [int(s) for s in args.sizes.split(",")]:
            (x,) = model.setup(n)
            x = x.astype(dtype)
            for label, mode, scheme, multiples in CASES:
                p = adlab.prepare(model, x, mode=mode, scheme=scheme or "central",
                                  precision=precision)  # fmt: skip
                X = batch_of(x, scheme, multiples, dtype)
                qargs = (X,) if scheme else (dtype(0), X)
                q = adlab.prepare(plain if scheme else plain_c, *qargs, mode="primal",
                                  precision=precision)  # fmt: skip
                ours, limit = [], []
                for _ in range(args.rounds):
                    ours.append(adlab.time_call(p, (x,)).median_s)
                    limit.append(adlab.time_call(q, qargs).median_s)
                a, b = statistics.median(ours), statistics.median(limit)
                fa, fb = p.cost()["flops"], q.cost()["flops"]
                print(f"| {precision} | {n} | {label} | {a * 1e6:.1f} us | {b * 1e6:.1f} us | "
                      f"{a / b:.2f} | {fa:.0f} | {fb:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
