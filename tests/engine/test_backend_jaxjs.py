"""backend="jaxjs": the model's JAX program translated to jax-js, differentiated by jax-js, in Node.

Oracles: JAX's own float64 values (f, jax.grad / jax.jacrev), to float32 rounding: jax-js's
wasm backend computes sin, cos, exp and log with float32 accuracy even on float64 arrays,
so the agreement asked of its float64 is that of JAX's own float32 run (its distance from
float64) times a small factor; arithmetic alone (rosenbrock, normal_logpdf) agrees to
float64's. jax-js's default precision is float32 (its own, and its GPU backends' only). One
Node process serves every test; sizes are small.

Leaks: jax-js counts references by hand, so a call that forgets one keeps its buffer
forever. jax-js's own count of its buffers (``tensors``) after many calls, and after a
sweep, is the one before.
"""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab.catalog import load_model
from adlab.engine.backends import get_backend, installed

pytestmark = pytest.mark.skipif(not installed("jaxjs"), reason="Node.js is not installed")

#: arithmetic, a cumsum with sin and cos (G9's linkage), and a loop (a JavaScript loop)
MODELS = {"rosenbrock": ({}, 6), "normal_logpdf": ({}, 6), "g9_graphics": ({}, 6),
          "ode": ({"S": 5}, 4)}  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]
DIVIDES = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
           "def f(x):\n    return np.sum(np.sin(x) / (1.0 + x ** 2))\n")  # fmt: skip


def _value(m, args, mode: str, backend: str, **kw):
    p = adlab.prepare(m, *args, mode=mode, backend=backend, **kw)
    return np.asarray(p(*p.inputs), dtype=np.float64)


def _rel(a, b) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@pytest.mark.parametrize("name", list(MODELS))
def test_f_reverse_and_forward_are_jaxs_to_float32_rounding(name):
    settings, n = MODELS[name]
    m = load_model(name, **settings)
    args = m.setup(n)
    for mode, jit in (("primal", False), ("reverse", False), ("forward", False),
                      ("reverse", True)):  # fmt: skip
        exact = _value(m, args, mode, "jax", precision="float64")
        f32 = _value(m, args, mode, "jax", precision="float32")
        got = _value(m, args, mode, "jaxjs", jit=jit, precision="float64")
        assert got.shape == exact.shape, mode
        tol = max(1e-12, 20 * _rel(f32, exact))
        assert _rel(got, exact) <= tol, (mode, jit, _rel(got, exact), tol)


def test_float32_is_float32_and_records_say_jaxjs_and_its_device():
    m = load_model("rosenbrock")
    x = m.setup(6)[0]
    exact = adlab.derivative(m, x, backend="jax", precision="float64")
    assert _rel(adlab.derivative(m, x, backend="jaxjs", precision="float32"), exact) < 1e-6
    records = list(adlab.bench("rosenbrock", sizes=[4], modes=["reverse(jaxjs)"], repeats=3,
                               interval_width=None, target_s=0.001, warn=False))  # fmt: skip
    (r,) = [r for r in records if r.mode == "reverse"]
    assert r.device == "wasm" and r.env["jaxjs_version"] == "0.1.25", r.env
    assert r.env["js_runtime"] == "node"


@pytest.mark.parametrize("scheme", ["central", "g9"])
def test_differences_on_the_translated_f_approach_the_gradient(scheme):
    m = load_model("rosenbrock")
    args = m.setup(6)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "numeric", "jaxjs", scheme=scheme, precision="float64")
    assert _rel(got, exact) < 1e-5
    # float32: each slope divided by the distance x, held in float32, actually moved
    got = _value(m, args, "numeric", "jaxjs", scheme="central", precision="float32")
    assert _rel(got, exact) < 1e-2


def test_an_operation_jaxjs_lacks_names_the_users_line():
    """A von Mises log density: its Bessel function (np.i0) has no jax-js counterpart."""
    src = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
           "def f(x):\n    y = np.sum(np.cos(x))\n"
           "    return y - np.sum(np.log(np.i0(x)))\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="von_mises")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, m.setup(4)[0], backend="jaxjs")
    assert info.value.lineno == 7 and "np.i0" in info.value.line
    assert "jax-js" in str(info.value) and "backend='js'" in info.value.hint


