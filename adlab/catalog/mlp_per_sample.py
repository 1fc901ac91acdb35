"""The same 1 -> N1 -> N2 -> 1 tanh net as mlp_batched, one sample at a time.

n is the number of inputs (samples). Each input goes through the net on its
own, as in the Flux question's slow version (question 2), where the gradient
cost about 20x the primal. STYLE = "map" runs a compiled loop over samples
(lax.map); STYLE = "vmap" lets jax.vmap batch the per-sample code back into
matrix products, which is what recovers the batched speed.
"""

N1 = 1000
N2 = 20
STYLE = "map"  # "map" (one sample at a time) or "vmap" (vectorised)


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


def net(params, x):
    w1, b1, w2, b2, w3, b3 = unpack(params)
    h1 = np.tanh(x * w1 + b1)  # (N1,)
    h2 = np.tanh(h1 @ w2 + b2)  # (N2,)
    return h2 @ w3 + b3


def f(params, xs):
    each = vmap_samples if STYLE == "vmap" else map_samples
    return np.sum(each(lambda x: net(params, x) ** 2, xs))
