"""A derivative inside the model: the provided ``grad(fn)`` on every framework.

The outer derivative (``mode``) is taken through the model's own ``grad`` (``inner``),
in the four combinations GradBench's particle and saddle ask for (rr, rf, fr, ff), and
through numeric differences and complex step. The oracle is the derivative by hand.
Perturbation confusion (Siskind & Pearlmutter 2008) gives 2 where the answer is 1.

Internals: the inner modes the model's own grad can take (inner_grad.INNER_MODES), which the
four combinations are built from; the table is the backends' own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import adlab
from adlab.engine.backends.inner_grad import INNER_MODES
from adlab.measure import parse_variant

AD = ("jax", "torch", "tensorflow", "autograd")
OUTER = ("reverse", "forward", "numeric", "complex-step")

# d/dx [ x * d/dy (x + y) at y = 1 ] = d/dx [ x * 1 ] = 1; a confused AD gives 2
CONFUSION = """
def setup(n, rng):
    return (np.ones(n),)

def f(x):
    return x[0] * grad(lambda y: x[0] + y)(1.0)
"""

# the inner function closes over the outer variable:
# d/dx [ d/dy sin(x y) at y0 ] = d/dx [ x cos(x y0) ] = cos(x y0) - x y0 sin(x y0)
CLOSURE = """
Y0 = 0.7

def setup(n, rng):
    return (np.full(n, 0.3),)

def f(x):
    return grad(lambda y: np.sin(x[0] * y))(Y0)
"""

# an inner y of two entries (forward mode: one tangent each) and a vector x:
# g = d/dy sum(x * y**2) = 2 x y, f = sum(g * y0) = sum(2 x y0**2), df/dx = 2 y0**2
VECTOR = """
def setup(n, rng):
    return (np.array([0.5, -1.5]),)

def f(x):
    y0 = np.array([1.0, 2.0])
    g = grad(lambda y: np.sum(x * y**2))(y0)
    return np.sum(g * y0)
"""

# the model passes the outer value itself as the inner point: d/dy (a * y) at y = a is a,
# so f = a**2 and df/dx = 2a; a tape watching a itself would see d/dy (y * y) = 2a there
# and give df/dx = 4a
SAME_TENSOR = """
def setup(n, rng):
    return (np.full(n, 1.5),)

def f(x):
    a = x[0]
    return a * grad(lambda y: a * y)(a)
"""

NOT_SCALAR = """
def setup(n, rng):
    return (np.ones(n),)

def f(x):
    g = grad(lambda y: y * x)(1.0)
    return np.sum(g)
"""


#: the JavaScript backends run the model's grad as JAX traced it (emitted or translated):
#: their outer modes are those they have (no complex step; TF.js: no forward mode)
JS_OUTER = {"js": ("reverse", "forward", "numeric"), "tfjs": ("reverse", "numeric")}


def _outer_modes(backend: str) -> tuple[str, ...]:
    if backend in JS_OUTER:
        return JS_OUTER[backend]
    return OUTER if backend != "numpy" else ("numeric", "complex-step")


CASES = [(b, outer, inner) for b in (*AD, "numpy", *JS_OUTER) for outer in _outer_modes(b)
         for inner in INNER_MODES]  # fmt: skip


def _tolerance(backend: str, outer: str) -> float:
    """AD of AD is exact to rounding; a difference (outer numeric, inner on numpy) is not;
    TF.js computes in float32."""
    if backend == "tfjs":
        return 1e-4 if outer == "numeric" else 1e-6
    return 1e-6 if backend == "numpy" or outer == "numeric" else 1e-12


@pytest.mark.parametrize(("backend", "outer", "inner"), CASES)
def test_no_perturbation_confusion(backend: str, outer: str, inner: str) -> None:
    m = adlab.Model.from_source(CONFUSION)
    got = adlab.derivative(m, np.ones(1), mode=outer, backend=backend, inner=inner)
    np.testing.assert_allclose(got, [1.0], rtol=0, atol=_tolerance(backend, outer))


@pytest.mark.parametrize(("backend", "outer", "inner"), CASES)
def test_inner_function_closes_over_x(backend: str, outer: str, inner: str) -> None:
    m = adlab.Model.from_source(CLOSURE)
    x, y0 = 0.3, 0.7
    want = np.cos(x * y0) - x * y0 * np.sin(x * y0)
    got = adlab.derivative(m, np.array([x]), mode=outer, backend=backend, inner=inner)
    np.testing.assert_allclose(got, [want], rtol=_tolerance(backend, outer) * 10)


@pytest.mark.parametrize(("backend", "outer", "inner"), CASES)
def test_inner_point_of_two_entries(backend: str, outer: str, inner: str) -> None:
    m = adlab.Model.from_source(VECTOR)
    got = adlab.derivative(m, np.array([0.5, -1.5]), mode=outer, backend=backend, inner=inner)
    np.testing.assert_allclose(got, [2.0, 8.0], rtol=_tolerance(backend, outer) * 10)


@pytest.mark.parametrize(("backend", "outer", "inner"),
                         [c for c in CASES if c[1] in ("reverse", "forward")])  # fmt: skip
def test_inner_point_is_x_itself(backend: str, outer: str, inner: str) -> None:
    """TensorFlow's tapes watch tensors by identity: the inner y must be a tensor of its
    own, else d/dy (x * y) at y = x also counts x's path."""
    m = adlab.Model.from_source(SAME_TENSOR)
    got = adlab.derivative(m, np.array([1.5]), mode=outer, backend=backend, inner=inner)
    np.testing.assert_allclose(got, [3.0], rtol=_tolerance(backend, outer))


