"""Hessians and Hessian-vector products in every composition, against hand-derived Hessians.

The oracle: each catalog model's hand-derived gradient (``_engine_hand.py``,
NumPy, no JAX) differentiated once more by complex step in NumPy, exact to
rounding; for three models it is checked in turn against Hessians derived on
paper. Second derivatives of vector models, which have none, are refused with
the user's line.

Internals: second order's tables and bound (modes.hessian: NAMES, HVP_NAMES, HVP_BOUND):
every composition is run, and the HVP's cost held to its bound; no public function lists
them.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
import pytest
from _engine_hand import HAND, error, f64, rounded

import adlab
from adlab.engine.modes.hessian import HVP_BOUND, HVP_NAMES, NAMES

SCALAR = ["g9_graphics", "logistic_regression", "mlp_batched", "mlp_per_sample",
          "normal_logpdf", "rosenbrock"]  # fmt: skip
VECTOR = ["bvp_residual", "gaussian_residual", "wide_moments"]
TOL = {"numeric": 1e-6}  # central differences of the gradient; the others are exact
EXACT = 1e-11


@functools.cache
def model(name: str) -> adlab.Model:
    return adlab.load_model(name, **HAND[name][0])


@functools.cache
def setup(name: str, n: int) -> tuple:
    return model(name).setup(n)


def hand_hessian(name: str, args: tuple) -> np.ndarray:
    """Complex step (h = 1e-30) of the hand-derived gradient, column by column."""
    grad = HAND[name][1]
    i = model(name).wrt
    x = f64(args[i])
    columns = []
    for j in range(x.size):
        step = np.zeros(x.size, dtype=complex)
        step[j] = 1e-30j
        a = list(args)
        a[i] = x + step.reshape(x.shape)
        columns.append(np.imag(grad(*a)).ravel() / 1e-30)
    return np.stack(columns, axis=1)


def rosenbrock_hessian(x):
    """d2f/dx_j^2 = 1200 x_j^2 - 400 x_{j+1} + 2 [j < n-1] + 200 [j > 0];
    d2f/dx_j dx_{j+1} = -400 x_j."""
    n = x.size
    H = np.zeros((n, n))
    j = np.arange(n - 1)
    H[j, j] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    H[j + 1, j + 1] += 200
    H[j, j + 1] = H[j + 1, j] = -400 * x[:-1]
    return H


def logistic_hessian(w, X, y, lam=1.0):
    """X^T diag(s (1 - s)) X + lam I, s = sigmoid(X w)."""
    s = 1 / (1 + np.exp(-(X @ w)))
    return X.T @ ((s * (1 - s))[:, None] * X) + lam * np.eye(w.size)


def test_the_oracle_agrees_with_hessians_derived_on_paper():
    (x,) = setup("rosenbrock", 7)
    assert error(hand_hessian("rosenbrock", (x,)), rosenbrock_hessian(x)) <= 1e-14
    args = setup("logistic_regression", 5)
    assert error(hand_hessian("logistic_regression", args), logistic_hessian(*args)) <= 1e-14
    theta, data = setup("normal_logpdf", 4)
    want = -np.eye(4) / data["s"] ** 2
    assert error(hand_hessian("normal_logpdf", (theta, data)), want) <= 1e-15


# ------------------------------------------------------------------ every composition
@pytest.mark.parametrize("n", [1, 6])
@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("mode", NAMES)
def test_every_composition_matches_the_hand_hessian(mode, name, n):
    args = setup(name, n)
    got, info = adlab.hessian(model(name), *args, mode=mode, full_output=True)
    want = hand_hessian(name, args)
    size = np.size(args[model(name).wrt])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert got.shape == (size, size)
    assert error(got, want) <= TOL.get(mode, EXACT)
    assert info.f_evals >= 1 and info.compile_s > 0


@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("mode", HVP_NAMES)
def test_the_hvp_is_the_hessian_times_v(mode, name):
    args = setup(name, 5)
    x = args[model(name).wrt]
    v = np.random.default_rng(3).normal(size=np.shape(x))
    got = adlab.hvp(model(name), args[0], v, *args[1:], mode=mode)
    assert got.shape == np.shape(x)
    assert error(got, hand_hessian(name, args) @ v) <= TOL.get(mode, EXACT)


def test_float32_hessians_are_float32_and_right_to_float32():
    args = setup("rosenbrock", 6)
    got = adlab.hessian(model("rosenbrock"), *args, precision="float32")
    assert got.dtype == np.float32
    assert error(got, rosenbrock_hessian(rounded(args, "float32")[0])) <= 1e-5


def test_eager_and_a_chosen_argument():
    src = """
