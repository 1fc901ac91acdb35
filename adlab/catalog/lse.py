"""Log-sum-exp, shifted by the maximum: GradBench's ``lse`` eval.

n is the length of x. f(x) = m + log(sum_i exp(x_i - m)) with m = max(x), as in
GradBench's ``evals/lse`` and its C++ reference (github.com/gradbench/gradbench,
MIT licence); the eval draws x uniformly in [0, 1) with n from 2,500 to 1,280,000.
The shift m keeps exp from overflowing; f does not depend on it, so its
gradient is the softmax exp(x - f). Under complex step the maximum is taken of
the real parts (Martins, Sturdza and Alonso 2003), so the derivative stays exact.
"""


def setup(n, rng):
    return (rng.random(n),)


def f(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))
