"""``check=False`` skips the cross-check and says so; the check's one-program reference.

Issue 31: the first ``derivative()`` on PyTorch, TensorFlow or autograd paid for JAX
programs compiled to check it. ``check=False`` skips them, and then ``trusted`` claims
nothing (False, with the note ``UNCHECKED``, and no warning: the user asked). With the
check on, the reference and its central differences are one program
(``engine.whole_reference``); these pin its layout and its fallback at a kink. The
figures are ``benchmarks/first_call.py``'s, never asserted here.

Internals: reads ``engine.crosscheck`` (the reference's program and route),
``engine.derivative.UNCHECKED`` (the note's words) and ``engine.model.precision_scope``
(JAX's float64 reference by hand), which the package does not export.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import adlab
from adlab.engine import crosscheck as checking
from adlab.engine.derivative import UNCHECKED
from adlab.engine.model.precision import precision_scope

SMOOTH = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.sum(np.sin(x) * x)\n"
)
# a Jacobian (3 outputs) in two arguments, one a matrix, and a scalar held as a constant
TWO = (
    "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=(2, n)), 2.0\n"
    "def f(x, a, s):\n    return np.stack([np.sum(x * a[0]), np.sum(np.tanh(a) * s), x[0] ** 3])\n"
)
# |x|: at an entry closer to 0 than the differences' step they disagree with AD (a kink)
KINK = (
    "def setup(n, rng):\n    return rng.normal(size=n),\ndef f(x):\n    return np.sum(np.abs(x))\n"
)


@pytest.fixture
def no_reference(monkeypatch):
    """Fail if a reference (whole or projected) is computed."""

    def refuse(*args, **kwargs):
        raise AssertionError("check=False computed a reference")

    monkeypatch.setattr(checking, "_reference", refuse)
    monkeypatch.setattr(checking, "projected", refuse)


@pytest.mark.parametrize("backend", ["autograd", "jax"])
def test_check_false_skips_the_reference_and_claims_nothing(no_reference, backend):
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(5, 0)
    for mode in ("reverse", "forward"):
        g, info = adlab.derivative(m, x, mode=mode, backend=backend, check=False,
                                   full_output=True)  # fmt: skip
        np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)
        assert info.trusted is False and info.note == UNCHECKED  # no warning: asked for
    h, hinfo = adlab.hessian(m, x, backend=backend, check=False, full_output=True)
    hv, vinfo = adlab.hvp(m, x, np.ones_like(x), backend=backend, check=False, full_output=True)
    np.testing.assert_allclose(hv, h @ np.ones_like(x), rtol=1e-10)
    assert not hinfo.trusted and not vinfo.trusted and hinfo.note == vinfo.note == UNCHECKED


def test_check_false_still_flags_a_value_that_is_not_finite(no_reference):
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return rng.normal(size=n),\n"
        "def f(x):\n    return np.sum(np.sqrt(x * x))\n"
    )
    x = np.zeros(3)
    with pytest.warns(adlab.UntrustedWarning, match="entry 0 is nan"):
        _, info = adlab.derivative(m, x, mode="forward", check=False, full_output=True)
    assert info.trusted is False and "nan" in info.note


def test_the_default_still_checks():
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(5, 0)
    _, info = adlab.derivative(m, x, mode="reverse", backend="autograd", full_output=True)
    assert info.trusted is True and info.note is None


def test_the_whole_reference_reads_a_jacobian_in_two_arguments_as_the_value_is_read():
    m = adlab.Model.from_source(TWO)
    x, a, s = m.setup(4, 0)
    ref, route = checking._reference(m, (x, a, s), (0, 1), 1, None)
    with precision_scope("float64"):
        jx, ja = jax.jacrev(m.function("jax"), argnums=(0, 1))(x, a, s)
    expected = np.concatenate([np.ravel(jx), np.ravel(ja)])
    assert route == "numeric"
    np.testing.assert_allclose(ref, expected, rtol=1e-12, atol=1e-15)
    g, info = adlab.derivative(m, x, a, s, wrt=(0, 1), mode="forward", backend="autograd",
                               full_output=True)  # fmt: skip
    assert info.trusted is True and [np.shape(p) for p in g] == [(3, 4), (3, 2, 4)]


def test_the_whole_reference_falls_back_to_forward_mode_at_a_kink():
    m = adlab.Model.from_source(KINK)
    x = np.array([1e-9, -0.5, 2.0])
    ref, route = checking._reference(m, (x,), 0, 1, None)
    assert route == "forward"  # differences see |x| bend within their step; forward agrees
    np.testing.assert_array_equal(ref, np.sign(x))


def test_the_whole_reference_of_a_hessian_is_forward_over_reverse():
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(4, 0)
    ref, route = checking._reference(m, (x,), 0, 2, None)
    expected = np.diag(2 * np.cos(x) - x * np.sin(x))
    assert route == "numeric"
    np.testing.assert_allclose(np.reshape(ref, (4, 4)), expected, rtol=1e-12, atol=1e-15)
