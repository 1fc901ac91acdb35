"""The engine limits GradBench's workloads met (issue 16): loops, complex step, chunks.

Oracles: the same model written with a plain Python loop (unrolled by jit),
JAX's reverse mode, and hand-derived softmax gradients.

Internals: the limits met inside forward mode's chunks: JAX's chunked jacfwd
(backends.jax.forward: jacfwd, COPIES) and the memory check's budget (programs.memory:
CHUNK_BUDGET, check_work), lowered to reach the chunked path at small sizes; none is public.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from _engine_hand import METHODS, error, tolerance
from _frameworks import available

import adlab
from adlab.engine.programs import equations

FRAMEWORKS = ("jax", "numpy", "torch", "tensorflow", "autograd")

# An RK4-integrated ODE, S steps, as GradBench's ode eval integrates its system
ODE = '''"""RK4 of dy/dt = -x y + sin(y), elementwise, S steps. n: the size of y."""
S = 10


def setup(n, rng):
    return rng.uniform(0.5, 1.5, size=n), rng.uniform(0.5, 1.5, size=n)


def f(x, y0):
    h = 1.0 / S

    def rhs(y):
        return -x * y + np.sin(y)

    def step(i, y):
        k1 = rhs(y)
        k2 = rhs(y + h / 2 * k1)
        k3 = rhs(y + h / 2 * k2)
        k4 = rhs(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    return LOOP
'''
FORI = ODE.replace("LOOP", "fori_loop(0, S, step, y0)")
UNROLLED = ODE.replace("LOOP", "unrolled(step, y0)").replace(
    "def f(",
    "def unrolled(step, y):\n    for i in range(S):\n        y = step(i, y)\n"
    "    return y\n\n\ndef f(",
)

# scan over the rows of data, with ys stacked, a pytree carry, and an int start
SCAN = '''"""A scan whose carry is a (float, int-started) pair. n: the size of x."""


def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=(4, n))


def f(x, A):
    def body(carry, row):
        c, s = carry
        c = c * np.cos(row) + x * row
        return (c, s + np.sum(c**2)), np.sin(c) * x

    (c, s), ys = LOOP
    return np.sum(ys, axis=0) + c * s
'''
SCAN_LOOP = SCAN.replace("LOOP", "scan(body, (x, 0), A)")
SCAN_PLAIN = SCAN.replace("LOOP", "python_scan(body, (x, 0), A)").replace(
    "def f(",
    "def python_scan(body, carry, xs):\n    ys = []\n    for row in xs:\n"
    "        carry, y = body(carry, row)\n        ys.append(y)\n"
    "    return carry, np.stack(ys)\n\n\ndef f(",
)


@functools.cache
def _model(text: str, **settings) -> adlab.Model:
    return adlab.Model.from_source(text, "loop", **settings)


def _jaxpr_size(m: adlab.Model, *args) -> int:
    grad = jax.jacrev(m.function("jax"))
    return sum(1 for _ in equations(jax.make_jaxpr(grad)(*args).jaxpr))


def test_fori_loop_traces_the_body_once():
    """The gradient's program has as many equations at S=1000 as at S=10 (a Python loop
    grows with S: the check can tell them apart)."""
    args = _model(FORI).setup(4)
    loop = [_jaxpr_size(_model(FORI, S=s), *args) for s in (10, 1000)]
    plain = [_jaxpr_size(_model(UNROLLED, S=s), *args) for s in (10, 100)]
    assert loop[0] == loop[1]
    assert plain[1] > 5 * plain[0]


METHODS_ALL = [*METHODS, ("complex-step", "central")]


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize(("text", "plain"), [(FORI, UNROLLED), (SCAN_LOOP, SCAN_PLAIN)],
                         ids=["fori_loop", "scan"])  # fmt: skip
def test_loops_give_the_plain_loops_derivative(backend, text, plain):
    """Every mode the backend has, against JAX's reverse mode of the unrolled Python loop."""
    available(backend)
    m, ref_model = _model(text), _model(plain)
    args = m.setup(3)
    ref = adlab.derivative(ref_model, *args, mode="reverse")
    value = adlab.derivative(m, *args, mode="primal", backend=backend)
    np.testing.assert_allclose(value, adlab.derivative(ref_model, *args, mode="primal"),
                               rtol=1e-14)  # fmt: skip
    impl = adlab.engine.backends.get_backend(backend)
    for mode, scheme in dict.fromkeys(METHODS_ALL):
        if mode in ("forward", "reverse") and mode not in impl.ad:
            continue
        got = adlab.derivative(m, *args, mode=mode, scheme=scheme, backend=backend)
        assert error(got, ref) <= tolerance(mode, scheme, "float64"), (mode, scheme)


