"""Memory on the JavaScript backends: each runtime's own count, where the program runs.

Oracle: a chain of k elementwise steps over n values, ``x = tanh(1.01 x)`` k times then the
square of their sum, whose reverse pass needs each step's output (tanh's derivative is
1 - y**2, and the next step's product reads y) and runs after the forward pass (it needs
the sum): k arrays of n values are kept from the forward pass, and nothing else the
backward pass reads is as large (without the square, "js" runs each element's steps and
their derivatives in one pass, keeping nothing). On "js" they are k Float64Arrays of the
emitted program (1.01 x and 1 - y**2 are fused into the loops that read them, so they have
no buffer of their own); on "tfjs" they are what TF.js's tape saves in float32: Tanh saves
its output and Multiply its inputs (the constant 1.01 and the previous y, one buffer with
the output Tanh saved), and every other tensor of the forward pass is disposed when
``tidy("forward")`` ends (tfjs-core's engine.ts, ``gradients``). So k * n * itemsize.

Internals: the Node process (node, NodeCrashed: killed while a memory is measured), which
no public function exposes.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import adlab
from adlab.engine.backends import installed

pytestmark = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

CHAIN = '''
"""k elementwise steps over n values, then the square of their sum."""
K = 3


def setup(n, rng):
    return (np.linspace(-1.0, 1.0, n),)


def f(x):
    for _ in range(K):
        x = np.tanh(1.01 * x)
    return np.sum(x) ** 2
'''
ITEMSIZE = {"js": 8, "tfjs": 4}  # float64 in plain JavaScript, float32 in TF.js
BACKENDS = [("js", None), ("tfjs", "cpu"), ("tfjs", "wasm")]
N = 400


def _chain(k: int):
    return adlab.Model.from_source(CHAIN, name="chain", K=k)


def _prepare(m, mode: str, backend: str, device: str | None):
    return adlab.prepare(m, *m.setup(N), mode=mode, backend=backend, device=device)


@pytest.mark.parametrize(("backend", "device"), BACKENDS)
@pytest.mark.parametrize("k", [2, 6])
def test_the_chains_residuals_are_k_arrays_of_n_values(backend, device, k):
    got = _prepare(_chain(k), "reverse", backend, device).memory()
    expected = k * N * ITEMSIZE[backend]
    if device == "wasm":  # its tape keeps more: about two arrays a step (tf.grad on wasm)
        assert expected < got["residual_bytes"] < 4 * expected, got
    else:
        assert got["residual_bytes"] == pytest.approx(expected, rel=0.1), got
    assert got["peak_bytes"] > 0 and got["peak_bytes"] >= got["residual_bytes"], got
    assert ("emitted program's own buffers" if backend == "js" else "tf.profile") in (
        got["memory_counter"]
    )
    assert "residuals:" in got["memory_counter"]


@pytest.mark.parametrize(("backend", "device"), BACKENDS)
def test_modes_without_a_reverse_pass_have_no_residuals(backend, device):
    modes = ["primal", "numeric"] + (["forward"] if backend == "js" else [])  # TF.js: no forward
    for mode in modes:
        got = _prepare(_chain(3), mode, backend, device).memory()
        assert got["residual_bytes"] is None, (mode, got)
        assert got["peak_bytes"] > 0, (mode, got)
        assert "residuals" not in got["memory_counter"], (mode, got)


def test_the_peak_of_js_counts_the_drivers_jacobian():
    # forward mode fills the Jacobian a column at a time: its m x n values are in the peak
    m = _chain(2)
    forward = _prepare(m, "forward", "js", None).memory()["peak_bytes"]
    assert forward >= (N + N) * 8  # the direction and the 1 x n Jacobian


@pytest.mark.parametrize(("backend", "device"), BACKENDS[:2])
def test_a_vector_fs_reverse_mode_counts_one_rows_tape(backend, device):
    m = adlab.Model.from_source(CHAIN.replace("return np.sum(x) ** 2", "return x[:5] * np.sum(x)"),
                                name="vector_chain", K=4)  # fmt: skip
    got = _prepare(m, "reverse", backend, device).memory()
    assert got["residual_bytes"] == pytest.approx(4 * N * ITEMSIZE[backend], rel=0.1), got
    assert got["peak_bytes"] >= got["residual_bytes"], got


@pytest.mark.parametrize("backend", ["js", "tfjs"])
def test_derivative_full_output_gives_prepareds_figures(backend):
    m = _chain(3)
    x = m.setup(N)[0]
    _, info = adlab.derivative(m, x, backend=backend, full_output=True)
    got = adlab.prepare(m, x, backend=backend).memory()
    assert (info.peak_bytes, info.residual_bytes, info.memory_counter) == (
        got["peak_bytes"], got["residual_bytes"], got["memory_counter"])  # fmt: skip


def test_a_sweeps_javascript_records_carry_the_memory():
    records = list(adlab.bench(_chain(3), sizes=[N], modes=["reverse(js)", "reverse(tfjs)"],
                               repeats=2, interval_width=None, target_s=0.001,
                               warn=False))  # fmt: skip
    by_backend = {r.backend: r for r in records if not r.skipped}
    assert set(by_backend) >= {"js", "tfjs"}, records
    for name, r in by_backend.items():
        assert r.residual_bytes == pytest.approx(3 * N * ITEMSIZE[name], rel=0.1), r
        assert r.peak_bytes >= r.residual_bytes, r
        assert r.memory_counter, r


def test_node_killed_while_tfjs_memory_is_asked_is_a_clear_error():
    from adlab.engine.backends.js.node import NodeCrashed, node

    p = _prepare(_chain(2), "reverse", "tfjs", "cpu")
    os.kill(node().pid, signal.SIGKILL)
    with pytest.raises(NodeCrashed, match="Node crashed: it was killed by signal 9"):
        p.memory()
    # the next asks a fresh Node, which loads the program again
    assert p.memory()["residual_bytes"] == pytest.approx(2 * N * 4, rel=0.1)


def test_the_figures_do_not_depend_on_the_values():
    # counted at the prepared shapes: another x of the same shape has the same tape
    m = _chain(3)
    a = adlab.prepare(m, np.linspace(-1.0, 1.0, N), backend="tfjs").memory()
    b = adlab.prepare(m, np.linspace(-3.0, 0.5, N), backend="tfjs").memory()
    assert a == b


# ------------------------------------------------------------------ loops on "js"
def test_a_loops_tape_on_js_is_what_its_forward_scan_stacks():
    """ode's reverse pass reads, per RK4 step, the four stages' inputs to the rate (the
    products x * y' need y'): 4 S arrays of n values, stacked by the forward scan."""
    steps, n = 50, 20
    m = adlab.load_model("ode", S=steps)
    got = adlab.prepare(m, *m.setup(n), mode="reverse", backend="js").memory()
    assert got["residual_bytes"] == 4 * steps * n * 8, got


def _checkpointed(checkpoint, steps: int = 100):
    """f of a loop of ``steps`` steps taken with ``checkpoint=``."""
    import jax.numpy as jnp

    from adlab.engine.backends._loops import jax_loops

    scan = jax_loops()["scan"]

    def f(x, W):
        def step(c, _):
            h = jnp.tanh(W @ c + x)
            g = jnp.sin(h) * h
            return c + 0.1 * jnp.exp(-g) * g, None

        return jnp.sum(scan(step, x, None, length=steps, checkpoint=checkpoint)[0] ** 2)

    return f


def test_a_checkpointed_loops_tape_on_js_keeps_the_carries_it_recomputes_from():
    """checkpoint=True keeps each step's carry (T, and the last one's: T + 1 arrays of n),
    "sqrt" each segment's first (T / 10 for T = 100, and the last: 11); without, the tape
    holds more per step than the carry. The recomputation is emitted in the backward loop."""
    from adlab.engine.backends.js.program import counted

    n = 30
    rng = np.random.default_rng(0)
    args = (rng.normal(size=n), rng.normal(size=(n, n)) / n)
    arrays = {ck: counted(_checkpointed(ck), args, 0, "grad")[3].residual / (n * 8)
              for ck in (False, True, "sqrt")}  # fmt: skip
    assert arrays[True] == 101 and arrays["sqrt"] == 11, arrays
    assert arrays[False] > 2 * arrays[True], arrays
