"""A float32 derivative is computed in float32 and returned in float32, on every backend
and mode; float64 likewise. The framework's own result is checked (before adlab turns it
into NumPy), so a float64 computation cast at the end would fail here too.

The model makes float arrays and numbers of its own, the ways NumPy code does and the
ways that turned float32 into float64 before: ``np.linspace`` (NumPy, autograd and
TensorFlow make float64 by default; TensorFlow's ignores ``dtype`` under NumPy 2),
``np.log(2 * np.pi)`` (a float64 scalar in NumPy), ``np.zeros``/``np.ones``, a Python
float among the data.
"""

from __future__ import annotations

import numpy as np
import pytest

import adlab

SRC = """
def setup(n, rng):
    return rng.normal(size=n), {"y": rng.normal(size=n), "s": 1.5}


def f(x, data):
    t = np.linspace(0.0, 1.0, x.shape[0])
    z = (data["y"] - x * t) / data["s"] + np.ones(x.shape[0]) + np.zeros(x.shape[0])
    return np.sum(-0.5 * (np.log(2 * np.pi) + z**2)) + np.sum(np.sin(x) * np.exp(-x))
"""
FIRST = [("primal", None), ("reverse", None), ("forward", None), ("numeric", "central"),
         ("numeric", "richardson"), ("complex-step", None)]  # fmt: skip
BACKENDS = ["jax", "numpy", "torch", "tensorflow", "autograd"]


def _dtype(out) -> str:
    """The framework array's dtype, as NumPy names it (``torch.float32`` -> float32)."""
    return str(out.dtype).replace("torch.", "").replace("<dtype: '", "").replace("'>", "")


@pytest.fixture(scope="module")
def model() -> adlab.Model:
    return adlab.Model.from_source(SRC, "dtypes")


@pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_mode_computes_and_returns_the_precision(model, backend, precision):
    args = model.setup(4)
    ran = []
    for mode, scheme in FIRST:
        if mode in ("reverse", "forward") and backend == "numpy":
            continue  # NumPy has no AD (refused with the reason: test_default_modes)
        kw = {"scheme": scheme} if scheme else {}
        p = adlab.prepare(model, *args, mode=mode, backend=backend, precision=precision, **kw)
        raw = p(*p.inputs)
        assert _dtype(raw) == precision, (mode, scheme)
        got = adlab.derivative(model, *args, mode=mode, backend=backend, precision=precision,
                               **kw)  # fmt: skip
        assert np.asarray(got).dtype == np.dtype(precision), (mode, scheme)
        ran.append(mode)
    if backend != "numpy":  # second order: NumPy has none
        h = adlab.hessian(model, *args, backend=backend, precision=precision)
        assert h.dtype == np.dtype(precision) and h.shape == (4, 4)
        ran.append("hessian")
    assert len(ran) == (4 if backend == "numpy" else 7)  # nothing skipped unseen


POSITIONAL = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    return np.sum(x**2 * np.ones(x.shape[0], {dtype}))
"""


@pytest.mark.parametrize("backend", ["numpy", "autograd", "tensorflow", "torch"])
def test_a_dtype_the_model_gives_by_position_is_kept_at_float32(backend):
    # NumPy code passes dtype by position (np.ones(3, np.float64)): the float32 default
    # adlab gives the array makers must yield to it, not collide with it (f's value: a
    # gradient takes x's dtype whatever f computed in)
    for dtype, want in (("np.float64", np.float64), ("np.float32", np.float32)):
        m = adlab.Model.from_source(POSITIONAL.format(dtype=dtype))
        p = adlab.prepare(m, *m.setup(4), mode="primal", backend=backend, precision="float32")
        assert _dtype(p(*p.inputs)) == np.dtype(want).name, dtype


INTEGERS = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    counts = np.zeros(3, int) + np.ones(3, dtype=np.int32) + np.empty((3,), "int32") * 0
    shift = np.full(2, 1.0)[0] + np.eye(2, 3, 1)[0, 1] + np.eye(2, 3, 0, float)[0, 1]
    return np.sum(x**2) * counts[0] + np.sum(counts) + shift
"""


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_dtypes_by_position_and_keyword_make_integer_arrays(backend, precision):
    # PyTorch's zeros(*size, dtype=) took np.zeros(3, int)'s int as a size, and its
    # dtype= takes only torch.dtype: adlab hands NumPy's dtype over as PyTorch's;
    # its full() wants a tuple and its eye() has no diagonal offset: NumPy's signatures
    m = adlab.Model.from_source(INTEGERS)
    x = m.setup(4)[0]
    mode = "numeric" if backend == "numpy" else "reverse"
    g = adlab.derivative(m, x, mode=mode, backend=backend, precision=precision)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-3)
    p = adlab.prepare(m, x, mode="primal", backend=backend, precision=precision)
    assert float(np.asarray(p(*p.inputs))) == pytest.approx(np.sum(x**2) + 5, rel=1e-5)
