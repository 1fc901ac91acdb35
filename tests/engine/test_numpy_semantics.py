"""NumPy's meaning on every framework: each model's value agrees with NumPy's f, and its
derivative with JAX's float64 reverse mode, or the model's error says why not (issue 23:
A2, A3, A4, A7, A8, A9 and PyTorch's and TensorFlow's gaps)."""

from __future__ import annotations

import numpy as np
import pytest

import adlab
from adlab.engine.backends import get_backend
from tests._frameworks import available

SRC = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
{body}
"""
FIRST = 7  # the line of the body's first statement in SRC
EAGER = ("torch", "tensorflow", "autograd")
AD = ("reverse", "forward")


def _model(body: str) -> adlab.Model:
    return adlab.Model.from_source(SRC.format(body="    " + body.replace("\n", "\n    ")), "m")


def _x(n: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=n)


def _reference(body: str, x: np.ndarray) -> np.ndarray:
    return np.asarray(adlab.derivative(_model(body), x, mode="reverse", backend="jax"))


def _primal(body: str, x: np.ndarray, backend: str) -> np.ndarray:
    p = adlab.prepare(_model(body), x, mode="primal", backend=backend)
    return np.asarray(get_backend(backend).to_numpy(p(x)))


def _numpy_f(body: str, x: np.ndarray) -> np.ndarray:
    ns: dict = {"np": np}
    exec(SRC.format(body="    " + body.replace("\n", "\n    ")), ns)
    return np.asarray(ns["f"](x))


def _agrees(body: str, backend: str, modes=(*AD, "numeric"), x=None) -> None:
    """f's value on ``backend`` is NumPy's, and its derivative in each mode JAX's."""
    available(backend)
    x = _x() if x is None else x
    np.testing.assert_allclose(_primal(body, x, backend), _numpy_f(body, x), rtol=1e-12,
                               atol=1e-14)  # fmt: skip
    want = _reference(body, x)
    assert np.all(np.isfinite(want))
    for mode in modes:
        got = np.asarray(adlab.derivative(_model(body), x, mode=mode, backend=backend))
        tol = 1e-6 if mode == "numeric" else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{backend} {mode}")


# ------------------------------------------------------------------- A2, A4: norm
VECTOR_ORDS = ["None", "1", "-1", "2", "-2", "np.inf", "-np.inf", "0", "3", "0.5"]
MATRIX_ORDS = ["None", "'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf"]
MATRIX = "np.reshape(x, (2, 3)) + 0.1"


@pytest.mark.parametrize("backend", EAGER)
@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm_is_numpys_for_every_ord(backend, ord):
    """A2: autograd's inf norm was NaN, its 1 norm a raw NotImplementedError; TensorFlow
    refused -1, -2, -inf and 0."""
    if backend == "autograd" and ord == "0":  # a count: its derivative is 0, and autograd
        pytest.importorskip("autograd")  # warns that f is independent of x, as it is
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Output seems independent of input")
            _agrees(f"return np.linalg.norm(x, {ord})", backend, modes=AD, x=_x(6, 1))
        return
    _agrees(f"return np.linalg.norm(x, {ord})", backend, modes=AD, x=_x(6, 1))


@pytest.mark.parametrize("backend", EAGER)
@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_is_numpys_for_every_ord(backend, ord):
    """A4: TensorFlow's ord=2 of a matrix was its Frobenius norm (1 and inf: entrywise);
    autograd had no rule for a matrix's 1, -1, 2, -2, inf, -inf. autograd has no
    forward rule for the singular values (ord 2, -2, 'nuc'), and says so."""
    body = f"return np.linalg.norm({MATRIX}, {ord})"
    if backend == "autograd" and ord in ("2", "-2", "'nuc'"):
        _agrees(body, backend, modes=("reverse",), x=_x(6, 1))
        with pytest.raises(adlab.ModelError, match="no forward-mode rule"):
            adlab.derivative(_model(body), _x(6, 1), mode="forward", backend=backend)
        return
    _agrees(body, backend, modes=AD, x=_x(6, 1))


@pytest.mark.parametrize("backend", EAGER)
def test_norm_axis_and_keepdims_are_numpys(backend):
    _agrees(f"return np.sum(np.linalg.norm({MATRIX}, np.inf, axis=1, keepdims=True) "
            f"* np.linalg.norm({MATRIX}, 1, axis=0))", backend, modes=AD, x=_x(6, 1))  # fmt: skip


def test_the_spectral_norm_of_a_diagonal_matrix_on_tensorflow():
    """A4 as the issue found it: the largest |x_i|, not the Frobenius norm."""
    _agrees("return np.linalg.norm(np.diag(x), 2)", "tensorflow")


