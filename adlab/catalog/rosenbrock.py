"""The Rosenbrock function in n dimensions.

n is the number of parameters. A classic optimisation test function with
coupled neighbouring parameters; for n = 1 it is identically zero.
"""


def setup(n, rng):
    return (rng.uniform(-1.5, 1.5, n),)


def f(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
