"""Every catalog model on every framework, in every mode it can do, against the reference.

The oracle is ``adlab.reference``: float64 reverse mode under JAX, checked
against forward mode (itself checked against 50-digit mpmath values in
``test_accuracy_reference.py``). The same model source runs under PyTorch,
TensorFlow, autograd and NumPy with ``np`` bound to each framework's
namespace, so a wrong alias, a lost dtype or a mode wired to the wrong
primitive shows here as a derivative off by more than the method's tolerance
(``_engine_hand.tolerance``, as for JAX). Sizes are small: each framework's
eager calls cost tens of microseconds to milliseconds apiece.

Internals: PyTorch's counter says why it counted nothing (torch.flops.NOT_COUNTED): the
record carries that text, and the test compares it to its one home.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from _engine_hand import METHODS, error, rounded, tolerance

import adlab
from adlab.engine.backends import get_backend

#: the frameworks beside JAX, whose derivatives are checked here
FRAMEWORKS = ("torch", "tensorflow", "autograd")
#: smaller nets than the catalog's: TensorFlow's eager forward mode pushes one
#: tangent per parameter (4 + 4 + 8 + 2 + 2 + 1 = 21 here)
SETTINGS = {"mlp_batched": {"N1": 4, "N2": 2}, "mlp_per_sample": {"N1": 4, "N2": 2},
            "llsq": {"M": 4}, "gmm": {"K": 2}, "ode": {"S": 2}, "ba": {"CAMERAS": 2},
            "lstm": {"LAYERS": 1},
            # derivatives inside: few steps, since each step nests one (eagerly, per op)
            "particle": {"DT": 1.0, "STEPS": 8}, "saddle": {"ITERS": 60}}  # fmt: skip
N = 3


@functools.cache
def model(name: str) -> adlab.Model:
    return adlab.load_model(name, **SETTINGS.get(name, {}))


@functools.cache
def jax_refuses(name: str, mode: str) -> str | None:
    """JAX's refusal of this mode on this model (complex step of a non-analytic f), if any:
    the check reads the JAX twin's program, so every framework must refuse alike."""
    m = model(name)
    try:
        adlab.derivative(m, *m.setup(N), mode=mode)
    except adlab.ModelError as exc:
        return str(exc)
    return None


@functools.cache
def want(name: str, precision: str):
    """The reference at the model's arguments as ``precision`` holds them."""
    return adlab.reference(model(name), *rounded(model(name).setup(N), precision)).value


#: models TensorFlow runs op by op in Python, eagerly (a nested derivative per step, or
#: one tangent per parameter): 1-30 s a case; the full suite runs them, -m "not slow" not
SLOW_ON_TENSORFLOW = {"saddle", "particle", "mlp_per_sample", "ht", "ba", "lstm"}


def cases(backends, methods):
    return [
        pytest.param(
            b,
            name,
            mode,
            scheme,
            id=f"{b}-{name}-{mode}[{scheme}]",
            marks=[pytest.mark.slow] if b == "tensorflow" and name in SLOW_ON_TENSORFLOW else [],
        )  # fmt: skip
        for b in backends
        for name in adlab.list_models()
        for mode, scheme in methods
    ]


FINITE = [m for m in METHODS if m[0] in ("numeric", "complex-step")]


@pytest.mark.parametrize(
    ("backend", "name", "mode", "scheme"), cases(FRAMEWORKS, METHODS) + cases(["numpy"], FINITE)
)
def test_every_catalog_model_in_every_mode(backend, name, mode, scheme):
    m = model(name)
    args = m.setup(N)
    refused = jax_refuses(name, mode)
    if mode == "complex-step" and m.uses_grad and backend in ("torch", "tensorflow"):
        # particle and saddle compare values (a step's sign, a stopping test): JAX, NumPy
        # and autograd compare the real parts, PyTorch and TensorFlow have no complex
        # comparison and refuse at the user's line (right or refused, never wrong)
        with pytest.raises(adlab.ModelError, match=r"^line \d+: .* on complex numbers"):
            adlab.derivative(m, *args, mode=mode, scheme=scheme, backend=backend)
        return
    if refused:
        with pytest.raises(adlab.ModelError) as info:
            adlab.derivative(m, *args, mode=mode, scheme=scheme, backend=backend)
        assert str(info.value) == refused
        return
    if backend == "numpy" and m.uses_grad:
        # the model's own grad is central differences on NumPy: the outer differences of
        # them are flagged untrusted where they stray past AD's tolerance, and stay close
        # (forward differences of them, one-sided, least: 1.4e-2 seen on particle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", adlab.UntrustedWarning)
            got = adlab.derivative(m, *args, mode=mode, scheme=scheme, backend=backend)
        assert error(got, want(name, "float64")) <= (5e-2 if scheme == "forward" else 1e-3)
        return
    got = adlab.derivative(m, *args, mode=mode, scheme=scheme, backend=backend)
    ref = want(name, "float64")
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert got.shape == ref.shape  # out.shape + x.shape, tall and wide alike
    assert error(got, ref) <= tolerance(mode, scheme, "float64")