# ---------------------------------------------------------------------- A3: median
@pytest.mark.parametrize("backend", EAGER)
@pytest.mark.parametrize("body", [
    "return np.median(x[1:])",  # even: the mean of the middle two (PyTorch took the lower)
    "return np.median(x)",
    "return np.sum(np.median(np.reshape(x, (2, 3)), axis=1, keepdims=True) * x[:2])",
])  # fmt: skip
def test_median_is_numpys(backend, body):
    x = _x(6, 2) if "reshape" in body else _x()
    _agrees(body, backend, x=x)


# ---------------------------------------------------------- A7: arrays of tensors
@pytest.mark.parametrize("backend", EAGER)
def test_an_array_of_elements_of_x_keeps_their_derivatives(backend):
    """A7: PyTorch's forward mode gave zeros, its reverse mode a raw RuntimeError."""
    _agrees("return np.sum(np.array([x[0], x[1]]) ** 2)", backend)
    _agrees("return np.sum(np.array([[x[0], 2.0], [x[2], x[1]]]) ** 2)", backend)


def test_an_array_of_python_floats_is_float64_on_pytorch():
    """``torch.asarray([0.1])`` is float32: a float64 model lost its constants' digits."""
    _agrees("return np.sum(np.array([0.1, 0.2, 0.3]) * x)", "torch")


# -------------------------------------------------------------- A8: float() of x
@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
@pytest.mark.parametrize("mode", AD)
@pytest.mark.parametrize("body", ["c = float(np.sum(x ** 2))\nreturn c * np.sum(x)",
                                  "return float(np.sum(x ** 2))"])  # fmt: skip
def test_float_of_a_value_that_depends_on_x_is_refused(backend, mode, body):
    """A8: PyTorch and TensorFlow took c as a constant, silently (JAX and autograd refuse)."""
    available(backend)
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(_model(body), _x(), mode=mode, backend=backend)
    err = info.value
    assert err.lineno == FIRST and "float(np.sum(x ** 2))" in err.line
    assert "makes a plain number of a value that depends on x" in err.reason
    assert "drop the float(...)" in err.hint and "mode='numeric'" in err.hint


@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
@pytest.mark.parametrize("body", ["c = float(np.sum(x ** 2))\nreturn c * np.sum(x)",
                                  "return float(np.sum(x ** 2))"])  # fmt: skip
def test_the_advice_for_float_works(backend, body):
    """mode='numeric' (the hint) is right; so is the model with float() dropped."""
    available(backend)
    fixed = body.replace("float(np.sum(x ** 2))", "np.sum(x ** 2)")
    want = _reference(fixed, _x())
    for model, mode in ((body, "numeric"), (fixed, "reverse")):
        got = adlab.derivative(_model(model), _x(), mode=mode, backend=backend)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
def test_float_of_data_is_still_a_number(backend):
    """Only a value that carries a derivative is refused: data converts as before."""
    available(backend)
    src = SRC.replace("(rng.normal(size=n),)", "(rng.normal(size=n), rng.normal(size=n))")
    src = src.replace("def f(x):", "def f(x, d):")
    m = adlab.Model.from_source(src.format(body="    return float(np.sum(d)) * np.sum(x)"), "m")
    x, d = m.setup(3)
    got = adlab.derivative(m, x, d, backend=backend)
    np.testing.assert_allclose(got, np.full(3, d.sum()), rtol=1e-12)


# --------------------------------------------------- A9: NaN where f is smooth
A9 = ["return np.prod(x * np.arange(x.shape[0]))",
      "return np.sum(np.sinc(x * np.arange(x.shape[0])))",
      "return np.std(np.where(x > 100, x, 0.0))"]  # fmt: skip


@pytest.mark.parametrize("backend", ["autograd", "tensorflow", "jax", "torch"])
@pytest.mark.parametrize("body", A9)
def test_no_nan_where_a_rule_divided_by_zero(backend, body):
    """A9: autograd's prod rule divides by x (0 here), its and TensorFlow's sinc rules 0 by
    0 at 0, and sqrt's forward rule at a variance of 0 gives 0 * inf (JAX, TF, autograd)."""
    _agrees(body, backend)


