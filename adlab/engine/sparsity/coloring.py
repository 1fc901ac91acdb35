"""Coloring a sparsity pattern: which columns (or rows) one AD pass can take together.

Two columns whose nonzeros share no row are structurally orthogonal: one
forward pass along the sum of their seeds gives both, each entry alone in its
row of the product (Curtis, Powell & Reid 1974). Grouping the columns so is a
distance-1 coloring of the column intersection graph (columns adjacent when
they share a row); reverse mode colors rows the same way. The greedy coloring
here takes the vertices largest degree first, as networkx's would (the tests
hold it to networkx's colors), and is checked (``is_column_coloring``), not
assumed.

A symmetric Hessian needs fewer colors: a star coloring (adjacent vertices
differ, and every path on four vertices uses three colors) lets each entry
h_ij be read directly from H S, either in row i or in row j (Gebremedhin,
Manne & Pothen 2005, who survey it with its greedy algorithm); ``star_color``
is such a greedy algorithm.
An arrowhead Hessian (a dense first row and column and the diagonal) needs 2
colors where a column coloring needs n.

References:
    Curtis, Powell & Reid, "On the estimation of sparse Jacobian matrices",
    IMA J. Appl. Math. 13, 1974. Gebremedhin, Manne & Pothen, "What color is
    your Jacobian? Graph coloring for computing derivatives", SIAM Review 47(4),
    2005. Welsh & Powell, "An upper bound for the chromatic number of a graph and
    its application to timetabling problems", Comput. J. 10(1), 1967.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: a graph with more than this many (vertex, neighbour's neighbour) steps is not built:
#: its columns are colored straight from the pattern (``_first_fit``), which needs no
#: graph (ba's camera columns share ~1,300 rows each: 9e8 steps at its smallest size)
WORK_MAX = 1_000_000
#: a star coloring with more steps than this gives one color per vertex instead
STAR_WORK_MAX = 20_000_000


@dataclass(frozen=True)
class Coloring:
    """A coloring of a pattern's columns, rows or (symmetric) vertices.

    Attributes:
        colors: one color (0..count-1) per column ("columns", "star") or row ("rows").
        count: the number of colors: passes of the compressed derivative.
        kind: "columns" (forward mode), "rows" (reverse mode) or "star" (a Hessian).
        lower_bound: the most nonzeros in one row (columns) or column (rows): no
            column or row coloring needs fewer colors.
    """

    colors: np.ndarray
    count: int
    kind: str
    lower_bound: int


def _lowest_free(taken: int) -> int:
    """The lowest bit not set in ``taken``: the least color no neighbour has."""
    return ~taken & (taken + 1)


def _graph_colors(adjacency: sp.csr_array) -> np.ndarray:
    """Greedy distance-1 coloring of a graph given by its adjacency matrix, largest
    degree first (Welsh & Powell 1967): networkx's ``greedy_color`` with strategy
    "largest_first", the same colors (tested), without building its graph (4 s at
    ``WORK_MAX``; this 0.1 s). Each vertex's color is held as one bit of a Python int,
    0 while it has none."""
    degree = np.diff(adjacency.indptr)
    bits = [0] * adjacency.shape[0]
    indices, indptr = adjacency.indices, adjacency.indptr.tolist()
    for v in np.argsort(-degree, kind="stable").tolist():  # ties in vertex order
        taken = 0
        for w in indices[indptr[v] : indptr[v + 1]].tolist():
            taken |= bits[w]
        bits[v] = _lowest_free(taken)
    return np.array([b.bit_length() - 1 for b in bits], dtype=np.int64)


def _most(counts: np.ndarray) -> int:
    return int(counts.max()) if counts.size else 0


def _first_fit(pattern: sp.csr_array) -> np.ndarray:
    """Greedy distance-1 coloring of the columns, the column intersection graph never built.

    Columns are taken by decreasing bound on their degree (the nonzeros of the rows
    they touch: on random patterns 1.6% more colors than the exact largest-first,
    the count of a column's own nonzeros 3.3%); each gets the least color that none of
    its rows has yet. The work is the pattern's nonzeros, not the graph's edges.
    """
    csr = sp.csr_array(pattern, dtype=bool)
    per_row = np.diff(csr.indptr)
    csc = sp.csc_array(csr)
    csc.sort_indices()
    bound = sp.csc_array(csc, dtype=np.int64).T @ per_row
    # each row's colors so far as the bits of a Python int: two integer operations per
    # nonzero, where a NumPy call per column cost ~4 us each (ba1: 0.8 s, now 0.2 s)
    used = [0] * csc.shape[0]
    colors = [0] * csc.shape[1]
    indices, indptr = csc.indices, csc.indptr.tolist()
    for j in np.argsort(-bound, kind="stable").tolist():
        rows = indices[indptr[j] : indptr[j + 1]].tolist()
        taken = 0
        for r in rows:
            taken |= used[r]
        bit = _lowest_free(taken)
        for r in rows:
            used[r] |= bit
        colors[j] = bit.bit_length() - 1
    return np.array(colors, dtype=np.int64)


def color_columns(pattern: sp.csr_array, kind: str = "columns") -> Coloring:
    """Structurally orthogonal groups of columns, for forward mode."""
    p = sp.csr_array(pattern, dtype=np.int8)
    per_row = np.diff(p.indptr)
    n = p.shape[1]
    if int(np.sum(per_row.astype(np.int64) ** 2)) > WORK_MAX:
        colors = _first_fit(p)
    else:
        adjacency = sp.csr_array(p.T @ p, dtype=bool)
        adjacency.setdiag(False)
        adjacency.eliminate_zeros()
        colors = _graph_colors(adjacency) if n else np.zeros(0, dtype=np.int64)
    count = int(colors.max()) + 1 if n else 0
    return Coloring(colors, count, kind, _most(per_row))


def color_rows(pattern: sp.csr_array) -> Coloring:
    """Structurally orthogonal groups of rows, for reverse mode."""
    return color_columns(sp.csr_array(pattern.T), kind="rows")


def star_color(pattern: sp.csr_array) -> Coloring:
    """A greedy star coloring of a symmetric pattern (Gebremedhin, Manne & Pothen 2005).

    Vertices are taken by decreasing degree; each gets the least color that keeps
    the coloring distance-1 and leaves no path on four vertices with two colors.
    Colors are bits of Python ints: ``bit[v]`` v's (0 while it has none), ``once[u]``
    and ``twice[u]`` those of at least one and two of u's neighbours, so both tests
    cost O(degree^2) integer operations (sets and a dict per vertex took 2.5x longer).
    """
    sym = sp.csr_array(pattern, dtype=bool)
    sym = sp.csr_array(sym + sym.T, dtype=bool)
    sym.setdiag(False)
    sym.eliminate_zeros()
    n = sym.shape[0]
    degree = np.diff(sym.indptr)
    if int(np.sum(degree.astype(np.int64) ** 2)) > STAR_WORK_MAX:
        colors = np.arange(n)
        return Coloring(colors, n, "star", _most(degree + 1))
    nbrs = [sym.indices[sym.indptr[v] : sym.indptr[v + 1]].tolist() for v in range(n)]
    bit, once, twice = [0] * n, [0] * n, [0] * n
    for v in np.argsort(-degree, kind="stable").tolist():
        forbidden = 0  # v itself has no color yet: adding bit[v] adds nothing
        for w in nbrs[v]:
            bw = bit[w]
            if not bw:
                continue
            forbidden |= bw
            if twice[v] & bw:  # w-v-x-y with w and x colored alike: not y's color
                for y in nbrs[w]:
                    forbidden |= bit[y]
            else:  # v-w-x-y with y colored as w: not x's color (a subset of the above)
                for x in nbrs[w]:
                    if twice[x] & bw:
                        forbidden |= bit[x]
        b = _lowest_free(forbidden)
        bit[v] = b
        for u in nbrs[v]:
            twice[u] |= once[u] & b
            once[u] |= b
    colors = np.array([b.bit_length() - 1 for b in bit], dtype=np.int64)
    return Coloring(colors, int(colors.max()) + 1 if n else 0, "star", _most(degree + 1))


# ------------------------------------------------------------------ checks
def is_column_coloring(pattern: sp.csr_array, colors: np.ndarray) -> bool:
    """No two columns of one color share a row."""
    p = sp.coo_array(pattern)
    pairs = np.unique(np.stack([p.row, np.asarray(colors)[p.col]]), axis=1)
    return pairs.shape[1] == p.nnz


def _color_counts(sym: sp.csr_array, colors: np.ndarray, count: int) -> Callable:
    """``counts(u, c)``: how many of u's neighbours (off the diagonal) are colored c."""
    onehot = sp.csr_array((np.ones(colors.size, dtype=np.int64), (np.arange(colors.size), colors)),
                          shape=(colors.size, max(count, 1)))  # fmt: skip
    table = sp.coo_array(sym.astype(np.int64) @ onehot)
    width = max(count, 1)
    keys = table.row.astype(np.int64) * width + table.col
    order = np.argsort(keys)
    keys, values = keys[order], table.data[order]

    def counts(u: np.ndarray, c: np.ndarray) -> np.ndarray:
        want = np.asarray(u, dtype=np.int64) * width + np.asarray(c, dtype=np.int64)
        if not keys.size:
            return np.zeros(want.shape, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        return np.where(keys[at] == want, values[at], 0)

    return counts


def _off_diagonal(pattern: sp.csr_array) -> sp.csr_array:
    sym = sp.csr_array(sp.csr_array(pattern, dtype=bool) + pattern.T, dtype=bool)
    sym.setdiag(False)
    sym.eliminate_zeros()
    return sym


def is_star_coloring(pattern: sp.csr_array, colors: np.ndarray) -> bool:
    """Distance-1, and no path on four vertices with two colors: no edge (u, v) where u
    has another neighbour colored as v and v another colored as u."""
    sym = _off_diagonal(pattern)
    colors = np.asarray(colors)
    e = sp.coo_array(sym)
    if np.any(colors[e.row] == colors[e.col]):
        return False
    counts = _color_counts(sym, colors, int(colors.max()) + 1 if colors.size else 0)
    return not np.any((counts(e.row, colors[e.col]) >= 2) & (counts(e.col, colors[e.row]) >= 2))


# ---------------------------------------------------------------- recovery
def recovery(pattern: sp.csr_array, coloring: Coloring) -> tuple[np.ndarray, np.ndarray]:
    """(a, b): the pattern's entries, in CSR order, are ``compressed[a, b]``.

    Columns: the compressed J S is (m, colors), entry (i, j) at (i, color j).
    Rows: W^T J is (colors, n), entry (i, j) at (color i, j). Star: H S is
    (n, colors), entry (i, j) at (i, color j) when j is the only neighbour of i
    with its color, else at (j, color i), which the star coloring then guarantees.
    """
    p = sp.coo_array(sp.csr_array(pattern, dtype=bool))  # CSR order: sorted rows, columns
    i, j, c = p.row.astype(np.int64), p.col.astype(np.int64), coloring.colors
    if coloring.kind == "columns":
        return i, c[j]
    if coloring.kind == "rows":
        return c[i], j
    counts = _color_counts(_off_diagonal(pattern), c, coloring.count)
    alone = (counts(i, c[j]) == 1) | (i == j)
    return np.where(alone, i, j), np.where(alone, c[j], c[i])