FLOAT32_MODELS = ("normal_logpdf", "gaussian_residual", "mlp_batched")


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize("name", FLOAT32_MODELS)
@pytest.mark.parametrize(("mode", "scheme"), [("reverse", "central"), ("forward", "central"),
                                              ("numeric", "central")])  # fmt: skip
def test_float32(backend, name, mode, scheme):
    """In float32 the arguments are float32 on every framework; the derivative is as
    accurate as float32 allows, against the reference at the rounded arguments."""
    m = model(name)
    p = adlab.prepare(m, *m.setup(N), mode=mode, scheme=scheme, backend=backend,
                      precision="float32")  # fmt: skip
    assert {str(getattr(a, "dtype", "")) for a in p.inputs[:1]} <= {
        "float32",
        "torch.float32",
        "<dtype: 'float32'>",
    }
    got = p._impl.to_numpy(p(*p.inputs))
    assert error(got, want(name, "float32")) <= tolerance(mode, scheme, "float32")


def test_torch_arrays_follow_the_precision():
    """PyTorch makes float32 arrays unless told: np.linspace follows the precision; np.pi
    is a Python float, as NumPy's (it meets arrays weakly typed, at their precision)."""
    ns = get_backend("torch").namespace("float64")["np"]
    assert str(ns.linspace(0.0, 1.0, 3).dtype) == "torch.float64"
    assert type(ns.pi) is float and ns.pi == np.pi
    assert str(get_backend("torch").namespace("float32")["np"].zeros(2).dtype) == "torch.float32"
    # NumPy's meaning, where PyTorch's function of that name differs
    x = ns.asarray([1.0, 2.0, 4.0], dtype=ns.float64)
    assert float(ns.std(x)) == pytest.approx(np.std([1.0, 2.0, 4.0]))  # divides by n
    assert ns.cumsum(ns.ones((2, 2), dtype=ns.float64)).shape == (4,)  # flattens
    assert float(ns.max(x, axis=0)) == 4.0  # a value, not (values, indices)


NUMPY_SYNTAX = """
def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=(n, n))


def f(x, A):
    t = np.linspace(0.0, 1.0, x.shape[0])
    y = np.tanh((A.T @ A) @ x) + np.dot(x, t) * np.pi
    z = np.where(y > 0, y, 0.5 * y) + np.maximum(x, 0.0) + np.minimum(x, 1.0)
    w = np.reshape(z, (-1, 1)).reshape(-1)
    m = np.mean(w) + np.std(w) + np.max(w) + np.var(x) + np.prod(x[:2])
    s = np.cumsum(x)[-1] + np.exp(np.log(2 * np.pi)) + np.sqrt(np.sum(x**2) + 1.0)
    c = np.sum(np.concatenate([x, x])) + np.sum(np.sum(np.stack([x, x], axis=0), axis=0))
    o = np.sum(np.outer(x, x)) + np.sum(np.abs(x)) + np.sum(np.clip(x, -1.0, 1.0))
    e = np.einsum("i,ij,j->", x, A, x) + np.trace(A) * np.sum(np.sin(x) * np.cos(x))
    return np.sum(w) + m + s + c + o + e + np.linalg.norm(x) + np.sum(np.power(x, 2))
"""


@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_numpy_syntax_runs_on_every_framework(backend, mode):
    """One model using the NumPy a model is written in: each name bound to the framework's
    own function (or an alias with NumPy's meaning: np.std divides by n, np.max reduces)."""
    m = adlab.Model.from_source(NUMPY_SYNTAX, "syntax")
    args = m.setup(4)
    got = adlab.derivative(m, *args, mode=mode, backend=backend)
    assert error(got, adlab.reference(m, *args).value) <= 1e-12


# ---------------------------------------------------------------- wrt, shapes
@pytest.mark.parametrize("backend", FRAMEWORKS)
@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_wrt_tuple_returns_a_tuple_like_argnums(backend, mode, scheme):
    m = model("gaussian_residual")
    d, x = m.setup(N)
    ref = adlab.reference(m, d, x, wrt=(0, 1)).value
    got = adlab.derivative(m, d, x, mode=mode, scheme=scheme, wrt=(0, 1), backend=backend)
    assert isinstance(got, tuple) and len(got) == 2
    assert got[0].shape == (N, N) and got[1].shape == (N,)  # wide-ish and tall
    for g, r in zip(got, ref, strict=True):
        assert error(g, r) <= tolerance(mode, scheme, "float64")


