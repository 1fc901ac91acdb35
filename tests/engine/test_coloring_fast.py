"""The colorings keep each row's (or vertex's) colors as the bits of Python ints: the
first-fit coloring held them as NumPy booleans, one NumPy call per column (ba1: 0.8 s a
coloring), the graph coloring was networkx's (4 s at ``WORK_MAX``), the star coloring
held sets and dicts. The colors must not move: the oracles are the old first-fit and
star code, kept here as they were, and networkx.

Internals: the colorings' inner loops (_first_fit, _graph_colors) and star_color's colors
are compared with the slower versions they replaced, color for color: the order of a greedy
coloring is not public, and patching coloring's own names counts what runs.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from adlab.engine.sparsity import coloring
from adlab.engine.sparsity.coloring import (
    _first_fit,
    _graph_colors,
    color_columns,
    is_column_coloring,
    is_star_coloring,
    star_color,
)


def _most(counts: np.ndarray) -> int:
    return int(counts.max()) if counts.size else 0


def first_fit_as_it_was(pattern: sp.csr_array) -> np.ndarray:
    """adlab.engine.sparsity.coloring._first_fit before the bitmasks (commit 2066d92)."""
    csr = sp.csr_array(pattern, dtype=bool)
    per_row = np.diff(csr.indptr)
    csc = sp.csc_array(csr)
    csc.sort_indices()
    bound = sp.csc_array(csc, dtype=np.int64).T @ per_row
    used = np.zeros((csc.shape[0], max(_most(per_row), 1)), dtype=bool)
    colors = np.zeros(csc.shape[1], dtype=np.int64)
    for j in np.argsort(-bound, kind="stable").tolist():
        rows = csc.indices[csc.indptr[j] : csc.indptr[j + 1]]
        free = ~used[rows].any(axis=0)
        c = int(free.argmax()) if free.any() else used.shape[1]
        if c == used.shape[1]:  # every color taken: twice as many columns of colors
            used = np.concatenate([used, np.zeros_like(used)], axis=1)
        used[rows, c] = True
        colors[j] = c
    return colors


def random_pattern(rng: np.random.Generator, m: int, n: int, density: float) -> sp.csr_array:
    return sp.csr_array(sp.random_array((m, n), density=density, rng=rng) != 0)


def same_colors(pattern: sp.csr_array) -> np.ndarray:
    got, want = _first_fit(pattern), first_fit_as_it_was(pattern)
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert is_column_coloring(pattern, got)
    return got


@pytest.mark.parametrize("density", [0.02, 0.1, 0.4])
def test_random_patterns_get_the_colors_they_got(density):
    rng = np.random.default_rng(7)
    for _ in range(15):
        m, n = rng.integers(1, 80, 2)
        same_colors(random_pattern(rng, int(m), int(n), density))


def test_more_than_64_colors_are_the_same():
    """Past 64 colors a row's bits no longer fit a machine word, and the old table doubled."""
    rng = np.random.default_rng(3)
    dense_rows = np.zeros((3, 300), dtype=bool)
    dense_rows[0, :150] = dense_rows[1, 100:] = dense_rows[2, ::2] = True
    pattern = sp.csr_array(np.vstack([dense_rows, random_pattern(rng, 200, 300, 0.05).toarray()]))
    colors = same_colors(pattern)
    assert colors.max() + 1 >= 200  # row 1 alone needs 200 colors
    # fully dense: every column its own color, 0..n-1 in the greedy order
    assert sorted(same_colors(sp.csr_array(np.ones((4, 130), dtype=bool)))) == list(range(130))


def test_empty_rows_columns_and_shapes():
    rng = np.random.default_rng(5)
    a = random_pattern(rng, 40, 30, 0.15).toarray()
    a[::3] = False  # empty rows
    a[:, ::4] = False  # empty columns: color 0, with anything
    colors = same_colors(sp.csr_array(a))
    assert np.all(colors[::4] == 0)
    assert same_colors(sp.csr_array((0, 5), dtype=bool)).tolist() == [0] * 5
    assert same_colors(sp.csr_array((6, 0), dtype=bool)).shape == (0,)
    assert same_colors(sp.csr_array((0, 0), dtype=bool)).shape == (0,)
    assert same_colors(sp.csr_array((7, 9), dtype=bool)).tolist() == [0] * 9


def networkx_colors(adjacency: sp.csr_array) -> np.ndarray:
    """adlab.engine.sparsity.coloring._graph_colors before: networkx's greedy, largest first."""
    import networkx as nx

    found = nx.greedy_color(nx.from_scipy_sparse_array(adjacency), strategy="largest_first")
    colors = np.zeros(adjacency.shape[0], dtype=np.int64)
    colors[list(found)] = list(found.values())
    return colors


@pytest.mark.parametrize("density", [0.02, 0.1, 0.4])
def test_graph_colors_are_networkx_largest_first(density):
    """Column intersection graphs, as ``color_columns`` builds them, with many degree ties
    (networkx keeps tied vertices in their order: so must the ordering here)."""
    rng = np.random.default_rng(11)
    for _ in range(12):
        m, n = rng.integers(1, 90, 2)
        p = random_pattern(rng, int(m), int(n), density)
        adjacency = _adjacency(p)
        got = _graph_colors(adjacency)
        np.testing.assert_array_equal(got, networkx_colors(adjacency))
        assert is_column_coloring(p, got)
        np.testing.assert_array_equal(color_columns(p).colors, got)  # the path it takes


