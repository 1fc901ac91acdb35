"""A 1 -> N1 -> N2 -> 1 tanh net, loss = sum of squared outputs, batched.

n is the number of inputs (samples). All n inputs go through the net as one
matrix product, as in the Flux question's fast version (question 2). The
parameters (N1 + N1*N2 + N2 + N2 + 1 + N1 of them) are one flat vector, so
every mode sees an ordinary 1-D x.
"""

N1 = 1000
N2 = 20


def setup(n, rng):
    size = N1 + N1 + N1 * N2 + N2 + N2 + 1
    params = rng.normal(size=size) / np.sqrt(N1)
    return params, rng.uniform(-1.0, 1.0, n)


def unpack(p):
    w1, p = p[:N1], p[N1:]
    b1, p = p[:N1], p[N1:]
    w2, p = p[: N1 * N2].reshape(N1, N2), p[N1 * N2 :]
    b2, p = p[:N2], p[N2:]
    w3, b3 = p[:N2], p[N2]
    return w1, b1, w2, b2, w3, b3


def f(params, xs):
    w1, b1, w2, b2, w3, b3 = unpack(params)
    h1 = np.tanh(xs[:, None] * w1 + b1)  # (n, N1)
    h2 = np.tanh(h1 @ w2 + b2)  # (n, N2)
    out = h2 @ w3 + b3  # (n,)
    return np.sum(out**2)
