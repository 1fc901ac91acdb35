"""How numeric and complex-step modes build and evaluate their batches of points.

Three forms (scatter, one select, chunks under ``lax.map``) must give the same
points; chunking must not change the derivative, and must not make XLA's
counts per chunk instead of per derivative.

Internals: JAX's batches of points themselves (the JAX backend's jax_batch, CHUNK, n_chunks:
scatter, select and chunks must give the same points) and JAX's inline-dispatch line in
flops (measure.env.INLINE_FLOPS); prepare shows neither.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _engine_hand import wide_moments

import adlab
from adlab.engine.backends.jax.batch import CHUNK, jax_batch, n_chunks

WIDE = adlab.load_model("wide_moments")
NORMAL = adlab.load_model("normal_logpdf")


def rows_of(x, cols, coords):
    """The batch the slow, obvious way: copy x, set one coordinate per row."""
    out = np.repeat(np.asarray(x)[None, :], len(cols), axis=0).astype(np.asarray(coords).dtype)
    out[np.arange(len(cols)), cols] = coords
    return out


@pytest.mark.parametrize(
    ("scatter_max", "chunk"),
    [(10**6, None), (0, None), (0, 8), (0, 13)],
    ids=["scatter", "select", "chunks-of-8", "chunks-of-13"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_every_form_evaluates_f_at_the_same_points(scatter_max, chunk, dtype):
    """f returns its argument, so the batch itself comes back, padding trimmed."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=5)
    cols = np.array([0, 1, 2, 3, 4, 0, 3])  # k = 7 rows: chunks need padding
    step = rng.normal(size=7) if dtype is np.float64 else 1j * rng.normal(size=7)
    coords = (x[cols] + step).astype(dtype)
    with jax.enable_x64(True):
        run = jax.jit(lambda x, c: jax_batch(lambda v: v, (x,), 0, cols, c, scatter_max, chunk))
        got, points = (np.asarray(a) for a in run(jnp.asarray(x), jnp.asarray(coords)))
    want = rows_of(x, cols, coords)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # the coordinates each evaluation saw, which differences divide by
    np.testing.assert_array_equal(points, coords)


def test_chunk_counts():
    assert n_chunks(4000, 1000) == -(-4000 * 1000 // CHUNK)  # 31 chunks of about CHUNK
    assert n_chunks(400, 100) == 1  # 40,000 elements: one select
    assert n_chunks(2 * CHUNK, 1) == 1  # up to twice CHUNK stays whole
    assert n_chunks(2 * CHUNK + 1, 1) == 3
    assert n_chunks(3, 10**6) == 3  # never more chunks than points
    assert n_chunks(10**6, 10**6, chunk=None) == 1


@pytest.mark.parametrize(
    ("mode", "scheme"),
    [("numeric", "central"), ("numeric", "richardson"), ("complex-step", "central")],
)
def test_chunked_derivative_matches_the_hand_derived_one(mode, scheme):
    """wide_moments at n = 600: 3 x 600 Jacobian, batches of up to 1.4M elements."""
    (x,) = WIDE.setup(600)
    p = adlab.prepare(WIDE, x, mode=mode, scheme=scheme)
    assert p._cost_fn is not None, "n = 600 should be chunked"
    want = wide_moments(x)
    got = np.asarray(p(x))
    tol = {"central": 1e-8, "richardson": 1e-10}[scheme] if mode == "numeric" else 1e-14
    assert np.linalg.norm(got - want) <= tol * np.linalg.norm(want)


@pytest.mark.parametrize("scheme", ["forward", "central", "richardson"])
def test_chunked_costs_count_every_chunk(scheme):
    """XLA counts a loop body once; adlab reports the whole derivative's flops.

    normal_logpdf's flops per evaluation grow with n, so a derivative at
    n = 1000 costs about (evals x n) x the flops of one element: chunked or not,
    flops / (f_evals x primal flops) must stay near 1, not near 1 / chunks.
    """
    (x, *rest) = NORMAL.setup(1000)
    p = adlab.prepare(NORMAL, x, *rest, mode="numeric", scheme=scheme)
    primal = adlab.prepare(NORMAL, x, *rest, mode="primal").cost()["flops"]
    cost = p.cost()
    assert n_chunks(p.f_evals, 1000) >= 7
    assert 0.8 <= cost["flops"] / (p.f_evals * primal) <= 3
    # ... while the memory is the chunked program's own: far below the batch
    batch_bytes = p.f_evals * 1000 * 8
    assert cost["temp_bytes"] < batch_bytes / 4


SIN_EXP = adlab.Model.from_source(
    "def setup(n, rng):\n    return (rng.uniform(-1.0, 1.0, n),)\n\n"
    "def f(x):\n    return np.sum(np.sin(x) * np.exp(x))\n",
    name="sin_exp",
)


@pytest.mark.parametrize("scheme", ["forward", "central", "richardson"])
def test_small_differences_stay_under_the_inline_line_with_their_batch(scheme):
    """JAX's CPU client runs a program inline only under 1000 XLA flops.

    sin·exp at n = 10: the plain batch of Richardson's 40 points counts 760
    flops. The difference around it must add little enough arithmetic to stay
    under the line too (it counted 1110 when the step arithmetic was copied
    into every fusion), or it pays a thread hand-off its batch does not.
    """
    from adlab.measure.env import INLINE_FLOPS

    (x,) = SIN_EXP.setup(10)
    p = adlab.prepare(SIN_EXP, x, mode="numeric", scheme=scheme)
    plain = adlab.prepare(SIN_EXP, x, mode="primal").cost()["flops"] * p.f_evals
    assert plain < INLINE_FLOPS  # the premise: the batch itself is inline
    flops = p.cost()["flops"]
    assert flops < INLINE_FLOPS, f"{scheme}: {flops} flops"
    assert flops - plain <= 25 * x.size  # a few operations per coordinate
