"""Hand-derived derivatives of the catalog models, in plain NumPy float64.

These are the oracles of the engine tests: each is derived on paper from the
model's formula (the derivation is in the docstring) and shares no code with
adlab or JAX. Arguments are the model's own ``setup`` output; everything is
promoted to float64 first, so a float32 run is judged against the exact
derivative at its own (rounded) inputs.

Internals: golden_checked reads GradBench's table of evals (catalog.gradbench's
GRADBENCH_EVALS), the GradBench tool's own table and not public API, to leave the models
GradBench's recorded answers check to those answers.
"""

from __future__ import annotations

import numpy as np


def f64(a):
    """Promote arrays, scalars and dicts of them to float64 (complex128 if complex: the
    second-order tests differentiate these gradients once more by complex step)."""
    if isinstance(a, dict):
        return {k: f64(v) for k, v in a.items()}
    a = np.asarray(a)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def normal_logpdf(theta, data):
    """f = sum -(log 2pi + z^2)/2, z = (y - theta)/s  =>  df/dtheta = z/s = (y - theta)/s^2."""
    theta, data = f64(theta), f64(data)
    return (data["y"] - theta) / data["s"] ** 2


def rosenbrock(x):
    """f = sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, i < n-1.

    df/dx_j = -400 x_j (x_{j+1} - x_j^2) - 2 (1 - x_j)   [j < n-1]
              + 200 (x_j - x_{j-1}^2)                      [j > 0]
    (n = 1: f is identically 0, so the gradient is 0.)
    """
    x = f64(x)
    g = np.zeros_like(x)
    g[:-1] += -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def g9_graphics(theta, data, bend=0.1):
    """Linkage with headings h_k = theta_0 + ... + theta_k.

    tip = sum_k L_k (cos h_k, sin h_k); miss = |tip - target|^2. Since
    dh_k/dtheta_j = 1 for k >= j, d tip/d theta_j = sum_{k >= j} L_k (-sin h_k, cos h_k),
    a reversed cumulative sum. The bending term B sum_i (theta_{i+1} - theta_i)^2
    adds 2B (theta_j - theta_{j-1}) [j > 0] - 2B (theta_{j+1} - theta_j) [j < n-1].
    """
    theta, data = f64(theta), f64(data)
    L, (a, b) = data["lengths"], data["target"]
    h = np.cumsum(theta)
    ex, ey = np.sum(L * np.cos(h)) - a, np.sum(L * np.sin(h)) - b
    per_link = 2 * ex * (-L * np.sin(h)) + 2 * ey * (L * np.cos(h))
    g = np.cumsum(per_link[::-1])[::-1]
    d = theta[1:] - theta[:-1]
    g[1:] += 2 * bend * d
    g[:-1] -= 2 * bend * d
    return g


def _unpack(p, n1, n2):
    w1, p = p[:n1], p[n1:]
    b1, p = p[:n1], p[n1:]
    w2, p = p[: n1 * n2].reshape(n1, n2), p[n1 * n2 :]
    b2, p = p[:n2], p[n2:]
    w3, b3 = p[:n2], p[n2]
    return w1, b1, w2, b2, w3, b3


