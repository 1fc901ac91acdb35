"""The k-means cost: GradBench's ``kmeans`` eval.

n is the number of points, each of dimension D; x holds the K centroids, K x D
flattened row by row. f(x) = sum_i min_j |p_i - c_j|^2, as in GradBench's
``evals/kmeans`` (github.com/gradbench/gradbench, MIT licence; Bottou and
Bengio, NIPS 1994). The squared distances are written |p|^2 + |c|^2 - 2 p.c, as
GradBench's JAX tool does: a K x n matrix rather than n x K x D, reduced over its
K rows (each row n long: an elementwise min of rows, where n x K reduced over its
short rows made ``dir`` about 1.5x slower on XLA's CPU backend). Unlike the JAX
tool, |p|^2 is added after the min (it is the same for every centroid) and the
product is taken with -2c (exact: a power of two), so that no K x n array is
scaled or shifted: on JAX, one CPU, n=1000, d=8, the primal took 60 and 90 us
at k=10 and 50, not 65 and 130, and ``dir`` 80 and 180, not 100 and 250
(measured interleaved in one process). The eval's
``dir`` is the Newton step: the gradient over the Hessian's diagonal (the
Hessian is diagonal: each point pulls only its nearest centroid).
"""

K = 3  # centroids
D = 2  # dimension of each point


def setup(n, rng):
    points = rng.random((n, D))
    # the last K points, as the eval takes them, so that no cluster is empty
    # (with n < K, random centroids: some clusters are then empty)
    centroids = points[-K:] if n >= K else rng.random((K, D))
    return (centroids.reshape(-1), points)


def f(x, points):
    c = np.reshape(x, (K, D))
    # |c|^2 - 2 p.c, K x n: the distances less |p|^2, which is the same for every centroid
    partial = np.sum(c**2, axis=1)[:, None] + (-2.0 * c) @ points.T
    return np.sum(np.min(partial, axis=0) + np.sum(points**2, axis=1))
