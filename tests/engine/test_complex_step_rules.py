"""Complex step is right or refused (issue 23): every operation on x + ih either
carries the imaginary part exactly (a real-part rule, or a primitive known to) or
is refused at the user's line with advice that runs; never a silent 0.

Internals: complex step's table of the primitives it trusts to carry the imaginary part
(complex_step.CARRIES), which every such primitive is checked against; no public function
lists it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import adlab
from adlab.engine.modes.complex_step import CARRIES

HEAD = "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"  # lines 1-4
LINE = 6  # `return ...` below
BACKENDS = ["jax", "numpy", "torch", "tensorflow", "autograd"]


def _model(body: str) -> adlab.Model:
    return adlab.Model.from_source(HEAD + f"def f(x):\n    return {body}\n", "cs")


def _reference(m: adlab.Model, x: np.ndarray) -> np.ndarray:
    return adlab.derivative(m, x, mode="reverse", backend="jax")


def _close(got, want, rtol=1e-10):
    assert np.abs(got - want).max() <= rtol * np.abs(want).max(), (got, want)


# ------------------------------------------------- right: the real-part rules
RIGHT = {
    "A1": "np.sum(np.arctan2(x, 2.0))",
    "arctan2 of a number and x": "np.sum(np.arctan2(2.0, x))",
    "arctan2 of two functions of x": "np.sum(np.arctan2(np.sin(x), x**2 - 0.5))",
    "hypot": "np.sum(np.hypot(x, 2.0) ** 3)",
    "A6": "np.sum(np.convolve(x, np.array([1.0, -1.0])) ** 2)",
    "convolve of x with x": "np.sum(np.convolve(x, x, 'same') ** 3)",
    "correlate": "np.sum(np.correlate(x, np.array([1.0, -1.0, 3.0]), 'full') ** 3)",
    # refused (JAX's var multiplies by the conjugate), or JAX's words (quantile)
    "std, var, median": "np.std(x) * np.var(x) + np.median(x) * np.sum(x)",
    "median of an even length": "np.median(x[1:]) * np.sum(x)",
}
# where the backend refuses the function itself (not complex step's doing)
LACKS = {("torch", "convolve"), ("tensorflow", "convolve"), ("torch", "correlate"),
         ("tensorflow", "correlate")}  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("body", RIGHT.values(), ids=RIGHT.keys())
def test_complex_step_through_arctan2_hypot_convolve_is_exact(body, backend):
    """JAX gave [0 0 0] or 1e4-sized garbage (XLA's complex atan2 and convolution lose
    an imaginary part of 1e-20); NumPy and autograd refused arctan2 with a TypeError,
    and every backend but PyTorch answered hypot with JAX's words."""
    m = _model(body)
    x = m.setup(3)[0]
    if any(b == backend and name in body for b, name in LACKS):
        # the framework has no such function (refused in every mode): refused here too
        with pytest.raises(adlab.ModelError) as refused:
            adlab.derivative(m, x, mode="complex-step", backend=backend)
        assert refused.value.lineno is not None
        return
    try:
        got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    except adlab.ModelError as err:  # only a refusal of PyTorch's own (Python numbers)
        assert backend == "torch" and "Python float" in str(err), err
        return
    _close(got, _reference(m, x))


@pytest.mark.parametrize("backend", ["jax", "autograd"])
@pytest.mark.parametrize("body", ["np.sum(np.arctan2(x, 1.0) ** 2)", RIGHT["A6"],
                                  RIGHT["hypot"], RIGHT["correlate"]])  # fmt: skip
def test_complex_step_hessian_through_the_rules_is_exact(body, backend):
    """Complex step of the reverse gradient: the rules hold their real parts constant
    for AD, so the holomorphic gradient, and its complex step, stay exact."""
    m = _model(body)
    x = m.setup(3)[0]
    try:
        got = adlab.hessian(m, x, mode="complex-step", backend=backend)
    except adlab.ModelError as err:  # autograd's own: no VJP for convolve
        assert backend == "autograd" and "no reverse-mode rule" in str(err), err
        return
    _close(got, adlab.hessian(m, x, mode="forward-over-reverse"), 1e-9)


# ------------------------------------------------------------ whole powers
POWERS = "np.sum(x ** 4 + x ** 5 - x ** -3 + np.power(x, 7.0))"


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_step_through_whole_powers_at_a_negative_x_is_exact(backend):
    """PyTorch (past x ** 3) and TensorFlow compute a complex power as exp(p log x): at a
    negative x that left ~1e-16 in the imaginary part, so the derivative was off by
    1e4 relative, silently (x**4 on PyTorch, x**4 and np.power(x, 7) on TensorFlow)."""
    m = _model(POWERS)
    x = np.array([0.7, -1.3, 0.4])
    got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    _close(got, _reference(m, x))


