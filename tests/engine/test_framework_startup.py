"""PyTorch and TensorFlow in one process (``backends._startup``), the import order in fresh
subprocesses (Triton loaded after TensorFlow crashes the process: a segmentation fault);
TensorFlow's NumPy behaviour kept inside adlab's calls, and there only where needed.

Internals: counts the TensorFlow backend's switches into NumPy's behaviour
(backends.tensorflow's _numpy_on), which is what "there only where needed" means; no public
call shows them.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import adlab

pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")


def get_backend_device() -> str:
    from adlab.engine.backends import get_backend

    return get_backend("torch").device.type


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_the_order_that_crashes_is_the_one_guarded_against():
    """The hazard itself, so that the guard below is not guarding against nothing."""
    crashed = _run("import tensorflow\nimport triton\n")
    assert crashed.returncode == -11  # SIGSEGV
    assert _run("import triton\nimport tensorflow\n").returncode == 0


def test_adlabs_backends_load_triton_before_tensorflow_can_come():
    """Loading the PyTorch backend imports Triton, so the user's TensorFlow may follow and
    torch.compile still runs; without a GPU its "No CUDA runtime" warning stays quiet."""
    code = """
import sys
import adlab
from adlab.engine.backends import get_backend
get_backend("torch")
assert "triton" in sys.modules and "tensorflow" not in sys.modules
import tensorflow  # the user's own, after
m = adlab.load_model("rosenbrock")
p = adlab.prepare(m, *m.setup(3), backend="torch", jit=True)
print("compiled", p.jit)
"""
    out = _run(code)
    assert out.returncode == 0 and "compiled True" in out.stdout, out.stderr[-2000:]
    if get_backend_device() == "cpu":
        assert "No CUDA runtime is found" not in out.stderr


def test_tensorflow_imported_first_by_the_user_refuses_torch_compile_clearly():
    code = """
import tensorflow  # the user's own, first
import adlab
m = adlab.load_model("rosenbrock")
try:
    adlab.prepare(m, *m.setup(3), backend="torch", jit=True)
except RuntimeError as exc:
    print("refused:", exc)
print("eager:", adlab.derivative(m, *m.setup(3), backend="torch").shape)
"""
    out = _run(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused: PyTorch's compiler (jit=True) would load Triton after TensorFlow" in out.stdout
    assert "import adlab before TensorFlow" in out.stdout and "jit=False" in out.stdout
    assert "eager: (3,)" in out.stdout  # eager PyTorch needs no Triton and still runs


def test_tensorflows_numpy_behaviour_stays_inside_adlabs_calls():
    """A model needs TensorFlow's NumPy promotion (float32 data minus a float64 array);
    the user's own TensorFlow code, before and after, keeps TensorFlow's own rules."""
    code = """
import adlab
import tensorflow as tf

def mixed():
    try:
        return str((tf.constant(1.0, tf.float32) + tf.constant(1.0, tf.float64)).dtype)
    except Exception as exc:
        return type(exc).__name__

before = mixed()
m = adlab.Model.from_source('''
def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=n)

def f(x, d):
    return np.sum((x - np.asarray(d, dtype=np.float64)) ** 2)
''')
x, d = m.setup(3)
g = adlab.derivative(m, x, d, backend="tensorflow", precision="float32")
print(before, mixed(), g.dtype, abs(g - 2 * (x - d)).max() < 1e-5)
"""
    out = _run(code)
    assert out.returncode == 0, out.stderr[-2000:]
    # the model promoted (float32 - float64 ran) inside adlab, its gradient in x's float32;
    # outside, before and after, TensorFlow refuses
    assert out.stdout.split()[-4:] == ["InvalidArgumentError", "InvalidArgumentError",
                                       "float32", "True"]  # fmt: skip


def test_tensorflow_runs_a_model_in_its_own_rules_when_it_can(monkeypatch):
    """NumPy's promotion costs TensorFlow a Python call per operator: a model that runs in
    TensorFlow's own rules runs there; one that needs NumPy's (float32 data minus a float64
    array) gets it from its first failure on, with the same answer as JAX."""
    import adlab.engine.backends.tensorflow as tfb

    plain = adlab.load_model("normal_logpdf")
    theta, data = plain.setup(5)
    p = adlab.prepare(plain, theta, data, backend="tensorflow")
    turned_on = []  # from here: the calls (prepare's probe of f runs in NumPy's behaviour)
    real = adlab.engine.backends.tensorflow._numpy_on  # the internal counted (as tfb)
    monkeypatch.setattr(tfb, "_numpy_on", lambda: turned_on.append(1) or real())
    for _ in range(2):
        assert np.allclose(p._impl.to_numpy(p(p.inputs[0])), adlab.derivative(plain, theta, data))
    assert turned_on == []
    mixed = adlab.Model.from_source(
        "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=n)\n\n"
        "def f(x, d):\n    return np.sum((x - np.asarray(d, dtype=np.float64)) ** 2)\n"
    )
    x, d = mixed.setup(3)
    p = adlab.prepare(mixed, x, d, backend="tensorflow", precision="float32")
    for _ in range(2):
        assert np.allclose(p._impl.to_numpy(p(p.inputs[0])), 2 * (x - d), atol=1e-5)
    assert len(turned_on) >= 2  # every call of this one, once it failed in TF's rules
