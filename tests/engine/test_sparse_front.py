"""Sparse reverse mode through the selection front (``adlab.engine.sparsity.front``): f = g(L(x)),
L only moving x's entries, so J_f = J_g S and J_g's rows take fewer colors.

Oracles: the dense Jacobian (reverse mode, no coloring), x's entries themselves (each
front entry is one of them), and the row coloring of J_f's own pattern (the colors the
front must beat to be used).

Internals: the front found inside sparse reverse mode (front.find_front) and the chunking of
passes (programs.memory: CHUNK_BUDGET, chunk_columns, patched to force chunks); prepare
shows neither.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab.engine.model import precision_scope
from adlab.engine.programs import memory
from adlab.engine.sparsity import PatternTooLarge, color_rows, front, jacobian_pattern

# rows share x's entries only through copies: x[IDX] repeats entries, so J_f's rows need
# as many colors as an entry is repeated; g's rows share none
GATHER = """
IDX = [0, 3, 3, 1, 0, 2, 3, 4, 0, 5, 5, 3]


def setup(n, rng):
    return (rng.normal(size=6),)


def f(x):
    idx = np.asarray(IDX)
    return {expr}
"""


def sparse_and_dense(m, *args):
    p = adlab.prepare(m, *args, mode="reverse", sparse=True)
    dense = np.asarray(adlab.derivative(m, *args, mode="reverse")).reshape(p.pattern.shape)
    return p, p(*args).toarray(), dense


def own_rows(m, *args):
    """The colors J_f's own rows take: what reverse mode took before the front."""
    with precision_scope("float64"):
        return color_rows(jacobian_pattern(m.function("jax"), args, 0).pattern).count


@pytest.mark.parametrize(("cameras", "n"), [(1, 6), (3, 30), (5, 40), (7, 45)])
def test_ba_through_the_front_equals_the_dense_jacobian_in_two_colors(cameras, n):
    m = adlab.load_model("ba", CAMERAS=cameras)
    args = m.setup(n)
    p, sparse, dense = sparse_and_dense(m, *args)
    was = own_rows(m, *args)
    # an observation's two reprojection rows share its copies; its weight row uses none
    assert p.colors == 2 < was
    # J_f's rows are not colored where more rows than 2 share a column (ba's, always)
    assert p.via.startswith(f"2 row colors through the selection front (was at least {was})")
    assert p.info().via == p.via and "via=" in repr(p)
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-12)
    assert np.count_nonzero(dense) <= p.nnz


@pytest.mark.parametrize(
    "expr",
    [
        "np.sin(x[idx]) * x[idx[::-1]]",  # two copies of one entry in one row: summed
        "x[idx] * x[idx]",  # one front value used twice
        "np.concatenate([x[idx] ** 2, np.exp(x[1:4])])",
    ],
)
def test_a_gather_at_constant_indices_sums_the_copies_of_an_entry(expr):
    m = adlab.Model.from_source(GATHER.format(expr=expr))
    (x,) = m.setup(1)
    p, sparse, dense = sparse_and_dense(m, x)
    assert p.colors < own_rows(m, x) and p.via
    np.testing.assert_allclose(sparse, dense, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize(
    "cycle",
    [
        "np.tile(rows, (reps, 1))[:p]",  # its own primitive
        # a jitted function of jnp's; its mode "fill" casts NaN to the labels' integers,
        # which NumPy warns of (an error under this suite's filter), not here
        "np.take(rows, np.arange(p) % k, axis=0)",
        "np.flip(np.flip(rows, 0)[np.arange(p) % k][::-1], 0)",  # jitted, twice
    ],
)
def test_ba_written_with_library_selections_still_goes_through_the_front(cycle):
    """np.tile and the selections jnp runs as jitted functions (np.take, np.flip) move
    entries as a gather does: the front walks into them, and ba keeps its 2 colors."""
    source = (Path(adlab.__file__).parent / "catalog" / "ba.py").read_text()
    written = "    return np.broadcast_to(rows[None], (reps, k, d)).reshape(reps * k, d)[:p]"
    assert written in source
    m = adlab.Model.from_source(source.replace(written, f"    return {cycle}"), name="ba")
    m = m.with_settings(CAMERAS=5)
    args = m.setup(40)
    p, sparse, dense = sparse_and_dense(m, *args)
    assert p.colors == 2 < own_rows(m, *args) and p.via
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize(
    "expr",
    [
        "np.where(x[idx] > 0, x[idx], 0.0) ** 2",  # a jitted function comparing values
        "x[np.argsort(x)][idx] ** 2",  # indices read from x's values: not known
        "np.roll(x, 1)[idx] * x[idx]",  # jitted, a selection: walked into
    ],
)
def test_a_call_that_reads_values_is_not_taken_for_a_selection(expr):
    """A jitted function whose body compares or sorts x's values is arithmetic, not a
    selection: the front stops before it, and the Jacobian is still exact."""
    m = adlab.Model.from_source(GATHER.format(expr=expr))
    (x,) = m.setup(1)
    p, sparse, dense = sparse_and_dense(m, x)
    np.testing.assert_allclose(sparse, dense, rtol=1e-14, atol=1e-14)


def test_x_entering_arithmetic_directly_is_its_own_front_value():
    m = adlab.Model.from_source(GATHER.format(expr="x * x[idx[:6]]"))  # row 0: x0 twice
    (x,) = m.setup(1)
    with precision_scope("float64"):
        found = front.find_front(m.function("jax"), (x,), 0)
        lifted = np.concatenate([np.ravel(v) for v in found.lift(x)])
        pattern = jacobian_pattern(m.function("jax"), (x,), 0).pattern
        rows, _ = front.front_rows(m.function("jax"), (x,), 0, pattern)
    assert rows.to is not None  # row 0's two copies of x[0] are added up
    blocks = [found.src[k : k + 6] for k in range(0, found.size, 6)]
    assert any(np.array_equal(b, np.arange(6)) for b in blocks)  # x itself, used by mul
    np.testing.assert_array_equal(lifted, x[found.src])  # each front entry is one of x's
    p, sparse, dense = sparse_and_dense(m, x)
    assert p.colors == 1 < own_rows(m, x)
    np.testing.assert_allclose(sparse, dense, rtol=1e-14, atol=1e-14)


def test_a_model_with_no_data_movement_has_no_front_and_runs_as_before():
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
        "def f(x):\n    return np.sin(x) * np.cumsum(x)\n"
    )
    (x,) = m.setup(8)
    with precision_scope("float64"):
        assert front.find_front(m.function("jax"), (x,), 0) is None
    p, sparse, dense = sparse_and_dense(m, x)
    assert p.via is None and p.info().via is None and "via=" not in repr(p)
    assert p.colors == own_rows(m, x)
    np.testing.assert_allclose(sparse, dense, rtol=1e-14, atol=1e-14)


