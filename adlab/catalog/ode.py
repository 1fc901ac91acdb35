"""An ODE integrated by S steps of Runge-Kutta 4: GradBench's ``ode`` eval.

n is the length of x and of the state y. From y(0) = 0 the system
y_0' = x_0, y_i' = x_i y_{i-1} is integrated to t = 2 in S classical RK4 steps,
as in GradBench's ``evals/ode`` and its C++ reference (after cmpad's
runge_kutta; github.com/gradbench/gradbench, MIT licence). f(x) is the last
component of y(2), the one whose gradient the eval asks for; with LAST = False
f is the whole y(2), the eval's primal. The steps are a ``fori_loop``: on JAX
one compiled loop body, so compile time does not grow with S.
"""

S = 10  # RK4 steps from t = 0 to t = 2
LAST = True  # f is y(2)'s last component (True) or all of y(2) (False)


def setup(n, rng):
    return (rng.random(n),)


def f(x):
    h = 2.0 / S

    def rate(y):
        # y_0' = x_0, y_i' = x_i y_{i-1}
        return x * np.concatenate([np.ones(1), y[:-1]])

    def step(i, y):
        k1 = rate(y)
        k2 = rate(y + h * k1 / 2.0)
        k3 = rate(y + h * k2 / 2.0)
        k4 = rate(y + h * k3)
        return y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0

    y = fori_loop(0, S, step, np.zeros_like(x))
    return y[-1] if LAST else y
