"""Where a framework falls short of NumPy, the model's error says so in the user's terms;
and a framework is imported only when a variant uses it.

Internals: a framework that is not installed is made by emptying the registry's cache of
loaded backends (_registry._LOADED) and hiding its package from importlib; no public switch
does that.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import adlab
from adlab.engine.backends import _registry

SRC = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    y = {expr}
    return np.sum(y * x)
"""
LINE = 7  # the line of `y = ...` in SRC


def _fails(expr: str, backend: str, mode: str = "reverse") -> adlab.ModelError:
    m = adlab.Model.from_source(SRC.format(expr=expr), "gap")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(3), mode=mode, backend=backend)
    assert info.value.lineno == LINE and info.value.line.strip() == f"y = {expr}"
    return info.value


@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
def test_a_numpy_function_the_framework_lacks_names_it_and_the_framework(backend):
    err = _fails("np.interp(x, x, x)", backend)
    assert f"{backend} has no np.interp here" in err.reason
    assert "backend='jax'" in err.hint  # where it exists, and that one can write it oneself
    assert "AttributeError" not in str(err)


@pytest.mark.parametrize(("backend", "label"), [("torch", "PyTorch"), ("tensorflow", "TensorFlow")])
def test_a_comparison_under_complex_step_says_the_framework_cannot_compare_complex(backend, label):
    err = _fails("np.where(x > 0, x**2, x**3)", backend, mode="complex-step")
    assert f"{label} cannot do `x > 0` on complex numbers" in err.reason
    assert "np.real(x) > 0" in err.hint and "backend='jax'" in err.hint
    # the advice works: the real part compared, complex step runs and is exact
    m = adlab.Model.from_source(SRC.format(expr="np.where(np.real(x) > 0, x**2, x**3)"), "kink")
    x = m.setup(3)[0]
    got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    want = adlab.derivative(m, x, mode="reverse")
    assert abs(got - want).max() <= 1e-12 * abs(want).max()


def test_a_misspelling_is_still_a_misspelling():
    err = _fails("np.cumsumm(x)", "torch")
    assert "np has no function 'cumsumm'" in err.reason and "did you mean 'cumsum'" in err.reason


def test_an_array_method_numpy_has_and_the_framework_lacks():
    err = _fails("np.concatenate([x, x]).sum() * x[:3]", "tensorflow")
    assert "TensorFlow's arrays have no .sum (NumPy's do)" in err.reason
    assert "np.sum(...)" in err.hint


def test_autograd_without_a_rule_for_a_numpy_function():
    """autograd.numpy has every NumPy function; what it lacks is a derivative rule for some."""
    err = _fails("np.interp(x, [0.0, 1.0], [1.0, 2.0])", "autograd")
    assert "autograd has no reverse-mode rule (VJP) for np.interp" in err.reason
    assert "mode='numeric'" in err.hint
    err = _fails("np.interp(x, [0.0, 1.0], [1.0, 2.0])", "autograd", mode="forward")
    assert "forward-mode rule (JVP)" in err.reason


def test_pytorch_functions_take_tensors_not_python_numbers():
    err = _fails("np.log(float(len(x)))", "torch")  # a Python float made as f runs
    assert "PyTorch's np.log takes tensors, not a Python float" in err.reason
    assert "math.log" in err.hint
    # numbers written in the source are computed once when the model is built (folding)
    for expr, value in (("np.log(2 * np.pi)", np.log(2 * np.pi)), ("np.sqrt(2.0)", np.sqrt(2))):
        m = adlab.Model.from_source(SRC.format(expr=expr), "pi")
        (x,) = m.setup(3)
        assert np.allclose(adlab.derivative(m, x, backend="torch"), value, rtol=1e-15)


def test_a_framework_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_registry, "_LOADED", {})
    monkeypatch.setattr(_registry.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(_registry.MissingFramework, match=r"pip install 'adlab\[autograd\]'"):
        adlab.derivative(lambda x: x, 1.0, backend="autograd")
    assert not _registry.installed("torch")
    assert _registry.pip_command("torch") == "pip install 'adlab[torch]'"
    assert _registry.pip_command("jax") is None


def test_an_unknown_backend_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"backend must be one of \['jax', 'numpy', 'torch'"):
        adlab.derivative(lambda x: x, 1.0, backend="mxnet")


# ---------------------------------------------------------------- imports
FRAMEWORKS = ("torch", "tensorflow", "autograd")


def _frameworks_after(code: str) -> list[str]:
    script = code + (
        "\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=300)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_framework_is_imported_when_a_variant_first_uses_it():
    jax_only = """
import adlab
m = adlab.load_model("normal_logpdf")
adlab.derivative(m, *m.setup(3))
adlab.derivative(m, *m.setup(3), mode="numeric", backend="numpy")
adlab.Series("reverse", backend="torch").spelled()
"""
    assert _frameworks_after(jax_only) == []
    assert _frameworks_after(jax_only + 'adlab.derivative(m, *m.setup(3), backend="autograd")'
                             ) == ["autograd"]  # fmt: skip
