"""A saddle point's inner maximum: Pearlmutter & Siskind (2008), GradBench's ``saddle``.

GradBench finds min over x of max over y of (x1**2 + y1**2) - (x2**2 + y2**2), where
(x1, y1) is the outer point and (x2, y2) the inner one, both by its gradient-descent
solver started at ``start``. ``f(x, start)`` is the inner part, max over y, the value
GradBench's outer argmin descends by its derivative in x: the maximum is found by that
solver (steps that double after ten successes and halve on a failure, stopping where the
gradient or the step is below 1e-5) on the gradient the model takes with the provided
``grad``, so the derivative in x is a derivative of a derivative (``inner=`` picks the
inner mode). The solver's data-dependent stops are masks over ITERS rounds (the one from
(1, 1) stops after 170), so that it compiles.

n is the dimension of both points: f(x, y) = sum(x**2) - sum(y**2) (GradBench's is n = 2,
from start (1, 1)).

GradBench's four functions are the outer mode over the inner: ``rr`` (mode="reverse"),
``ff`` (mode="forward", inner="forward"), ``fr`` (mode="forward") and ``rf``
(mode="reverse", inner="forward"); the Lab shows each as a series. The model's source is
Pearlmutter & Siskind, "Using programming language theory to make automatic
differentiation sound and efficient", AD 2008 (LNCSE 64), and GradBench's
``evals/saddle`` (github.com/gradbench/gradbench, MIT licence).
"""

ITERS = 250
POINT = False  # f is the maximum (False), or the point y that reaches it (True: GradBench's step 2)


def setup(n, rng):
    return np.ones(n), np.ones(n)


def f(x, start):
    def minus(y):  # the solver minimises: the maximum of the objective is its argmin
        return np.sum(y**2) - np.sum(x**2)

    down = grad(minus)

    def round_(k, s):
        y, fy, gy, eta, i, go = s
        small = go * (np.sum(gy**2) <= 1e-10)  # |g| <= 1e-5: done
        ten = go * (1.0 - small) * (i == 10.0)  # ten successes: a step twice as long
        moving = go * (1.0 - small) * (1.0 - ten)
        y2 = y - eta * gy
        close = moving * (np.sum((y - y2) ** 2) <= 1e-10)  # a step below 1e-5: done
        trying = moving * (1.0 - close)
        fy2 = minus(y2)
        better = trying * (fy2 < fy)
        worse = trying * (1.0 - better)
        y = np.where(better > 0.0, y2, y)
        gy = np.where(better > 0.0, down(y2), gy)
        fy = np.where(better > 0.0, fy2, fy)
        eta = np.where(ten > 0.0, 2.0 * eta, np.where(worse > 0.0, 0.5 * eta, eta))
        i = np.where(better > 0.0, i + 1.0, np.where(ten + worse > 0.0, 0.0, i))
        return y, fy, gy, eta, i, go * (1.0 - small) * (1.0 - close)

    state = (start, minus(start), down(start), 1e-5, 0.0, 1.0)
    y, fy, *_ = fori_loop(0, ITERS, round_, state)
    return y if POINT else -fy