def test_complex_step_on_jax_refuses_a_whole_power_written_as_a_float():
    """JAX's ``x ** 2.0`` is pow, exp(p log x), where ``x ** 2`` is products: it gave
    [-6.1e-17/h ...] at a negative x, silently."""
    m = _model("np.sum(x ** 4.0)")
    x = np.array([0.7, -1.3, 0.4])
    with pytest.raises(adlab.ModelError, match="whole power written as a float") as info:
        adlab.derivative(m, x, mode="complex-step")
    assert info.value.lineno == LINE and "x ** 2" in info.value.hint
    fixed = _model("np.sum(x ** 4)")  # the advice runs, and is exact
    _close(adlab.derivative(fixed, x, mode="complex-step"), 4 * x**3)


@pytest.mark.parametrize("backend", ["jax", "autograd"])
def test_complex_step_hessian_through_a_broadcast_maximum_is_exact(backend):
    """autograd's np.where left a broadcast argument's gradient at the broadcast shape:
    "array is not broadcastable to correct shape", raw, from autograd's backward pass."""
    m = _model("np.sum(np.maximum(x[1:], x[0]) ** 2 + np.minimum(x[0], x[1:]) ** 3)")
    x = m.setup(3)[0]
    got = adlab.hessian(m, x, mode="complex-step", backend=backend)
    _close(got, adlab.hessian(m, x, mode="forward-over-reverse"), 1e-12)


