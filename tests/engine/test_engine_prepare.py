"""``prepare``: reusable, costed, per-call precision; and the model's options.

Internals: one test lowers the JAX call's size limit for arguments held in the program (the
JAX backend's call.HOLD_MAX_BYTES) to see a large argument passed instead of held.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _engine_hand import (
    FINITE_DIFFERENCES,
    METHODS,
    error,
    g9_graphics,
    gaussian_residual_d,
    gaussian_residual_x,
    mlp,
    normal_logpdf,
    tolerance,
    wide_moments,
)

import adlab

G9 = adlab.load_model("g9_graphics")
WIDE = adlab.load_model("wide_moments")
NORMAL = adlab.load_model("normal_logpdf")
GAUSS = adlab.load_model("gaussian_residual")


# ----------------------------------------------------------- reuse at new inputs
@pytest.mark.parametrize(("backend", "mode"), [("jax", "reverse"), ("torch", "reverse"),
                                             ("tensorflow", "reverse"), ("autograd", "reverse"),
                                             ("numpy", "numeric")])  # fmt: skip
def test_an_x_of_another_dtype_is_computed_in_the_prepared_precision(backend, mode):
    """NumPy, autograd and TensorFlow take a NumPy array as it is: a float64 x given to a
    float32 program computed in float64 while the record said float32 (and the other way
    round); it is converted to the program's precision first, as at prepare time."""
    args = NORMAL.setup(6, seed=0)
    x = np.asarray(args[0], dtype=np.float64) + 0.25
    for precision, other in (("float32", np.float64), ("float64", np.float32)):
        p = adlab.prepare(NORMAL, *args, mode=mode, backend=backend, precision=precision)
        given = x.astype(other)
        want = np.asarray(p(given.astype(precision)))
        for got in (p(given), p.with_error(given)[0], p(given.tolist())):
            assert np.asarray(got).dtype == precision
            np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_prepared_derivative_is_reusable_at_new_inputs(mode, scheme):
    p = adlab.prepare(G9, *G9.setup(10, seed=0), mode=mode, scheme=scheme)
    tol = tolerance(mode, scheme, "float64")
    for seed in (1, 2):
        args = G9.setup(10, seed=seed)
        assert error(np.asarray(p(*args)), g9_graphics(*args)) <= tol


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_prepared_jacobian_is_reusable_at_new_inputs(mode, precision):
    dtype = np.dtype(precision)
    p = adlab.prepare(WIDE, *WIDE.setup(10, seed=0), mode=mode, precision=precision)
    (x,) = WIDE.setup(10, seed=3)
    got = np.asarray(p(x.astype(dtype)))
    assert got.dtype == dtype and got.shape == (3, 10)
    assert error(got, wide_moments(x.astype(dtype))) <= tolerance(mode, "central", precision)


# ------------------------------------------------------------- compile time
@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_compile_time_and_cost_are_reported_for_jit_only(mode, scheme):
    args = NORMAL.setup(10)
    jitted = adlab.prepare(NORMAL, *args, mode=mode, scheme=scheme)
    assert jitted.jit and jitted.compile_s > 0
    cost = jitted.cost()
    assert {"flops", "transcendentals", "bytes_accessed", "temp_bytes"} <= set(cost)
    assert np.isfinite(cost["flops"]) and cost["flops"] > 0
    assert cost["bytes_accessed"] > 0

    eager = adlab.prepare(NORMAL, *args, mode=mode, scheme=scheme, jit=False)
    assert not eager.jit and eager.compile_s == 0 and eager.cost() is None
    tol = tolerance(mode, scheme, "float64")
    got = np.asarray(eager(*args))
    assert error(got, normal_logpdf(*args)) <= tol
    assert error(got, np.asarray(jitted(*args))) <= tol


