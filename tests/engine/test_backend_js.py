"""backend="js": the model's JAX programs emitted as JavaScript and run in Node.

Oracles: JAX's own float64 values (f, jax.grad, jacfwd), the emitted f itself
(finite differences taken in JavaScript must be those of its values, bit for bit),
and a transcription of G9.js's ``gradient`` written here from ``src/minimize.js``.

Internals: the emitted program itself (JsFunction, run on shapes the catalog does not reach,
rule by rule) and the Node process (node, NodeCrashed: killed and restarted), which no
public function exposes.
"""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab._vocab import BACKENDS
from adlab.catalog import load_model
from adlab.engine.backends import KNOWN, installed, pip_command

pytestmark = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

MODELS = ["normal_logpdf", "g9_graphics", "rosenbrock", "mlp_batched", "gaussian_residual",
          "logistic_regression", "wide_moments", "bvp_residual", "llsq", "lse", "gmm"]  # fmt: skip
SMALL = {"mlp_batched": {"N1": 12, "N2": 4}}  # 22k parameters by default: forward is n passes
N = 6


def _model(name: str):
    return load_model(name, **SMALL.get(name, {}))


def _value(m, args, mode: str, backend: str, **kw):
    p = adlab.prepare(m, *args, mode=mode, backend=backend, **kw)
    return np.asarray(p(*p.inputs))


def _rel(a, b) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("name", MODELS)
def test_f_and_its_ad_derivatives_are_jaxs_to_1e_12(name):
    m = _model(name)
    args = m.setup(N)
    exact = _value(m, args, "reverse", "jax")
    # where JAX's own forward and reverse differ by more (an ill-conditioned Jacobian,
    # gaussian_residual's), that is the rounding any float64 program shows
    spread = _rel(_value(m, args, "forward", "jax"), exact)
    for mode in ("primal", "reverse", "forward"):
        ref = _value(m, args, mode, "jax")
        got = _value(m, args, mode, "js")
        assert got.shape == ref.shape, mode
        assert _rel(got, ref) <= max(1e-12, 2 * spread), (mode, _rel(got, ref))


@pytest.mark.parametrize("name", MODELS)
def test_finite_differences_in_javascript_are_as_accurate_as_jaxs(name):
    m = _model(name)
    args = m.setup(N)
    exact = _value(m, args, "reverse", "jax")
    for scheme in ("forward", "central"):
        ref = _value(m, args, "numeric", "jax", scheme=scheme)
        got = _value(m, args, "numeric", "js", scheme=scheme)
        assert got.shape == ref.shape
        # the same steps on f's values rounded differently: errors of the same size
        assert _rel(got, exact) <= 10 * _rel(ref, exact) + 1e-12, (
            scheme,
            _rel(got, exact),
            _rel(ref, exact),
        )


def _differences(f, x: np.ndarray, scheme: str) -> np.ndarray:
    """adlab's finite differences (modes/numeric.py) of f's values, written out here."""
    eps = np.finfo(np.float64).eps
    power = {"forward": 1 / 2, "central": 1 / 3, "richardson": 1 / 5}[scheme]
    f0 = np.atleast_1d(f(x))
    cols = []
    for j in range(x.size):

        def at(v, j=j):
            y = x.copy()
            y[j] = v
            return np.atleast_1d(f(y))

        xj = x[j]
        ahead = xj + eps**power * max(abs(xj), 1.0)
        h = ahead - xj
        if scheme == "forward":
            cols.append((at(ahead) - f0) / (ahead - xj))
        elif scheme == "central":
            cols.append((at(ahead) - at(xj - h)) / (ahead - (xj - h)))
        else:
            half = xj + h / 2
            d1 = (at(ahead) - at(xj - h)) / (ahead - (xj - h))
            d2 = (at(half) - at(xj - (half - xj))) / (half - (xj - (half - xj)))
            cols.append(d2 + (d2 - d1) / 3)
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", ["rosenbrock", "wide_moments"])
@pytest.mark.parametrize("scheme", ["forward", "central", "richardson"])
def test_differences_taken_in_javascript_are_those_of_the_emitted_f_bit_for_bit(name, scheme):
    m = _model(name)
    (x,) = m.setup(N)
    primal = adlab.prepare(m, x, mode="primal", backend="js")
    got = _value(m, (x,), "numeric", "js", scheme=scheme)
    want = _differences(lambda y: primal(y), x, scheme)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_derivative_on_js_is_the_public_entry_point():
    m = _model("gaussian_residual")
    args = m.setup(N)
    got = adlab.derivative(m, *args, backend="js", mode="reverse")
    want = adlab.derivative(m, *args, backend="jax", mode="reverse")
    assert _rel(got, want) <= 1e-11


