"""Linear least squares: fit a polynomial in t to sign(t), GradBench's ``llsq`` eval.

n is the number of sample points t_i = -1 + 2 i / (n - 1) on [-1, 1] (GradBench's
n); x holds the M polynomial coefficients (GradBench's m, 128 in its runs).
f(x) = 1/2 sum_i (sign(t_i) - sum_j x_j t_i^j)^2, as in GradBench's
``evals/llsq`` (github.com/gradbench/gradbench, MIT licence). The powers t_i^j
are data (V, n x M), built by repeated multiplication as GradBench's C++
reference does, so f is a matrix product and runs the same on every framework.
"""

M = 128  # polynomial coefficients: the length of x


def points(n):
    """t_i, sign(t_i) and the powers V[i, j] = t_i^j (NumPy, before f runs)."""
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    V = np.cumprod(np.concatenate([np.ones((n, 1)), np.repeat(t[:, None], M - 1, 1)], 1), 1)
    return V, np.sign(t)


def setup(n, rng):
    V, s = points(n)
    return (rng.random(M), V, s)


def f(x, V, s):
    r = s - V @ x
    return 0.5 * np.sum(r * r)
