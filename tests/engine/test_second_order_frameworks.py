"""Hessians and HVPs on PyTorch, TensorFlow and autograd, against the JAX float64 reference.

The compositions are written once (``adlab.engine.modes.hessian``) on each framework's
push-forward, pull-back, Jacobian and nestable gradient; the reference is JAX's
forward-over-reverse Hessian checked against its reverse-over-reverse one
(``adlab.hessian_reference``). A composition a framework does not nest is refused
with the reason and what it does run. TensorFlow's eager
forward accumulators are slow to start, so TensorFlow runs its compositions on one
small model and its fast one (reverse-over-reverse) on all three.

Internals: the compositions are checked on each framework's own primitives, so the test
calls the model's nestable gradient (inner_grad.make) and reads second order's tables
(modes.hessian: NAMES, ON, WHY_NOT); none is public.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import adlab
from adlab.engine.backends import COMPOSITIONS, Backend, get_backend, inner_grad
from adlab.engine.modes.hessian import NAMES, ON, WHY_NOT

MODELS = ["logistic_regression", "normal_logpdf", "rosenbrock"]
FRAMEWORKS = ["torch", "tensorflow", "autograd"]
NESTED = NAMES[:4]
#: relative error: exact compositions to rounding, differences of the gradient to O(h^2)
TOL = {"float64": 1e-12, "float32": 1e-5}
NUMERIC_TOL = {"float64": 1e-8, "float32": 1e-3}

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


@functools.cache
def point(name: str, n: int = 4) -> tuple:
    """The model, its arguments, a direction v, and the reference Hessian (JAX, float64)."""
    model = adlab.load_model(name)
    args = model.setup(n)
    ref = adlab.hessian_reference(model, *args)
    assert ref.trusted
    v = np.linspace(-1.0, 1.0, np.size(args[model.wrt]))
    return model, args, v, np.asarray(ref.value)


def rel(got, want) -> float:
    return float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))


def cases():
    for fw in FRAMEWORKS:
        for mode in ON[fw]:
            names = MODELS if fw != "tensorflow" or mode == "reverse-over-reverse" else MODELS[2:]
            for name in names:
                yield pytest.param(fw, mode, name, id=f"{fw}-{mode}-{name}")


@pytest.mark.parametrize(("fw", "mode", "name"), list(cases()))
def test_every_composition_matches_the_reference(fw, mode, name):
    model, args, v, H = point(name)
    tol = (NUMERIC_TOL if mode == "numeric" else TOL)["float64"]
    got, info = adlab.hessian(model, *args, mode=mode, backend=fw, full_output=True)
    assert got.shape == H.shape and got.dtype == np.float64
    assert rel(got, H) <= tol
    assert info.trusted and info.f_evals >= 1
    if mode != "complex-step":
        hv = adlab.hvp(model, args[0], v, *args[1:], mode=mode, backend=fw)
        assert hv.shape == v.shape
        assert rel(hv, H @ v) <= tol


@pytest.mark.parametrize("fw", FRAMEWORKS)
@pytest.mark.parametrize("mode", ["forward-over-reverse", "numeric"])
def test_float32_is_float32_and_right_to_float32(fw, mode):
    model, (x,), v, H = point("rosenbrock", 3)
    tol = (NUMERIC_TOL if mode == "numeric" else TOL)["float32"]
    got = adlab.hessian(model, x, mode=mode, backend=fw, precision="float32")
    hv = adlab.hvp(model, x, v, mode=mode, backend=fw, precision="float32")
    assert got.dtype == np.float32 and hv.dtype == np.float32
    assert rel(got, H) <= tol and rel(hv, H @ v) <= tol
    assert rel(got, H) > 0 or rel(hv, H @ v) > 0  # float32 rounding shows: not float64


def test_a_prepared_hvp_takes_a_new_x_and_a_new_v():
    model, (x,), v, _ = point("rosenbrock")
    p = adlab.prepare_hvp(model, x, v, backend="torch", mode="reverse-over-forward")
    x2, v2 = x + 0.5, v[::-1].copy()
    want = adlab.hessian(model, x2)
    assert rel(p._impl.to_numpy(p(x2)), want @ v) <= TOL["float64"]
    assert rel(p._impl.to_numpy(p(x2, v2)), want @ v2) <= TOL["float64"]


def test_a_scalar_x_has_a_scalar_hessian():
    src = """
def setup(n, rng):
    return 0.7, 2.0


def f(x, c):
    return np.sin(x) * c + x**3