def test_new_data_bound_by_a_call_reaches_node_and_stays_bound():
    m = _model("llsq")
    old, new = m.setup(N), m.setup(N, seed=1)
    p = adlab.prepare(m, *old, backend="js")
    want = _value(m, new, "reverse", "jax")
    assert _rel(p(*new), want) <= 1e-12
    assert _rel(p(new[0]), want) <= 1e-12  # the new data kept for later calls
    assert _rel(p(*old), _value(m, old, "reverse", "jax")) <= 1e-12


# ------------------------------------------------- each rule on its own
_rng = np.random.default_rng(0)
A, B = _rng.normal(size=(3, 4)), _rng.normal(size=(4, 5))
C, D = _rng.normal(size=(2, 3, 4)), _rng.normal(size=(2, 4, 5))


def _rules_cases():
    import jax
    import jax.numpy as jnp
    from jax import lax

    ints = jnp.arange(12).reshape(3, 4)
    return {
        "transpose": (lambda a: jnp.transpose(a) * 2.0, (A,)),
        "3-d transpose": (lambda c: jnp.transpose(c, (2, 0, 1)) + 1.0, (C,)),
        "matmul": (lambda a, b: a @ b, (A, B)),
        "batched matmul": (lambda c, d: jnp.einsum("bij,bjk->bik", c, d), (C, D)),
        "two contracted dims": (lambda c: jnp.tensordot(c, c, axes=([1, 2], [1, 2])), (C,)),
        "sum over an axis": (lambda c: jnp.sum(c, axis=1), (C,)),
        "max over two axes": (lambda c: jnp.max(c, axis=(0, 2)), (C,)),
        "prod": (lambda a: jnp.prod(a, axis=0), (A,)),
        "cumsum on axis 1": (lambda c: jnp.cumsum(c, axis=1), (C,)),
        "reverse cumsum": (lambda a: lax.cumsum(a, axis=1, reverse=True), (A,)),
        "cumprod": (lambda a: jnp.cumprod(a, axis=0), (A,)),
        "interior pad": (lambda a: lax.pad(a, 0.5, ((1, 2, 1), (0, -1, 0))), (A,)),
        "negative pad": (lambda a: lax.pad(a, 0.0, ((-1, 1, 0), (2, 0, 0))), (A,)),
        "rev": (lambda a: jnp.flip(a, axis=1) - a, (A,)),
        "strided slice": (lambda c: c[:, ::2, 1:], (C,)),
        "concatenate on axis 1": (lambda a: jnp.concatenate([a, 2 * a[:, :2]], axis=1), (A,)),
        "stack on axis 1": (lambda a: jnp.stack([a, a * a], axis=1), (A,)),
        "split": (
            lambda a: jnp.split(a, [1, 3], axis=1)[2] * jnp.split(a, [1, 3], axis=1)[0],
            (A,),
        ),
        "iota": (lambda a: a * jnp.arange(4.0)[None, :] + jnp.arange(3)[:, None], (A,)),
        "broadcast in the middle": (lambda c, a: c * a[None, :, :] + a[:, :1][None], (C, A)),
        "where": (lambda a: jnp.where(a > 0, jnp.log1p(a * a), -(a**3)), (A,)),
        "clip": (lambda a: jnp.clip(a, -0.5, 0.5), (A,)),
        "integer division": (lambda a: a * (ints // 5 - 7 // 2) + ints % 3, (A,)),
        "functions": (
            lambda a: jnp.arctan2(a, 1.5) + jnp.sinh(a) + jnp.sqrt(jnp.abs(a)) + jnp.expm1(a),
            (A,),
        ),
        "sigmoid, softplus": (lambda a: jax.nn.sigmoid(a) + jax.nn.softplus(a), (A,)),
        "powers": (lambda a: jnp.abs(a) ** 1.7 + a**-2, (A,)),
        "min, max": (lambda a, b: jnp.minimum(a, b[:3, :4]) + jnp.maximum(a, 0.1), (A, B)),
        "norm (a jitted call)": (lambda a: jnp.linalg.norm(a) + jnp.mean(a**2), (A,)),
        "astype int": (lambda a: (a * 3).astype(jnp.int32) + a, (A,)),
        "squeeze, expand": (lambda c: jnp.squeeze(c[:1], 0)[:, :, None] * 2, (C,)),
        "take columns": (lambda a: a[:, np.array([3, 0, 0, 2])] * 2, (A,)),
        "take rows": (lambda a: jnp.take(a, np.array([2, 1, 1]), axis=0), (A,)),
        "index pairs": (lambda a: a[np.array([0, 2, 1]), np.array([1, 3, 0])], (A,)),
        "take, clipped": (lambda a: jnp.take(a.ravel(), np.array([3, 0, 20]), mode="clip"), (A,)),
        "take, filled": (
            lambda a: jnp.take(a.ravel(), np.array([1, 25, -30]), mode="fill", fill_value=-1.0),
            (A,),
        ),
        "at[].add": (lambda a: a.at[np.array([0, 2, 0])].add(a[:3] * 3), (A,)),
    }


@pytest.mark.parametrize("case", list(_rules_cases()))
def test_each_rule_and_its_gradient_agree_with_jax(case):
    """Shapes and parameters the catalog's models do not reach: axes, batch dimensions,
    interior and negative padding, integer arithmetic."""
    import jax

    from adlab.engine.backends.js.program import JsFunction
    from adlab.engine.model import precision_scope

    f, args = _rules_cases()[case]
    loss = lambda *a: jax.numpy.sum(f(*a) ** 2)  # noqa: E731
    with precision_scope("float64"):
        want, grad = np.asarray(jax.jit(f)(*args)), np.asarray(jax.grad(loss)(*args))
    got = JsFunction(f, 0, "once")(*args)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(JsFunction(loss, 0, "grad")(*args), grad, rtol=1e-12,
                               atol=1e-13)  # fmt: skip


# ------------------------------------------------------------------- G9
def g9_gradient(f, x):
    """G9.js's gradient (bijection/g9, src/minimize.js), transcribed for this test."""
    dim, f1 = len(x), f(x)
    temp, grad = list(x), [0.0] * dim
    for i in range(dim):
        delta = max(1e-6 * f1, 1e-8)
        k = 0
        while True:
            assert k != 20, "Gradient failed"
            temp[i] = x[i] + delta
            f0 = f(temp)
            temp[i] = x[i] - delta
            f2 = f(temp)
            temp[i] = x[i]
            if not (np.isnan(f0) or np.isnan(f2)):
                grad[i] = (f0 - f2) / (2 * delta)
                t0, t1, t2 = x[i] - delta, x[i], x[i] + delta
                d1, d2 = (f0 - f1) / delta, (f1 - f2) / delta
                err = min(max(abs(d1 - grad[i]), abs(d2 - grad[i]), abs(d1 - d2)), delta)
                normalize = max(abs(grad[i]), abs(f0), abs(f1), abs(f2), abs(t0), abs(t1),
                                abs(t2), 1e-8)  # fmt: skip
                if err / normalize < 1e-3:
                    break
            delta /= 16
            k += 1
    return np.array(grad)


G9_SRC = """
def setup(n, rng):
    return (rng.normal(size=n),)

def f(x):
    return np.sum(np.sin(3 * x) * x**2) + 0.1
"""


def test_scheme_g9_gives_g9s_gradient_on_js_and_numpy():
    m = adlab.Model.from_source(G9_SRC, "small")
    (x,) = m.setup(5)
    f = m.function("numpy")
    want = g9_gradient(lambda y: float(f(np.asarray(y))), list(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adlab.UntrustedWarning)  # G9's answer is loose
        on_numpy = adlab.derivative(m, x, mode="numeric", scheme="g9", backend="numpy")
        on_js = adlab.derivative(m, x, mode="numeric", scheme="g9", backend="js")
    np.testing.assert_array_equal(on_numpy, want)
    # the same decisions on f's values as JavaScript rounds them
    np.testing.assert_allclose(on_js, want, rtol=1e-9)
    exact = adlab.derivative(m, x)
    assert 0 < _rel(want, exact) < 1e-3  # G9's answer: central differences, not exact


def test_scheme_g9_is_refused_where_it_cannot_run():
    m = adlab.Model.from_source(G9_SRC, "small")
    with pytest.raises(ValueError, match="runs on backend 'js', 'tfjs', 'jaxjs' or 'numpy'"):
        adlab.derivative(m, *m.setup(3), mode="numeric", scheme="g9", backend="jax")
    wide = _model("wide_moments")
    with pytest.raises(ValueError, match="scalar f"):
        adlab.derivative(wide, *wide.setup(3), mode="numeric", scheme="g9", backend="js")


def test_g9_refuses_a_step_that_does_not_move_x_where_g9_would_answer_0():
    """f < 0 starts G9 at step 1e-8, below half an ulp of 1e9: x + step == x, and G9's
    slopes would all be 0 (its answer: a gradient of 0); refused on both backends."""
    m = adlab.Model.from_source(
        G9_SRC.replace("np.sum(np.sin(3 * x) * x**2) + 0.1", "-np.sum(x**2)"), "far"
    )
    x = np.array([1e9, 0.5])
    for backend in ("numpy", "js"):
        with pytest.raises(adlab.ModelError, match=r"does not move x\[0\] = 1000000000"):
            adlab.derivative(m, x, mode="numeric", scheme="g9", backend=backend)


# ------------------------------------------------------------- refusals
SORT_SRC = """
def setup(n, rng):
    return (rng.normal(size=n),)

def f(x):
    y = np.sort(x)
    return np.sum(y * x)
"""


@pytest.mark.parametrize("mode", ["primal", "reverse", "numeric"])
def test_an_operation_js_lacks_is_a_model_error_at_its_line(mode):
    m = adlab.Model.from_source(SORT_SRC, "sorted")
    with pytest.raises(adlab.ModelError) as info:
        adlab.prepare(m, *m.setup(4), mode=mode, backend="js")
    err = info.value
    assert err.lineno == 6 and "np.sort" in err.line
    assert "'sort'" in err.reason and "backend='jax'" in err.hint


def test_complex_step_and_float32_are_refused_with_the_reason():
    m = _model("rosenbrock")
    with pytest.raises(ValueError, match="complex arithmetic"):
        adlab.derivative(m, *m.setup(3), mode="complex-step", backend="js")
    with pytest.raises(ValueError, match="float64 only"):
        adlab.derivative(m, *m.setup(3), backend="js", precision="float32")


def test_js_is_a_known_backend_that_names_its_install():
    assert "js" in BACKENDS and KNOWN["js"].label == "JavaScript"
    assert pip_command("js") == "apt-get install -y nodejs"


# ------------------------------------------------------------------ Node
def test_node_killed_mid_session_is_a_clear_error_and_the_next_call_restarts_it():
    from adlab.engine.backends.js.node import NodeCrashed, node

    m = _model("rosenbrock")
    p = adlab.prepare(m, *m.setup(4), backend="js")
    before = p(*p.inputs)
    os.kill(node().pid, signal.SIGKILL)
    with pytest.raises(NodeCrashed, match="Node crashed: it was killed by signal 9"):
        p(*p.inputs)
    np.testing.assert_array_equal(p(*p.inputs), before)  # a fresh Node, the program reloaded


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="os.waitid: POSIX")
def test_node_that_died_before_the_next_call_is_the_same_clear_error():
    # The test above raced the kernel: where Node was gone before the next call (a pause of a
    # few ms, a GC in a long session), that call restarted it in silence. Here it is gone:
    # waited for without being reaped (WNOWAIT), so Python's Popen still finds it dead.
    from adlab.engine.backends.js.node import NodeCrashed, node

    m = _model("rosenbrock")
    p = adlab.prepare(m, *m.setup(4), backend="js")
    before = p(*p.inputs)
    pid = node().pid
    os.kill(pid, signal.SIGKILL)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    with pytest.raises(NodeCrashed, match="killed by signal 9 after its last answer"):
        p(*p.inputs)
    np.testing.assert_array_equal(p(*p.inputs), before)
    assert node().pid != pid


def test_a_stuck_or_dying_node_is_an_error_never_a_hang():
    from adlab.engine.backends.js.node import NodeCrashed, node

    n = node()
    stuck = {"op": "load", "id": -1, "consts": [], "n_inputs": 0, "driver": {"kind": "once"},
             "source": "(C) => function () { for (;;) {} }"}  # fmt: skip
    n.request(stuck)
    with pytest.raises(NodeCrashed, match="did not answer within 1 s"):
        n.request({"op": "call", "id": -1, "inputs": {}}, timeout=1.0)
    dying = {**stuck, "source": "(C) => function () { console.error('boom'); process.exit(3) }"}
    n.request(dying)
    with pytest.raises(NodeCrashed, match="exited with code 3(.|\n)*boom"):
        n.request({"op": "call", "id": -1, "inputs": {}})
    assert n.request({"op": "ping"})["pong"].startswith("v")


def test_programs_python_lets_go_of_are_dropped_from_node():
    import gc

    from adlab.engine.backends.js.node import node

    n = node()
    m = _model("rosenbrock")
    p = adlab.prepare(m, *m.setup(5), backend="js")
    held = n.request({"op": "ping"})["programs"]
    del p
    gc.collect()
    assert n.request({"op": "ping"})["programs"] < held


@pytest.mark.parametrize("scheme", ["forward", "central", "richardson"])
def test_a_users_step_gives_numpys_differences_and_estimate(scheme):
    m = _model("wide_moments")
    args = m.setup(4)
    js, info = adlab.derivative(m, *args, mode="numeric", scheme=scheme, step=1e-4,
                                backend="js", full_output=True)  # fmt: skip
    ref, ref_info = adlab.derivative(m, *args, mode="numeric", scheme=scheme, step=1e-4,
                                     backend="numpy", full_output=True)  # fmt: skip
    np.testing.assert_allclose(js, ref, rtol=1e-12, atol=1e-14)
    assert info.f_evals == ref_info.f_evals
    if scheme == "richardson":
        np.testing.assert_allclose(info.error_estimate, ref_info.error_estimate, rtol=1e-6,
                                   atol=1e-14)  # fmt: skip


CHILD = """
import adlab
from adlab.engine.backends.js.node import node
m = adlab.load_model("rosenbrock")
adlab.derivative(m, *m.setup(3), backend="js")
print(node().pid, flush=True)
{end}
"""


@pytest.mark.parametrize("end", ["", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
def test_node_ends_with_the_python_process_even_one_killed(end):
    """atexit closes Node's stdin; a Python killed outright closes it too, and Node
    exits when its stdin closes."""
    import subprocess
    import sys
    import time

    done = subprocess.run([sys.executable, "-c", CHILD.format(end=end)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    pid = int(done.stdout.split()[-1])
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # ended, but not reaped yet (a zombie, where no init reaps orphans)
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return
        except OSError:
            return
        time.sleep(0.05)
    pytest.fail(f"Node (pid {pid}) outlived its Python process")
