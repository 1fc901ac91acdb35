"""ba's sparse Jacobian: how fast can any JAX program on XLA's CPU backend get it?

GradBench's ``ba`` eval (bundle adjustment, issue 16) asks for a sparse Jacobian. Its
C++ ``manual`` tool, with derivatives derived by hand (``tools/manual/ba_d.hpp``),
takes about 6.2x its primal. This script asks whether XLA on one CPU can reach that
ratio against adlab's primal at all, even without AD, by timing on one GradBench
problem (ba1 by default), in float64:

- ``adlab primal``: ``adlab.prepare(model, x, feats, mode="primal")`` of the eval's
  model (``adlab.catalog.gradbench``), the denominator of the goal;
- ``hand primal``: the reprojection and weight errors alone, written as the hand
  Jacobian below writes them (one (p,) array per component), in adlab's output order;
- ``vmap primal``: ``vmap`` of a per-observation function (GradBench's JAX tool's way);
- ``adlab sparse reverse``: ``adlab.prepare(..., mode="reverse", sparse=True)``, timed
  as ``p.values(*p.inputs)``, its nonzeros on the device (as adlab's GradBench tool
  times it);
- ``vmap(jacrev)``: ``vmap(jacrev(per_observation))``, each observation's 2 x 15 block
  and its weight error's derivative, in ADBench's compressed-row order;
- ``SoA forward``/``SoA reverse``: JAX's AD of the structure-of-arrays primal below,
  differentiated in each observation's own camera, point and weight (the tiling to
  observations left outside), so 15 JVPs or 2 VJPs give every block at once;
- ``hand Jacobian``: GradBench's ``compute_reproj_error_d`` and
  ``compute_zach_weight_error_d`` ported to ``jax.numpy`` over all p observations at
  once (structure of arrays: each of the 3 x 3 and 2 x 3 matrices' entries is a (p,)
  array), no AD at all; once in ADBench's compressed-row order, once as 31 (p,) arrays
  (no transpose: the least XLA must write).
- ``..., then CSR order``: that output put in ADBench's order by a second program.

Every program takes ``(x, feats)`` as adlab's does and is jitted; the values of the
three Jacobians are checked against each other first. The candidates are timed
interleaved: each round calls each ``--calls`` times, in an order turned by one each
round, every call awaited (``adlab.measure.timing.awaited_call``). The table gives
each one's median and quartiles over all its calls, and its median's ratio to adlab's
primal's (the goal's denominator) and to the fastest primal's.

Run pinned to one CPU, as GradBench runs its tools: ``taskset -c 0 python
benchmarks/ba_bound.py --gradbench-dir /work/gradbench [--size ba1_n49_m7776_p31843]
[--rounds 10] [--calls 5]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

import adlab
from adlab._format import ratio, seconds
from adlab.catalog._adbench import ba_layout
from adlab.catalog.gradbench import gradbench_eval
from adlab.measure.timing import awaited_call

CAM = 11  # a camera's parameters: rotation 3, centre 3, focal length, principal point 2, radial 2


def read_ba(gradbench_dir: Path, size: str) -> dict:
    """The eval's input for one of its data files, read by the eval's own ``parse``."""
    sys.path.insert(0, str(gradbench_dir / "python" / "gradbench"))
    from gradbench.evals.ba.run import parse

    path = gradbench_dir / "evals" / "ba" / "data" / f"{size}.txt"
    if not path.exists():
        have = sorted(f.stem for f in path.parent.glob("ba*.txt"))
        raise SystemExit(f"no {path}; --size takes one of {', '.join(have[:5])}, ...")
    return parse(path)


def _per_observation(x: jax.Array, feats: jax.Array, n: int, m: int) -> tuple:
    """Each observation's camera (11, p), point (3, p), weight (p,) and feature (2, p).

    Observation i is camera i mod n and point i mod m, so the rows are the cameras
    and points tiled, not gathered.
    """
    p = feats.shape[0]
    cams = x[: CAM * n].reshape(n, CAM).T
    X = x[CAM * n : CAM * n + 3 * m].reshape(m, 3).T
    cam = jnp.tile(cams, (1, -(-p // n)))[:, :p]
    pts = jnp.tile(X, (1, -(-p // m)))[:, :p]
    return cam, pts, x[CAM * n + 3 * m :], feats.T


def _cross(a: list, b: list) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _cross_matrix(v: list) -> list:
    """[v]_x, so that [v]_x u = v x u (ADBench's ``set_cross_mat``)."""
    zero = jnp.zeros_like(v[0])
    return [[zero, -v[2], v[1]], [v[2], zero, -v[0]], [-v[1], v[0], zero]]


def _rodrigues(rot: list, Xo: list, jacobian: bool) -> tuple:
    """Xo turned by the angle-axis rot, and (when ``jacobian``) its 3 x 3 derivatives
    in rot and in Xo, as ``rodrigues_rotate_point_d`` (both of its branches)."""
    sq = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]
    turning = sq != 0.0
    theta = jnp.sqrt(jnp.where(turning, sq, 1.0))  # the guard keeps rot/theta finite
    inv = 1.0 / theta
    c, s = jnp.cos(theta), jnp.sin(theta)
    w = [r * inv for r in rot]
    w_x_X = _cross(w, Xo)
    w_X = w[0] * Xo[0] + w[1] * Xo[1] + w[2] * Xo[2]
    turned = [Xo[i] * c + w_x_X[i] * s + w[i] * w_X * (1.0 - c) for i in range(3)]
    still = [Xo[i] + v for i, v in enumerate(_cross(rot, Xo))]  # the first-order branch
    Xcam = [jnp.where(turning, turned[i], still[i]) for i in range(3)]
    if not jacobian:
        return Xcam, None, None
    eye = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    w_d = [[inv * (eye[i][j] - w[i] * w[j]) for j in range(3)] for i in range(3)]  # dw/drot
    Xo_x, w_cross, rot_x = _cross_matrix(Xo), _cross_matrix(w), _cross_matrix(rot)
    M = [[-s * Xo_x[i][j] + eye[i][j] * (1.0 - c) * w_X for j in range(3)] for i in range(3)]
    tmp_d = [(1.0 - c) * sum(Xo[k] * w_d[k][j] for k in range(3)) + w_X * s * w[j]
             for j in range(3)]  # fmt: skip
    acc = [c * w_x_X[i] - s * Xo[i] for i in range(3)]
    d_rot = [[acc[i] * w[j] + sum(M[i][k] * w_d[k][j] for k in range(3)) + w[i] * tmp_d[j]
              for j in range(3)] for i in range(3)]  # fmt: skip
    d_X = [[s * w_cross[i][j] + (1.0 - c) * w[i] * w[j] + eye[i][j] * c for j in range(3)]
           for i in range(3)]  # fmt: skip
    d_rot = [[jnp.where(turning, d_rot[i][j], -Xo_x[i][j]) for j in range(3)] for i in range(3)]
    d_X = [[jnp.where(turning, d_X[i][j], rot_x[i][j] + eye[i][j]) for j in range(3)]
           for i in range(3)]  # fmt: skip
    return Xcam, d_rot, d_X


