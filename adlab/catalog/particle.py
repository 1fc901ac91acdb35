"""Charged particle steered to the origin: Pearlmutter & Siskind (2008), GradBench's
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

GradBench's four functions are the outer mode over the inner: ``rr`` (mode="reverse"),
``ff`` (mode="forward", inner="forward"), ``fr`` (mode="forward") and ``rf``
(mode="reverse", inner="forward"); the Lab shows each as a series. The model's source is
Pearlmutter & Siskind, "Using programming language theory to make automatic
differentiation sound and efficient", AD 2008 (LNCSE 64), and GradBench's
``evals/particle`` (github.com/gradbench/gradbench, MIT licence).
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