def test_xla_flops_grow_as_theory_says():
    """Reverse mode: one pass, flops ~ n. Forward mode: n passes, flops ~ n^2."""
    flops = {
        (mode, n): adlab.prepare(NORMAL, *NORMAL.setup(n), mode=mode).cost()["flops"]
        for mode in ("forward", "reverse")
        for n in (10, 100)
    }
    assert 5 <= flops["reverse", 100] / flops["reverse", 10] <= 20
    assert flops["forward", 100] / flops["forward", 10] >= 50


# ----------------------------------------------------------------- f_evals
def f_evals_theory(mode: str, scheme: str, n: int, m: int | None) -> int:
    """Evaluations of f (AD: passes) per derivative, n inputs, m outputs (None: scalar)."""
    if mode == "forward":
        return n
    if mode == "reverse":
        return 1 if m is None else m
    if mode == "complex-step":
        return n
    return {"forward": n + 1, "central": 2 * n, "richardson": 4 * n}[scheme]


@pytest.mark.parametrize(
    ("model", "n_in", "m_out"),
    [(NORMAL, 10, None), (WIDE, 10, 3), (GAUSS, 1, 10)],  # scalar, wide, tall (x scalar)
    ids=["scalar", "wide", "tall"],
)
@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
def test_f_evals_equal_theory(model, n_in, m_out, mode, scheme):
    # jit=False: the count is the mode's, not the compiler's; no need to compile
    p = adlab.prepare(model, *model.setup(10), mode=mode, scheme=scheme, jit=False)
    assert p.f_evals == f_evals_theory(mode, scheme, n_in, m_out)


@pytest.mark.parametrize(("mode", "scheme"), FINITE_DIFFERENCES, ids=lambda v: v)
def test_f_evals_is_what_actually_runs_on_numpy(mode, scheme):
    """Count real calls of f on the NumPy backend (one per perturbed point)."""
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(np.sin(x) * x)

    m = adlab.Model.from_function(f, lambda n, rng: (rng.normal(size=n),), name="counted")
    (x,) = m.setup(6)
    if mode == "complex-step":  # a NumPy-only f cannot be checked for analyticity
        with pytest.warns(adlab.UntrustedWarning, match="no JAX twin"):
            p = adlab.prepare(m, x, mode=mode, scheme=scheme, backend="numpy")
        assert not p.trusted and "analyticity was not checked" in p.note
    else:
        p = adlab.prepare(m, x, mode=mode, scheme=scheme, backend="numpy")
    calls.clear()
    got = p(x)
    assert len(calls) == p.f_evals == f_evals_theory(mode, scheme, 6, None)
    assert error(got, np.cos(x) * x + np.sin(x)) <= tolerance(mode, scheme, "float64")


# -------------------------------------------------------------- Richardson
SMOOTH = """
def setup(n, rng):
    return (rng.uniform(-1.0, 1.0, n),)


def f(x):
    return np.sum(np.sin(2 * x) * np.exp(x))
"""


def smooth_derivatives(x):
    """f = sin(2x) e^x per component:
    f' = e^x (sin 2x + 2 cos 2x),  f''' = -e^x (11 sin 2x + 2 cos 2x)."""
    e, s, c = np.exp(x), np.sin(2 * x), np.cos(2 * x)
    return e * (s + 2 * c), -e * (11 * s + 2 * c)