def hand_rows(cam: jax.Array, X: jax.Array, w: jax.Array, feat: jax.Array,
              jacobian: bool = True) -> tuple:  # fmt: skip
    """ADBench's ``compute_reproj_error_d`` over every observation at once (arguments as
    ``_per_observation`` gives them): the errors (2 rows of (p,)), and each observation's
    2 x 15 block as 2 lists of 15 (p,) rows (camera 11, point 3, weight 1) and the
    weight errors' derivatives (None unless ``jacobian``)."""
    Xo = [X[i] - cam[3 + i] for i in range(3)]
    f, k1, k2 = cam[6], cam[9], cam[10]
    Xcam, d_rot, d_X = _rodrigues([cam[0], cam[1], cam[2]], Xo, jacobian)
    proj = [Xcam[0] / Xcam[2], Xcam[1] / Xcam[2]]
    rsq = proj[0] * proj[0] + proj[1] * proj[1]
    L = 1.0 + k1 * rsq + k2 * rsq * rsq
    pixel = [proj[a] * L * f + cam[7 + a] for a in range(2)]
    err = [w * (pixel[a] - feat[a]) for a in range(2)]
    if not jacobian:
        return err, None, None
    coef = 2.0 * k1 + 4.0 * k2 * rsq
    # d(distorted)/d(proj), then d(proj)/d(Xcam): dh[a][i] = d(distorted a)/d(Xcam i)
    dp = [[coef * proj[a] * proj[b] + (L if a == b else 0.0) for b in range(2)] for a in range(2)]
    inv_z = 1.0 / Xcam[2]
    dh = [[dp[a][0] * inv_z, dp[a][1] * inv_z,
           -(dp[a][0] * proj[0] + dp[a][1] * proj[1]) * inv_z] for a in range(2)]  # fmt: skip
    fw = f * w  # every entry but the weight's is scaled by w (ADBench's last loop)
    zero, one = jnp.zeros_like(w), jnp.ones_like(w)
    rows = []
    for a in range(2):
        j_rot = [fw * sum(dh[a][i] * d_rot[i][j] for i in range(3)) for j in range(3)]
        j_X = [fw * sum(dh[a][i] * d_X[i][j] for i in range(3)) for j in range(3)]
        j_C = [-v for v in j_X]
        j_x0 = [w * (one if b == a else zero) for b in range(2)]
        j_rad = [fw * rsq * proj[a], fw * rsq * rsq * proj[a]]
        j_f = w * proj[a] * L
        rows.append([*j_rot, *j_C, j_f, *j_x0, *j_rad, *j_X, pixel[a] - feat[a]])
    return err, rows, -2.0 * w