@pytest.mark.parametrize("backend", ["autograd", "tensorflow", "jax", "torch"])
def test_sinc_and_prod_hessians_at_zero(backend):
    """The rewrites keep second derivatives: sinc''(0) = -pi**2 / 3 (a safe branch alone
    would give 0), and the Hessian of a product with a factor 0."""
    available(backend)
    sinc = adlab.hessian(_model("return np.sum(np.sinc(x))"), np.zeros(3), backend=backend,
                         mode="forward-over-reverse")  # fmt: skip
    np.testing.assert_allclose(sinc, -(np.pi**2) / 3 * np.eye(3), rtol=1e-8, atol=1e-12)
    x = np.array([0.0, 2.0, 3.0])
    want = adlab.hessian(_model("return np.prod(x)"), x, backend="jax")
    got = adlab.hessian(_model("return np.prod(x)"), x, backend=backend,
                        mode="forward-over-reverse")  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert want[0, 1] == 3.0


# ----------------------------------------------- numbers and lists beside tensors
@pytest.mark.parametrize("backend", EAGER)
@pytest.mark.parametrize("body", [
    "return np.sum(np.arctan2(x, 2.0))",
    "return np.sum(np.arctan2(2.0, x))",
    "return np.sum(np.hypot(x, 2.0))",
    "return np.sum(np.logaddexp(x, 1.0))",
    "return np.sum(np.take(x, [1, 0]) ** 2)",
    "return np.sum(np.take(np.reshape(x, (3, 1)) * x, [2, 0], axis=1) ** 2)",
    "return np.sum(np.where(np.greater(x, 0.1), x, 0.0) ** 2)",
])  # fmt: skip
def test_python_numbers_and_lists_beside_arrays(backend, body):
    """PyTorch refused them (advising math.arctan2, which does not exist)."""
    modes = ("reverse", "numeric") if backend == "autograd" and "hypot" in body else None
    _agrees(body, backend, **({"modes": modes} if modes else {}))


def test_fmax_takes_a_number_on_pytorch():
    _agrees("return np.sum(np.fmax(x, 0.1) ** 2)", "torch")


# ----------------------------------------------- slicing, x.size, len, max(x)
@pytest.mark.parametrize("backend", EAGER)
@pytest.mark.parametrize("body", [
    "return np.sum(x[::-1] * np.arange(3.0))",
    "return np.sum(x[-1:0:-2] ** 2) + np.sum(np.reshape(x, (3, 1))[::-1, 0] * x)",
    "return np.sum(x ** 2) * x.size",
    "return x.max() * np.sum(x)",
    "return np.sum(x ** 3) / len(x)",
    "return max(x) * np.sum(x ** 2)",
])  # fmt: skip
def test_numpy_array_behaviour_on_every_mode(backend, body):
    """PyTorch refused negative steps and made x.size a method; TensorFlow's and PyTorch's
    numeric modes refused len(x) and max(x) (vectorized evaluation): they now evaluate
    such an f one point at a time."""
    if "max(x)" in body and "x.max" not in body:  # JAX refuses Python max: autograd's
        available(backend)
        x = _x()
        want = adlab.derivative(_model(body), x, backend="autograd")
        for mode in (*AD, "numeric"):
            got = adlab.derivative(_model(body), x, mode=mode, backend=backend)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=mode)
        return
    _agrees(body, backend)


def test_torch_size_is_still_pytorchs_method_too():
    """PyTorch's own code calls x.size(): both work while adlab runs the model."""
    available("torch")
    x = _x()
    body = "return np.sum(x ** 2) * (x.size()[0] + x.size(0) + x.size)"
    for mode in (*AD, "numeric"):
        got = adlab.derivative(_model(body), x, mode=mode, backend="torch")
        np.testing.assert_allclose(got, 2 * x * 9, rtol=1e-6, err_msg=mode)


@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
@pytest.mark.parametrize("body", ["return np.sum(x ** 3) / len(x)",
                                  "return max(x) * np.sum(x ** 2)"])  # fmt: skip
def test_the_numeric_hessian_takes_what_the_others_do(backend, body):
    """The Hessian's numeric composition refused len(x) and max(x) on TF and PyTorch."""
    available(backend)
    x = _x()
    want = adlab.hessian(_model(body), x, backend="autograd")
    got = adlab.hessian(_model(body), x, backend=backend, mode="numeric")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_an_f_that_does_not_use_x_has_a_zero_gradient_on_pytorch():
    """``np.linalg.norm(x, 0)`` counts: its graph does not reach x (was a raw RuntimeError)."""
    _agrees("return np.linalg.norm(x, 0) + 0.0 * np.sum(x)", "torch", modes=AD)
    got = adlab.derivative(_model("return np.linalg.norm(x, 0)"), _x(), backend="torch")
    np.testing.assert_array_equal(got, np.zeros(3))
