"""benchmarks/ba_bound.py's Jacobians of ba against JAX's AD of adlab's own ba model.

The oracle is ``jax.jacfwd`` of the catalog's ``ba`` (``adlab/catalog/ba.py``), written
apart from the benchmark's hand-derived port of ADBench's ``ba_d.hpp``; the problem is
small and random (every camera and point different, unlike GradBench's duplicated
ones), so that a wrong index or a swapped entry shows.

Internals: GradBench's adapter for ba (catalog.gradbench.gradbench_eval), whose inputs the
benchmark's Jacobians are checked on; the adapters are the GradBench tool's own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from adlab.catalog.gradbench import gradbench_eval

ROOT = Path(__file__).resolve().parents[2]
N, M, P = 3, 5, 12  # cameras, points, observations


@pytest.fixture(scope="module")
def bench():
    # benchmarks/ is no package: load the script by path
    spec = importlib.util.spec_from_file_location("ba_bound", ROOT / "benchmarks" / "ba_bound.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def problem(still_camera: bool) -> tuple:
    """Random cameras in front of random points; camera 1 unturned if ``still_camera``
    (ADBench's zero-rotation branch). Returns (model, x, feats)."""
    rng = np.random.default_rng(7)
    cams = np.concatenate([
        0.3 * rng.normal(size=(N, 3)),
        rng.normal(size=(N, 3)) + [0.0, 0.0, -10.0],
        500.0 + 50.0 * rng.normal(size=(N, 1)),
        rng.normal(size=(N, 2)),
        0.01 * rng.normal(size=(N, 2)),
    ], axis=1)  # fmt: skip
    if still_camera:
        cams[1, :3] = 0.0
    x = np.concatenate([cams.ravel(), rng.normal(size=3 * M), rng.uniform(0.5, 1.0, P)])
    model = gradbench_eval("ba").model({"n": N, "m": M, "p": P})
    return model, x, 50.0 * rng.normal(size=(P, 2))


def ad_jacobian(model, x, feats) -> np.ndarray:
    with jax.enable_x64(True):
        return np.asarray(jax.jacfwd(model.function("jax"))(jnp.asarray(x), jnp.asarray(feats)))


def entries(bench, fn, x, feats, xp=np) -> np.ndarray:
    with jax.enable_x64(True):
        out = jax.jit(fn, static_argnums=(2, 3))(jnp.asarray(x), jnp.asarray(feats), N, M)
        return np.asarray(bench.in_csr_order(out, xp))


def test_hand_jacobian_is_ads_with_a_still_camera(bench):
    model, x, feats = problem(still_camera=True)
    want = ad_jacobian(model, x, feats)
    got = bench.as_csr(entries(bench, bench.hand_jacobian, x, feats), N, M, P).toarray()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("name", ["vmap(jacrev)", "SoA forward (15 JVPs)",
                                  "SoA reverse (2 VJPs)", "hand Jacobian (31 arrays)"])  # fmt: skip
@pytest.mark.parametrize("xp", [np, jnp], ids=["numpy", "jax"])
def test_each_jacobian_in_csr_order_is_ads(bench, name, xp):
    # vmap(jacrev)'s per-observation error has no zero-rotation branch: every camera turns
    model, x, feats = problem(still_camera=False)
    want = ad_jacobian(model, x, feats)
    got = bench.as_csr(entries(bench, bench.JACOBIANS[name], x, feats, xp), N, M, P).toarray()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("name", ["hand_primal", "vmap_primal"])
def test_primals_are_the_models(bench, name):
    model, x, feats = problem(still_camera=name == "hand_primal")
    with jax.enable_x64(True):
        want = np.asarray(model.function("jax")(jnp.asarray(x), jnp.asarray(feats)))
        got = jax.jit(getattr(bench, name), static_argnums=(2, 3))(x, feats, N, M)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)