def hand_primal(x: jax.Array, feats: jax.Array, n: int, m: int) -> jax.Array:
    """The residuals in adlab's order (each observation's two errors, then each
    weight's), as the hand Jacobian computes them."""
    err, _, _ = hand_rows(*_per_observation(x, feats, n, m), jacobian=False)
    w = x[CAM * n + 3 * m :]
    return jnp.concatenate([jnp.stack(err, axis=1).ravel(), 1.0 - w * w])


def hand_jacobian(x: jax.Array, feats: jax.Array, n: int, m: int) -> jax.Array:
    """The Jacobian's entries in ADBench's compressed-row order (``ba_layout``)."""
    _, rows, w_d = hand_rows(*_per_observation(x, feats, n, m))
    blocks = jnp.stack([jnp.stack(r, axis=1) for r in rows], axis=1)  # (p, 2, 15)
    return jnp.concatenate([blocks.ravel(), w_d])


def hand_jacobian_arrays(x: jax.Array, feats: jax.Array, n: int, m: int) -> tuple:
    """The same entries as 31 (p,) arrays, the 30 block entries then the weights': the
    least XLA must write (stacked into one (31, p) array they took 40% longer)."""
    _, rows, w_d = hand_rows(*_per_observation(x, feats, n, m))
    return (*rows[0], *rows[1], w_d)


def _soa_error(feat: jax.Array) -> Callable:
    """The errors (2, p) as a function of each observation's own camera, point and
    weight, for AD: no observation's error depends on another's unknowns."""
    return lambda cam, X, w: jnp.stack(hand_rows(cam, X, w, feat, jacobian=False)[0])


def soa_forward(x: jax.Array, feats: jax.Array, n: int, m: int) -> jax.Array:
    """JAX's forward mode on the structure-of-arrays primal: 15 JVPs (batched), one per
    unknown of an observation, each seeding that unknown in every observation at once.
    The entries as (15, 2, p), then the weights' (no transpose; cf. the 31 arrays)."""
    cam, X, w, feat = _per_observation(x, feats, n, m)
    f = _soa_error(feat)
    seeds = jnp.broadcast_to(jnp.eye(15, dtype=w.dtype)[:, :, None], (15, 15, w.shape[0]))

    def column(seed: jax.Array) -> jax.Array:
        return jax.jvp(f, (cam, X, w), (seed[:11], seed[11:14], seed[14]))[1]

    return jax.vmap(column)(seeds), -2.0 * w


def soa_reverse(x: jax.Array, feats: jax.Array, n: int, m: int) -> tuple:
    """JAX's reverse mode on the structure-of-arrays primal: 2 VJPs (batched), one per
    error row, each seeding that row in every observation at once. The entries as
    (2, 11, p), (2, 3, p) and (2, p), then the weights'."""
    cam, X, w, feat = _per_observation(x, feats, n, m)
    _, pull = jax.vjp(_soa_error(feat), cam, X, w)
    seeds = jnp.broadcast_to(jnp.eye(2, dtype=w.dtype)[:, :, None], (2, 2, w.shape[0]))
    return jax.vmap(pull)(seeds), -2.0 * w


