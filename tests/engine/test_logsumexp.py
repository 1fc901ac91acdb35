"""``logsumexp`` beside ``np`` (adlab/engine/backends/special.py): SciPy's meaning on every
framework, exact in every mode, complex step included, and cheaper to differentiate than
the same function written out with ``np.max``.

Oracles: ``scipy.special.logsumexp``, the hand-derived gradient (the softmax) and
Hessian (diag(p) - p p^T), and the reverse gradient of the written-out model.

Internals: logsumexp's place in complex step's rules (real_part.RULES,
complex_step.find_non_analytic: trusted, never flagged) and second order's tables
(modes.hessian: NAMES, HVP_NAMES, ON) to run it in every composition each framework nests;
none is public.
"""

from __future__ import annotations

import functools
import warnings

import jax
import numpy as np
import pytest
import scipy.special
from _engine_hand import error
from _frameworks import available

import adlab
from adlab.engine.backends import real_part
from adlab.engine.model import precision_scope
from adlab.engine.modes.complex_step import find_non_analytic
from adlab.engine.modes.hessian import HVP_NAMES, NAMES, ON
from adlab.engine.programs import equations

FRAMEWORKS = ("jax", "numpy", "torch", "tensorflow", "autograd")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")

# x reshaped to 3 x 4, reduced over AXIS (a setting can't be a tuple: it is spliced in)
REDUCE = '''"""logsumexp of x as a 3 x 4 matrix. n: the size of x (12)."""


def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    return np.ravel(logsumexp(np.reshape(x, (3, 4)), axis=AXIS, keepdims=KEEP))
'''

LSE = '''"""log-sum-exp. n: the length of x."""


def setup(n, rng):
    return (rng.random(n),)


def f(x):
    return BODY
'''
PROVIDED = LSE.replace("BODY", "logsumexp(x)")
WRITTEN = LSE.replace("BODY", "np.max(x) + np.log(np.sum(np.exp(x - np.max(x))))")
# a vector f: one log-sum-exp per row, as gmm's
ROWS = LSE.replace("BODY", "logsumexp(np.reshape(x, (2, -1)) * np.array([[1.0], [2.0]]), axis=1)")


@functools.cache
def _model(text: str, **settings) -> adlab.Model:
    return adlab.Model.from_source(text, "lse", **settings)


def _softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize(("axis", "keep"), [("None", False), ("0", False), ("1", True),
                                            ("-1", False), ("(0, 1)", True)])  # fmt: skip
def test_the_value_is_scipys(backend, axis, keep):
    available(backend)
    m = adlab.Model.from_source(REDUCE.replace("AXIS", axis).replace("KEEP", str(keep)))
    (x,) = m.setup(12)
    x[5] = 700.0  # exp(700) is near overflow: the shift must keep it finite
    got = adlab.derivative(m, x, mode="primal", backend=backend)
    want = scipy.special.logsumexp(x.reshape(3, 4), axis=eval(axis), keepdims=keep)
    np.testing.assert_allclose(got, np.ravel(want), rtol=1e-15)


@pytest.mark.parametrize("backend", FRAMEWORKS)
def test_all_minus_infinity_is_minus_infinity(backend):
    """SciPy's answer where every term is exp(-inf) = 0, under complex step too (the
    shift of an all -inf row would make inf - inf)."""
    available(backend)
    m = _model(LSE.replace("BODY", "logsumexp(np.reshape(x, (2, -1)), axis=1)"))
    x = np.array([-np.inf, -np.inf, 0.5, 0.1])
    value = adlab.derivative(m, x, mode="primal", backend=backend)
    assert value[0] == -np.inf
    np.testing.assert_allclose(value[1], np.log(np.exp(0.5) + np.exp(0.1)), rtol=1e-15)
    with warnings.catch_warnings():  # NumPy warns of log(0) in the -inf row, as NumPy does
        warnings.simplefilter("ignore", RuntimeWarning)
        jac = adlab.derivative(m, x, mode="complex-step", backend=backend)
    np.testing.assert_allclose(jac[1], [0, 0, *_softmax(x[2:])], rtol=1e-15)


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize("x", [[0.3, 0.9, 0.1, 0.5, 0.2, 0.7], [0.3, 0.9, 0.9, 0.1, 0.9, 0.2]],
                         ids=["unique", "tied"])  # fmt: skip
def test_complex_step_is_exact(backend, x):
    """The shift comes from the real parts, held constant: Im f(x + ih)/h is the reverse
    gradient to rounding, whether the maximum is unique or tied; and the softmax."""
    available(backend)
    x = np.asarray(x)
    for text in (PROVIDED, ROWS):
        m = _model(text)
        got, info = adlab.derivative(m, x, mode="complex-step", backend=backend, full_output=True)
        want = adlab.derivative(m, x, mode="reverse")
        nonzero = want != 0  # ROWS: each row depends on half of x
        assert np.max(np.abs(got - want)[nonzero] / np.abs(want[nonzero])) <= 1e-14
        assert np.all(got[~nonzero] == 0)
        assert info.trusted  # the analyticity check ran on the JAX twin and passed
    got = adlab.derivative(_model(PROVIDED), x, mode="complex-step", backend=backend)
    assert np.max(np.abs(got - _softmax(x)) / _softmax(x)) <= 1e-14


