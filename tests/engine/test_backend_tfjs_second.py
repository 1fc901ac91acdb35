"""backend="tfjs": Hessians and HVPs by TF.js's own nesting, tf.grad of tf.grad, in Node.

Oracle: JAX's float64 Hessian (``hessian_reference``), and its product with v. TF.js runs
reverse-over-reverse itself on the translated f (an HVP is tf.grad of the gradient's
component along v; a Hessian is n of them) in float32, so it agrees to float32's rounding.
TF.js has no forward mode: the compositions that need it are refused, naming what runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from _second_points import MODELS, NESTED, point, rel

import adlab
from adlab.engine.backends import get_backend, installed
from adlab.engine.backends.levels import levels

pytestmark = pytest.mark.skipif(not installed("tfjs"), reason="Node.js is not installed")

NESTS = "reverse-over-reverse"


@pytest.mark.parametrize("name", MODELS)
def test_tf_grad_of_tf_grad_is_jaxs_hessian_and_hvp_in_float32(name):
    model, (x, *data), v, ref = point(name)
    h = adlab.hessian(model, x, *data, scheme=NESTS, backend="tfjs")  # float32: TF.js's
    hv = adlab.hvp(model, x, v, *data, scheme=NESTS, backend="tfjs")
    assert h.shape == (3, 3) and hv.shape == (3,)
    assert rel(h, ref) < 1e-5 and rel(hv, ref @ v) < 1e-5


def test_without_a_scheme_tfjs_nests_the_one_it_has():
    # jax.hessian's forward-over-reverse is the default where a backend nests it; TF.js does
    # not (no forward mode), so a call that names no scheme runs its reverse-over-reverse
    model, (x, *data), v, ref = point("rosenbrock")
    assert adlab.prepare_hessian(model, x, *data, backend="tfjs").scheme == NESTS
    assert rel(adlab.hvp(model, x, v, *data, backend="tfjs"), ref @ v) < 1e-5
    assert adlab.prepare_hessian(model, x, *data).scheme == "forward-over-reverse"  # JAX's


def test_the_gradient_comes_with_the_hvp_and_the_calls_leave_memory_as_found():
    model, (x, *data), v, ref = point("logistic_regression")
    p = adlab.prepare_hvp(model, x, v, *data, scheme=NESTS, backend="tfjs", with_gradient=True)
    g, hv = p(*p.inputs)
    assert p.f_evals == 1  # the gradient is the inner tf.grad's: no pass more
    assert rel(g, adlab.derivative(model, x, *data)) < 1e-5 and rel(hv, ref @ v) < 1e-5
    h = adlab.prepare_hessian(model, x, *data, scheme=NESTS, backend="tfjs")
    assert h.f_evals == 3
    h(*h.inputs)
    backend = get_backend("tfjs")
    before = backend.tensors()
    for k in range(3):
        p(*p.inputs)
        p(p.inputs[0] + 0.01 * k, *p.inputs[1:])
        h(h.inputs[0] + 0.01 * k, *h.inputs[1:])
    assert backend.tensors() == before


def test_levels_name_tf_grad_twice_and_the_forward_compositions_are_refused():
    assert levels("tfjs", "hessian", NESTS) == (
        "outer: TF.js's tf.grad (reverse); inner: TF.js's tf.grad (reverse)")  # fmt: skip
    model, (x, *data), v, _ = point("rosenbrock")
    for scheme in (s for s in NESTED if s != NESTS):  # each needs forward mode
        for hvp in (False, True):
            with pytest.raises(ValueError) as info:
                if hvp:
                    adlab.hvp(model, x, v, *data, scheme=scheme, backend="tfjs")
                else:
                    adlab.hessian(model, x, *data, scheme=scheme, backend="tfjs")
            text = str(info.value)
            assert f"{scheme!r} is not available on backend='tfjs'" in text, text
            assert "no forward mode" in text and "runs 'reverse-over-reverse'" in text, text
            assert "backend='jaxjs'" in text and "backend='js'" in text, text
    with pytest.raises(ValueError, match="complex-step.*imaginary part"):
        adlab.hessian(model, x, *data, scheme="complex-step", backend="tfjs")


def test_exp_and_tanhs_second_derivatives_are_not_held_constant():
    """TF.js's gradients of exp, tanh (and sigmoid, softmax, pow) read the output their
    kernel saved; tf.grad of tf.grad would hold it constant (exp's Hessian: zero)."""
    src = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
           "def f(x):\n    return np.sum(np.exp(x) + np.tanh(x) + x ** x[0])\n")  # fmt: skip
    model = adlab.Model.from_source(src, name="saved_outputs")
    (x,) = model.setup(3)
    x = np.abs(x) + 0.5  # x ** x[0]: a positive base
    ref = np.asarray(adlab.hessian_reference(model, x).value)
    assert rel(adlab.hessian(model, x, scheme=NESTS, backend="tfjs"), ref) < 1e-5
