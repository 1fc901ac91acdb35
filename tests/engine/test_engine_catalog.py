"""Every mode, on every catalog model, against derivatives derived by hand.

The oracles live in ``_engine_hand.py``; tolerances follow each method's
theory (see ``tolerance`` there), in float64 and in float32.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from _engine_hand import (
    FINITE_DIFFERENCES,
    HAND,
    METHODS,
    SMALL_MLP,
    error,
    gaussian_residual_d,
    gaussian_residual_x,
    golden_checked,
    mlp,
    rounded,
    tolerance,
)

import adlab


@functools.cache
def model(name: str, **settings) -> adlab.Model:
    return adlab.load_model(name, **settings)


@functools.cache
def setup(name: str, n: int) -> tuple:
    return model(name, **HAND[name][0]).setup(n)


@functools.cache
def derive(name: str, n: int, precision: str, mode: str, scheme: str, backend: str = "jax"):
    """adlab's derivative of a catalog model at its setup(n) arguments, computed
    once per session: each is an XLA compile, and several tests look at it."""
    m = model(name, **HAND[name][0])
    with warnings.catch_warnings():
        # gaussian_residual's NaN at n=1 in float32 (below) is flagged untrusted: the
        # test asserts the NaN itself
        if (name, n, precision) == ("gaussian_residual", 1, "float32"):
            warnings.filterwarnings("ignore", ".*entry 0 is nan", adlab.UntrustedWarning)
        return adlab.derivative(
            m, *setup(name, n), mode=mode, scheme=scheme, precision=precision, backend=backend
        )


def test_hand_oracles_cover_the_catalog():
    golden = golden_checked()
    assert sorted(HAND) == [name for name in adlab.list_models() if name not in golden]


@pytest.mark.parametrize("precision", ["float64", "float32"])
# the smallest size (a lone entry: broadcasts and reductions at their edge) and a larger one:
# each size is an XLA program per mode and precision; 10 is taken by the tests below
@pytest.mark.parametrize("n", [1, 100])
@pytest.mark.parametrize("name", sorted(HAND))
@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_every_mode_matches_the_hand_derivative(name, n, precision, mode, scheme):
    settings, hand = HAND[name]
    m = model(name, **settings)
    args = setup(name, n)
    got = derive(name, n, precision, mode, scheme)
    want = hand(*rounded(args, precision))

    assert isinstance(got, np.ndarray)
    assert got.dtype == np.dtype(precision)
    assert got.shape == want.shape  # out.shape + x.shape
    if not np.all(np.isfinite(got)):
        # gaussian_residual at n=1: the lone Gaussian sits 10.3 from the grid
        # point, exp(-159) underflows in float32 and f is 0/0 = NaN there. A
        # NaN f must give a NaN derivative, never a made-up finite number.
        assert (name, n, precision) == ("gaussian_residual", 1, "float32")
        f_value = adlab.derivative(m, *args, mode="primal", precision=precision)
        assert np.isnan(f_value).all() and np.isnan(got).all()
        return
    err = error(got, want)
    assert err <= tolerance(mode, scheme, precision), f"error {err:.3g}"


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_mlp_per_sample_vmap_style(mode, scheme):
    m = adlab.load_model("mlp_per_sample", STYLE="vmap", **SMALL_MLP)
    params, xs = m.setup(10)
    got = adlab.derivative(m, params, xs, mode=mode, scheme=scheme)
    assert error(got, mlp(params, xs, 8, 3)) <= tolerance(mode, scheme, "float64")


# ------------------------------------------------------------ Jacobian shapes
@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_tall_jacobian_scalar_x_to_vector(mode, scheme):
    """gaussian_residual: wrt=1 (the model's default), scalar x -> n residuals."""
    d, x = setup("gaussian_residual", 10)
    got = derive("gaussian_residual", 10, "float64", mode, scheme)
    assert got.shape == (10,)  # (10,) + x.shape, x.shape == ()
    assert error(got, gaussian_residual_x(d, x)) <= tolerance(mode, scheme, "float64")


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_wide_jacobian_three_by_n(mode, scheme):
    (x,) = setup("wide_moments", 10)
    got = derive("wide_moments", 10, "float64", mode, scheme)
    assert got.shape == (3, 10)
    assert error(got, HAND["wide_moments"][1](x)) <= tolerance(mode, scheme, "float64")


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_wrt_tuple_returns_a_tuple_like_argnums(mode, scheme):
    m = model("gaussian_residual")
    d, x = setup("gaussian_residual", 10)
    tol = tolerance(mode, scheme, "float64")

    got = adlab.derivative(m, d, x, mode=mode, scheme=scheme, wrt=(0, 1))
    assert isinstance(got, tuple) and len(got) == 2
    assert got[0].shape == (10, 10) and got[1].shape == (10,)
    assert error(got[0], gaussian_residual_d(d, x)) <= tol
    assert error(got[1], gaussian_residual_x(d, x)) <= tol


@pytest.mark.parametrize("mode", ["reverse", "numeric"])
def test_wrt_one_tuple_returns_a_one_tuple(mode):
    m = model("gaussian_residual")
    d, x = setup("gaussian_residual", 10)
    one = adlab.derivative(m, d, x, mode=mode, wrt=(1,))
    assert isinstance(one, tuple) and len(one) == 1 and one[0].shape == (10,)
    assert error(one[0], gaussian_residual_x(d, x)) <= tolerance(mode, "central", "float64")


SRC_2D = """
def setup(n, rng):
    return (rng.uniform(-1.0, 1.0, (2, n)), rng.uniform(0.5, 1.5, n))


def f(X, w):
    return np.stack(
        [np.sum(np.sin(X)), np.sum(X**2 * w), X[0, 1] * X[1, 2], np.sum(np.exp(X[:, 0]))]
    )
"""


def hand_2d(X, w):
    J = np.zeros((4, *X.shape))
    J[0] = np.cos(X)
    J[1] = 2 * X * w
    J[2, 0, 1], J[2, 1, 2] = X[1, 2], X[0, 1]
    J[3, :, 0] = np.exp(X[:, 0])
    return J


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_jacobian_layout_is_out_shape_plus_x_shape(mode, scheme):
    """A 2-D x: the Jacobian is (m, *x.shape), as jax.jacfwd lays it out."""
    m = adlab.Model.from_source(SRC_2D, "two_d")
    X, w = m.setup(3)
    got = adlab.derivative(m, X, w, mode=mode, scheme=scheme)
    assert got.shape == (4, 2, 3)
    assert error(got, hand_2d(X, w)) <= tolerance(mode, scheme, "float64")


# ------------------------------------------------------------- NumPy backend
@pytest.mark.parametrize("name", sorted(HAND))
@pytest.mark.parametrize(("mode", "scheme"), FINITE_DIFFERENCES, ids=lambda v: v)
def test_numpy_backend_matches_jax_and_the_hand_derivative(name, mode, scheme):
    args = setup(name, 10)
    tol = tolerance(mode, scheme, "float64")
    on_numpy = derive(name, 10, "float64", mode, scheme, backend="numpy")
    on_jax = derive(name, 10, "float64", mode, scheme)
    assert on_numpy.shape == on_jax.shape
    assert error(on_numpy, on_jax) <= tol
    assert error(on_numpy, HAND[name][1](*args)) <= tol