@pytest.mark.parametrize("backend", FRAMEWORKS)
def test_every_mode_gives_the_softmax(backend):
    available(backend)
    impl = adlab.engine.backends.get_backend(backend)
    m = _model(PROVIDED)
    (x,) = m.setup(7)
    for mode in ("forward", "reverse", "numeric"):
        if mode in ("forward", "reverse") and mode not in impl.ad:
            continue
        got = adlab.derivative(m, x, mode=mode, backend=backend)
        assert error(got, _softmax(x)) <= (1e-9 if mode == "numeric" else 1e-15), mode


def test_the_check_trusts_the_rule_and_only_it():
    """The complex-step rule reads the real part (a non-analytic primitive): the check
    passes it because it is the rule, and refuses the same model if the rule is not trusted."""
    m = _model(PROVIDED)
    args = m.setup(4)
    f_jax = m.function("jax")
    assert find_non_analytic(f_jax, args, 0, np.float64, m.files) is None
    untrusted = real_part.RULES - {"logsumexp"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(real_part, "RULES", untrusted)
        assert find_non_analytic(f_jax, args, 0, np.float64, m.files)[0] == "real"


@pytest.mark.parametrize(("body", "words"), [
    ("logsumexp(np.real(x + 0j))", "`np.real` is applied"),
    ("np.abs(logsumexp(x * np.exp(1j)))", "computes with complex numbers of its own"),
])  # fmt: skip
def test_what_goes_in_non_analytic_is_still_refused(body, words):
    m = adlab.Model.from_source(LSE.replace("BODY", body))
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(4), mode="complex-step")
    assert words in str(info.value) and info.value.lineno == 9


@pytest.mark.parametrize("mode", NAMES)
def test_hessian_and_hvp_on_jax(mode):
    """diag(p) - p p^T: the shift, held constant, is exact at second order too."""
    m = _model(PROVIDED)
    (x,) = m.setup(5)
    p = _softmax(x)
    want = np.diag(p) - np.outer(p, p)
    tol = 1e-8 if mode == "numeric" else 1e-15
    assert error(adlab.hessian(m, x, mode=mode), want) <= tol
    if mode in HVP_NAMES:
        v = np.linspace(-1.0, 1.0, 5)
        assert error(adlab.hvp(m, x, v, mode=mode), want @ v) <= tol


@pytest.mark.parametrize("backend", ["torch", "tensorflow", "autograd"])
def test_hessian_on_other_frameworks(backend):
    available(backend)
    m = _model(PROVIDED)
    (x,) = m.setup(5)
    p = _softmax(x)
    want = np.diag(p) - np.outer(p, p)
    for mode in ON[backend]:
        tol = 1e-8 if mode == "numeric" else 1e-14
        assert error(adlab.hessian(m, x, mode=mode, backend=backend), want) <= tol, mode


def _backward(text: str, x) -> list:
    """The equations of f's backward pass alone (jax.vjp's pullback), as jaxpr equations."""
    with precision_scope("float64"):
        _, pullback = jax.vjp(_model(text).function("jax"), x)
        return list(equations(jax.make_jaxpr(pullback)(1.0).jaxpr))


def test_the_gradient_does_not_differentiate_the_shift():
    """Written out, the backward pass gathers a cotangent for the shift (a sum over x) and
    sends it back through max's mask (more passes over x); logsumexp's has neither: one
    product with the softmax."""
    x = np.linspace(0.0, 1.0, 6)

    def passes(eqns):  # equations that make or read an x-sized array
        return [e for e in eqns if any(getattr(v.aval, "shape", ()) == x.shape
                                       for v in (*e.invars, *e.outvars))]  # fmt: skip

    provided, written = passes(_backward(PROVIDED, x)), passes(_backward(WRITTEN, x))
    assert "reduce_sum" in [e.primitive.name for e in written]
    assert "reduce_sum" not in [e.primitive.name for e in provided]
    assert len(provided) < len(written)


@pytest.mark.parametrize("backend", ["jax", "numpy", "torch"])
@pytest.mark.parametrize(("call", "words"), [
    ("logsumexp(x, axis=1)", "logsumexp's axis 1 is out of range for an array with 1 dimension"),
    ("logsumexp(x, axis=0.5)", "logsumexp's axis must be an int, a tuple of ints or None"),
    ("logsumexp([x, x])", "logsumexp takes an array, got list"),
])  # fmt: skip
def test_a_bad_call_names_the_line(backend, call, words):
    available(backend)
    m = adlab.Model.from_source(LSE.replace("BODY", call))
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(4), mode="numeric", backend=backend)
    assert words in str(info.value) and info.value.lineno == 9


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_np_logsumexp_says_where_it_is(backend):
    """NumPy has no np.logsumexp (SciPy's is scipy.special's): the error says to call the
    one beside np. (PyTorch's np passes torch.logsumexp through, with torch's meaning.)"""
    m = adlab.Model.from_source(LSE.replace("BODY", "np.logsumexp(x)"))
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(4), mode="numeric", backend=backend)
    assert "call logsumexp(...), provided beside np" in str(info.value)
    assert info.value.lineno == 9
