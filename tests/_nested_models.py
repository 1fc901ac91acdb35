"""Pearlmutter & Siskind's particle and saddle as model sources (GradBench's evals of
those names), derivatives nested inside the model with the provided ``grad``.

Candidates for ``adlab/catalog/particle.py`` and ``saddle.py``: each text is such a file
as it stands. They are kept here, tested (``test_nested_grad_gradbench.py``), until the
catalog's oracles take them (a hand or mpmath twin in ``_engine_hand.py`` and
``test_accuracy_reference.py``, and a cost ``test_backends.py`` can afford: TensorFlow's
eager nested forward mode takes about a minute for one derivative of either).
"""

PARTICLE = '''"""Charged particle steered to the origin: Pearlmutter & Siskind (2008), GradBench's
``particle`` eval.

A particle of unit mass and charge starts at (0, 8) with velocity (0.75, 0), pulled by
two unit charges at (10, 10 - w) and (10, 0). Naive Euler steps of DT follow the force
-grad p(x), p(x) = sum of 1 / |x - c| over the charges, taken inside the model with the
provided ``grad``, until the particle would cross the x axis; ``f`` is the square of
where it crosses (linear interpolation), which GradBench's argmin over w descends by
``f``'s derivative: a derivative of a derivative (``inner=`` picks the inner mode).

n is the number of particles, each with its own control w, simulated together (f sums
their squares, so each w's derivative is its own particle's). GradBench's eval is n = 1
at w = 0. A particle that has crossed stays where it was (STEPS bounds the steps; the
particle at w = 0 crosses after 352).
"""

DT = 0.1
STEPS = 1000


def setup(n, rng):
    return (np.zeros(1) if n == 1 else rng.uniform(-0.3, 0.3, n),)


def f(w):
    def potential(y):  # y: the particles' positions, rows x and y
        far = 1.0 / np.sqrt((y[0] - 10.0) ** 2 + (y[1] - (10.0 - w)) ** 2)
        near = 1.0 / np.sqrt((y[0] - 10.0) ** 2 + y[1] ** 2)
        return np.sum(far + near)  # the particles do not interact: one grad for all

    def step(i, state):
        pos, vel, going = state
        acc = -grad(potential)(pos)
        new = pos + DT * vel
        going = going * (new[1] > 0.0)  # stops for good once it would cross
        pos = np.where(going > 0.0, new, pos)
        vel = np.where(going > 0.0, vel + DT * acc, vel)
        return pos, vel, going

    start = np.stack([0.0 * w, 0.0 * w + 8.0])  # each particle's, as w's type
    speed = np.stack([0.0 * w + 0.75, 0.0 * w])
    pos, vel, _ = fori_loop(0, STEPS, step, (start, speed, 0.0 * w + 1.0))
    t_f = -pos[1] / vel[1]
    return np.sum((pos[0] + t_f * vel[0]) ** 2)
'''

SADDLE = '''"""A saddle point's inner maximum: Pearlmutter & Siskind (2008), GradBench's ``saddle``.

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
"""

ITERS = 250


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
    return -fy
'''