def test_complex_step_and_a_browser_device_are_refused_with_the_reason():
    m = load_model("rosenbrock")
    x = m.setup(4)[0]
    with pytest.raises(ValueError, match="no complex-step"):
        adlab.derivative(m, x, mode="complex-step", backend="jaxjs")
    with pytest.raises(ValueError, match="browser only"):
        adlab.derivative(m, x, backend="jaxjs", device="webgpu")


def test_a_hundred_calls_leave_jaxjs_memory_as_they_found_it():
    """JS5: jax-js's own count of its buffers, before and after 100 calls of reverse mode
    (a new x each time, and the same), and 10 of forward mode and of jit. f divides by a
    value computed from x: jax-js 0.1.25's own JVP of that leaked a buffer a call (the
    bundle mends it)."""
    backend = get_backend("jaxjs")
    m = adlab.Model.from_source(DIVIDES, name="divides")
    args = m.setup(10)
    for mode, jit, calls in (("reverse", False, 100), ("forward", False, 10),
                             ("reverse", True, 10)):  # fmt: skip
        p = adlab.prepare(m, *args, mode=mode, backend="jaxjs", jit=jit)
        p(*p.inputs)
        before = backend.tensors()
        for k in range(calls // 2):
            p(*p.inputs)
            p(p.inputs[0] + 0.01 * k, *p.inputs[1:])
        assert backend.tensors() == before, (mode, jit)


def test_a_sweep_leaves_jaxjs_memory_as_it_found_it():
    backend = get_backend("jaxjs")
    m = adlab.Model.from_source(DIVIDES, name="divides")
    adlab.derivative(m, *m.setup(4), backend="jaxjs")  # jax-js started, and its program gone
    gc.collect()
    before = backend.tensors()
    list(adlab.bench(m, sizes=[4, 8], modes=["reverse(jaxjs)", "forward(jaxjs)",
                                             "numeric[central](jaxjs)"],
                     repeats=2, interval_width=None, target_s=0.001, warn=False))  # fmt: skip
    gc.collect()  # the sweep's programs are dropped with the next request
    assert backend.tensors() == before


def test_memory_is_jaxjs_own_count():
    m = load_model("rosenbrock")
    p = adlab.prepare(m, *m.setup(50), backend="jaxjs")
    got = p.memory()
    assert "jax-js's own count" in got["memory_counter"]
    # the forward pass keeps at least x's slices for the backward pass
    assert got["residual_bytes"] >= 49 * 8 and got["peak_bytes"] >= got["residual_bytes"]


def test_the_bundle_is_built_from_its_pinned_sources():
    """The bundle's first line carries the hash of js/jaxjs's sources (build.mjs)."""
    here = ROOT / "js" / "jaxjs"
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json", "build.mjs", "src/index.js",
                 "src/float16.js", "src/memory.js"):  # fmt: skip
        digest.update(name.encode() + b"\0")
        digest.update((here / name).read_bytes())
    bundle = ROOT / "adlab" / "engine" / "backends" / "jaxjs" / "static" / "jaxjs.min.js"
    with bundle.open(encoding="utf-8") as fh:
        first = fh.readline()
    assert digest.hexdigest() in first and "0.1.25" in first


def test_a_page_gets_the_files_by_the_names_the_runtimes_require():
    from adlab.engine.backends.jaxjs import page_modules

    modules = page_modules()
    folder = ROOT / "adlab" / "engine" / "backends"
    asked = {"../jaxjs/runtime_jaxjs": folder / "js" / "runtime.js",
             "static/jaxjs.min": folder / "jaxjs" / "runtime_jaxjs.js"}  # fmt: skip
    for name, by in asked.items():
        assert f'require("{"./" if name.startswith("static") else ""}{name}.js")' in by.read_text()
        assert len(modules[name]) > 1000


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_derivative_runs_on_the_device_asked_for(mode):
    """device= reaches the derivative, not f alone: jax-js's cpu backend computes sin with
    JavaScript's Math (exact in float64), its wasm backend to float32's accuracy, so the
    gradient of sum(sin(x)) tells them apart."""
    src = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
           "def f(x):\n    return np.sum(np.sin(x))\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="sines")
    x = m.setup(8)[0]
    got = {d: adlab.derivative(m, x, mode=mode, backend="jaxjs", device=d, precision="float64",
                               check=False) for d in ("cpu", "wasm")}  # fmt: skip
    assert np.max(np.abs(got["cpu"] - np.cos(x))) < 1e-14
    assert np.max(np.abs(got["wasm"] - np.cos(x))) > 1e-12  # float32's sin: another backend
