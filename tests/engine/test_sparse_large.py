"""Sparse derivatives at the sizes GradBench's ba asks for, tried small: patterns too large to
hold are refused with the user's line; tiles and gathers at data indices are followed; a
large pattern is colored without building its graph; many colors are taken in chunks.

Oracles: the dense Jacobian (its nonzeros, its values), patterns written out by hand,
and the colorings' defining property (``is_column_coloring``).

Internals: the limits that decide how a large pattern is handled, lowered to reach the large
path small: coloring.WORK_MAX, programs.memory.CHUNK_BUDGET, and the passes' tuning
(sparsity.passes: seconds, TUNE_MIN_S, Program, WRITTEN_OUT); none is a public setting.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import adlab
from adlab.engine.model import precision_scope
from adlab.engine.programs import memory
from adlab.engine.sparsity import (
    color_columns,
    color_rows,
    coloring,
    is_column_coloring,
    jacobian_pattern,
    recovery,
)
from adlab.engine.sparsity import passes as sparse_passes

# n = 50,000: each output entry depends on all 50,000 inputs, 2.5e9 entries in all,
# past SciPy's 2**31 (where it failed with "negative dimensions are not allowed")
HUGE = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    s = {expr}
    return s * x
"""


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("np.sort(x)", ["line 7 (`s = np.sort(x)`)", "`sort`", "does not follow"]),
        ("np.sum(x)", ["line 8 (`return s * x`)", "nearly dense"]),
    ],
)
def test_a_pattern_too_large_to_hold_is_refused_naming_the_line(expr, words):
    m = adlab.Model.from_source(HUGE.format(expr=expr))
    (x,) = m.setup(50_000)
    with pytest.raises(memory.SizeError) as refused:
        adlab.prepare(m, x, mode="forward", sparse=True)
    message = str(refused.value)
    for w in [*words, "2.5e+09 entries", "sparse=False"]:
        assert w in message, message


def nonzeros(f, x, *data):
    """The pattern detected, and where the dense Jacobian is nonzero."""
    with precision_scope("float64"):
        found = jacobian_pattern(f, (x, *data), 0)
    dense = np.asarray(adlab.derivative(f, x, *data, mode="forward")).reshape(found.pattern.shape)
    return found, dense != 0


def test_tile_is_followed_entry_by_entry():
    def f(x):
        return (jnp.tile(x[:3] ** 2, (2, 2)).ravel()[:10] * jnp.tile(x[3:], 2))[:10]

    found, dense = nonzeros(f, np.arange(1.0, 9.0))
    assert found.notes == ()
    np.testing.assert_array_equal(found.pattern.toarray(), dense)
    assert found.nnz < dense.size / 3  # not taken as dense


def test_a_gather_at_data_indices_keeps_each_row_apart():
    """x.reshape(3, 4)[:, idx]: idx is data, so any column may be picked, but output row k
    comes from row k of x only, whatever idx holds."""

    def f(x, idx):
        return jnp.ravel(jnp.reshape(x, (3, 4))[:, idx] ** 2)

    x = np.arange(1.0, 13.0)
    want = np.kron(np.eye(3, dtype=bool), np.ones((5, 4), dtype=bool))  # row k: x[k, :]
    seen = np.zeros_like(want)
    for idx in ([0, 1, 2, 3, 3], [3, 3, 0, 2, 1], [1, 1, 1, 1, 1]):
        found, dense = nonzeros(f, x, np.array(idx))
        assert found.notes == ()
        np.testing.assert_array_equal(found.pattern.toarray(), want)
        seen |= dense
    assert not (seen & ~want).any()  # every entry the data made is in the pattern


def test_a_gather_of_rows_at_data_indices_keeps_each_column_apart():
    def f(x, idx):  # output (i, c) is x[idx_i, c]: column c of x, any row
        return jnp.ravel(jnp.reshape(x, (4, 2))[idx] * 3.0)

    found, dense = nonzeros(f, np.arange(8.0), np.array([2, 0, 3]))
    want = np.zeros((6, 8), dtype=bool)
    for i in range(3):
        for c in range(2):
            want[2 * i + c, c::2] = True
    np.testing.assert_array_equal(found.pattern.toarray(), want)
    assert not (dense & ~want).any()


def ba(n=40, cameras=5):
    m = adlab.load_model("ba", CAMERAS=cameras)
    return m, m.setup(n)


def test_a_large_pattern_is_colored_first_fit_as_well_as_networkx(monkeypatch):
    m, args = ba()
    with precision_scope("float64"):
        pattern = jacobian_pattern(m.function("jax"), args, 0).pattern
    small = color_columns(pattern), color_rows(pattern)
    monkeypatch.setattr(coloring, "WORK_MAX", 0)  # every pattern counts as large
    large = color_columns(pattern), color_rows(pattern)
    for by_graph, first_fit, p in zip(small, large, (pattern, sp.csr_array(pattern.T)),
                                      strict=True):  # fmt: skip
        assert is_column_coloring(p, first_fit.colors)
        # ba's columns need as many colors as a row's nonzeros; its rows as a camera's rows
        assert first_fit.count == first_fit.lower_bound == by_graph.count