def test_richardson_error_estimate_has_the_right_order():
    """The estimate |R - D(h/2)| is D(h/2)'s own error, (h/2)^2 |f'''| / 6 to
    leading order; and the extrapolated value is better than that."""
    m = adlab.Model.from_source(SMOOTH, "smooth")
    (x,) = m.setup(20)
    d1, d3 = smooth_derivatives(x)
    value, info = adlab.derivative(m, x, mode="numeric", scheme="richardson", full_output=True)
    estimate = np.asarray(info.error_estimate)
    assert estimate.shape == x.shape and info.f_evals == 4 * x.size
    half = np.finfo(np.float64).eps ** (1 / 5) * np.maximum(np.abs(x), 1.0) / 2
    np.testing.assert_allclose(estimate, half**2 * np.abs(d3) / 6, rtol=0.05)
    assert np.all(np.abs(value - d1) <= estimate)  # conservative
    # ... and it is D(h/2)'s actual error: run the central difference at h/2
    central = adlab.derivative(m, x, mode="numeric", scheme="central", step=half)
    np.testing.assert_allclose(np.abs(central - d1), estimate, rtol=0.05)

    p = adlab.prepare(m, x, mode="numeric", scheme="richardson")
    again, again_estimate = p.with_error(x)
    np.testing.assert_allclose(np.asarray(again), value, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(again_estimate), estimate, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(p(x)), value, rtol=1e-15)  # p() drops the estimate


@pytest.mark.parametrize(("mode", "scheme"), [("reverse", "central"), ("numeric", "central")])
def test_no_error_estimate_outside_richardson(mode, scheme):
    m = adlab.Model.from_source(SMOOTH, "smooth")
    (x,) = m.setup(5)
    _, info = adlab.derivative(m, x, mode=mode, scheme=scheme, full_output=True)
    assert info.error_estimate is None
    assert adlab.prepare(m, x, mode=mode, scheme=scheme).with_error(x)[1] is None


def test_richardson_estimate_on_the_numpy_backend_matches_jax():
    m = adlab.Model.from_source(SMOOTH, "smooth")
    (x,) = m.setup(8)
    _, on_jax = adlab.derivative(m, x, mode="numeric", scheme="richardson", full_output=True)
    _, on_np = adlab.derivative(
        m, x, mode="numeric", scheme="richardson", backend="numpy", full_output=True
    )
    np.testing.assert_allclose(on_np.error_estimate, on_jax.error_estimate, rtol=1e-3)


# ------------------------------------------------------- per-call precision
def x64_flag() -> bool:
    return bool(jax.config.jax_enable_x64)


def test_precision_is_per_call_and_leaves_jax_global_flag_alone():
    before = x64_flag()
    theta, data = NORMAL.setup(10)
    p32 = adlab.prepare(NORMAL, theta, data, mode="reverse", precision="float32")
    p64 = adlab.prepare(NORMAL, theta, data, mode="reverse", precision="float64")
    theta32 = theta.astype(np.float32)
    data32 = {"y": data["y"].astype(np.float32), "s": np.float32(data["s"])}
    want32 = (data32["y"] - theta32) / data32["s"] ** 2  # computed in float32 by NumPy
    for precision in ["float32", "float64", "float32", "float32", "float64", "float32"]:
        got = adlab.derivative(NORMAL, theta, data, precision=precision)
        assert got.dtype == np.dtype(precision)
        assert np.asarray(p32(theta32, data32)).dtype == np.float32
        assert np.asarray(p64(theta, data)).dtype == np.float64
        assert x64_flag() == before
    # float64 really is float64 (not float32 widened), float32 really float32
    np.testing.assert_allclose(np.asarray(p64(theta, data)), normal_logpdf(theta, data), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(p32(theta32, data32)), want32, rtol=2e-7)
    assert np.max(np.abs(np.asarray(p32(theta32, data32)) - normal_logpdf(theta, data))) > 1e-12


@pytest.mark.parametrize("outer", [True, False])
def test_precision_ignores_the_callers_x64_state(outer):
    theta, data = NORMAL.setup(4)
    with jax.enable_x64(outer):
        for precision in ("float32", "float64"):
            got = adlab.derivative(NORMAL, theta, data, mode="forward", precision=precision)
            assert got.dtype == np.dtype(precision)
            assert x64_flag() == outer
        p = adlab.prepare(NORMAL, theta, data, precision="float32")
        assert x64_flag() == outer
    theta32 = theta.astype(np.float32)
    assert np.asarray(p(theta32, {"y": data["y"].astype(np.float32), "s": 1.0})).dtype == np.float32


