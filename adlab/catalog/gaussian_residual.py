"""rs(d, x) = d - (d.g(x)) / (g(x).g(x)) g(x), with g(x) = exp(-1.5 (t - x)^2).

n is the number of grid points t = linspace(-10, 10, n) (21 in question 4).
x is a scalar and the output a vector of n residuals: a tall Jacobian (n x 1),
where forward mode needs one pass and reverse mode needs n. The derivative is
taken with respect to the second argument, x, only (wrt = 1); d is data.
"""

wrt = 1


def setup(n, rng):
    return rng.normal(size=n), 0.3


def f(d, x):
    t = np.linspace(-10.0, 10.0, d.shape[0])
    g = np.exp(-1.5 * (t - x) ** 2)
    return d - (np.dot(d, g) / np.dot(g, g)) * g
