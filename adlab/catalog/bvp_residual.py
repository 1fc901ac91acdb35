"""Residuals of -u'' + u^3 = FORCE on (0, 1), u(0) = u(1) = 0, by central differences.

n is the number of interior grid points, the unknowns u_1..u_n, and of
residuals r_i = (2 u_i - u_{i-1} - u_{i+1}) / h^2 + u_i^3 - FORCE with h = 1/(n + 1).
Each residual touches three neighbouring unknowns, so the n x n Jacobian is
tridiagonal: 3n - 2 nonzeros, which three colors of columns (three forward
passes) give whatever n is, where a dense Jacobian takes n. A Newton solver for
this boundary value problem needs exactly that Jacobian at every step.
"""

FORCE = 1.0  # the constant right-hand side


def setup(n, rng):
    t = np.linspace(0.0, 1.0, n + 2)[1:-1]
    return (FORCE * t * (1.0 - t) / 2.0 + 0.01 * rng.normal(size=n),)


def f(u):
    h = 1.0 / (u.shape[0] + 1)
    wall = np.zeros_like(u[:1])
    padded = np.concatenate([wall, u, wall])
    return (2.0 * u - padded[:-2] - padded[2:]) / h**2 + u**3 - FORCE