def test_results_are_numpy_arrays_so_float64_survives_outside_adlab():
    theta, data = NORMAL.setup(3)
    got = adlab.derivative(NORMAL, theta, data)
    assert type(got) is np.ndarray and got.dtype == np.float64


# --------------------------------------------------------- Model.from_function
def test_from_function_with_jax_numpy_callables():
    def f(x, a):
        return jnp.sum(jnp.sin(a * x) + x**3)

    def setup(n, rng):
        return rng.normal(size=n), 1.5

    m = adlab.Model.from_function(f, setup)
    assert m.name == "f" and m.source is None
    x, a = m.setup(5)
    want = a * np.cos(a * x) + 3 * x**2
    for mode, scheme in METHODS:
        got = adlab.derivative(m, x, a, mode=mode, scheme=scheme)
        assert error(got, want) <= tolerance(mode, scheme, "float64"), (mode, scheme)
    # wrt the scalar a: d/da = sum x cos(a x)
    got = adlab.derivative(m, x, a, wrt=1)
    assert got.shape == () and error(got, np.sum(x * np.cos(a * x))) <= 1e-12
    # a bare callable is wrapped on the fly
    assert error(adlab.derivative(f, x, a), want) <= 1e-12


def test_from_function_with_a_numpy_twin_runs_on_the_numpy_backend():
    m = adlab.Model.from_function(
        lambda x: jnp.sum(jnp.exp(x)), f_numpy=lambda x: np.sum(np.exp(x)), name="expsum"
    )
    x = np.linspace(-1, 1, 5)
    for mode, scheme in [("complex-step", "central"), ("numeric", "central")]:
        got = adlab.derivative(m, x, mode=mode, scheme=scheme, backend="numpy")
        assert error(got, np.exp(x)) <= tolerance(mode, scheme, "float64")
    with pytest.raises(ValueError, match="has no setup"):
        m.setup(3)


def test_complex_step_checks_a_numpy_twin_through_its_jax_version():
    m = adlab.Model.from_function(
        lambda x: jnp.sum(jnp.abs(x)), f_numpy=lambda x: np.sum(np.abs(x)), name="abssum"
    )
    with pytest.raises(adlab.ModelError, match="`abs`"):
        adlab.derivative(m, np.ones(3), mode="complex-step", backend="numpy")


def test_from_function_error_names_the_callers_line():
    def f(x):
        return jnp.sum(x + jnp.ones(2))  # the failing line

    with pytest.raises(adlab.ModelError, match="mode 'reverse', n=3") as info:
        adlab.derivative(adlab.Model.from_function(f), np.ones(3))
    assert info.value.lineno == f.__code__.co_firstlineno + 1
    assert "the failing line" in str(info.value)


# ------------------------------------------------------- settings and wrt
def test_settings_override_changes_the_model():
    m = adlab.load_model("mlp_batched", N1=8, N2=3)
    assert m.settings == {"N1": 8, "N2": 3}
    params, xs = m.setup(5)
    assert params.shape == (8 + 8 + 8 * 3 + 3 + 3 + 1,)
    got = adlab.derivative(m, params, xs)
    assert error(got, mlp(params, xs, 8, 3)) <= 1e-12
    # the catalog default is untouched, and with_settings derives a new model
    assert adlab.load_model("mlp_batched").settings == {"N1": 1000, "N2": 20}
    wider = m.with_settings(N1=4)
    assert wider.settings == {"N1": 4, "N2": 3}
    assert wider.setup(2)[0].shape == (4 + 4 + 4 * 3 + 3 + 3 + 1,)


def test_settings_of_a_model_from_source():
    src = (
        "K = 2.0\n\ndef setup(n, rng):\n    return (np.ones(n),)\n\n"
        "def f(x):\n    return np.sum(K * x**2)\n"
    )
    x = np.array([1.0, -2.0, 3.0])
    for k, m in [(2.0, adlab.Model.from_source(src)), (5.0, adlab.Model.from_source(src, K=5.0))]:
        np.testing.assert_allclose(adlab.derivative(m, x), 2 * k * x, rtol=1e-15)