def mlp(params, xs, n1, n2):
    """Backpropagation by hand through the 1 -> N1 -> N2 -> 1 tanh net.

    a1 = x w1 + b1, h1 = tanh a1; a2 = h1 W2 + b2, h2 = tanh a2; o = h2.w3 + b3;
    f = sum_samples o^2. With g_o = 2 o: dw3 = h2^T g_o, db3 = sum g_o;
    g_a2 = (g_o w3^T) (1 - h2^2): dW2 = h1^T g_a2, db2 = sum g_a2;
    g_a1 = (g_a2 W2^T) (1 - h1^2): dw1 = sum x g_a1, db1 = sum g_a1.
    The same formula serves mlp_batched and mlp_per_sample (same f).
    """
    params, xs = f64(params), f64(xs)
    w1, b1, w2, b2, w3, b3 = _unpack(params, n1, n2)
    h1 = np.tanh(xs[:, None] * w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    o = h2 @ w3 + b3
    g_o = 2 * o
    g_a2 = g_o[:, None] * w3[None, :] * (1 - h2**2)
    g_a1 = (g_a2 @ w2.T) * (1 - h1**2)
    return np.concatenate(
        [
            (xs[:, None] * g_a1).sum(0),
            g_a1.sum(0),
            (h1.T @ g_a2).ravel(),
            g_a2.sum(0),
            h2.T @ g_o,
            [g_o.sum()],
        ]
    )


def _gauss(d, x):
    d, x = f64(d), float(f64(x))
    t = np.linspace(-10.0, 10.0, d.shape[0])
    g = np.exp(-1.5 * (t - x) ** 2)
    return d, t, g


def gaussian_residual_x(d, x):
    """r = d - c g, c = (d.g)/(g.g), g = exp(-1.5 (t - x)^2).

    g' = 3 (t - x) g;  c' = (d.g')/(g.g) - 2 (d.g)(g.g')/(g.g)^2;
    dr/dx = -(c' g + c g')   (a vector: the tall n x 1 Jacobian).
    """
    d, t, g = _gauss(d, x)
    dg = 3.0 * (t - float(f64(x))) * g
    gg = g @ g
    c = (d @ g) / gg
    dc = (d @ dg) / gg - 2.0 * (d @ g) * (g @ dg) / gg**2
    return -(dc * g + c * dg)


def gaussian_residual_d(d, x):
    """dr/dd = I - g g^T / (g.g): r is linear in d."""
    d, t, g = _gauss(d, x)
    return np.eye(d.size) - np.outer(g, g) / (g @ g)


def wide_moments(x):
    """w = exp(-x^2/2), dw/dx = -x w; rows d/dx of (sum w, sum w x, sum w x^2):
    -x w,  w (1 - x^2),  w x (2 - x^2)  (a wide 3 x n Jacobian, diagonal per row)."""
    x = f64(x)
    w = np.exp(-0.5 * x**2)
    return np.stack([-x * w, w * (1 - x**2), w * x * (2 - x**2)])


def bvp_residual(u, force=1.0):
    """r_i = (2 u_i - u_{i-1} - u_{i+1}) / h^2 + u_i^3 - F, h = 1/(n+1), u_0 = u_{n+1} = 0:
    dr_i/du_i = 2/h^2 + 3 u_i^2, dr_i/du_{i+-1} = -1/h^2 (tridiagonal)."""
    u = f64(u)
    n = u.size
    h = 1.0 / (n + 1)
    off = -np.ones(n - 1) / h**2
    return np.diag(2.0 / h**2 + 3.0 * u**2) + np.diag(off, 1) + np.diag(off, -1)


def logistic_regression(w, X, y, lam=1.0):
    """f = sum log(1 + e^z) - y z + lam/2 |w|^2, z = X w  =>  df/dw = X^T (s - y) + lam w,
    s = 1 / (1 + e^-z)."""
    w, X, y = f64(w), f64(X), f64(y)
    s = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (s - y) + lam * w


def golden_checked() -> set[str]:
    """The catalog models that compute GradBench's evals: their oracle is GradBench's
    C++ reference, recorded (``test_gradbench_models.py``), not a hand derivative."""
    from adlab.catalog.gradbench import GRADBENCH_EVALS

    return {a.model_name for a in GRADBENCH_EVALS.values() if a.model_name}


# catalog name -> (settings, hand derivative taking setup's arguments)
SMALL_MLP = {"N1": 8, "N2": 3}
HAND = {
    "normal_logpdf": ({}, normal_logpdf),
    "rosenbrock": ({}, rosenbrock),
    "g9_graphics": ({}, g9_graphics),
    "mlp_batched": (SMALL_MLP, lambda p, xs: mlp(p, xs, 8, 3)),
    "mlp_per_sample": (SMALL_MLP, lambda p, xs: mlp(p, xs, 8, 3)),
    "gaussian_residual": ({}, gaussian_residual_x),
    "wide_moments": ({}, wide_moments),
    "bvp_residual": ({}, bvp_residual),
    "logistic_regression": ({}, logistic_regression),
}


# ------------------------------------------------------------ tolerances
# Each method's error is K * eps**p for its order p in machine epsilon:
# AD and complex step are exact up to rounding (p = 1); forward differences
# balance h |f''| against eps |f| / h at h ~ eps^(1/2) (p = 1/2); central at
# h ~ eps^(1/3) (p = 2/3); Richardson's O(h^4) at h ~ eps^(1/5) (p = 4/5).
# The float64 figures are the issue's; float32 follows by the same power.
EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}
ORDER = {"ad": 1.0, "complex-step": 1.0, "forward": 1 / 2, "central": 2 / 3, "richardson": 4 / 5}
TOL64 = {"ad": 1e-12, "complex-step": 1e-12, "forward": 1e-5, "central": 1e-7, "richardson": 1e-9}

#: (mode, scheme) of every method, as passed to adlab
METHODS = [
    ("forward", "central"),
    ("reverse", "central"),
    ("complex-step", "central"),
    ("numeric", "forward"),
    ("numeric", "central"),
    ("numeric", "richardson"),
]
#: the methods that run on the NumPy backend too
FINITE_DIFFERENCES = [m for m in METHODS if m[0] in ("numeric", "complex-step")]


def kind(mode: str, scheme: str) -> str:
    """The tolerance class of a method."""
    if mode in ("forward", "reverse"):
        return "ad"
    return "complex-step" if mode == "complex-step" else scheme


def tolerance(mode: str, scheme: str, precision: str) -> float:
    """TOL64 scaled from float64's eps to ``precision``'s by the method's order."""
    k = kind(mode, scheme)
    return TOL64[k] * (EPS[precision] / EPS["float64"]) ** ORDER[k]


def error(approx, ref) -> float:
    """max |approx - ref| / max(max |ref|, 1): relative for derivatives of size
    >= 1, absolute below (an identically-zero derivative has no relative error)."""
    a, r = np.asarray(approx, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert a.shape == r.shape, (a.shape, r.shape)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - r)) / max(float(np.max(np.abs(r))), 1.0))


def rounded(args, precision: str):
    """``args`` as the engine sees them at ``precision``: float arrays and
    floats rounded to that precision, then held in float64 for the oracle."""
    dtype = np.float32 if precision == "float32" else np.float64

    def one(a):
        if isinstance(a, dict):
            return {k: one(v) for k, v in a.items()}
        if isinstance(a, (float, np.floating)) or (
            isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)
        ):
            return np.asarray(a, dtype=dtype).astype(np.float64)
        return a

    return tuple(one(a) for a in args)