@pytest.mark.parametrize("backend", (*AD, "numpy"))
def test_grad_of_a_vector_function_names_the_line(backend: str) -> None:
    m = adlab.Model.from_source(NOT_SCALAR)
    mode = "numeric" if backend == "numpy" else "reverse"
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, np.ones(3), mode=mode, backend=backend)
    assert info.value.lineno == 6
    assert "returns a scalar" in str(info.value) and "(3,)" in str(info.value)


def test_hessian_takes_inner() -> None:
    """d2/dx2 [ x * d/dy sin(x y) at y = 1 ] = d2/dx2 [ x**2 cos(x) ], by hand."""
    src = """
def setup(n, rng):
    return (np.ones(n),)

def f(x):
    return x[0] * grad(lambda y: np.sin(x[0] * y))(1.0)
"""
    m = adlab.Model.from_source(src)
    x = 0.4
    want = 2 * np.cos(x) - 4 * x * np.sin(x) - x**2 * np.cos(x)
    for inner in INNER_MODES:
        got = adlab.hessian(m, np.array([x]), backend="torch", inner=inner)
        np.testing.assert_allclose(got, [[want]], rtol=1e-12)


def test_inner_is_checked() -> None:
    m = adlab.Model.from_source(CONFUSION)
    with pytest.raises(ValueError, match="inner must be one of"):
        adlab.derivative(m, np.ones(1), inner="sideways")


def test_inner_forward_is_its_own_program_only_where_grad_is_used() -> None:
    """A model calling grad runs once more for inner="forward"; one that does not keeps
    one function (and one cache key) for both."""
    m = adlab.Model.from_source(CONFUSION)
    assert m.uses_grad
    assert m.function("torch", inner="forward") is not m.function("torch")
    assert m.function("torch", inner="forward") is m.function("torch", inner="forward")
    plain = adlab.load_model("rosenbrock")
    assert not plain.uses_grad
    assert plain.function("torch", inner="forward") is plain.function("torch")


def test_a_model_of_its_own_grad_keeps_it() -> None:
    """A model defining its own ``grad`` is not one that reads adlab's."""
    src = """
def grad(v):
    return 2 * v

def setup(n, rng):
    return (np.ones(n),)

def f(x):
    return np.sum(grad(x) ** 2)
"""
    m = adlab.Model.from_source(src)
    assert not m.uses_grad
    np.testing.assert_allclose(adlab.derivative(m, np.ones(2)), [8.0, 8.0])


def test_variant_spells_inner() -> None:
    v = parse_variant("reverse(inner-forward,torch)")
    assert (v.mode, v.inner, v.backend) == ("reverse", "forward", "torch")
    resolved = v.resolve(jit=None, precision="float64", backend="jax", scheme="central")
    assert resolved.label == "reverse(torch,inner-forward)"
    assert parse_variant(resolved.label).inner == "forward"
    plain = parse_variant("forward").resolve(jit=None, precision="float64", backend="jax",
                                             scheme="central")  # fmt: skip
    assert plain.inner == "reverse" and plain.label == "forward"


def test_sweep_runs_inner_modes_and_notes_numpy() -> None:
    m = adlab.Model.from_source(CLOSURE, name="closure")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a budget's or a reference's caveats are not this test's
        records = list(adlab.bench(m, [1], ["forward(inner-forward,autograd)",
                                            "numeric(numpy)"], repeats=2))  # fmt: skip
    by_label = {r.label: r for r in records}
    assert "forward(autograd,inner-forward)" in by_label
    assert "central differences on numpy" in (by_label["numeric[central](numpy)"].note or "")