def test_first_fit_colorings_are_valid_and_recover_every_entry(monkeypatch):
    monkeypatch.setattr(coloring, "WORK_MAX", 0)
    rng = np.random.default_rng(2)
    for _ in range(20):
        m, n = rng.integers(2, 60, 2)
        pattern = sp.csr_array(sp.random_array((m, n), density=0.1, rng=rng) != 0)
        coo = sp.coo_array(pattern)
        J = rng.normal(size=(m, n)) * pattern.toarray()
        cols, rows = color_columns(pattern), color_rows(pattern)
        assert is_column_coloring(pattern, cols.colors) and cols.count >= cols.lower_bound
        assert is_column_coloring(sp.csr_array(pattern.T), rows.colors)
        a, b = recovery(pattern, cols)
        np.testing.assert_array_equal((J @ np.eye(cols.count)[cols.colors])[a, b],
                                      J[coo.row, coo.col])  # fmt: skip
        a, b = recovery(pattern, rows)
        np.testing.assert_array_equal((np.eye(rows.count)[rows.colors].T @ J)[a, b],
                                      J[coo.row, coo.col])  # fmt: skip


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_ba_sparse_jacobian_equals_the_dense_one_in_chunks_of_colors(mode, monkeypatch):
    m, args = ba()
    dense = adlab.derivative(m, *args, mode=mode)
    monkeypatch.setattr(coloring, "WORK_MAX", 0)
    monkeypatch.setattr(memory, "CHUNK_BUDGET", 1)  # one color per chunk
    p = adlab.prepare(m, *args, mode=mode, sparse=True)
    # forward: a residual's 14 columns; reverse: through the selection front, an
    # observation's 2 reprojection rows (J_f's own rows: a camera's 8 observations, 2 rows)
    assert p.colors == (14 if mode == "forward" else 2)
    assert p.via is None if mode == "forward" else "(was at least 16)" in p.via
    np.testing.assert_allclose(p(*args).toarray(), dense, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("faster", ["one after another", "batched"])
def test_the_passes_run_the_way_timed_faster_with_the_same_values(faster, monkeypatch):
    """Timing picks all colors batched or one color after another; both give the Jacobian.
    The clock is replaced (a test never asserts wall-clock times): the chosen way is the
    one whose calls read shorter."""
    m = adlab.load_model("bvp_residual")
    args = m.setup(12)
    dense = adlab.derivative(m, *args, mode="forward")
    calls = []

    def clock(p):  # the batched program is built first, then the one-at-a-time one
        calls.append(p)
        first = calls[0] is p
        return 0.1 if first == (faster == "batched") else 0.2

    monkeypatch.setattr(sparse_passes, "seconds", clock)
    p = adlab.prepare(m, *args, mode="forward", sparse=True)
    assert p.at_once == (p.colors if faster == "batched" else 1)
    assert len({id(c) for c in calls}) == 2  # both ways were built and timed
    np.testing.assert_allclose(p(*args).toarray(), dense, rtol=1e-13, atol=1e-13)


def test_a_quick_derivative_is_not_tuned(monkeypatch):
    """Below TUNE_MIN_S a call is too cheap for a second compile to pay off."""
    m = adlab.load_model("bvp_residual")
    args = m.setup(12)
    monkeypatch.setattr(sparse_passes, "seconds", lambda p: sparse_passes.TUNE_MIN_S / 2)
    p = adlab.prepare(m, *args, mode="forward", sparse=True)
    assert p.at_once == p.colors


@pytest.mark.parametrize("way", [None, 1, sparse_passes.WRITTEN_OUT])
def test_reverse_mode_with_few_colors_also_times_its_passes_written_out(way, monkeypatch):
    """In reverse mode with few colors a third way is built and timed: each pass written
    out in the program, its cotangents read by the next one. Whichever way reads
    fastest is kept, and each gives the same Jacobian."""
    m, args = ba()
    dense = adlab.derivative(m, *args, mode="reverse")
    built = []
    real = sparse_passes.Program.__init__

    def note(self, passes, compute, read, precision, width):
        built.append(width)
        self.width = width
        real(self, passes, compute, read, precision, width)

    monkeypatch.setattr(sparse_passes.Program, "__init__", note)
    monkeypatch.setattr(sparse_passes, "seconds", lambda p: 0.1 if p.width == way else 0.2)
    p = adlab.prepare(m, *args, mode="reverse", sparse=True)
    assert p.colors == 2 and sorted(built, key=str) == sorted([None, 1, 0], key=str)
    assert p.written_out == (way == sparse_passes.WRITTEN_OUT)
    assert p.at_once == (2 if way is None else 1)
    np.testing.assert_allclose(p(*args).toarray(), dense, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(np.asarray(p.values(*args)), p(*args).data)
