"""The determinant by expansion by minors: GradBench's ``det`` eval.

n is the edge of the square matrix (GradBench's ell); x is the n x n matrix A
flattened row by row, as the eval sends it. f(x) = det A, expanded along the
first row of each minor as in GradBench's ``evals/det`` (after cmpad's
det_by_minor; github.com/gradbench/gradbench, MIT licence). Each minor is
computed once, not once per path to it: the minors of the last k rows are held
for every set of k columns and expanded from those of k - 1 rows, n 2^(n-1)
products in all where the eval's C++ reference recomputes them in n! (so its
cost grows like 2^n, not n!). The index tables are data built in setup.
"""

import itertools


def minors(n):
    """For each size k >= 2 (key k): the column sets of size k (C(n, k) x k), for each
    set and each of its columns the index of the set without that column, and the
    expansion's signs +1, -1, ... (k)."""
    cols, subs, signs = {}, {}, {}
    index = {(c,): c for c in range(n)}
    for k in range(2, n + 1):
        sets = list(itertools.combinations(range(n), k))
        cols[k] = np.array(sets)
        subs[k] = np.array([[index[s[:j] + s[j + 1 :]] for j in range(k)] for s in sets])
        signs[k] = (-1.0) ** np.arange(k)
        index = {s: i for i, s in enumerate(sets)}
    return cols, subs, signs


def setup(n, rng):
    return (rng.random(n * n), *minors(n))


def f(x, cols, subs, signs):
    n = len(cols) + 1
    A = np.reshape(x, (n, n))
    det = A[n - 1]  # the 1 x 1 minors of the last row, one per column
    for k in range(2, n + 1):
        row = A[n - k]
        det = np.sum(signs[k] * row[cols[k]] * det[subs[k]], axis=1)
    return det[0]
