"""Three weighted moments of n points: a wide Jacobian (3 x n).

n is the number of parameters. The mirror image of gaussian_residual: many
inputs, few outputs, so reverse mode needs 3 passes and forward mode n.
"""


def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    w = np.exp(-0.5 * x**2)
    return np.stack([np.sum(w), np.sum(w * x), np.sum(w * x**2)])
