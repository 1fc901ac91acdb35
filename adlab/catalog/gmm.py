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
gradient cost 3.2 primals instead of 2.2-2.5 on JAX (D=10, K=5, n=1000).
"""

import math

D = 2  # dimension of an observation
K = 5  # mixture components
M = 0  # the Wishart prior's extra degrees of freedom (GradBench's m)
GAMMA = 1.0  # the Wishart prior's precision (GradBench's gamma)
T = D * (D - 1) // 2  # entries of a strictly lower triangle


def lower(d):
    """For each entry (i, j) of a d x d matrix, row by row: 1 + the index in l of
    L[i, j] for i > j (l runs column by column), else 0 (a zero put in front of l)."""
    index = np.zeros((d, d), dtype=int)
    t = 1
    for j in range(d):
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
    return (np.concatenate([alpha, mu.ravel(), q.ravel(), l.ravel()]), x, lower(D))


def multigammaln(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a - j / 2) for j in range(p))


def f(params, x, lower_index):
    n = x.shape[0]
    alpha = params[:K]
    mu = np.reshape(params[K : K + K * D], (K, D))
    q = np.reshape(params[K + K * D : K + 2 * K * D], (K, D))
    l = np.reshape(params[K + 2 * K * D :], (K, T))

    # the Cholesky factors: exp(q) on the diagonal, l below it
    zero_l = np.concatenate([np.zeros((K, 1)), l], axis=1)
    L = np.reshape(zero_l[:, lower_index], (K, D, D))
    centered = x[:, None, :] - mu[None, :, :]  # n x K x D
    Qx = np.exp(q)[None, :, :] * centered + np.einsum("kij,nkj->nki", L, centered)
    inner = alpha[None, :] + np.sum(q, axis=1)[None, :] - 0.5 * np.sum(Qx**2, axis=2)
    likelihood = np.sum(logsumexp(inner, axis=1)) - n * logsumexp(alpha)

    # the Wishart prior on the inverse covariances
    dof = D + M + 1
    frobenius = np.sum(np.exp(2.0 * q)) + np.sum(l**2)
    C = dof * D * (math.log(GAMMA) - 0.5 * math.log(2.0)) - multigammaln(0.5 * dof, D)
    prior = -(0.5 * GAMMA**2 * frobenius - M * np.sum(q)) + K * C
    return -n * D * 0.5 * math.log(2 * math.pi) + likelihood + prior