wrt = 1


def setup(n, rng):
    return rng.uniform(0.5, 1.5, n), rng.uniform(-1.0, 1.0, n)


def f(d, x):
    return np.sum(d * x**3) + x[0] * x[-1]
"""
    m = adlab.Model.from_source(src, "cubic")
    d, x = m.setup(4)
    want = np.diag(6 * d * x)
    want[0, -1] += 1
    want[-1, 0] += 1
    for jit in (True, False):
        assert error(adlab.hessian(m, d, x, jit=jit), want) <= EXACT
        assert error(adlab.hessian(m, d, x, wrt=1, mode="reverse-over-reverse", jit=jit),
                     want) <= EXACT  # fmt: skip
        v = np.arange(4.0)
        assert error(adlab.hvp(m, d, v, x, jit=jit), want @ v) <= EXACT


# ------------------------------------------------------------------ the prepared form
def test_prepared_hessian_binds_data_and_counts_its_passes():
    m = model("logistic_regression")
    w, X, y = setup("logistic_regression", 6)
    passes = {"forward-over-reverse": 6, "reverse-over-forward": 36, "reverse-over-reverse": 6,
              "forward-over-forward": 36, "numeric": 12, "complex-step": 6}  # fmt: skip
    for mode, want in passes.items():
        p = adlab.prepare_hessian(m, w, X, y, mode=mode)
        assert (p.mode, p.scheme, p.f_evals) == ("hessian", mode, want)
        assert p.compile_s > 0 and p.cost()["flops"] > 0
    w2 = w + 0.5
    assert error(p(w2), logistic_hessian(w2, X, y)) <= EXACT  # the bound data
    X2 = X * 2.0
    assert error(p(w2, X2, y), logistic_hessian(w2, X2, y)) <= EXACT  # new data, bound
    assert error(p(w), logistic_hessian(w, X2, y)) <= EXACT


def test_prepared_hvp_binds_v_after_x():
    (x,) = setup("rosenbrock", 5)
    v, v2 = np.ones(5), np.arange(5.0)
    p = adlab.prepare_hvp(model("rosenbrock"), x, v, mode="reverse-over-forward")
    assert (p.mode, p.scheme, p.f_evals) == ("hvp", "reverse-over-forward", 1)
    assert error(p(x), rosenbrock_hessian(x) @ v) <= EXACT
    assert error(p(x, v2), rosenbrock_hessian(x) @ v2) <= EXACT
    w, X, y = setup("logistic_regression", 4)
    q = adlab.prepare_hvp(model("logistic_regression"), w, np.ones(4), X, y)
    assert error(q(w, v2[:4], X, y), logistic_hessian(w, X, y) @ v2[:4]) <= EXACT


def test_cheap_hvps_cost_a_constant_times_f_and_forward_over_forward_grows_with_n():
    """XLA's flop counts (not times): an HVP over a reverse gradient stays a constant
    multiple of f as n grows; over a forward gradient it drags n tangents along."""
    m = model("rosenbrock")

    def ratio(mode, n):
        (x,) = setup("rosenbrock", n)
        f = adlab.prepare(m, x, mode="primal").cost()["flops"]
        return adlab.prepare_hvp(m, x, np.ones(n), mode=mode).cost()["flops"] / f

    for mode in ("forward-over-reverse", "reverse-over-forward", "reverse-over-reverse"):
        small, large = ratio(mode, 10), ratio(mode, 300)
        assert large <= 1.5 * small and large <= HVP_BOUND
    assert ratio("forward-over-forward", 300) >= 10 * ratio("forward-over-forward", 10)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("name", VECTOR)
def test_a_vector_f_has_no_hessian_and_the_return_line_says_so(name):
    m = model(name)
    args = m.setup(4)
    for call in (lambda: adlab.hessian(m, *args), lambda: adlab.hessian(m, *args, sparse=True),
                 lambda: adlab.hvp(m, args[0], np.ones_like(args[m.wrt]), *args[1:])):  # fmt: skip
        with pytest.raises(adlab.ModelError, match="needs f to return a scalar") as caught:
            call()
        assert caught.value.lineno is not None and "return" in caught.value.line


def test_complex_step_is_refused_where_f_is_not_analytic_naming_the_line():
    src = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    return np.sum(np.real(x * np.conj(x)) ** 1.5)  # |x|^3, not analytic
"""
    m = adlab.Model.from_source(src, "absolute")
    (x,) = m.setup(3)
    with pytest.raises(adlab.ModelError, match="analytic") as caught:
        adlab.hessian(m, x, mode="complex-step")
    assert caught.value.lineno == 7
    assert error(adlab.hessian(m, x), np.diag(6 * np.abs(x))) <= EXACT  # AD is fine


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda m, x: adlab.hvp(m, x, x, mode="complex-step"), "full Hessian only"),
        (lambda m, x: adlab.hessian(m, x, backend="numpy"),
         "not available on backend 'numpy': it has no automatic differentiation.*'jax'"),
        (lambda m, x: adlab.hessian(m, x, mode="complex-step", backend="torch"),
         "complex-step' is not available on backend='torch'.*runs 'forward-over-reverse'"),
        (lambda m, x: adlab.hessian(m, x, mode="backward"), "choose one of"),
        (lambda m, x: adlab.hessian(m, x, wrt=(0, 0)), "one argument"),
        (lambda m, x: adlab.hvp(m, x, x[:2]), "must have the shape"),
        (lambda m, x: adlab.hessian(lambda X: jnp.sum(X**3), x.reshape(2, 2)), "flatten"),
    ],
)  # fmt: skip
def test_refusals_say_what_to_do(call, words):
    (x,) = setup("rosenbrock", 4)
    with pytest.raises(ValueError, match=words):
        call(model("rosenbrock"), x)


