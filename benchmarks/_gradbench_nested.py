"""particle's and saddle's four combinations per framework: derivative / primal, per call.

GradBench's particle and saddle evals have no primal function (each function is a whole
descent), so a tool's derivative/primal ratio is taken here per call, as for every other
eval: f's value (the model's own ``grad`` inside it, in the inner mode) and f's derivative
(outer over inner), prepared once with ``adlab.prepare``, timed interleaved, medians. The
fastest combination on a framework is the one with the smallest derivative time.

On the eager frameworks the model's loop runs op by op in Python, so the loops are shortened
(``EAGER``): the ratio is per loop step, and the steps are alike.

``python benchmarks/gradbench.py --nested [--backends jax,torch,autograd,tensorflow]`` prints it.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Sequence

import numpy as np

import adlab
from adlab._format import ratio, seconds
from adlab.catalog.gradbench import COMBINATIONS

#: shorter loops on eager frameworks (one Python step per loop step): the per-step ratio
EAGER = {"particle": {"STEPS": 60}, "saddle": {"ITERS": 40}}
#: the eval's own input
ARGS = {"particle": (np.zeros(1),), "saddle": (np.ones(2), np.ones(2))}


def _time(fn, args, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        r = fn(*args)
        if hasattr(r, "block_until_ready"):
            r.block_until_ready()
        out.append(time.perf_counter() - t)
    return out


def costs(name: str, backend: str, repeats: int = 5) -> list[dict]:
    """One row per combination: median seconds of f's value and of its derivative."""
    settings = {} if backend == "jax" else EAGER[name]
    model = adlab.load_model(name, **settings)
    args = ARGS[name]
    prepared = {}
    for fn, (outer, inner) in COMBINATIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            on = dict(inner=inner, backend=backend)
            prepared[fn] = (adlab.prepare(model, *args, mode="primal", **on),
                            adlab.prepare(model, *args, mode=outer, **on))  # fmt: skip
        for p in prepared[fn]:
            _time(p, args, 1)  # warm-up
    times: dict[str, tuple[list[float], list[float]]] = {fn: ([], []) for fn in COMBINATIONS}
    for _ in range(repeats):  # interleaved: each round times every combination once
        for fn, (primal, derivative) in prepared.items():
            times[fn][0].extend(_time(primal, args, 1))
            times[fn][1].extend(_time(derivative, args, 1))
    rows = []
    for fn, (ps, ds) in times.items():
        p, d = statistics.median(ps), statistics.median(ds)
        rows.append({"eval": name, "backend": backend, "function": fn, "primal_s": p,
                     "derivative_s": d, "ratio": d / p, "settings": settings})  # fmt: skip
    return rows


def table(rows: Sequence[dict]) -> str:
    """Markdown: per eval and framework, each combination's derivative time and ratio."""
    lines = ["| eval | framework | loop | " + " | ".join(COMBINATIONS) + " | fastest |",
             "|---" * (4 + len(COMBINATIONS)) + "|"]  # fmt: skip
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["eval"], r["backend"]), []).append(r)
    for (ev, b), rs in groups.items():
        by = {r["function"]: r for r in rs}
        loop = ", ".join(f"{k}={v}" for k, v in rs[0]["settings"].items()) or "eval's own"
        cells = [f"{seconds(by[f]['derivative_s'])} ({ratio(by[f]['ratio'])})"
                 for f in COMBINATIONS]  # fmt: skip
        best = min(rs, key=lambda r: r["derivative_s"])["function"]
        lines.append(f"| {ev} | {b} | {loop} | " + " | ".join(cells) + f" | {best} |")
    return "\n".join(lines)


def run(backends: Sequence[str], repeats: int = 5) -> str:
    rows = [r for name in ("particle", "saddle") for b in backends
            for r in costs(name, b, repeats)]  # fmt: skip
    return table(rows)
