"""backend="tfjs": the model's JAX program translated to TensorFlow.js, run in Node.

Oracles: JAX's own float64 values (f and jax.grad / jax.jacrev), to float32
accuracy: TF.js computes in float32, so the agreement asked is that of JAX's own
float32 run (its distance from float64) times a small factor. One Node process
serves every test; sizes are small.

Internals: tfjs.rules.RULES, patched with a rule that does not say TF.js has no
gradient for its operation: the refusal TF.js's tape makes at run time names the line.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab.catalog import load_model
from adlab.engine.backends import get_backend, installed

pytestmark = pytest.mark.skipif(not installed("tfjs"), reason="Node.js is not installed")

MODELS = ["normal_logpdf", "g9_graphics", "rosenbrock", "mlp_batched", "gaussian_residual",
          "logistic_regression", "wide_moments", "bvp_residual", "llsq", "lse", "gmm",
          "ba", "det", "kmeans"]  # fmt: skip
SMALL = {"mlp_batched": {"N1": 12, "N2": 4}}
#: the models whose gradient runs through tf.gather: TF.js 4.22's wasm backend has no kernel
#: (UnsortedSegmentSum) for its gradient, so tf.grad is refused there at the model's line
GATHERS = {"gmm", "det"}
N = 6
ROOT = Path(__file__).resolve().parents[2]


def _model(name: str):
    return load_model(name, **SMALL.get(name, {}))


def _value(m, args, mode: str, backend: str, **kw):
    p = adlab.prepare(m, *args, mode=mode, backend=backend, **kw)
    return np.asarray(p(*p.inputs), dtype=np.float64)


def _rel(a, b) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@pytest.mark.parametrize("device", ["cpu", "wasm"])
@pytest.mark.parametrize("name", MODELS)
def test_f_and_tf_grad_are_jaxs_to_float32_accuracy(name, device):
    m = _model(name)
    args = m.setup(N)
    if device == "wasm" and name in GATHERS:  # found when device= first reached tf.grad
        with pytest.raises(adlab.ModelError, match="wasm backend has no kernel Unsorted"):
            _value(m, args, "reverse", "tfjs", device=device)
        return
    for mode in ("primal", "reverse"):
        exact = _value(m, args, mode, "jax", precision="float64")
        # JAX's own float32 run: how far float32 rounding alone takes this f from float64
        f32 = _value(m, args, mode, "jax", precision="float32")
        got = _value(m, args, mode, "tfjs", device=device)
        assert got.shape == exact.shape, mode
        assert np.all(np.isfinite(got)), mode
        tol = max(1e-5, 20 * _rel(f32, exact))
        assert _rel(got, exact) <= tol, (mode, _rel(got, exact), tol)


def test_derivative_runs_in_float32_unasked_and_says_so():
    m = _model("rosenbrock")
    x = m.setup(N)[0]
    p = adlab.prepare(m, x, backend="tfjs")
    assert p.precision == "float32"
    g = adlab.derivative(m, x, backend="tfjs")
    ref = adlab.derivative(m, x, backend="jax", precision="float64")
    assert _rel(g, ref) < 1e-5
    with pytest.raises(ValueError, match="float32 only"):
        adlab.derivative(m, x, backend="tfjs", precision="float64")


def test_a_sweep_in_float64_runs_reverse_tfjs_in_float32_and_its_records_say_so():
    records = list(adlab.bench("rosenbrock", sizes=[4], modes=["reverse(tfjs)", "reverse"],
                               precision="float64", repeats=3, interval_width=None,
                               target_s=0.001, warn=False))  # fmt: skip
    by_backend = {r.backend: r for r in records}
    assert by_backend["tfjs"].precision == "float32"
    assert by_backend["jax"].precision == "float64"
    assert by_backend["tfjs"].device == "cpu"
    assert by_backend["tfjs"].env["tfjs_version"] == "4.22.0"


@pytest.mark.parametrize(("mode", "says"), [("forward", "forward-mode AD"),
                                            ("complex-step", "no complex-step")])  # fmt: skip
def test_forward_and_complex_step_are_refused_with_the_reason(mode, says):
    m = _model("rosenbrock")
    with pytest.raises(ValueError, match=says):
        adlab.derivative(m, m.setup(N)[0], mode=mode, backend="tfjs")


def test_webgl_is_refused_in_node_with_the_reason():
    m = _model("rosenbrock")
    with pytest.raises(ValueError, match="browser only"):
        adlab.derivative(m, m.setup(N)[0], backend="tfjs", device="webgl")


def test_an_uncovered_operation_names_the_users_line():
    src = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
           "def f(x):\n    y = np.sum(x ** 2)\n    return np.sort(x)[0] + y\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="sorted")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, m.setup(N)[0], backend="tfjs")
    assert info.value.lineno == 7
    assert "'sort'" in str(info.value) and "TensorFlow.js" in str(info.value)


@pytest.mark.parametrize("scheme", ["central", "g9"])
def test_differences_on_the_translated_f_approach_the_gradient(scheme):
    m = _model("rosenbrock")  # f ~ 1e3: G9's first step, 1e-6 f, moves x in float32
    args = m.setup(N)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "numeric", "tfjs", scheme=scheme)
    assert _rel(got, exact) < 1e-2  # float32 differences: about eps32 ** (2/3)


def test_g9_refuses_a_step_float32_cannot_take():
    """normal_logpdf's f is negative: G9 starts at step 1e-8, which leaves x unchanged in
    float32: its slopes would be 0, a wrong gradient; refused with the reason."""
    m = _model("normal_logpdf")
    with pytest.raises(adlab.ModelError, match="float32"):
        adlab.derivative(m, *m.setup(N), mode="numeric", scheme="g9", backend="tfjs")


def test_a_vector_fs_jacobian_is_one_tf_grad_per_row():
    m = _model("bvp_residual")
    args = m.setup(N)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs")
    assert got.shape == (N, N) and _rel(got, exact) < 1e-5


@pytest.mark.parametrize("variant", ["simple", "complicated"])
def test_hts_jacobian_is_jaxs(variant):
    """ht's pose guard (|r|^2 < 1e-8 picks the identity) is a comparison on x: TF.js has
    no gradient for it, and its refusal once came back as an all-zero Jacobian."""
    m = load_model("ht", VARIANT=variant, V=20)
    args = m.setup(4)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs")
    assert got.shape == exact.shape and _rel(got, exact) < 1e-5


def test_comparisons_and_casts_to_integers_have_jaxs_zero_derivative():
    """A comparison or an integer cast on x contributes nothing to the derivative (JAX's
    rule): TF.js has no gradient for the one, and passes the other's straight through."""
    src = ("def setup(n, rng):\n    return (rng.uniform(0.1, 2.0, size=n),)\n\n\n"
           "def f(x):\n    big = np.logical_and(x > 0.5, x != 1.5)\n"
           "    steps = (3 * x).astype(np.int32).astype(x.dtype)\n"
           "    return np.sum(np.where(big, x ** 2, -x) + x * steps)\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="picks")
    args = m.setup(N)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs")
    assert _rel(got, exact) < 1e-5, (got, exact)


@pytest.mark.parametrize("device", ["cpu", "wasm"])
def test_products_differentiate(device):
    """np.prod's gradient in TF.js calls tensor methods (x.reshape), which core leaves out
    unless the bundle registers its chained ops: without them it raised in JavaScript."""
    src = ("def setup(n, rng):\n    return (rng.uniform(0.5, 1.5, size=n),)\n\n\n"
           "def f(x):\n    return np.prod(x) + np.sum(np.prod(np.reshape(x[:4], (2, 2)), "
           "axis=0))\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="products")
    args = m.setup(5)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs", device=device)
    assert _rel(got, exact) < 1e-5, (got, exact)


def test_repeated_calls_leave_no_tensor_behind():
    backend = get_backend("tfjs")
    for device, name in (("cpu", "gmm"), ("wasm", "rosenbrock")):  # GATHERS: not on wasm
        m = _model(name)
        p = adlab.prepare(m, *m.setup(N), backend="tfjs", device=device)
        p(*p.inputs)
        before = backend.tensors()
        for _ in range(5):
            p(*p.inputs)
            p(p.inputs[0] + 0.01, *p.inputs[1:])  # a new x each time
        assert backend.tensors() == before, device


def test_the_bundle_is_built_from_its_pinned_sources():
    """The bundle's first line carries the hash of js/tfjs's sources (build.mjs)."""
    here = ROOT / "js" / "tfjs"
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json", "src/index.js", "src/util.js"):
        digest.update(name.encode() + b"\0")
        digest.update((here / name).read_bytes())
    bundle = ROOT / "adlab" / "engine" / "backends" / "tfjs" / "static" / "tfjs.min.js"
    with bundle.open(encoding="utf-8") as fh:
        first = fh.readline()
    assert digest.hexdigest() in first and "4.22.0" in first


def test_a_page_gets_the_files_by_the_names_the_runtimes_require():
    """The Lab's page runs runtime.js with a require of its own: it finds TF.js's runtime
    and bundle under the names runtime.js and runtime_tfjs.js ask for."""
    from adlab.engine.backends.tfjs import page_modules

    modules = page_modules()
    folder = ROOT / "adlab" / "engine" / "backends"
    asked = {"../tfjs/runtime_tfjs": folder / "js" / "runtime.js",
             "./runtime_tfjs_nested": folder / "tfjs" / "runtime_tfjs.js",
             "static/tfjs.min": folder / "tfjs" / "runtime_tfjs.js"}  # fmt: skip
    for name, by in asked.items():
        assert f'require("{"./" if name.startswith("static") else ""}{name}.js")' in by.read_text()
        assert len(modules[name]) > 1000


@pytest.mark.parametrize("device", ["cpu", "wasm"])
def test_integers_computed_from_x_have_jaxs_zero_derivative(device):
    """An index computed from x (a gather's indices) and an argmax of integers made from x:
    TF.js's gradients of GatherV2 and ArgMax hand these integers an integer gradient, which
    its tape refused (a RuntimeError); JAX's derivative through an integer is zero."""
    src = ("def setup(n, rng):\n    return (rng.uniform(0.1, 2.0, size=n),)\n\n\n"
           "def f(x):\n    k = np.clip((3 * x).astype(np.int32), 0, x.shape[0] - 1)\n"
           "    top = np.argmax((3 * x).astype(np.int32))\n"
           "    return np.sum(x[k] * x) + top * np.sum(x)\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="indices")
    args = m.setup(N)
    if device == "wasm":  # x[k] is a gather, whose gradient TF.js's wasm backend lacks
        with pytest.raises(adlab.ModelError, match="tf.gather needs") as info:
            _value(m, args, "reverse", "tfjs", device=device)
        assert "x[k]" in info.value.line and "device='cpu'" in info.value.hint
        return
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs", device=device)
    assert _rel(got, exact) < 1e-5, (got, exact)


CUMPROD = ("def setup(n, rng):\n    return (rng.uniform(0.5, 1.5, size=n),)\n\n\n"
           "def f(x):\n    y = np.sum(x ** 2)\n    c = np.cumprod(x)\n"
           "    return np.sum(c) + y\n")  # fmt: skip


def _refused_at_line_7(m, args):
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *args, mode="reverse", backend="tfjs")
    assert info.value.lineno == 7 and "cumprod" in info.value.line
    assert "Cumprod" in str(info.value) and "mode='numeric'" in info.value.hint
    return info.value


def test_an_operation_tfjs_cannot_differentiate_is_refused_in_reverse_at_the_users_line():
    """np.cumprod runs on TF.js (Cumprod), which has no gradient for it: f and its
    differences run; mode 'reverse' is refused before it runs, at the line, with advice
    that works (numeric on tfjs; reverse on js)."""
    m = adlab.Model.from_source(CUMPROD, name="cumprod")
    args = m.setup(N)
    _refused_at_line_7(m, args)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    assert _rel(_value(m, args, "reverse", "js"), exact) < 1e-12
    assert _rel(_value(m, args, "numeric", "tfjs", scheme="central"), exact) < 1e-2
    # not on a path from x to f: tf.grad never meets it, and it is not refused
    unused = adlab.Model.from_source(CUMPROD.replace("np.sum(c) + y", "y"), name="unused")
    assert _rel(_value(unused, args, "reverse", "tfjs"), 2 * args[0]) < 1e-6


def test_a_gradient_tfjs_refuses_unforeseen_is_named_at_the_users_line(monkeypatch):
    """A rule that does not say its operation has no gradient: TF.js's refusal, once a
    RuntimeError ('a bug of adlab's translation'), names the line that called the kernel."""
    from adlab.engine.backends.tfjs import rules

    def unforeseen(t, eqn, ins):
        return f"tf.cumprod({ins[0].name}, {eqn.params['axis']}, false, false)"

    monkeypatch.setitem(rules.RULES, "cumprod", unforeseen)
    m = adlab.Model.from_source(CUMPROD, name="unforeseen")
    assert "refuses the gradient" in str(_refused_at_line_7(m, m.setup(N)))


@pytest.mark.parametrize(("shape", "axis"), [((3, 3), 0), ((2, 3, 4), 1)])
def test_cumsum_along_any_axis_differentiates(shape, axis):
    """TF.js 4.22's Cumsum gradient transposes its result once too often where the axis is
    not the last: on a square array a transposed gradient (silently wrong), on others one
    of the wrong shape (a RuntimeError)."""
    size = int(np.prod(shape))
    src = ("def setup(n, rng):\n    return (rng.uniform(0.5, 1.5, size=n),)\n\n\n"
           f"def f(x):\n    a = np.reshape(x, {shape})\n"
           f"    w = np.reshape(np.arange(1.0, {size + 1}.0), {shape})\n"
           f"    return np.sum(np.cumsum(a, axis={axis}) * w)\n")  # fmt: skip
    m = adlab.Model.from_source(src, name="cumsum")
    args = m.setup(size)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs")
    assert _rel(got, exact) < 1e-5, (got, exact)


def test_tied_maxima_and_minima_share_the_derivative_as_jaxs():
    """TF.js 4.22's Max and Min gradients hand the whole of it to each tied extreme (two
    ties: twice the derivative, silently); JAX's share it among them."""
    src = ("def setup(n, rng):\n    return (np.array([3.0, 1.0, 3.0, 2.0, 0.5, 0.5]),)\n\n\n"
           "def f(x):\n    rows = np.max(np.reshape(x, (2, 3)), axis=1)\n"
           "    return np.sum(rows * np.array([1.0, 2.0])) + 3 * np.min(x) + np.max(x)\n"
           )  # fmt: skip
    m = adlab.Model.from_source(src, name="ties")
    args = m.setup(6)
    exact = _value(m, args, "reverse", "jax", precision="float64")
    got = _value(m, args, "reverse", "tfjs")
    assert _rel(got, exact) < 1e-6, (got, exact)


# ------------------------------------------------------------------ loops
#: the catalog's models whose f loops (scan, fori_loop), small
LOOPED = {"ode": ({"S": 10}, 4), "lstm": ({"LAYERS": 1}, 3), "particle": ({"STEPS": 10}, 2),
          "saddle": ({"ITERS": 30}, 2)}  # fmt: skip


@pytest.mark.parametrize("name", list(LOOPED))
def test_a_models_loop_runs_on_tfjs_to_float32_accuracy(name):
    settings, n = LOOPED[name]
    m = load_model(name, **settings)
    args = m.setup(n)
    for mode in ("primal", "reverse"):
        exact = _value(m, args, mode, "jax", precision="float64")
        f32 = _value(m, args, mode, "jax", precision="float32")
        got = _value(m, args, mode, "tfjs")
        tol = max(1e-5, 20 * _rel(f32, exact))
        assert _rel(got, exact) <= tol, (mode, _rel(got, exact), tol)


CUMPROD_IN_LOOP = """
def setup(n, rng):
    return (rng.uniform(0.5, 1.5, n),)

def f(x):
    def step(i, y):
        return np.cumprod(y) * 0.5 + x
    return np.sum(fori_loop(0, 3, step, x))
"""


def test_an_operation_tfjs_cannot_differentiate_inside_a_loop_is_refused_at_the_loops_line():
    m = adlab.Model.from_source(CUMPROD_IN_LOOP, name="cumprod_in_loop")
    args = m.setup(N)
    exact = _value(m, args, "primal", "jax", precision="float64")
    assert _rel(_value(m, args, "primal", "tfjs"), exact) < 1e-5  # f runs
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *args, backend="tfjs")
    assert info.value.lineno == 8 and "fori_loop" in info.value.line
    assert "Cumprod" in str(info.value)


def test_while_cond_and_a_reverse_scan_with_swapped_carries_run_under_tf_grad():
    import jax
    import jax.numpy as jnp
    from jax import lax

    from adlab.engine.backends.tfjs.program import TfjsFunction
    from adlab.engine.model import precision_scope

    rng = np.random.default_rng(2)
    x, xs = rng.normal(size=3).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)

    def f(x, xs):
        def swap(c, row):
            a, b = c
            return (jnp.sin(b * row), a + 1.0), a * row

        (a, b), ys = lax.scan(swap, (x, 2 * x), xs, reverse=True)
        _, w = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, jnp.cos(s[1]) * x), (0, a))
        pick = lax.switch((x[0] > 0).astype(int), [jnp.exp, jnp.tanh], b)
        return jnp.sum(ys**2) + jnp.sum(w * pick)

    with precision_scope("float32"):
        want = float(jax.jit(f)(x, xs))
        # JAX has no reverse mode of a while loop: its forward mode gives the gradient
        grad = np.asarray(jax.jit(jax.jacfwd(f))(x, xs))
    assert abs(float(TfjsFunction(f, 0, "once")(x, xs)) - want) <= 1e-5 * abs(want)
    np.testing.assert_allclose(TfjsFunction(f, 0, "grad")(x, xs), grad, rtol=1e-4, atol=1e-5)