def observation_error(cam: jax.Array, X: jax.Array, w: jax.Array, feat: jax.Array) -> jax.Array:
    """One observation's weighted reprojection error (2,), for ``vmap``."""
    rot = cam[0:3]
    theta = jnp.sqrt(rot @ rot)
    axis = rot / theta
    Xo = X - cam[3:6]
    c, s = jnp.cos(theta), jnp.sin(theta)
    Xcam = Xo * c + jnp.cross(axis, Xo) * s + axis * (axis @ Xo) * (1.0 - c)
    proj = Xcam[:2] / Xcam[2]
    rsq = proj @ proj
    L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    return w * (proj * L * cam[6] + cam[7:9] - feat)


def vmap_primal(x: jax.Array, feats: jax.Array, n: int, m: int) -> jax.Array:
    cam, X, w, feat = _per_observation(x, feats, n, m)
    err = jax.vmap(observation_error)(cam.T, X.T, w, feat.T)
    return jnp.concatenate([err.ravel(), 1.0 - w * w])


def vmap_jacobian(x: jax.Array, feats: jax.Array, n: int, m: int) -> jax.Array:
    """``vmap(jacrev(observation_error))``, in ADBench's compressed-row order."""
    cam, X, w, feat = _per_observation(x, feats, n, m)
    j_cam, j_X, j_w = jax.vmap(jax.jacrev(observation_error, argnums=(0, 1, 2)))(
        cam.T, X.T, w, feat.T
    )
    blocks = jnp.concatenate([j_cam, j_X, j_w[:, :, None]], axis=2)  # (p, 2, 15)
    return jnp.concatenate([blocks.ravel(), -2.0 * w])


def as_csr(values: np.ndarray, n: int, m: int, p: int) -> sp.csr_array:
    """Entries in ADBench's order as a SciPy array, to compare with adlab's."""
    pointers, _, cols = ba_layout(n, m, p)
    return sp.csr_array((values, cols, pointers), shape=(3 * p, CAM * n + 3 * m + p))


def relative_difference(a: sp.csr_array, b: sp.csr_array) -> float:
    return float(abs(a - b).max() / max(abs(b).max(), 1e-300))


def in_csr_order(out: object, xp: Any = np) -> Any:
    """Any Jacobian program's output here as its entries in ADBench's compressed-row
    order; ``xp=jnp`` to do it in JAX."""
    if isinstance(out, tuple) and len(out) == 31:  # hand_jacobian_arrays
        rows, w_d = xp.stack(out[:30]).reshape(2, 15, -1), out[30]
    elif isinstance(out, tuple) and isinstance(out[0], tuple):  # soa_reverse: (2, k, p) each
        rows, w_d = xp.concatenate([out[0][0], out[0][1], out[0][2][:, None]], axis=1), out[1]
    elif isinstance(out, tuple):  # soa_forward: (15, 2, p)
        rows, w_d = xp.transpose(out[0], (1, 0, 2)), out[1]
    else:
        return out
    return xp.concatenate([xp.transpose(rows, (2, 0, 1)).ravel(), w_d])


#: the Jacobians built here, each timed as a jitted f(x, feats, n, m)
JACOBIANS = {
    "vmap(jacrev)": vmap_jacobian,
    "SoA forward (15 JVPs)": soa_forward,
    "SoA reverse (2 VJPs)": soa_reverse,
    "hand Jacobian (CSR order)": hand_jacobian,
    "hand Jacobian (31 arrays)": hand_jacobian_arrays,
}


