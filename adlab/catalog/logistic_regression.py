"""Negative log-likelihood of logistic regression, with an L2 penalty.

n is the number of features, the weights w; there are SAMPLES_PER_FEATURE * n
samples (rows of X) with labels y in {0, 1}. f(w) = sum_i log(1 + exp(x_i.w))
- y_i x_i.w + LAM/2 |w|^2. Its Hessian, X^T diag(s (1 - s)) X + LAM I with
s = sigmoid(X w), is dense and positive definite: Newton's method and its
Hessian-free variants (conjugate gradients on Hessian-vector products) use it.
"""

LAM = 1.0  # weight of the L2 penalty
SAMPLES_PER_FEATURE = 2


def setup(n, rng):
    m = SAMPLES_PER_FEATURE * n
    X = rng.normal(size=(m, n)) / np.sqrt(n)
    y = (rng.random(m) < 0.5).astype(float)
    return rng.normal(size=n), X, y


def f(w, X, y):
    z = X @ w
    # log(1 + e^z) written out: analytic, so complex step applies too (np.logaddexp is
    # safe for z > 700, far beyond these data, but compares inside: not analytic)
    return np.sum(np.log1p(np.exp(z)) - y * z) + 0.5 * LAM * np.dot(w, w)