@pytest.mark.parametrize("backend", FRAMEWORKS)
def test_wrt_another_argument(backend):
    m = model("logistic_regression")
    w, X, y = m.setup(N)
    got = adlab.derivative(m, w, X, y, wrt=1, backend=backend)  # d f / d X: (m, n)
    ref = adlab.reference(m, w, X, y, wrt=1).value
    assert got.shape == X.shape and error(got, ref) <= tolerance("reverse", "central", "float64")


# ------------------------------------------------------------------ compiled
@pytest.mark.parametrize("backend", ["torch", "tensorflow"])
def test_compiled_with_the_frameworks_compiler(backend):
    """jit=True is torch.compile / tf.function(jit_compile=True); the first call is the
    compile, timed apart. One small model each: these compile slowly."""
    m = model("normal_logpdf")
    args = m.setup(N)
    p = adlab.prepare(m, *args, mode="reverse", backend=backend, jit=True)
    assert p.jit and p.compile_s > 0
    # no XLA analysis outside JAX; PyTorch counts matrix products only, and there are
    # none here: not counted (None, and the counter says why), never a count of zero
    from adlab.engine.backends.torch.flops import NOT_COUNTED  # imports torch: here only

    assert p.cost() == ({"flops": None, "counter": NOT_COUNTED} if backend == "torch" else None)
    ref = want("normal_logpdf", "float64")
    assert error(p._impl.to_numpy(p(*p.inputs)), ref) <= 1e-12
    assert error(adlab.derivative(m, *args, backend=backend, jit=True), ref) <= 1e-12


@pytest.mark.parametrize("backend", ["torch", "tensorflow", "autograd", "numpy"])
def test_each_framework_runs_eagerly_by_default(backend):
    p = adlab.prepare(model("normal_logpdf"), *model("normal_logpdf").setup(N),
                      mode="numeric", backend=backend)  # fmt: skip
    assert p.jit is False and p.compile_s == 0.0


def test_jit_without_a_compiler_is_refused():
    m = model("normal_logpdf")
    with pytest.raises(ValueError, match="backend='autograd' has no compiler"):
        adlab.prepare(m, *m.setup(N), backend="autograd", jit=True)
    with pytest.raises(ValueError, match="has no compiler"):
        adlab.bench(m, [2], ["reverse(autograd,jit)"])


def test_a_mode_a_framework_lacks_is_refused_naming_what_it_can_do():
    m = model("normal_logpdf")
    with pytest.raises(ValueError, match="needs reverse-mode AD") as info:
        adlab.derivative(m, *m.setup(N), mode="reverse", backend="numpy")
    assert "'numeric', 'complex-step' and 'primal'" in str(info.value)


# ------------------------------------------------------------------ the call
@pytest.mark.parametrize("backend", FRAMEWORKS)
def test_new_points_and_new_data(backend):
    """p(x) at a NumPy x (converted), and p(x, *args) binding new data, on every framework."""
    m = model("normal_logpdf")
    theta, data = m.setup(N)
    p = adlab.prepare(m, theta, data, backend=backend)
    x2 = theta + 1.0
    got = p._impl.to_numpy(p(x2))
    assert error(got, adlab.derivative(m, x2, data)) <= 1e-12
    data2 = {"y": data["y"] * 2, "s": 2.0}
    got = p._impl.to_numpy(p(x2, data2))
    assert error(got, adlab.derivative(m, x2, data2)) <= 1e-12


@pytest.mark.parametrize("backend", FRAMEWORKS)
def test_a_sweep_measures_each_framework_beside_its_own_floor(backend):
    records = list(adlab.bench("normal_logpdf", [2], [f"reverse({backend})"], repeats=2,
                               target_s=0.001, budget_s=5.0, warn=False))  # fmt: skip
    assert [r.label for r in records] == [f"primal({backend})", f"reverse({backend})"]
    for r in records:
        assert r.skipped is None and r.backend == backend and r.jit is False
        assert r.floor_s > 0 and r.f_evals == 1
        # PyTorch counts matrix products; normal_logpdf has none: not counted (None, and
        # the counter says why), not 0; the others have no counter
        counted = (r.flops, r.flops_counter and r.flops_counter.split(":")[0])
        assert counted == ((None, "torch FlopCounterMode") if backend == "torch" else (None, None))
        assert (backend == "torch") == ("not counted" in (r.flops_counter or ""))
        assert r.env["framework"] == backend and r.env["framework_version"]
    assert records[1].error <= 1e-12
