"""``trusted`` means something: a derivative off JAX's checked float64 one is flagged.

A framework's own rule can be wrong: PyTorch's reverse-over-forward and
forward-over-forward Hessians through ``slogdet`` give the identity where the
Hessian of sum(x) is zero (issue 23; torch's own ``jacrev(jacfwd(f))`` does too).
adlab cannot fix torch, but it must not call that result trusted.

Internals: the verdict's parts (engine.compare: crosscheck, tolerance, verdict;
measure.point_errors) on derivatives made wrong on purpose, which no public call can be
handed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import adlab
from adlab.engine.compare import tolerance, verdict
from adlab.engine.derivative import crosscheck
from adlab.measure.point_errors import point_errors

SLOGDET = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.linalg.slogdet(np.diag(np.exp(x)))[1]\n"
)
# det(3 I + u x^T) = 27 + 9 u.x, so its Hessian is 0; at x = 0 the three singular values tie
DET = (
    "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=n)\n"
    "def f(x, u):\n    return np.linalg.det(np.outer(u, x) + 3 * np.eye(x.shape[0]))\n"
)
SMOOTH = (
    "def setup(n, rng):\n    return rng.normal(size=n),\n"
    "def f(x):\n    return np.sum(np.sin(x) * x)\n"
)


@pytest.mark.parametrize("mode", ["reverse-over-forward", "forward-over-forward"])
def test_torchs_wrong_hessian_through_slogdet_is_flagged_with_both_numbers(mode):
    m = adlab.Model.from_source(SLOGDET)
    (x,) = m.setup(3, 0)
    try:
        with pytest.warns(adlab.UntrustedWarning, match="disagrees with JAX's checked"):
            h, info = adlab.hessian(m, x, mode=mode, backend="torch", full_output=True)
    except adlab.ModelError as exc:  # refusing the composition, with the line, is right too
        assert "line 4" in str(exc)
        return
    assert not np.allclose(h, 0.0, atol=1e-8)  # torch's result is still wrong ...
    assert info.trusted is False  # ... and no longer called trusted
    assert "entry 0 is 1" in info.note and "reference gives" in info.note


def test_a_right_derivative_on_another_framework_stays_trusted():
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(4, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", adlab.UntrustedWarning)
        g, info = adlab.derivative(m, x, mode="forward", backend="torch", full_output=True)
        h, hinfo = adlab.hessian(m, x, mode="reverse-over-reverse", backend="torch",
                                 full_output=True)  # fmt: skip
    assert info.trusted and hinfo.trusted
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)


def test_crosscheck_names_the_wrong_entry_and_no_claim_without_a_checked_reference():
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(3, 0)
    right = np.cos(x) * x + np.sin(x)
    kw = dict(wrt=0, mode="forward", scheme="central", precision="float64", backend="torch")
    assert crosscheck(m, (x,), right, **kw) is None
    wrong = right.copy()
    wrong[2] = np.nan  # a rule that divided by zero
    assert "entry 2 is nan" in crosscheck(m, (x,), wrong, **kw)
    # finite differences may be off by their truncation error, never by 1e-2
    off = right * (1 + 1e-6)
    assert crosscheck(m, (x,), off, **{**kw, "mode": "numeric"}) is None
    assert crosscheck(m, (x,), off, **kw) is not None  # AD is exact to rounding
    assert tolerance("numeric", "central", "float32") is None  # no claim there
    exact = tolerance("forward", None, "float64")
    assert verdict(np.zeros(3), np.full(3, 1e-17), exact) is None  # zeros but for rounding


def test_a_sweep_point_off_its_checked_reference_is_not_trusted():
    ref = adlab.Reference(np.array([1.0, 2.0]), True, 0.0)
    notes: list[str] = []
    out = point_errors(np.array([1.0, 2.5]), None, ref, notes, "forward", None, "float64")
    assert out["trusted"] is False and "2.5" in notes[0] and "reference gives 2" in notes[0]
    notes = []
    assert point_errors(np.array([1.0, 2.0]), None, ref, notes, "forward")["trusted"] is True
    assert notes == []
    unchecked = adlab.Reference(np.array([1.0, 2.0]), None, float("nan"))
    assert "trusted" not in point_errors(np.array([9.0, 9.0]), None, unchecked, [], "forward")


def test_derivative_flags_a_first_derivative_off_the_reference():
    """A finite difference with a step far too large (the user's ``step=1``) is off by
    its truncation error, ~10%: returned, but flagged, with both numbers."""
    m = adlab.Model.from_source(SMOOTH)
    (x,) = m.setup(4, 0)
    with pytest.warns(adlab.UntrustedWarning, match="numeric on torch: it disagrees"):
        g, info = adlab.derivative(m, x, mode="numeric", step=1.0, backend="torch",
                                   full_output=True)  # fmt: skip
    assert info.trusted is False and "reference gives" in info.note
    assert "pytorch/pytorch" not in info.note  # no operation of a known bug of PyTorch's
    g, info = adlab.derivative(m, x, mode="numeric", backend="torch", full_output=True)
    assert info.trusted and info.note is None


def test_torchs_wrong_hvp_through_slogdet_is_flagged():
    m = adlab.Model.from_source(SLOGDET)
    (x,) = m.setup(3, 0)
    try:
        with pytest.warns(adlab.UntrustedWarning, match="hvp reverse-over-forward on torch"):
            hv, info = adlab.hvp(m, x, np.ones(3), mode="reverse-over-forward", backend="torch",
                                 full_output=True)  # fmt: skip
    except adlab.ModelError as exc:
        assert "line 4" in str(exc)
        return
    assert info.trusted is False and "entry 0 is 1 where the reference gives" in info.note
    assert "np.linalg.slogdet (line 4" in info.note and "pytorch/pytorch#149694" in info.note
    with warnings.catch_warnings():
        warnings.simplefilter("error", adlab.UntrustedWarning)
        right = adlab.hvp(adlab.Model.from_source(SMOOTH), x, np.ones(3), backend="torch")
    np.testing.assert_allclose(right, -np.sin(x) * x + 2 * np.cos(x), rtol=1e-12)


@pytest.mark.parametrize(("scheme", "tied"), [
    ("reverse-over-forward", False),  # PyTorch 2.14.1: entries up to 0.78 where 0 is right
    ("reverse-over-reverse", True),  # NaN
])  # fmt: skip
def test_torchs_own_bug_through_det_is_named_with_its_issue(scheme, tied):
    m = adlab.Model.from_source(DET)
    x, u = m.setup(3, 0)
    at = np.zeros(3) if tied else x
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", adlab.UntrustedWarning)
        h = adlab.hessian(m, at, u, scheme=scheme, backend="torch")
    said = [str(w.message) for w in caught if w.category is adlab.UntrustedWarning]
    if not said:  # a PyTorch that fixed it: then it must be right
        np.testing.assert_allclose(h, 0.0, atol=1e-12)
        return
    (message,) = said
    assert not np.allclose(h, 0.0, atol=1e-8)
    assert "np.linalg.det (line 4: `return np.linalg.det(" in message, message
    assert "pytorch/pytorch#149694" in message and "backend='jax'" in message, message
    # where PyTorch's rule is right (a reverse mode inside, singular values apart): no word
    with warnings.catch_warnings():
        warnings.simplefilter("error", adlab.UntrustedWarning)
        right = adlab.hessian(m, x, u, scheme="forward-over-reverse", backend="torch")
        numeric = adlab.hessian(m, at, u, scheme="numeric", backend="torch")  # the advice
    np.testing.assert_allclose(right, 0.0, atol=1e-12)
    np.testing.assert_allclose(numeric, 0.0, atol=1e-6)