"""
    m = adlab.Model.from_source(src, "scalar")
    x, c = np.float64(0.7), np.float64(2.0)
    want = -np.sin(x) * c + 6 * x
    for fw in FRAMEWORKS:
        got = adlab.hessian(m, x, c, backend=fw, mode="reverse-over-forward")
        assert np.shape(got) == () and abs(got - want) <= 1e-14
        assert abs(adlab.hvp(m, x, np.float64(3.0), c, backend=fw) - 3 * want) <= 1e-13


def test_compiled_under_each_frameworks_compiler():
    model, (x,), v, H = point("rosenbrock", 3)
    hv = adlab.hvp(model, x, v, backend="torch", jit=True)  # torch.compile
    assert rel(hv, H @ v) <= TOL["float64"]
    got = adlab.hessian(model, x, backend="tensorflow", jit=True)  # tf.function(jit_compile)
    assert rel(got, H) <= TOL["float64"]


def test_the_static_table_names_what_each_framework_nests():
    """``ON`` (the facts, read without importing a framework) and the frameworks' primitives
    agree: a framework that nests has its own push-forward and pull-back; NumPy has none."""
    assert COMPOSITIONS == NAMES  # the facts name the compositions hessian.py writes
    for fw in FRAMEWORKS:
        impl = type(get_backend(fw))
        assert set(NESTED) <= set(ON[fw]) and "numeric" in ON[fw]
        assert impl.pushforward is not Backend.pushforward
        assert impl.pullback is not Backend.pullback
    assert "numpy" not in ON and type(get_backend("numpy")).pushforward is Backend.pushforward
    assert ("complex-step" in ON["autograd"]) and all(
        (fw, "complex-step") in WHY_NOT for fw in ("torch", "tensorflow")
    )


@pytest.mark.parametrize("fw", ["jax", "autograd"])
def test_complex_step_of_the_gradient_takes_one_reverse_pass(fw):
    """At a complex point the nestable gradient is the holomorphic reverse one (f once), as
    complex step's f_evals counts it (n gradients), not n forward columns."""
    calls = []

    def f(y):
        calls.append(1)
        return (y**3).sum()

    y = np.array([0.3, -0.5, 1.2]) + 1e-20j * np.eye(3)[1]
    g = inner_grad.make(fw, "reverse", "float64")(f)(y)
    assert len(calls) == 1
    assert abs(np.asarray(g)[1].imag / 1e-20 - 6 * y[1].real) <= 1e-6  # JAX: complex64


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda m, x: adlab.hessian(m, x, mode="complex-step", backend="torch"),
         r"complex-step' is not available on backend='torch': PyTorch's reverse mode "
         r"differentiates real-valued outputs.*runs 'forward-over-reverse'.*'numeric'"),
        (lambda m, x: adlab.prepare_hessian(m, x, mode="complex-step", backend="tensorflow"),
         r"backend='tensorflow'.*conjugate derivative.*x\*\*2.*runs 'forward-over-reverse'"),
        (lambda m, x: adlab.hvp(m, x, x, mode="complex-step", backend="autograd"),
         "full Hessian only"),
        (lambda m, x: adlab.hessian(m, x, backend="autograd", jit=True), "no compiler"),
        (lambda m, x: adlab.hvp(m, x, x, backend="numpy"),
         "no automatic differentiation to nest.*'torch'"),
        # the JavaScript backends have AD: their refusal says what adlab lacks, not that
        (lambda m, x: adlab.hessian(m, x, mode="numeric", backend="js"),
         "cannot be traced into one JavaScript program.*runs 'forward-over-reverse'"),
        (lambda m, x: adlab.hvp(m, x, x, scheme="forward-over-reverse", backend="tfjs"),
         "no forward mode.*'jaxjs'.*runs 'reverse-over-reverse'.*'jax'"),
        (lambda m, x: adlab.hessian(m, x, backend="torch", sparse=True), "JAX"),
    ],
)  # fmt: skip
def test_refusals_say_why_and_what_runs(call, words):
    model, (x,), _, _ = point("rosenbrock")
    with pytest.raises(ValueError, match=words):
        call(model, x)


def test_autograd_complex_step_is_checked_for_analyticity():
    """autograd's complex step of the gradient refuses a non-analytic f, at the user's line."""
    src = """
def setup(n, rng):
    return (np.ones(n),)


def f(x):
    return np.sum(np.real(x * np.conj(x)) ** 1.5)  # |x|^3, not analytic
"""
    m = adlab.Model.from_source(src, "absolute")
    with warnings.catch_warnings(), pytest.raises(adlab.ModelError, match="analytic") as caught:
        adlab.hessian(m, np.array([0.5, -1.0]), mode="complex-step", backend="autograd")
    assert caught.value.lineno == 7


def test_a_sweep_measures_each_frameworks_compositions_against_the_reference():
    modes = ["hessian[forward-over-reverse]", "hessian[forward-over-reverse](torch)",
             "hvp[reverse-over-forward](autograd)", "hessian[complex-step](torch)"]  # fmt: skip
    sweep = adlab.bench("rosenbrock", [3], modes, repeats=2, target_s=0.001, budget_s=5.0,
                        warn=False)  # fmt: skip
    records = {r.label: r for r in sweep}
    for label in modes[1:3]:
        r = records[label]
        assert r.skipped is None and r.order == 2 and r.jit is False
        assert r.backend == label[label.index("(") + 1 : -1]
        assert r.scheme == label[label.index("[") + 1 : label.index("]")]
        assert r.error <= TOL["float64"]
    assert "backend='torch' runs 'forward-over-reverse'" in records[modes[3]].skipped


def test_the_refused_complex_gradients_are_still_unfit():
    """Why PyTorch and TensorFlow refuse complex step of the gradient (``WHY_NOT``): should a
    release fix it, this fails, and the composition can be offered there."""
    import tensorflow as tf
    import torch

    x = np.array([0.3, -0.5, 1.2]) + 1e-20j * np.eye(3)[1]
    xt = torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        torch.autograd.grad(torch.sum(xt**2), xt)
    xf = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xf)
        y = tf.reduce_sum(xf**2)
    g = tape.gradient(y, xf).numpy()
    assert abs(g[1].imag / 1e-20 - 2.0) > 1.0  # the Hessian's entry is 2