def test_a_graph_with_more_than_64_colors_and_lone_vertices_is_colored_as_networkx():
    a = np.ones((70, 70), dtype=bool)  # a clique of 70: 70 colors
    a[60:, 60:] = False  # ... but for 10 vertices that only see the first 60
    a = np.pad(a, ((0, 5), (0, 5)))  # and 5 with no neighbour
    np.fill_diagonal(a, False)
    adjacency = sp.csr_array(a)
    got = _graph_colors(adjacency)
    np.testing.assert_array_equal(got, networkx_colors(adjacency))
    assert got.max() == 60 and np.all(got[70:] == 0)


def test_the_threshold_still_picks_the_graph_below_it_and_first_fit_above(monkeypatch):
    """Where the two paths differ in colors, ``WORK_MAX`` still decides which is taken."""
    rng = np.random.default_rng(4)
    differ = None
    for _ in range(200):
        p = random_pattern(rng, 30, 30, 0.15)
        if not np.array_equal(_first_fit(p), _graph_colors(_adjacency(p))):
            differ = p
            break
    assert differ is not None
    np.testing.assert_array_equal(color_columns(differ).colors, _graph_colors(_adjacency(differ)))
    monkeypatch.setattr(coloring, "WORK_MAX", 0)
    np.testing.assert_array_equal(color_columns(differ).colors, _first_fit(differ))


def _adjacency(p: sp.csr_array) -> sp.csr_array:
    q = sp.csr_array(p, dtype=np.int8)
    adjacency = sp.csr_array(q.T @ q, dtype=bool)
    adjacency.setdiag(False)
    adjacency.eliminate_zeros()
    return adjacency


def star_as_it_was(pattern: sp.csr_array) -> np.ndarray:
    """adlab.engine.sparsity.coloring.star_color's colors before the bitmasks (commit 2066d92)."""
    sym = sp.csr_array(pattern, dtype=bool)
    sym = sp.csr_array(sym + sym.T, dtype=bool)
    sym.setdiag(False)
    sym.eliminate_zeros()
    n = sym.shape[0]
    degree = np.diff(sym.indptr)
    nbrs = [sym.indices[sym.indptr[v] : sym.indptr[v + 1]].tolist() for v in range(n)]
    color = [-1] * n
    seen: list[dict[int, int]] = [{} for _ in range(n)]
    for v in np.argsort(-degree, kind="stable").tolist():
        forbidden = set()
        for w in nbrs[v]:
            cw = color[w]
            if cw < 0:
                continue
            forbidden.add(cw)
            for x in nbrs[w]:
                if x != v and color[x] >= 0 and seen[x].get(cw, 0) >= 2:
                    forbidden.add(color[x])
            if seen[v].get(cw, 0) >= 2:
                forbidden.update(color[y] for y in nbrs[w] if y != v and color[y] >= 0)
        c = 0
        while c in forbidden:
            c += 1
        color[v] = c
        for u in nbrs[v]:
            seen[u][c] = seen[u].get(c, 0) + 1
    return np.asarray(color, dtype=np.int64)


def same_star(pattern: sp.csr_array) -> np.ndarray:
    got, want = star_color(pattern), star_as_it_was(pattern)
    np.testing.assert_array_equal(got.colors, want)
    assert got.count == (int(want.max()) + 1 if want.size else 0)
    assert is_star_coloring(pattern, got.colors)
    return got.colors


@pytest.mark.parametrize("density", [0.01, 0.05, 0.2, 0.6])
def test_star_colorings_are_the_colors_they_were(density):
    """Random patterns (made symmetric by ``star_color``), some with a diagonal."""
    rng = np.random.default_rng(9)
    for _ in range(12):
        n = int(rng.integers(1, 90))
        p = random_pattern(rng, n, n, density)
        if rng.random() < 0.5:
            p = sp.csr_array(p + sp.eye_array(n, dtype=bool), dtype=bool)
        same_star(p)


def test_star_colorings_with_many_colors_arrowheads_and_nothing():
    n = 100
    arrow = np.eye(n, dtype=bool)
    arrow[0] = arrow[:, 0] = True
    assert same_star(sp.csr_array(arrow)).max() == 1  # 2 colors
    dense = same_star(sp.csr_array(np.ones((80, 80), dtype=bool)))  # 80 colors
    assert sorted(dense) == list(range(80))
    rng = np.random.default_rng(1)
    a = np.zeros((150, 150), dtype=bool)
    a[:70, :70] = True  # a clique of 70 beside a sparse part
    a[70:, 70:] = random_pattern(rng, 80, 80, 0.08).toarray()
    assert same_star(sp.csr_array(a)).max() >= 69
    assert same_star(sp.csr_array((0, 0), dtype=bool)).shape == (0,)
    assert same_star(sp.csr_array((5, 5), dtype=bool)).tolist() == [0] * 5