# ------------------------------------------------------------------ accuracy and sweeps
def test_the_reference_hessian_is_checked_across_two_compositions():
    args = setup("g9_graphics", 6)
    ref = adlab.hessian_reference(model("g9_graphics"), *args)
    assert ref.trusted is True and ref.mismatch <= 1e-13
    assert error(ref.value, hand_hessian("g9_graphics", args)) <= EXACT
    v = np.linspace(-1.0, 1.0, 6)
    along = adlab.hessian_reference(model("g9_graphics"), *args, v=v)
    assert along.trusted is True and error(along.value, ref.value @ v) <= EXACT


def test_a_sweep_records_order_composition_and_errors():
    modes = "hessian[forward-over-reverse],hessian[numeric],hvp[reverse-over-forward]"
    records = list(adlab.bench("rosenbrock", sizes=[6], modes=modes, budget_s=20, repeats=2,
                               warn=False))  # fmt: skip
    by = {r.label: r for r in records}
    for label in modes.split(","):
        r = by[label]
        assert r.skipped is None, r.skipped
        assert r.order == 2 and r.mode == label.split("[")[0] and r.scheme in label
        assert r.reference_trusted is True
        assert r.error <= TOL.get(r.scheme, EXACT)
        assert r.flops_ratio is not None and r.flops_ratio > 0
    assert "reverse gradient" in by["hessian[numeric]"].note
    assert by["primal"].order == 1
    back = adlab.from_json(adlab.to_json(records))
    assert [r.to_dict() for r in back] == [r.to_dict() for r in records]
    header = adlab.to_csv(records).splitlines()[0].split(",")
    assert {"order", "colors", "nnz"} <= set(header)