def test_source_with_settings_is_the_same_model():
    m = adlab.load_model("g9_graphics").with_settings(BEND=0.25)
    text = m.source_with_settings()
    # written where the model sets it, so constants computed from it follow
    assert "BEND = 0.25  # weight of the bending penalty" in text.splitlines()
    again = adlab.Model.from_source(text, m.name)
    assert again.settings == m.settings
    args = m.setup(6)
    np.testing.assert_array_equal(adlab.derivative(again, *args), adlab.derivative(m, *args))
    # unchanged settings leave the source alone; values with no literal still round-trip
    assert G9.source_with_settings() == G9.source
    odd = G9.with_settings(BEND=float("inf")).source_with_settings()
    assert adlab.Model.from_source(odd).settings["BEND"] == float("inf")
    with pytest.raises(ValueError, match="cannot be written into model source"):
        G9.with_settings(BEND=[1.0]).source_with_settings()


def test_module_level_wrt_is_the_default_and_can_be_overridden():
    assert GAUSS.wrt == 1
    d, x = GAUSS.setup(10)
    tall = adlab.derivative(GAUSS, d, x)  # wrt = 1 from the model source
    assert tall.shape == (10,)
    assert error(tall, gaussian_residual_x(d, x)) <= 1e-12
    wrt_d = adlab.derivative(GAUSS, d, x, wrt=0)
    assert wrt_d.shape == (10, 10)
    assert error(wrt_d, gaussian_residual_d(d, x)) <= 1e-12
    assert adlab.prepare(GAUSS, d, x, mode="forward").wrt == 1


def test_module_level_wrt_tuple():
    src = (
        "wrt = (0, 1)\n\ndef setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=n)\n\n"
        "def f(a, b):\n    return np.sum(a * np.sin(b))\n"
    )
    m = adlab.Model.from_source(src)
    a, b = m.setup(4)
    da, db = adlab.derivative(m, a, b, mode="forward")
    np.testing.assert_allclose(da, np.sin(b), rtol=1e-14)
    np.testing.assert_allclose(db, a * np.cos(b), rtol=1e-14)


# ----------------------------------------------------------------- the call path
def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