def test_the_front_is_left_out_where_its_pattern_cannot_be_held(monkeypatch):
    """g's pattern can hold more entries than f's (an entry copied K times into one row):
    past what can be held, reverse mode colors J_f's rows as it did."""
    m = adlab.load_model("ba", CAMERAS=3)
    args = m.setup(30)

    def too_large(*a, **k):
        raise PatternTooLarge(10**12, 1, 10**9)

    monkeypatch.setattr(front, "jacobian_pattern", too_large)
    p, sparse, dense = sparse_and_dense(m, *args)
    assert p.via is None and p.colors == own_rows(m, *args)
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-12)


def test_a_large_front_is_taken_in_chunks_of_colors_sized_by_its_passes(monkeypatch):
    """x broadcast to (n, n) is a front of n^2 copies (the program holds them anyway):
    two passes of g give every row (was 2n). A pass's bytes count the front's cotangent,
    so a budget below one pass takes the colors one at a time, with the same values."""
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=(n, n))\n\n\n"
        "def f(x, A):\n    copies = np.broadcast_to(x, A.shape)\n"
        "    r = np.sum(A * np.sin(copies * A), axis=1) + np.exp(x)\n"
        "    return np.concatenate([r, np.cos(r)])\n"
    )
    n = 40
    x, A = m.setup(n)
    p, sparse, dense = sparse_and_dense(m, x, A)
    assert p.colors == 2 and own_rows(m, x, A) == 2 * n
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-13)
    asked = []

    def chunk_columns(count, bytes_per):
        asked.append(bytes_per)
        return chunked(count, bytes_per)

    chunked = memory.chunk_columns
    monkeypatch.setattr(memory, "CHUNK_BUDGET", n * n * 8)  # less than one pass holds
    monkeypatch.setattr(memory, "chunk_columns", chunk_columns)
    p = adlab.prepare(m, x, A, mode="reverse", sparse=True)
    assert p.via and asked and min(asked) > n * n * 8  # the front's cotangent and more
    assert chunked(p.colors, min(asked)) == 1  # so one color at a time
    np.testing.assert_allclose(p(x, A).toarray(), dense, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_the_front_of_a_later_argument_at_either_precision(precision):
    m = adlab.Model.from_source(
        "IDX = [0, 3, 3, 1, 0, 2, 3, 4, 0, 5, 5, 3]\n\n\n"
        "def setup(n, rng):\n    return rng.normal(size=3), rng.normal(size=6)\n\n\n"
        "def f(c, x):\n    idx = np.asarray(IDX)\n"
        "    return np.sin(x[idx]) * x[idx[::-1]] * c[0]\n"
    )
    c, x = m.setup(1)
    p = adlab.prepare(m, c, x, mode="reverse", sparse=True, wrt=1, precision=precision)
    dense = adlab.derivative(m, c, x, mode="reverse", wrt=1, precision=precision)
    assert p.colors == 1 and "(was at least 8)" in p.via  # x[3] reaches 8 of 12 rows
    tol = 1e-6 if precision == "float32" else 1e-14
    np.testing.assert_allclose(p(c, x).toarray(), np.asarray(dense).reshape(p.pattern.shape),
                               rtol=tol, atol=tol)  # fmt: skip