def candidates(input: dict) -> tuple[dict[str, Callable[[], object]], dict[str, float]]:
    """The programs to time, each a no-argument call, and each one's largest difference
    from adlab's (primals) or adlab's sparse Jacobian, over that one's largest entry."""
    n, m, p = int(input["n"]), int(input["m"]), int(input["p"])
    model, (x, feats) = gradbench_eval("ba").inputs(input)
    primal = adlab.prepare(model, x, feats, mode="primal")
    sparse = adlab.prepare(model, x, feats, mode="reverse", sparse=True)
    xd, fd = jax.device_put(x), jax.device_put(feats)

    def jitted(fn: Callable) -> Callable[[], object]:
        call = jax.jit(fn, static_argnums=(2, 3))
        return lambda: call(xd, fd, n, m)

    calls = {
        "adlab primal": lambda: primal(*primal.inputs),
        "hand primal": jitted(hand_primal),
        "vmap primal": jitted(vmap_primal),
        "adlab sparse reverse": lambda: sparse.values(*sparse.inputs),
    }
    calls.update((name, jitted(fn)) for name, fn in JACOBIANS.items())
    # In one program XLA fuses the transpose into the entries' loops, recomputing each
    # entry's inputs per element (SoA reverse: 18 -> 37 ms); a second program cannot.
    reorder = jax.jit(lambda out: in_csr_order(out, jnp))
    for name in ("SoA reverse (2 VJPs)", "hand Jacobian (31 arrays)"):
        calls[f"{name}, then CSR order"] = lambda first=calls[name]: reorder(first())
    want = np.asarray(calls["adlab primal"]())
    want_J = sparse.to_csr(calls["adlab sparse reverse"]())
    differences = {
        name: float(np.max(np.abs(np.asarray(calls[name]()) - want)) / np.max(np.abs(want)))
        for name in ("hand primal", "vmap primal")
    }
    for name in calls:
        if name in differences or name.startswith("adlab"):
            continue
        got = as_csr(np.asarray(in_csr_order(jax.device_get(calls[name]()))), n, m, p)
        differences[name] = relative_difference(got, want_J)
    return calls, differences


def interleaved(calls: dict[str, Callable[[], object]], rounds: int, per_round: int
                ) -> dict[str, list[float]]:  # fmt: skip
    """Seconds of each awaited call, ``per_round`` calls of each per round, the order
    turned by one each round so that none always follows the same neighbour."""
    names = list(calls)
    for name in names:  # compile and warm up
        awaited_call(calls[name])
        awaited_call(calls[name])
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name] += [awaited_call(calls[name])[0] for _ in range(per_round)]
    return times


def table(times: dict[str, list[float]], manual: float | None) -> str:
    """Median, quartiles, and the median's ratio to adlab's primal and the fastest primal."""
    median = {name: statistics.median(t) for name, t in times.items()}
    base = median["adlab primal"]
    fastest = min(v for k, v in median.items() if "primal" in k)
    lines = ["| program | median | quartiles | / adlab primal | / fastest primal |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, t in times.items():
        q1, _, q3 = statistics.quantiles(t, n=4)
        m = median[name]
        lines.append(f"| {name} | {seconds(m)} | {seconds(q1)} - {seconds(q3)} "
                     f"| {ratio(m / base)} | {ratio(m / fastest)} |")  # fmt: skip
    if manual is not None:
        lines.append(f"| GradBench manual (C++, its own primal) | | | {ratio(manual)} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gradbench-dir", type=Path, default=os.environ.get("GRADBENCH_DIR"),
                        help="a GradBench checkout (default: $GRADBENCH_DIR)")  # fmt: skip
    parser.add_argument("--size", default="ba1_n49_m7776_p31843", help="a file in evals/ba/data")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5, help="calls of each program per round")
    parser.add_argument("--manual", type=float, default=None,
                        help="manual's ratio (benchmarks/gradbench.py), for the table")  # fmt: skip
    args = parser.parse_args(argv)
    if args.gradbench_dir is None:
        parser.error("say where GradBench is: --gradbench-dir or $GRADBENCH_DIR")
    input = read_ba(args.gradbench_dir, args.size)
    with jax.enable_x64(True):
        calls, differences = candidates(input)
        times = interleaved(calls, args.rounds, args.calls)
    affinity = sorted(os.sched_getaffinity(0))
    print(f"{args.size}, float64, {args.rounds} rounds x {args.calls} calls each, interleaved; "
          f"CPUs {affinity}; jax {jax.__version__}, adlab {adlab.__version__}\n")  # fmt: skip
    print(table(times, args.manual))
    print("\nlargest difference from adlab's, over its largest entry: "
          + "; ".join(f"{k} {v:.1e}" for k, v in differences.items()))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
