"""Log-likelihood of a Gaussian mixture with a Wishart prior: GradBench's ``gmm`` eval.

n is the number of observations (GradBench's n, 1,000 in its runs), each of
dimension D, fitted by K components. x holds the parameters flattened in the
eval's order: the K weights alpha, the K x D means mu, the K x D log-diagonals
q of the inverse covariances' Cholesky factors, and the K x D(D-1)/2 entries l
of their strictly lower triangles (column by column). f is the log-posterior
of ADBench's GMM, as in GradBench's ``evals/gmm`` and its C++ reference
(github.com/gradbench/gradbench, MIT licence; Srajer, Schkufza and Fitzgibbon,
"A benchmark of selected algorithmic differentiation tools", 2018). Its
log-sum-exps are adlab's ``logsumexp``, shifted by their maximum as the
reference's are; written out with ``np.max``, AD would also differentiate the
shift (masks and tie counts whose contributions cancel exactly), which made the
gradient cost 3.2 primals instead of 2.2-2.5 on JAX (D=10, K=5, n=1000, written
as the reference is, below).

Each factor Q_k is gathered whole (diagonal and triangle) and Q_k (x_i - mu_k)
is taken as Q_k x_i - Q_k mu_k: one matrix product of the K factors stacked
(KD x D) with all n points: a K x D x n array, summed over D, then each of its
n columns log-sum-exp'd over K.
Written as the reference is, with the n x K x D centred points and a batched
product over k, XLA's CPU backend spent most of its time transposing them, and
reverse mode differentiated the centred points too (a second batched product):
at D=10, K=5, n=1000 the primal took 250 us and the gradient 570 us (2.3
primals); this way 150 and 200 us (1.4), measured interleaved in one process on
one CPU (GradBench's JAX tool: 320 and 660 us; at D=2, 190 and 310 us against
88 and 110 us).
"""

import math

D = 2  # dimension of an observation
K = 5  # mixture components
M = 0  # the Wishart prior's extra degrees of freedom (GradBench's m)
GAMMA = 1.0  # the Wishart prior's precision (GradBench's gamma)
T = D * (D - 1) // 2  # entries of a strictly lower triangle


def factor(d):
    """For each entry (i, j) of a d x d factor Q, row by row, its place in a row of
    [0, l, exp(q)]: 1 + the index in l of Q[i, j] below the diagonal (l runs column
    by column), 1 + T + i on it, and 0 (the zero in front) above it."""
    index = np.zeros((d, d), dtype=int)
    t = 1
    for j in range(d):
        index[j, j] = 1 + d * (d - 1) // 2 + j
        for i in range(j + 1, d):
            index[i, j] = t
            t += 1
    return index.reshape(-1)


def setup(n, rng):
    x = rng.normal(size=(n, D))
    alpha = rng.normal(size=K)
    mu = rng.uniform(size=(K, D))
    q = rng.normal(size=(K, D))
    l = rng.normal(size=(K, T))
    return (np.concatenate([alpha, mu.ravel(), q.ravel(), l.ravel()]), x, factor(D))


def multigammaln(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a - j / 2) for j in range(p))


def f(params, x, factor_index):
    n = x.shape[0]
    alpha = params[:K]
    mu = np.reshape(params[K : K + K * D], (K, D))
    q = np.reshape(params[K + K * D : K + 2 * K * D], (K, D))
    l = np.reshape(params[K + 2 * K * D :], (K, T))

    # the Cholesky factors, stacked (K*D x D): exp(q) on the diagonal, l below it
    entries = np.concatenate([np.zeros((K, 1)), l, np.exp(q)], axis=1)
    Q = np.reshape(entries[:, factor_index], (K * D, D))
    # Q_k (x_i - mu_k) as Q_k x_i - Q_k mu_k: one matrix product over the n points
    Qmu = np.reshape(np.sum(np.reshape(Q, (K, D, D)) * mu[:, None, :], axis=2), (K * D,))
    # subtracted before the reshape: XLA's gradient then took 210 us, not 230
    Qx = np.reshape(Q @ x.T - Qmu[:, None], (K, D, n))
    inner = alpha[:, None] + np.sum(q, axis=1)[:, None] - 0.5 * np.sum(Qx**2, axis=1)
    likelihood = np.sum(logsumexp(inner, axis=0)) - n * logsumexp(alpha)

    # the Wishart prior on the inverse covariances
    dof = D + M + 1
    frobenius = np.sum(np.exp(2.0 * q)) + np.sum(l**2)
    C = dof * D * (math.log(GAMMA) - 0.5 * math.log(2.0)) - multigammaln(0.5 * dof, D)
    prior = -(0.5 * GAMMA**2 * frobenius - M * np.sum(q)) + K * C
    return -n * D * 0.5 * math.log(2 * math.pi) + likelihood + prior