# ------------------------------------- what runs in other modes runs here too
ELSEWHERE = {
    "x.max()": "x.max() * np.sum(x) + x.min()",
    "a float64 constant matrix times x": "np.sum((np.ones((3, 3)) @ x) ** 2 + x @ np.eye(3))",
    "np.dot, np.einsum, np.inner": (
        "np.sum(np.dot(np.ones((3, 3)), x) * np.einsum('ij,j->i', np.eye(3), x)) "
        "+ np.inner(np.ones(3), x)"
    ),
    "np.sort then a slice": "np.sum(np.sort(x)[1:] ** 2)",
    "len(x)": "np.sum(x ** 3) / len(x)",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("body", ELSEWHERE.values(), ids=ELSEWHERE.keys())
def test_complex_step_runs_what_the_backends_other_modes_run(body, backend):
    """PyTorch: x.max() ("max(): does not support complex input"), a real matrix times
    the complex x ("expected m1 and m2 to have the same dtype"), np.sort ("no
    np.take_along_axis here"); TensorFlow: len(x)."""
    m = _model(body)
    x = m.setup(3)[0]
    want = _reference(m, x)
    try:
        got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    except adlab.ModelError as err:  # TensorFlow's own: it compares no complex numbers
        assert backend == "tensorflow" and "x.max()" in body, err
        assert err.lineno == LINE and "reverse mode" in err.hint
        _close(adlab.derivative(m, x, mode="reverse", backend=backend), want)
        return
    _close(got, want)


# --------------------------------------------- refused: no rule carries it
REFUSED = {
    "A5": ("np.sum(np.linalg.svd(np.outer(x, x) + np.eye(3), compute_uv=False))", "svd"),
    "matrix 2-norm": ("np.linalg.norm(np.outer(x, x) + np.eye(3), 2)", "norm"),
    "eigvalsh": ("np.sum(np.linalg.eigvalsh(np.outer(x, x) + np.eye(3)))", "eigvalsh"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("body", "name"), REFUSED.values(), ids=REFUSED.keys())
def test_complex_step_refuses_what_no_rule_carries_at_the_users_line(body, name, backend):
    """svd on JAX, NumPy and autograd gave [0 0 0]; norm(M, 2) on PyTorch raised
    "imag is not implemented for tensors with non-complex dtypes"."""
    m = _model(body)
    x = m.setup(3)[0]
    try:
        adlab.derivative(m, x, mode="reverse" if backend != "numpy" else "numeric",
                         backend=backend)  # fmt: skip
    except adlab.ModelError:  # the framework refuses f in every mode: complex step too
        with pytest.raises(adlab.ModelError) as refused:
            adlab.derivative(m, x, mode="complex-step", backend=backend)
        assert refused.value.lineno is not None
        return
    with pytest.raises(adlab.ModelError, match="complex step needs an analytic f") as info:
        adlab.derivative(m, x, mode="complex-step", backend=backend)
    err = info.value
    assert err.lineno == LINE and f"`np.linalg.{name}`" in str(err), err
    # the advice runs: an exact mode on this backend, or numeric on NumPy
    if backend == "numpy":
        assert "mode='numeric'" in err.hint
        got = adlab.derivative(m, x, mode="numeric", backend="numpy")
        _close(got, _reference(m, x), 1e-6)
    else:
        assert "mode='reverse'" in err.hint
        _close(adlab.derivative(m, x, mode="reverse", backend=backend), _reference(m, x))


@pytest.mark.parametrize("body", ["np.sum(np.floor(x) * x)", "np.sum(np.mod(x, 1.0) * x)"])
def test_what_jax_refuses_on_complex_numbers_is_complex_steps_refusal(body):
    """It was JAX's TypeError ("floor does not accept dtype complex128") with the advice
    "fix line 6 of the model", though the model's other modes run it."""
    m = _model(body)
    x = m.setup(3)[0]
    with pytest.raises(adlab.ModelError, match="complex x \\+ ih") as info:
        adlab.derivative(m, x, mode="complex-step")
    assert info.value.lineno == LINE and "mode='reverse'" in info.value.hint
    adlab.derivative(m, x, mode="reverse")  # the advice runs


@pytest.mark.parametrize("backend", ["jax", "autograd"])
def test_complex_step_hessian_through_svd_is_refused_at_the_users_line(backend):
    """It raised JAX's "grad with holomorphic=True requires outputs with complex dtype"."""
    m = _model(REFUSED["matrix 2-norm"][0])
    with pytest.raises(adlab.ModelError, match="complex step needs an analytic f") as info:
        adlab.hessian(m, m.setup(3)[0], mode="complex-step", backend=backend)
    assert info.value.lineno == LINE and "'forward-over-reverse'" in info.value.hint


# -------------------------------------- the check's own JAX twin cannot run f
@pytest.mark.parametrize("backend", ["numpy", "torch", "tensorflow", "autograd"])
def test_where_jax_cannot_trace_f_complex_step_runs_flagged_not_in_jaxs_words(backend):
    """A list index is NumPy's and every other backend's, not JAX's: complex step on
    them answered with "jax-ml/jax/issues/4564" while their other modes ran f."""
    m = _model("np.sum(x[[0, 2]] ** 3)")
    x = m.setup(3)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    np.testing.assert_allclose(got, [3 * x[0] ** 2, 0.0, 3 * x[2] ** 2], rtol=1e-12)
    notes = [str(w.message) for w in caught if issubclass(w.category, adlab.UntrustedWarning)]
    assert notes and "not checked" in notes[0] and f"line {LINE}" in notes[0], notes
    assert "jax-ml" not in notes[0] and "jnp." not in notes[0]


@pytest.mark.parametrize("backend", ["numpy", "tensorflow", "autograd"])
def test_where_jax_cannot_trace_f_a_dropped_imaginary_part_is_still_refused(backend):
    """float(v) of a complex value drops its imaginary part: JAX's trace stops there,
    so the result is compared with central differences, and refused."""
    m = _model("float(np.sum(x**2)) * np.sum(x)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning, the unchecked note
        with pytest.raises(adlab.ModelError, match="disagrees with central differences") as info:
            adlab.derivative(m, m.setup(3)[0], mode="complex-step", backend=backend)
    assert info.value.lineno == LINE and "forward or reverse mode" in info.value.hint


# ------------------------------------------ what the check trusts, checked
# one model per primitive complex step trusts (CARRIES), each compared with reverse
# mode at h = 1e-20: a primitive whose complex arithmetic loses the imaginary part
# (XLA's atan2, conv_general_dilated) would show here as 0 or garbage
CARRIED = {
    "np.sum(np.tan(x) + np.arcsin(x / 4) + np.arccos(x / 4) + np.arctan(x))":
        {"tan", "asin", "acos", "atan"},
    "np.sum(np.sinh(x) * np.cosh(x) + np.tanh(x) + np.arcsinh(x) + np.arctanh(x / 4))":
        {"sinh", "cosh", "tanh", "asinh", "atanh", "mul"},
    "np.sum(np.arccosh(x**2 + 2) + np.expm1(x) + np.log1p(x**2) + np.exp2(x))":
        {"acosh", "expm1", "log1p", "exp2", "integer_pow"},
    "np.sum(np.sqrt(x**2 + 1) / (x**2 + 2) - np.exp(x) ** 1.5 + np.log(x**2 + 1))":
        {"sqrt", "div", "pow", "exp", "log", "sub"},
    "np.sum(np.cumprod(x) + np.cumsum(x ** 3)) * np.prod(x) - np.max(x) * np.min(x)":
        {"cumprod", "cumsum", "reduce_prod", "reduce_max", "reduce_min"},
    "np.sum(np.linalg.solve(np.outer(x, x) + 3 * np.eye(3), x))":
        {"lu", "triangular_solve", "dot_general"},
    "np.linalg.det(np.outer(x, x) + 3 * np.eye(3)) + np.sum(np.sort(x)[1:] * x[::-1][:2])":
        {"sort", "rev", "slice"},
    "np.sum(np.where(np.real(x) > 0, x, -x) * np.concatenate([x, x])[2:5]) + x[1]":
        {"select_n", "concatenate"},
}  # fmt: skip


@pytest.mark.parametrize("body", CARRIED)
def test_the_primitives_complex_step_trusts_carry_the_imaginary_part(body):
    assert CARRIED[body] <= CARRIES
    m = _model(body)
    x = m.setup(3)[0] / 2
    got = adlab.derivative(m, x, mode="complex-step")
    _close(got, _reference(m, x), 1e-12)
