"""Sum of Normal log-densities: f(theta) = sum_i log N(y_i | theta_i, s).

n is the number of parameters (one mean per observation). The Julia gist's
backend comparison (question 3): a cheap, elementwise, scalar-valued function
whose gradient reverse mode gets in one pass and forward mode in n.
"""


def setup(n, rng):
    y = rng.normal(2.0, 1.0, n)
    return rng.normal(size=n), {"y": y, "s": 1.0}


def f(theta, data):
    z = (data["y"] - theta) / data["s"]
    return np.sum(-0.5 * (np.log(2 * np.pi) + z**2))