@pytest.mark.parametrize("mode", ["forward-over-reverse", "reverse-over-reverse", "numeric",
                                  "complex-step"])  # fmt: skip
def test_loops_under_second_order_modes(mode):
    """Hessians and HVPs through a scan, against the unrolled loop's Hessian."""
    m, plain = _model(SCAN_LOOP), _model(SCAN_PLAIN)
    x, A = m.setup(3)

    def scalar(model):
        return adlab.Model.from_source(
            model.source.replace(
                "return np.sum(ys, axis=0) + c * s", "return np.sum(np.sum(ys, axis=0) + c * s)"
            )
        )

    want = adlab.hessian(scalar(plain), x, A)
    got = adlab.hessian(scalar(m), x, A, mode=mode)
    assert error(got, want) <= (1e-6 if mode == "numeric" else 1e-12)
    if mode != "complex-step":
        v = np.linspace(-1, 1, x.size)
        assert error(adlab.hvp(scalar(m), x, v, A, mode=mode), want @ v) <= 1e-6


def test_sparsity_is_read_through_a_loop():
    """The ode's Jacobian is diagonal (elementwise), found through lax's loop whether it is
    walked step by step (S=10) or to its fixed point (S=1000), with no dense fallback."""
    for s in (10, 1000):
        m = _model(FORI, S=s)
        p = adlab.prepare(m, *m.setup(6), mode="forward", sparse=True)
        assert p.nnz == 6 and not p.notes
        assert (p.pattern.toarray() == np.eye(6, dtype=bool)).all()


def test_a_while_loop_is_taken_as_dense_with_a_note():
    """A while loop (trip count not in the program) is not analysed: dense, and said so."""

    def f(x):
        def body(c):
            i, y = c
            return i + 1, y * 0.5 + x

        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    p = adlab.prepare(f, np.ones(4), mode="forward", sparse=True)
    assert p.nnz == 16
    assert any(note.startswith("while") for note in p.notes)


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_an_error_in_a_loop_body_names_the_users_line(backend):
    bad = FORI.replace("np.sin(y)", "np.sinn(y)")
    m = _model(bad)
    lineno = bad.splitlines().index("        return -x * y + np.sinn(y)") + 1
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(3), mode="numeric", backend=backend)
    assert info.value.lineno == lineno
    assert "sinn" in str(info.value)


# ------------------------------------------------- forward and numeric in chunks
LSE = '''"""Log-sum-exp shifted by its maximum. n: the length of x."""


def setup(n, rng):
    return (rng.random(n),)


def f(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))
'''


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_forward_mode_computes_a_4000_input_gradient_in_chunks(monkeypatch):
    """All 4,000 tangents at once would hold 4,000 x 4,000 floats (128 MB), more than the
    64 MiB this machine is said to have; in chunks of a 1 MiB budget they fit, and the
    gradient is reverse mode's. (The size is the test's, not the chunking's: 40,000 inputs
    in 32 MiB chunks of 4 GiB took 50-110 s of the quick loop for the same check.)"""
    memory = adlab.engine.programs.memory
    monkeypatch.setattr(memory, "CHUNK_BUDGET", 1 << 20)
    monkeypatch.setattr(memory, "available_bytes", lambda: 64 << 20)
    m = adlab.Model.from_source(LSE, "lse")
    (x,) = m.setup(4_000)
    p = adlab.prepare(m, x, mode="forward")
    got = p(x)
    assert error(got, adlab.derivative(m, x, mode="reverse")) <= 1e-13
    assert error(got, _softmax(x)) <= 1e-12
    assert p.f_evals == 4_000
    # unchunked, the same gradient is refused: the chunks are what made it fit (compiled
    # anew: adlab's cache keys a program by what it computes, which chunks do not change)
    monkeypatch.setattr(memory, "CHUNK_BUDGET", 1 << 40)
    monkeypatch.setenv("ADLAB_CACHE", "0")
    with pytest.raises(adlab.SizeError):
        adlab.prepare(m, x, mode="forward")


