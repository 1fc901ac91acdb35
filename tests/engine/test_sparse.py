"""Sparse Jacobians and Hessians: the pattern read from the program, its coloring, the values.

The oracle for values is adlab's own dense derivative, itself checked against
hand-derived ones (test_engine_catalog.py, test_second_order.py); the oracle
for patterns is what each entry structurally depends on, by hand; the
colorings are checked by their defining properties, and those checks are
shown to fail on colorings that lack them.

Internals: the HVP compositions' names (modes.hessian.HVP_NAMES), to run a sparse Hessian
through each; no public function lists them.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from _engine_hand import HAND

import adlab
from adlab.engine.model import precision_scope
from adlab.engine.modes.hessian import HVP_NAMES
from adlab.engine.sparsity import (
    color_columns,
    color_rows,
    hessian_pattern,
    is_column_coloring,
    is_star_coloring,
    jacobian_pattern,
    recovery,
    star_color,
)

SCALAR = ["g9_graphics", "logistic_regression", "mlp_batched", "mlp_per_sample",
          "normal_logpdf", "rosenbrock"]  # fmt: skip


@functools.cache
def model(name: str) -> adlab.Model:
    return adlab.load_model(name, **HAND[name][0])


def as_jacobian(dense: np.ndarray, m: int) -> np.ndarray:
    """A dense derivative laid out as the sparse one: (outputs, inputs), a gradient as one row."""
    return np.asarray(dense).reshape(m, -1)


# ------------------------------------------------------------------ values
@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("name", sorted(HAND))
def test_sparse_jacobian_equals_the_dense_one_on_every_catalog_model(name, mode):
    m = model(name)
    args = m.setup(6)
    got, info = adlab.derivative(m, *args, mode=mode, sparse=True, full_output=True)
    dense = adlab.derivative(m, *args, mode=mode)
    assert isinstance(got, sp.csr_array)
    assert got.shape == as_jacobian(dense, got.shape[0]).shape
    np.testing.assert_allclose(got.toarray(), as_jacobian(dense, got.shape[0]), rtol=1e-12,
                               atol=1e-12 * max(1.0, np.max(np.abs(dense))))  # fmt: skip
    assert info.colors >= 1 and info.nnz == got.nnz and info.f_evals == info.colors


def test_a_banded_jacobian_takes_three_colors_whatever_n():
    m = model("bvp_residual")
    for n in (10, 100, 1000):
        (u,) = m.setup(n)
        p = adlab.prepare(m, u, mode="forward", sparse=True)
        assert (p.colors, p.nnz, p.f_evals) == (3, 3 * n - 2, 3)
        assert is_column_coloring(p.pattern, p.coloring.colors)
        assert p.coloring.lower_bound == 3
        np.testing.assert_allclose(p(u).toarray(), HAND["bvp_residual"][1](u), rtol=1e-13)


@pytest.mark.parametrize("mode", HVP_NAMES)
@pytest.mark.parametrize("name", SCALAR)
def test_sparse_hessian_equals_the_dense_one(name, mode):
    m = model(name)
    args = m.setup(5)
    got = adlab.hessian(m, *args, mode=mode, sparse=True)
    dense = adlab.hessian(m, *args, mode="forward-over-reverse")
    tol = 1e-6 if mode == "numeric" else 1e-11
    assert isinstance(got, sp.csr_array)
    np.testing.assert_allclose(got.toarray(), dense, rtol=tol, atol=tol * np.max(np.abs(dense)))


def test_a_tridiagonal_hessian_takes_three_colors_and_an_arrowhead_two():
    m = model("rosenbrock")
    (x,) = m.setup(500)
    p = adlab.prepare_hessian(m, x, sparse=True)
    assert (p.colors, p.nnz) == (3, 3 * 500 - 2)
    assert is_star_coloring(p.pattern, p.coloring.colors)

    def arrow(x):  # x_0 couples to every x_i: a dense first row and column
        return x[0] * jnp.sum(x[1:] ** 2) + jnp.sum(x**3)

    x = np.linspace(0.5, 1.5, 40)
    p = adlab.prepare_hessian(arrow, x, sparse=True)
    assert p.colors == 2 and color_columns(p.pattern).count == 40  # star vs column coloring
    np.testing.assert_allclose(p(x).toarray(), adlab.hessian(arrow, x), rtol=1e-13)


# --------------------------------------------------------- what sampling misses
def kinked(x):
    """Entry (0, 1) and (0, 0) are nonzero only where x_1 > 5: zero at typical points."""
    return jnp.stack([x[0] * jnp.maximum(x[1] - 5.0, 0.0), x[1] * x[2], jnp.sin(x[2])])


def test_the_pattern_holds_an_entry_that_random_points_miss():
    rng = np.random.default_rng(0)
    sampled = np.zeros((3, 3), dtype=bool)
    for _ in range(100):  # what sampling would find: 100 points in [-1, 1]^3
        x = rng.uniform(-1.0, 1.0, 3)
        sampled |= adlab.derivative(kinked, x, mode="forward") != 0
    assert not sampled[0, 0] and not sampled[0, 1]  # sampling misses both entries

    x = np.array([0.3, 0.2, 0.1])
    p = adlab.prepare(kinked, x, mode="forward", sparse=True)
    pattern = p.pattern.toarray()
    assert pattern[0, 0] and pattern[0, 1] and not pattern[0, 2]
    np.testing.assert_array_equal(p(x).toarray(), adlab.derivative(kinked, x, mode="forward"))
    far = np.array([0.3, 6.0, 0.1])  # past the kink: the entries are there, and right
    want = adlab.derivative(kinked, far, mode="forward")
    assert want[0, 0] != 0 and want[0, 1] != 0
    np.testing.assert_allclose(p(far).toarray(), want, rtol=1e-15)


# ------------------------------------------------------------------ detection
def detected(f, *args, i=0):
    with precision_scope("float64"):
        return jacobian_pattern(f, args, i)


def test_detection_follows_slices_pads_gathers_reductions_and_dot():
    A = np.arange(12.0).reshape(4, 3)

    def f(x):
        shifted = jnp.pad(x[1:], (0, 1))  # x_{i+1}, then 0
        picked = x[jnp.array([3, 0, 0, 2])]  # a gather at known indices
        return jnp.concatenate([shifted * x, picked, A @ x[:3], jnp.cumsum(x)[2:3],
                                jnp.sum(x[:2])[None]])  # fmt: skip

    got = detected(f, np.ones(4)).pattern.toarray()
    want = np.zeros((14, 4), dtype=bool)
    for i in range(4):
        want[i, i] = True
        if i < 3:
            want[i, i + 1] = True
    for row, j in zip(range(4, 8), (3, 0, 0, 2), strict=True):
        want[row, j] = True
    want[8:12, :3] = True  # A @ x[:3]: every row of A is dense
    want[12, :3] = True  # cumsum(x)[2] = x_0 + x_1 + x_2
    want[13, :2] = True
    np.testing.assert_array_equal(got, want)


def test_control_flow_is_walked_inside():
    def f(x):
        c = jax.lax.cond(x[0] > 0, lambda v: v[1] * 2.0, lambda v: v[2] ** 2, x)

        def step(carry, xi):
            return carry * xi, carry + xi

        _, ys = jax.lax.scan(step, 1.0, x)
        return jnp.concatenate([c[None], ys])

    got = detected(f, np.ones(4)).pattern.toarray()
    want = np.zeros((5, 4), dtype=bool)
    want[0, 1] = want[0, 2] = True  # either branch
    for t in range(4):
        want[1 + t, : t + 1] = True  # ys_t = x_0 ... x_{t-1} + x_t
    np.testing.assert_array_equal(got, want)


def test_a_primitive_not_analysed_is_taken_as_dense_and_said():
    def f(x):
        return jnp.sort(x[:2]) + x[2:4]

    found = detected(f, np.ones(4))
    want = np.array([[1, 1, 1, 0], [1, 1, 0, 1]], dtype=bool)
    np.testing.assert_array_equal(found.pattern.toarray(), want)
    assert len(found.notes) == 1 and found.notes[0].startswith("sort")
    p = adlab.prepare(f, np.arange(4.0), mode="forward", sparse=True)
    assert "sort" in p.note
    np.testing.assert_array_equal(p(np.arange(4.0)).toarray(),
                                  adlab.derivative(f, np.arange(4.0), mode="forward"))  # fmt: skip


def test_the_data_are_unknowns_so_the_pattern_holds_for_any_data():
    def f(x, idx):  # where the data points: unknown, so every entry may be hit
        return x[idx] * 2.0

    found = detected(f, np.ones(3), np.array([0, 0]))
    assert found.pattern.toarray().all()


def test_the_hessian_pattern_is_symmetric_and_comes_from_the_gradient():
    def f(x):
        return x[0] * x[3] + jnp.sum(x**2)

    with precision_scope("float64"):
        got = hessian_pattern(f, (np.ones(4),), 0).pattern.toarray()
    want = np.eye(4, dtype=bool)
    want[0, 3] = want[3, 0] = True
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ colorings
def random_symmetric(rng, k):
    a = sp.random_array((k, k), density=rng.uniform(0.05, 0.5), rng=rng, format="csr") != 0
    return sp.csr_array(a + a.T + sp.eye_array(k, dtype=bool), dtype=bool)


def test_colorings_have_their_defining_properties_and_recover_every_entry():
    rng = np.random.default_rng(1)
    for _ in range(50):
        k = int(rng.integers(2, 25))
        pattern = random_symmetric(rng, k)
        coo = sp.coo_array(pattern)
        values = rng.normal(size=(k, k))
        H = (values + values.T) * pattern.toarray()
        star = star_color(pattern)
        assert is_star_coloring(pattern, star.colors)
        a, b = recovery(pattern, star)
        np.testing.assert_allclose((H @ np.eye(star.count)[star.colors])[a, b],
                                   H[coo.row, coo.col])  # fmt: skip
        J = values * pattern.toarray()
        cols, rows = color_columns(pattern), color_rows(pattern)
        assert is_column_coloring(pattern, cols.colors)
        assert is_column_coloring(sp.csr_array(pattern.T), rows.colors)
        assert cols.count >= cols.lower_bound
        a, b = recovery(pattern, cols)
        np.testing.assert_allclose((J @ np.eye(cols.count)[cols.colors])[a, b], J[coo.row, coo.col])
        a, b = recovery(pattern, rows)
        np.testing.assert_allclose((np.eye(rows.count)[rows.colors].T @ J)[a, b],
                                   J[coo.row, coo.col])  # fmt: skip


def test_the_checks_refuse_colorings_without_the_property():
    path = sp.csr_array(sp.diags_array([np.ones(3), np.ones(4), np.ones(3)], offsets=[-1, 0, 1]),
                        dtype=bool)  # fmt: skip
    # 0-1-2-3 colored a b a b: distance-1, but a path on four vertices in two colors
    assert not is_star_coloring(path, np.array([0, 1, 0, 1]))
    assert is_star_coloring(path, np.array([0, 1, 2, 0]))
    assert not is_star_coloring(path, np.array([0, 0, 1, 2]))  # neighbours alike
    # columns 0 and 1 share row 0
    assert not is_column_coloring(path, np.array([0, 0, 1, 2]))
    assert is_column_coloring(path, np.array([0, 1, 2, 0]))


# ------------------------------------------------------------- the prepared form
def test_prepared_sparse_rebinds_data_and_hands_out_fresh_matrices():
    m = model("logistic_regression")
    w, X, y = m.setup(4)
    p = adlab.prepare_hessian(m, w, X, y, sparse=True)
    assert isinstance(p, adlab.SparsePrepared) and p.colors == 4  # a dense Hessian
    first = p(w)
    first.data[:] = 0.0
    first.eliminate_zeros()  # scipy edits in place: the next result must not see it
    np.testing.assert_allclose(p(w).toarray(), adlab.hessian(m, w, X, y), rtol=1e-13)
    X2 = X[::-1].copy()
    np.testing.assert_allclose(p(w, X2, y).toarray(), adlab.hessian(m, w, X2, y), rtol=1e-13)
    cost = p.cost()
    assert cost is not None and cost["flops"] > 0
    assert p.compile_s > 0 and p.f_evals == 4


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda m, x: adlab.derivative(m, x, mode="numeric", sparse=True), "'forward' or"),
        (lambda m, x: adlab.derivative(m, x, backend="numpy", mode="numeric", sparse=True),
         "'forward' or 'reverse'"),
        (lambda m, x: adlab.prepare(m, x, mode="forward", sparse=True, backend="numpy"),
         "backend 'numpy'"),
        (lambda m, x: adlab.hessian(m, x, mode="complex-step", sparse=True), "HVPs"),
    ],
)  # fmt: skip
def test_sparse_refusals_say_what_to_do(call, words):
    m = model("rosenbrock")
    (x,) = m.setup(4)
    with pytest.raises(ValueError, match=words):
        call(m, x)


def test_a_sweep_records_colors_and_nonzeros():
    records = list(adlab.bench("bvp_residual", sizes=[12], modes="forward(sparse),reverse(sparse)",
                               budget_s=20, repeats=2, warn=False))  # fmt: skip
    sparse = [r for r in records if r.mode != "primal"]
    assert [r.label for r in sparse] == ["forward(sparse)", "reverse(sparse)"]
    for r in sparse:
        assert r.skipped is None, r.skipped
        assert (r.colors, r.nnz, r.f_evals) == (3, 34, 3)
        assert r.error is not None and r.error <= 1e-13
