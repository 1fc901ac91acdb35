"""adlab's numeric mode against what a Python user would otherwise reach for.

Peers: ``numdifftools.Gradient`` (adaptive Richardson) and
``scipy.differentiate.jacobian`` (iterated high-order central differences),
each with its defaults, on plain NumPy; adlab's numeric mode (central and
Richardson, jitted JAX, float64). The model is sum(sin(x) * exp(x)) at x drawn
uniformly from [-1, 1]; errors are against the exact gradient
(sin x + cos x) e^x: normwise relative error ||d - g|| / ||g|| (the goal's
measure), and the max componentwise relative error (harsher: components of g
near zero, where x is near -pi/4, dominate it). Complex step is shown for
reference: it is not a finite difference, but it is what adlab offers when
accuracy matters and f is analytic.

Two more rows per size show where the time goes and what the step buys:

- ``floor``: f on Richardson's own perturbed points, computed beforehand, in one
  plain vmapped call (as in ``numeric_limit.py``). No 4-point difference can
  be faster than evaluating f at its 4n points.
- ``richardson, step 4x``: Richardson with ``step=`` four times its default,
  for a sum of many terms, whose round-off grows with n (eps |f| / h).

Everyone is timed by the same timer (``adlab.time_call``: warm-up, autorange,
median of repeats). Needs the ``bench`` extra: ``pip install -e ".[bench]"``.

    python benchmarks/numeric_vs_peers.py [--sizes 10,100,1000]
"""

from __future__ import annotations

import argparse

import numpy as np

import adlab
from adlab import Model, max_relative_error, normwise_relative_error
from adlab.engine.modes.numeric import default_step

try:  # the sibling script, run as ``python benchmarks/numeric_vs_peers.py``
    from numeric_limit import CASES, batch_of
except ImportError:  # pragma: no cover - imported from elsewhere
    from benchmarks.numeric_limit import CASES, batch_of

SOURCE = '''"""sum(sin(x) * exp(x))"""

def setup(n, rng):
    return (rng.uniform(-1.0, 1.0, n),)

def f(x):
    return np.sum(np.sin(x) * np.exp(x))
'''


def _numpy_f(x):
    return np.sum(np.sin(x) * np.exp(x), axis=0)  # axis 0: scipy passes (n, batch...)


def peers():
    import numdifftools as nd
    from scipy.differentiate import jacobian

    gradient = nd.Gradient(_numpy_f)
    return {
        "numdifftools.Gradient": lambda x: gradient(x),
        "scipy.differentiate.jacobian": lambda x: jacobian(_numpy_f, x).df,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    model = Model.from_source(SOURCE, name="sin_exp")
    import jax

    f_jax = model.function("jax")
    plain = Model.from_function(lambda X: jax.vmap(f_jax)(X), name="plain_vmap")
    env = adlab.environment()
    print(f"# {env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs), jax {env['jax']}, "
          f"numpy {env['numpy']}")  # fmt: skip
    print(
        "| n | tool | time per gradient | normwise error | max rel. error | adlab richardson is |"
    )
    print("|---:|---|---:|---:|---:|---|")
    summary = []
    for n in [int(s) for s in args.sizes.split(",")]:
        (x,) = model.setup(n)
        exact = (np.sin(x) + np.cos(x)) * np.exp(x)
        rows = {}
        for label, mode, scheme in (
            ("numeric[central]", "numeric", "central"),
            ("numeric[richardson]", "numeric", "richardson"),
            ("complex-step (not FD)", "complex-step", "central"),
        ):
            p = adlab.prepare(model, x, mode=mode, scheme=scheme)
            t = adlab.time_call(p, (x,), repeats=args.repeats).median_s
            rows[f"adlab {label}"] = (t, np.asarray(p(x)))  # fmt: skip
        p = adlab.prepare(model, x, mode="numeric", scheme="richardson",
                          step=4 * default_step(x, "richardson", np.float64))  # fmt: skip
        t = adlab.time_call(p, (x,), repeats=args.repeats).median_s
        rows["adlab numeric[richardson], step 4x"] = (t, np.asarray(p(x)))
        multiples = dict((c[0], c[3]) for c in CASES)["numeric[richardson]"]
        X = batch_of(x, "richardson", multiples, np.float64)
        q = adlab.prepare(plain, X, mode="primal")
        floor = adlab.time_call(q, (X,), repeats=args.repeats).median_s
        for name, fn in peers().items():
            t = adlab.time_call(fn, (x,), repeats=args.repeats).median_s
            rows[name] = (t, np.asarray(fn(x)))
        ours_t, ours_d = rows["adlab numeric[richardson]"]
        ours_e = normwise_relative_error(ours_d, exact)
        for name, (t, d) in rows.items():
            e = normwise_relative_error(d, exact)
            vs = "" if name.startswith("adlab") else (
                f"{t / ours_t:.0f}x faster, error {ours_e / e:.2g}x theirs")  # fmt: skip
            print(f"| {n} | {name} | {adlab.report.seconds(t)} | {e:.1e} | "
                  f"{max_relative_error(d, exact):.1e} | {vs} |")  # fmt: skip
            if not name.startswith("adlab") and n == 100:
                summary.append((name, t, t / ours_t, ours_e / e, floor))
        print(f"| {n} | floor: f on Richardson's {4 * n} points, one vmapped call "
              f"| {adlab.report.seconds(floor)} | | | |")  # fmt: skip
    for name, t, speedup, err_ratio, floor in summary:
        goal = 50 if "numdifftools" in name else 10
        ok = speedup >= goal and err_ratio <= 10
        print(f"\nn=100, adlab numeric[richardson] vs {name}: {speedup:.0f}x faster "
              f"(goal >= {goal}x), normwise error {err_ratio:.2g}x theirs (goal <= 10x): "
              f"{'met' if ok else 'NOT met'}. The goal needs <= {adlab.report.seconds(t / goal)}; "
              f"the floor is {adlab.report.seconds(floor)}.")  # fmt: skip


if __name__ == "__main__":
    main()