def test_chunks_give_jacfwd_columns_exactly(monkeypatch):
    """A vector f, x a matrix, chunks of 3 columns (the last one padded): jax.jacfwd's."""
    from adlab.engine.backends.jax import forward as jax_forward
    from adlab.engine.model import precision_scope

    def f(x, a):
        return jax.numpy.tanh(x @ a).ravel() * jax.numpy.sum(x**2)

    x, a = np.random.default_rng(1).normal(size=(2, 5)), np.ones((5, 3))
    with precision_scope("float64"):
        want = jax.jacfwd(f)(x, a)
        # a column's estimate is COPIES x 10 floats (x is f's largest value): 3 fit
        budget = 3 * 8 * 10 * jax_forward.COPIES
        monkeypatch.setattr(adlab.engine.programs.memory, "CHUNK_BUDGET", budget)
        got = jax_forward.jacfwd(f, 0)(x, a)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_numeric_mode_at_40000_is_not_refused():
    """Its batch is chunked on every backend, so only the work is checked: 2 n^2 at
    n = 40,000 is within the limit, while 200,000 is refused as too long."""
    m = adlab.Model.from_source(LSE, "lse")
    for n, refused in ((40_000, False), (200_000, True)):
        (x,) = m.setup(n)
        try:
            adlab.engine.programs.memory.check_work(2 * n * n, 2 * n * n * 8.0, "a batch")
        except adlab.SizeError as exc:
            assert refused and "in chunks" in str(exc)
        else:
            assert not refused


def test_a_result_too_large_is_still_refused_clearly(monkeypatch):
    """The Jacobian itself (n x n) must fit: chunking the batch cannot help that."""
    monkeypatch.setattr(adlab.engine.programs.memory, "available_bytes", lambda: 1 << 30)
    m = adlab.Model.from_source(LSE.replace("return m + np.log", "return x * np.log"), "wide")
    (x,) = m.setup(20_000)  # a 20,000 x 20,000 Jacobian: 3.2 GB
    with pytest.raises(adlab.SizeError, match=r"the derivative \(\(20000,\) x \(20000,\)\)"):
        adlab.derivative(m, x, mode="forward")


# ------------------------------------------------- complex step, real-part comparisons
LOGADDEXP = LSE.replace(
    "m = np.max(x)\n    return m + np.log(np.sum(np.exp(x - m)))",
    "return np.sum(np.logaddexp(x, 2 * np.flip(x)))",
)


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize("x", [[0.3, 0.9, 0.1, 0.5], [0.3, 0.9, 0.9, 0.1]], ids=["unique", "tied"])
def test_log_sum_exp_is_exact_under_complex_step(backend, x):
    """The max shift compares real parts and carries the imaginary part: exact, whether the
    maximum is unique or tied; np.logaddexp likewise."""
    available(backend)
    x = np.asarray(x)
    for text in (LSE, LOGADDEXP):
        m = adlab.Model.from_source(text, "lse")
        got = adlab.derivative(m, x, mode="complex-step", backend=backend)
        want = adlab.derivative(m, x, mode="reverse")
        assert np.max(np.abs(got - want) / np.abs(want)) <= 4e-16
    assert (
        np.max(
            np.abs(
                adlab.derivative(adlab.Model.from_source(LSE), x, mode="complex-step") - _softmax(x)
            )
        )
        <= 1e-16
    )


@pytest.mark.parametrize("expr", ["np.abs(y)", "np.maximum(y, 0.1)", "np.minimum(y, 0.1)",
                                  "np.where(y > 0.1, y, 0.0)", "np.max(y) * y", "np.sort(y)",
                                  "np.clip(y, -0.2, 0.5)", "np.sign(y) * y"])  # fmt: skip
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_comparisons_follow_the_real_part(expr, backend):
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
        f"def f(x):\n    y = np.sin(x)\n    z = {expr}\n    return np.sum(z * y**2)\n"
    )
    (x,) = m.setup(6)
    got = adlab.derivative(m, x, mode="complex-step", backend=backend)
    assert error(got, adlab.derivative(m, x, mode="reverse")) <= 1e-15


@pytest.mark.parametrize(("expr", "words"), [
    ("np.real(y)", "`np.real` is applied"), ("np.conj(y)", "`np.conj` is applied"),
    ("np.linalg.norm(y) * y", "`np.linalg.norm` (it uses `"),
    ("np.abs(np.exp(1j * y))", "computes with complex numbers of its own"),
])  # fmt: skip
def test_what_is_truly_not_analytic_is_still_refused(expr, words):
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
        f"def f(x):\n    y = np.sin(x)\n    z = {expr}\n    return np.sum(z * y)\n"
    )
    (x,) = m.setup(4)
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, x, mode="complex-step")
    assert words in str(info.value) and info.value.lineno == 7
    # outside complex step np.abs of a complex number is still its modulus
    assert adlab.derivative(m, x, mode="reverse").shape == (4,)
