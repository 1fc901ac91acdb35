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

Everyone is timed by the same timer (``adlab.time_call``: warm-up, autorange,
median of repeats). Needs the ``bench`` extra: ``pip install -e ".[bench]"``.

    python benchmarks/numeric_vs_peers.py [--sizes 10,100,1000]
"""

from __future__ import annotations

import argparse

import numpy as np

import adlab
from adlab import Model, max_relative_error, normwise_relative_error

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
                summary.append((name, t / ours_t, ours_e / e))
    for name, speedup, err_ratio in summary:
        goal = 50 if "numdifftools" in name else 10
        ok = speedup >= goal and err_ratio <= 10
        print(f"\nn=100, adlab numeric[richardson] vs {name}: {speedup:.0f}x faster "
              f"(goal >= {goal}x), normwise error {err_ratio:.2g}x theirs (goal <= 10x): "
              f"{'met' if ok else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    main()