@pytest.mark.parametrize(("mode", "scheme"), METHODS, ids=lambda v: v)
@pytest.mark.parametrize("model", [NORMAL, GAUSS], ids=["data-bound", "wrt=1"])
def test_p_of_x_is_p_with_all_arguments_is_derivative(model, mode, scheme):
    args = model.setup(6, seed=4)
    p = adlab.prepare(model, *args, mode=mode, scheme=scheme)
    want = adlab.derivative(model, *args, mode=mode, scheme=scheme)
    np.testing.assert_array_equal(np.asarray(p(p.inputs[0])), want)
    np.testing.assert_array_equal(np.asarray(p(*p.inputs)), want)  # the bound ones: no rebinding
    # NumPy arguments are converted and bound: the program that takes every argument
    np.testing.assert_allclose(np.asarray(p(*args)), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(p(p.inputs[0])), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("jit", [True, False])
def test_new_arguments_are_bound_for_later_calls(jit):
    theta, data = NORMAL.setup(5, seed=1)
    p = adlab.prepare(NORMAL, theta, data, jit=jit)
    other = {"y": data["y"] + 1.0, "s": 2.0}
    got = np.asarray(p(theta, other))
    np.testing.assert_allclose(got, normal_logpdf(theta, other), rtol=1e-14)
    assert error(got, normal_logpdf(theta, data)) > 0.1  # it did change
    # later calls of p(x) use the new data, converted like the first
    np.testing.assert_allclose(np.asarray(p(theta)), normal_logpdf(theta, other), rtol=1e-14)
    assert float(p.inputs[1]["s"]) == 2.0 and p.inputs[1]["s"].dtype == np.float64


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_inputs_are_held_by_the_backend_in_the_precision(backend, precision):
    theta, data = NORMAL.setup(4)  # data["s"] is a Python float
    p = adlab.prepare(NORMAL, theta, data, mode="numeric", precision=precision, backend=backend)
    leaves = _leaves(p.inputs)
    assert len(leaves) == 3
    for leaf in leaves:
        assert leaf.dtype == np.dtype(precision)
        assert isinstance(leaf, jax.Array) == (backend == "jax")
    if backend == "jax":
        assert all(leaf.is_fully_addressable and leaf.devices() for leaf in leaves)


def test_float64_stays_float64_outside_any_x64_context():
    theta, data = NORMAL.setup(10)
    p = adlab.prepare(NORMAL, theta, data, mode="reverse", precision="float64")
    x = p.inputs[0]
    before = x64_flag()
    with jax.enable_x64(False):  # as a user's script runs, JAX at its default float32
        got = p(x)
        assert not x64_flag()
    assert got.dtype == np.float64 and x64_flag() == before
    # float64 digits, not float32 ones widened
    np.testing.assert_allclose(np.asarray(got), normal_logpdf(theta, data), rtol=1e-15)


def test_p_of_x_takes_numpy_arrays_and_new_shapes_too():
    """The compiled program takes only its own types; anything else is traced anew."""
    (x,) = WIDE.setup(6)
    p = adlab.prepare(WIDE, x, mode="forward")
    with jax.enable_x64(False):
        got = p(x)  # NumPy float64 outside x64
    assert got.dtype == np.float64 and error(got, wide_moments(x)) <= 1e-14
    (y,) = WIDE.setup(9, seed=2)
    got = p(y)
    assert got.shape == (3, 9) and error(got, wide_moments(y)) <= 1e-14
    assert error(p(p.inputs[0]), wide_moments(x)) <= 1e-14


def test_bound_data_is_not_folded_into_the_program():
    """data["s"] = 1.0 held as a constant would let XLA drop the division by it;
    the program run must count the flops of the one that takes every argument."""
    theta, data = NORMAL.setup(10)
    p = adlab.prepare(NORMAL, theta, data)
    with jax.enable_x64(True):
        general = jax.jit(jax.grad(NORMAL.function("jax"))).lower(*p.inputs).compile()
    assert p.cost()["flops"] == general.cost_analysis()["flops"]
    # and its inputs are every argument, those held in it as well
    assert p.cost()["argument_bytes"] == general.memory_analysis().argument_size_in_bytes


def test_large_bound_arguments_are_passed_not_held(monkeypatch):
    from adlab.engine.backends.jax import call as _jax_call

    monkeypatch.setattr(_jax_call, "HOLD_MAX_BYTES", 0)
    theta, data = NORMAL.setup(6)
    p = adlab.prepare(NORMAL, theta, data)
    assert p._call.args == (p.inputs[1],)  # passed on each call, before x
    np.testing.assert_allclose(np.asarray(p(p.inputs[0])), normal_logpdf(theta, data), rtol=1e-15)


CALL_ERROR = """
def setup(n, rng):
    return rng.normal(size=n), rng.normal(size=n)


def f(x, w):
    return np.sum(x * w)  # the failing line
"""


@pytest.mark.parametrize("jit", [True, False])
def test_a_model_error_at_call_time_names_the_line(jit):
    m = adlab.Model.from_source(CALL_ERROR, "call_error")
    p = adlab.prepare(m, *m.setup(3), jit=jit)
    with pytest.raises(adlab.ModelError) as info:
        p(np.ones(4))  # x no longer fits the bound w
    assert info.value.lineno == 7 and "the failing line" in str(info.value)
    with pytest.raises(adlab.ModelError) as info:
        p(np.ones(3), np.ones(5))  # nor do new arguments
    assert info.value.lineno == 7
