"""backend="jaxjs": Hessians and HVPs by jax-js's own nesting of its transforms, in Node.

Oracle: JAX's float64 Hessian (``hessian_reference``), and its product with v. jax-js runs
each composition itself on the translated f: ``jvp`` of ``grad``, ``vjp`` of ``grad``,
``grad`` of ``jvp``, ``jvp`` of n ``jvp``s; a Hessian is n products. float32 agrees to
float32's rounding; float64 on jax-js's cpu backend (JavaScript's Math) to float64's.
Sizes are tiny: jax-js without jit dispatches each operation on its own.
"""

from __future__ import annotations

import pytest
from _second_points import MODELS, NESTED, point, rel

import adlab
from adlab.engine.backends import get_backend, installed
from adlab.engine.backends.levels import levels

pytestmark = pytest.mark.skipif(not installed("jaxjs"), reason="Node.js is not installed")

@pytest.mark.parametrize("name", MODELS)
def test_every_composition_is_jaxs_hessian_and_hvp_in_float32(name):
    model, (x, *data), v, ref = point(name)
    for scheme in NESTED:
        h = adlab.hessian(model, x, *data, scheme=scheme, backend="jaxjs", precision="float32")
        hv = adlab.hvp(model, x, v, *data, scheme=scheme, backend="jaxjs", precision="float32")
        assert h.shape == (3, 3), scheme  # float32 values, handed over as float64 (as f is)
        assert rel(h, ref) < 1e-5 and rel(hv, ref @ v) < 1e-5, scheme


@pytest.mark.parametrize("scheme", ["forward-over-reverse", "reverse-over-forward"])
def test_float64_on_jaxjs_cpu_is_jaxs_to_float64(scheme):
    model, args, _, ref = point("logistic_regression")
    p = adlab.prepare(model, *args, mode="hessian", scheme=scheme, backend="jaxjs",
                      device="cpu", precision="float64")  # fmt: skip
    assert p.device == "cpu" and p.f_evals == 3
    assert rel(p(*p.inputs), ref) < 1e-10


def test_the_gradient_comes_with_the_hvp_and_the_calls_leave_memory_as_found():
    model, (x, *data), v, ref = point("logistic_regression")
    grad = adlab.derivative(model, x, *data)
    backend = get_backend("jaxjs")
    for scheme, jit in (("reverse-over-reverse", False), ("reverse-over-forward", True),
                        ("forward-over-forward", False)):  # fmt: skip
        p = adlab.prepare_hvp(model, x, v, *data, scheme=scheme, backend="jaxjs", jit=jit,
                              with_gradient=True, precision="float32")  # fmt: skip
        g, hv = p(*p.inputs)
        assert rel(g, grad) < 1e-5 and rel(hv, ref @ v) < 1e-5, scheme
        h = adlab.prepare_hessian(model, x, *data, scheme=scheme, backend="jaxjs", jit=jit)
        h(*h.inputs)
        before = backend.tensors()
        for k in range(3):
            p(*p.inputs)
            p(p.inputs[0] + 0.01 * k, *p.inputs[1:])
            h(h.inputs[0] + 0.01 * k, *h.inputs[1:])
        assert backend.tensors() == before, scheme


def test_levels_name_jaxjs_transforms_and_a_refused_composition_names_itself():
    assert levels("jaxjs", "hessian", "forward-over-reverse") == (
        "outer: jax-js's jvp (forward); inner: jax-js's grad (reverse)")  # fmt: skip
    model, (x, *data), v, _ = point("rosenbrock")
    with pytest.raises(ValueError, match="'numeric' is not available on backend='jaxjs'.*"
                       "runs 'forward-over-reverse'"):  # fmt: skip
        adlab.hvp(model, x, v, *data, scheme="numeric", backend="jaxjs")
    with pytest.raises(ValueError, match="complex-step.*imaginary part"):
        adlab.hessian(model, x, *data, scheme="complex-step", backend="jaxjs")


def test_the_gradient_over_the_hvp_is_divided_on_the_host():
    """GradBench kmeans's ``dir`` (``prepare_hvp(..., divided=True)``): jax-js's pair comes
    back from Node and is divided in Python, not traced by JAX."""
    model, (x, *data), v, ref = point("logistic_regression")
    grad = adlab.derivative(model, x, *data)
    p = adlab.prepare_hvp(model, x, v, *data, scheme="reverse-over-reverse", backend="jaxjs",
                          divided=True, precision="float32")  # fmt: skip
    assert rel(p(*p.inputs), grad / (ref @ v)) < 1e-4
