"""A derivative too large to compare whole is still held to JAX's checked float64 one.

Above ``CHECK_MAX`` entries the reference would cost as much as the derivative itself, so
a first derivative is compared along a few random projections u . (J v) instead, a
Hessian along u . (H v), and an HVP whose Hessian is that large along u . (H d). A wrong
block (an all-zero Jacobian from one backend was once caught only by an outside
validator) must not be called trusted; a right one must stay trusted.

Internals: ``crosscheck`` (adlab.engine.derivative) and ``CHECK_MAX``
(adlab.engine.crosscheck) on derivatives made wrong on purpose, which no public call can
be handed; ``Prepared.first_result`` (``Prepared.__call__`` for ``hessian`` and ``hvp``)
patched to hand the public call a wrong block; the check's kept programs
(``_kept_program``), which no public call shows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import adlab
from adlab.engine.crosscheck import CHECK_MAX, _kept_program
from adlab.engine.derivative import crosscheck

#: a dense Jacobian (rank one plus a diagonal), n x n
DENSE = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.tanh(x * np.dot(x, np.sin(x))) + np.cos(x) * x\n"
)
#: the same in two arguments, for wrt=(0, 1)
TWO = (
    "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=n)\n"
    "def f(x, y):\n    return np.tanh(x * np.dot(y, np.sin(x))) + y * x\n"
)
SMOOTH = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.sum(np.sin(x) * x)\n"
)
N = 40  # a 40 x 40 Jacobian: 1,600 entries
KW = dict(wrt=0, mode="forward", scheme="central", precision="float64", backend="torch")


def _jacobian(x):
    s = np.dot(x, np.sin(x))
    c = 1 - np.tanh(x * s) ** 2
    return np.diag(c * s - np.sin(x) * x + np.cos(x)) + np.outer(c * x, np.sin(x) + np.cos(x) * x)


def test_a_right_large_jacobian_and_gradient_stay_trusted():
    m = adlab.Model.from_source(DENSE)
    (x,) = m.setup(N, 0)
    assert N * N > CHECK_MAX
    with warnings.catch_warnings():
        warnings.simplefilter("error", adlab.UntrustedWarning)
        J, info = adlab.derivative(m, x, mode="forward", backend="torch", full_output=True)
        g, ginfo = adlab.derivative(adlab.Model.from_source(SMOOTH), np.linspace(-3, 3, 2000),
                                    mode="reverse", backend="torch", full_output=True)  # fmt: skip
    assert info.trusted and info.note is None and ginfo.trusted
    np.testing.assert_allclose(J, _jacobian(x), rtol=1e-10, atol=1e-12)
    assert crosscheck(m, (x,), _jacobian(x), **KW) is None
    # finite differences are off by their truncation error, within their tolerance
    assert crosscheck(m, (x,), _jacobian(x) * (1 + 1e-6), **{**KW, "mode": "numeric"}) is None


@pytest.mark.parametrize("block", ["zero", "scaled"])
def test_a_large_jacobian_with_a_wrong_block_is_flagged(block):
    m = adlab.Model.from_source(DENSE)
    (x,) = m.setup(N, 0)
    wrong = _jacobian(x)
    if block == "zero":
        wrong[20:30, 5:15] = 0.0  # a hundred entries of 1,600
    else:
        wrong[:4, :4] *= 1.001  # sixteen entries off by 0.1%
    note = crosscheck(m, (x,), wrong, **KW)
    assert note is not None and "along random projection" in note
    assert "u . (J v) is" in note and "where the reference gives" in note
    assert "What to do: compare it entry by entry with mode='reverse'" in note
    # a numeric result may be off by more, never by a zero block
    if block == "zero":
        assert crosscheck(m, (x,), wrong, **{**KW, "mode": "numeric"}) is not None
    assert crosscheck(m, (x,), np.zeros_like(wrong), **KW) is not None  # all zero


def test_a_wrong_block_in_one_of_two_arguments_is_flagged():
    m = adlab.Model.from_source(TWO)
    x, y = m.setup(N, 0)
    kw = {**KW, "wrt": (0, 1)}
    jx, jy = adlab.derivative(m, x, y, wrt=(0, 1))
    assert crosscheck(m, (x, y), (jx, jy), **kw) is None
    jy = jy.copy()
    jy[:, 3] = 0.0  # the derivative in one entry of y, all lost
    assert "along random projection" in crosscheck(m, (x, y), (jx, jy), **kw)


def test_a_long_gradient_off_the_reference_is_flagged():
    """A finite difference with a step far too large (the user's ``step=1``) is off by its
    truncation error, ~10%: returned, but flagged, with the projection that disagreed."""
    m = adlab.Model.from_source(SMOOTH)
    x = np.linspace(-3, 3, 2000)
    with pytest.warns(adlab.UntrustedWarning, match="numeric on torch: it disagrees"):
        g, info = adlab.derivative(m, x, mode="numeric", step=1.0, backend="torch",
                                   full_output=True)  # fmt: skip
    assert info.trusted is False and "g . v is" in info.note and "2000 entries" in info.note


def test_derivative_flags_a_large_jacobian_with_a_wrong_block(monkeypatch):
    real = adlab.Prepared.first_result

    def with_a_wrong_block(self):
        value, err = real(self)
        if self.mode == "forward":  # the result under test, not the reference's
            value = value.copy()
            value[10:20, 10:20] = 0.0
        return value, err

    monkeypatch.setattr(adlab.Prepared, "first_result", with_a_wrong_block)
    m = adlab.Model.from_source(DENSE)
    (x,) = m.setup(N, 0)
    with pytest.warns(adlab.UntrustedWarning, match="forward on torch: it disagrees"):
        _, info = adlab.derivative(m, x, mode="forward", backend="torch", full_output=True)
    assert info.trusted is False and "random projection" in info.note


KINKED = (
    "def setup(n, rng):\n    x = rng.normal(size=n)\n    x[::2] = 0.0\n    return x,\n"
    "def f(x):\n    return np.where(x > 0, x, 0.0) + np.tanh(x * np.dot(x, np.sin(x)))\n"
)


def test_at_a_kink_the_reference_is_checked_by_reverse_mode():
    """Half of x sits on the kink of ``where(x > 0, x, 0)``: central differences read half
    its slope there, AD none, so the reference's projections are checked by reverse mode
    ((u J) . v) instead, and a wrong block is still caught."""
    m = adlab.Model.from_source(KINKED)
    (x,) = m.setup(N, 0)
    J = adlab.derivative(m, x, mode="forward", backend="torch")
    np.testing.assert_allclose(J, adlab.derivative(m, x), rtol=1e-12, atol=1e-14)
    assert crosscheck(m, (x,), J, **KW) is None
    wrong = J.copy()
    wrong[:, 1::2] = 0.0  # every column off the kink
    assert "along random projection" in crosscheck(m, (x,), wrong, **KW)


SCALED = (
    "def setup(n, rng):\n    return rng.normal(size=n), 2.0\n"
    "def f(x, s):\n    return np.tanh(x * np.dot(x, np.sin(x)) * s)\n"
)


def test_the_check_program_is_kept_for_the_same_shapes_and_scalars():
    """A derivative taken in a loop compiles the check once; a scalar argument the program
    holds as a constant keys it: another value is not checked against the old one."""
    m = adlab.Model.from_source(SCALED)
    x, s = m.setup(N, 0)
    J = adlab.derivative(m, x, s)
    kept = _kept_program.cache_info()
    assert crosscheck(m, (x, s), J, **KW) is None
    assert crosscheck(m, (x + 0.1, s), adlab.derivative(m, x + 0.1, s), **KW) is None
    assert _kept_program.cache_info().hits >= kept.hits + 1  # the second one: no new program
    assert "along random projection" in crosscheck(m, (x, 3.0), J, **KW)  # J is for s=2


def test_no_claim_on_a_wrapped_function_off_the_reference():
    """A wrapped callable has no source to run on JAX: off JAX, nothing to compare with."""
    m = adlab.Model.from_function(lambda x: x * x)
    x = np.linspace(0, 1, 2000)
    assert crosscheck(m, (x,), np.zeros(2000), **{**KW, "backend": "numpy"}) is None


#: a scalar f with a dense Hessian (rank one plus a diagonal, and more), for n = N: 1,600 entries
SCALAR = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.sum(np.tanh(x * np.dot(x, np.sin(x)))) + np.sum(np.cos(x) * x**2)\n"
)
SECOND = dict(KW, mode="hessian", scheme="forward-over-reverse", order=2)


def _wrong(monkeypatch, mode, spoil):
    """``Prepared.__call__`` spoiling torch's ``mode`` ("hessian", "hvp") result with ``spoil``."""
    real = adlab.Prepared.__call__

    def spoiled(self, *a):
        value = real(self, *a)
        if self.mode == mode and self.backend == "torch":  # the result under test alone
            value = np.array(value.numpy(force=True))
            spoil(value)
        return value

    monkeypatch.setattr(adlab.Prepared, "__call__", spoiled)


def test_a_right_large_hessian_and_hvp_stay_trusted():
    m = adlab.Model.from_source(SCALAR)
    (x,) = m.setup(N, 0)
    d = np.linspace(-1, 1, N)
    with warnings.catch_warnings():
        warnings.simplefilter("error", adlab.UntrustedWarning)
        H, info = adlab.hessian(m, x, backend="torch", full_output=True)
        hv, vinfo = adlab.hvp(m, x, d, backend="torch", full_output=True)
    assert info.trusted and info.note is None and vinfo.trusted
    np.testing.assert_allclose(H, adlab.hessian(m, x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv, H @ d, rtol=1e-10, atol=1e-12)
    # central differences of the gradient are off by their truncation error, within tolerance
    assert crosscheck(m, (x,), H * (1 + 1e-6), **{**SECOND, "scheme": "numeric"}) is None
    wrong = H.copy()
    wrong[:4, :4] *= 1.001  # sixteen entries off by 0.1%
    assert "u . (H v) is" in crosscheck(m, (x,), wrong, **SECOND)


def test_hessian_flags_a_large_hessian_with_a_wrong_block(monkeypatch):
    def zero_block(H):
        H[20:30, 5:15] = 0.0  # a hundred entries of 1,600

    _wrong(monkeypatch, "hessian", zero_block)
    m = adlab.Model.from_source(SCALAR)
    (x,) = m.setup(N, 0)
    assert N * N > CHECK_MAX
    with pytest.warns(adlab.UntrustedWarning, match="forward-over-reverse on torch: it disagrees"):
        _, info = adlab.hessian(m, x, backend="torch", full_output=True)
    assert info.trusted is False and "along random projection" in info.note
    assert "the Hessian has 1600 entries" in info.note and "u . (H v) is" in info.note
    assert "compare it entry by entry with scheme='forward-over-reverse'" in info.note


def test_hvp_flags_a_wrong_product_whose_hessian_is_large(monkeypatch):
    def off(hv):
        hv[3] += 1e-3 * np.linalg.norm(hv)  # one entry off by 0.1% of the whole

    _wrong(monkeypatch, "hvp", off)
    m = adlab.Model.from_source(SCALAR)
    (x,) = m.setup(N, 0)
    with pytest.warns(adlab.UntrustedWarning, match="hvp forward-over-reverse on torch"):
        _, info = adlab.hvp(m, x, np.linspace(-1, 1, N), backend="torch", full_output=True)
    assert info.trusted is False and "random projection" in info.note
