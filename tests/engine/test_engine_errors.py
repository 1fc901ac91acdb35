"""Every mistake a user can make gets a ModelError (or ValueError) naming
their line and what to do next; too-large derivatives are refused up front.

Internals: the memory check (programs.memory: available_bytes, patched to make a derivative
too large for this machine), which prepare runs and no public function exposes.
"""

from __future__ import annotations

import re
import resource

import jax
import numpy as np
import pytest

import adlab
import adlab.engine.programs.memory
from adlab._format import parse_bytes

HEAD = "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"  # lines 1-4
MODES = ["forward", "reverse", "numeric", "complex-step"]


def model(body: str, name: str = "user") -> adlab.Model:
    """A model whose f starts on line 5."""
    return adlab.Model.from_source(HEAD + body, name)


X = np.linspace(-1.0, 1.0, 7)


# ------------------------------------------------------------------- source
def test_syntax_error_names_the_users_line():
    with pytest.raises(adlab.ModelError, match="SyntaxError") as info:
        model("def f(x):\n    y = x +\n    return np.sum(y)\n")
    assert isinstance(info.value, ValueError)
    assert info.value.lineno == 6
    assert "y = x +" in str(info.value) and "line 6" in str(info.value)


@pytest.mark.parametrize(
    ("source", "missing"),
    [(HEAD, "f"), ("def f(x):\n    return np.sum(x)\n", "setup"), ("x = 1\n", "f")],
)
def test_missing_f_or_setup(source, missing):
    with pytest.raises(adlab.ModelError, match=f"defines no function `{missing}`") as info:
        adlab.Model.from_source(source)
    assert "def f(x, *data)" in str(info.value)  # says what to write


def test_error_at_the_models_top_level_names_the_line():
    with pytest.raises(adlab.ModelError, match="ZeroDivisionError") as info:
        adlab.Model.from_source("SCALE = 1 / 0\n" + HEAD + "def f(x):\n    return np.sum(x)\n")
    assert info.value.lineno == 1


def test_unknown_setting_is_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"no setting\(s\) \['N3'\].*'N1', 'N2'"):
        adlab.load_model("mlp_batched", N3=4)


def test_unknown_catalog_name():
    with pytest.raises(ValueError, match="no model named 'rosenbrok'.*rosenbrock"):
        adlab.load_model("rosenbrok")


# -------------------------------------------------------- runtime errors in f
def assert_names(err: adlab.ModelError, mode: str, n: int, lineno: int, text: str) -> None:
    message = str(err)
    assert err.lineno == lineno
    assert f"mode {mode!r}" in message, message
    assert f"n={n}" in message, message
    assert f"line {lineno}" in message and text in message, message


# forward/reverse on NumPy are refused before f runs: see test_ad_modes_need_jax
MODE_BACKENDS = [(mode, "jax") for mode in MODES]
MODE_BACKENDS += [("numeric", "numpy"), ("complex-step", "numpy")]


@pytest.mark.parametrize(("mode", "backend"), MODE_BACKENDS)
def test_name_error_in_f(mode, backend):
    m = model("def f(x):\n    z = 2 * x\n    return np.sum(y)\n")
    with pytest.raises(adlab.ModelError, match="NameError: name 'y' is not defined") as info:
        adlab.derivative(m, X, mode=mode, backend=backend)
    assert_names(info.value, mode, 7, 7, "return np.sum(y)")


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_shape_mismatch_in_f(mode, jit):
    m = model("def f(x):\n    z = x + np.ones(3)\n    return np.sum(z)\n")
    with pytest.raises(adlab.ModelError, match="shapes") as info:
        adlab.derivative(m, X, mode=mode, jit=jit)
    assert_names(info.value, mode, 7, 6, "z = x + np.ones(3)")


def test_shape_mismatch_under_numpy_backend():
    m = model("def f(x):\n    z = x + np.ones(3)\n    return np.sum(z)\n")
    with pytest.raises(adlab.ModelError, match="do not broadcast") as info:
        adlab.derivative(m, X, mode="numeric", backend="numpy")
    assert_names(info.value, "numeric", 7, 6, "z = x + np.ones(3)")


# the user's shapes, whatever the library's words: JAX's dot_general, NumPy's gufunc
LINE_UP = (
    "`X.T @ w`: the shapes (10, 200) and (10,) do not line up for @ "
    "(the last axis of the left, 200, must equal the only axis of the right, 10)"
)
REGRESSION = "def setup(n, rng):\n    return rng.normal(size=10), rng.normal(size=(200, 10))\n\n\n"
MODE_BACKENDS_SHAPES = [("reverse", "jax"), ("numeric", "jax"), ("numeric", "numpy")]


@pytest.mark.parametrize(("mode", "backend"), MODE_BACKENDS_SHAPES)
def test_matmul_shapes_are_said_in_the_users_terms(mode, backend):
    m = adlab.Model.from_source(
        REGRESSION + "def f(w, X):\n    r = X.T @ w\n    return np.sum(r)\n"
    )
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, *m.setup(3), mode=mode, backend=backend)
    assert info.value.lineno == 6
    assert LINE_UP in str(info.value), str(info.value)
    assert "dot_general" not in str(info.value) and "gufunc" not in str(info.value)


@pytest.mark.parametrize(("mode", "backend"), MODE_BACKENDS_SHAPES)
def test_dot_of_expressions_names_the_sizes_that_differ(mode, backend):
    """Operands that are not plain names: the sizes come from the library's message."""
    m = model("def f(x):\n    return np.sum(np.dot(np.ones((3, 4)), x))\n")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X, mode=mode, backend=backend)
    message = str(info.value)
    assert "`np.dot(np.ones((3, 4)), x)`: the shapes do not line up for np.dot" in message
    assert "the last axis of the left, 4, must equal the only axis of the right, 7" in message


@pytest.mark.parametrize(("mode", "backend"), MODE_BACKENDS_SHAPES)
def test_broadcasting_shapes_are_said_in_the_users_terms(mode, backend):
    m = model("def f(x):\n    z = x * np.ones(3)\n    return np.sum(z)\n")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X, mode=mode, backend=backend)
    assert "`x * np.ones(3)`: the shapes (7,) and (3,) do not broadcast for *" in str(info.value)


# ------------------------------------------------------- names and imports
@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("np.logaddexpp(x, 2 * x)", "np has no function 'logaddexpp'; did you mean 'logaddexp'?"),
        ("np.linalg.nrom(x)", "np.linalg has no function 'nrom'; did you mean 'norm'?"),
        ("np.zzyzx(x)", "np has no function 'zzyzx' ("),  # nothing close: no guess
    ],
)
def test_misspelled_np_function_is_named_as_the_user_wrote_it(call, says, backend):
    m = model(f"def f(x):\n    y = {call}\n    return np.sum(y)\n")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X, mode="numeric", backend=backend)
    assert says in str(info.value) and info.value.lineno == 6
    assert "jax.numpy" not in str(info.value) and "module" not in str(info.value)


def test_misspelled_name_of_the_models_own_suggests_the_right_one():
    m = model("def f(x):\n    total = np.sum(x)\n    return totl * 2\n")
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X)
    assert "name 'totl' is not defined; did you mean 'total'?" in str(info.value)
    assert info.value.lineno == 7


@pytest.mark.parametrize("imports", ["import numpy as np", "import jax.numpy as np",
                                     "from numpy import linalg, pi as np"])  # fmt: skip
def test_importing_np_is_refused_naming_the_import(imports):
    with pytest.raises(adlab.ModelError) as info:
        adlab.Model.from_source('"""doc"""\n' + imports + "\n" + HEAD
                                + "def f(x):\n    return np.sum(x)\n")  # fmt: skip
    assert info.value.lineno == 2 and imports in str(info.value)
    assert f"np is provided by adlab; remove `{imports}`" in str(info.value)


SETUP = "def setup(n, rng):\n    return rng.normal(size=n)\n"


@pytest.mark.parametrize(
    ("source", "lineno", "backend", "write"),
    [
        # issue 22.3: a PyTorch user's function, pasted as it is
        ("import torch\n" + SETUP + "def f(x):\n    return torch.sum(x ** 2)\n",
         1, "torch", "write np.sum(...) in place of torch.sum(...)"),
        ("import tensorflow as tf\n" + SETUP + "def f(x):\n    return tf.reduce_sum(x ** 2)\n",
         1, "tensorflow", "write np.sum(...) in place of tf.reduce_sum(...)"),
        ("import jax.numpy as jnp\n" + SETUP + "def f(x):\n    return jnp.sum(x ** 2)\n",
         1, "jax", "write np.sum(...) in place of jnp.sum(...)"),
        ("import jax\n" + SETUP + "def f(x):\n    return jax.lax.fori_loop(0, 2, "
         "lambda i, c: c * x, x).sum()\n", 1, "jax", "write fori_loop(...), which adlab "
         "provides beside np, in place of jax.lax.fori_loop(...)"),
        ("import autograd.numpy as anp\n" + SETUP + "def f(x):\n    return anp.sum(x ** 2)\n",
         1, "autograd", "write np.sum(...) in place of anp.sum(...)"),
        # called by name without an import: the line of the call
        (SETUP + "def f(x):\n    y = x ** 2\n    return jnp.sum(y)\n", 5, "jax", "np.sum"),
        (SETUP + "def f(x):\n    return torch.linalg.norm(x)\n", 4, "torch",
         "write np.linalg.norm(...) in place of torch.linalg.norm(...)"),
    ],
)  # fmt: skip
def test_a_model_calling_a_framework_itself_is_refused_naming_the_line(
    source, lineno, backend, write
):
    with pytest.raises(adlab.ModelError) as info:
        adlab.Model.from_source(source)
    err = info.value
    assert err.lineno == lineno and err.line == source.splitlines()[lineno - 1]
    assert "adlab binds np to the NumPy-like namespace of the framework" in err.reason
    assert write in err.hint and f"backend='{backend}'" in err.hint, err.hint
    assert f"reverse({backend})" in err.hint  # the variant syntax of sweeps


def test_a_name_of_the_models_own_that_a_framework_also_uses_is_fine():
    m = adlab.Model.from_source(SETUP + "def f(x):\n    tf = 2.0\n    return np.sum(tf * x)\n")
    np.testing.assert_allclose(adlab.derivative(m, X), np.full_like(X, 2.0))


def test_the_command_line_says_the_framework_refusal_in_its_terms(tmp_path, capsys):
    from adlab.cli import main

    path = tmp_path / "m3.py"
    path.write_text("import torch\n" + SETUP + "def f(x):\n    return torch.sum(x ** 2)\n")
    assert main(["bench", "--model", str(path), "--sizes", "10", "--modes", "reverse"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "line 1: the model imports PyTorch itself" in err, err
    assert "--modes 'reverse(torch)'" in err and "backend='torch'" not in err, err


def test_numpy_on_a_traced_value_is_not_called_control_flow():
    m = adlab.Model.from_source(
        "import numpy\n" + HEAD + "def f(x):\n    y = numpy.asarray(x)\n    return np.sum(y**2)\n"
    )
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X, mode="reverse")
    message = str(info.value)
    assert info.value.lineno == 7 and "control flow" not in message
    assert "`numpy.asarray(x)` passes a value JAX is tracing to a NumPy function" in message
    assert "adlab's np" in message and "jit=False" not in message  # eager would not help
    # plain NumPy has no traced values: the same text runs there
    got = adlab.derivative(m, X, mode="numeric", backend="numpy")
    np.testing.assert_allclose(got, 2 * X, rtol=1e-6)


def test_error_in_a_helper_names_the_helpers_line():
    m = model(
        "def helper(x):\n    return x @ np.ones((2, 2))\n\n\n"
        "def f(x):\n    return np.sum(helper(x))\n"
    )
    with pytest.raises(adlab.ModelError) as info:
        adlab.derivative(m, X, mode="reverse")
    assert info.value.lineno == 6 and "x @ np.ones((2, 2))" in str(info.value)


@pytest.mark.parametrize(
    ("ret", "got"),
    [
        ("np.outer(x, x)", "an array of shape (7, 7)"),
        ("'hello'", "got str"),
        ("None", "got NoneType"),
        ("(np.sum(x), np.sum(x))", "got tuple"),
        ("x > 0", "dtype bool"),
        ("np.arange(3)", "dtype int"),
    ],
)
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_wrong_return_type(ret, got, backend):
    m = model(f"def f(x):\n    y = 2 * x\n    return {ret}\n")
    mode = "reverse" if backend == "jax" else "numeric"
    with pytest.raises(adlab.ModelError, match="f must return a scalar or a 1-D array") as info:
        adlab.derivative(m, X, mode=mode, backend=backend)
    assert got in str(info.value)
    assert_names(info.value, mode, 7, 7, f"return {ret}")


def test_error_in_setup_names_the_line_and_size():
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    v = rng.normal(size=n)\n    return (w,)\n\n\n"
        "def f(x):\n    return np.sum(x)\n"
    )
    with pytest.raises(adlab.ModelError, match="NameError: name 'w'") as info:
        m.setup(5)
    assert info.value.lineno == 3 and "setup, n=5" in str(info.value)


def test_setup_returning_the_wrong_number_of_arguments():
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return rng.normal(size=n), 1.0\n\n\n"
        "def f(x):\n    return np.sum(x)\n"
    )
    with pytest.raises(adlab.ModelError, match="returned 2 value.*f takes 1"):
        m.setup(3)


# ---------------------------------------------- Python control flow under jit
IFFY = "def f(x):\n    if x[0] > 0:\n        return np.sum(x**2)\n    return np.sum(np.sin(x))\n"


def iffy_gradient(x):
    return 2 * x if x[0] > 0 else np.cos(x)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_python_if_under_jit_explains_and_jit_false_works(mode):
    m = model(IFFY)
    with pytest.raises(adlab.ModelError, match="control flow on a traced value") as info:
        adlab.derivative(m, X, mode=mode)
    message = str(info.value)
    assert info.value.lineno == 6 and "if x[0] > 0" in message
    assert "cannot be decided while JAX traces" in message  # why
    assert "np.where" in message and "jit=False" in message  # what to do
    assert f"mode {mode!r}" in message

    for x in (X, -X):  # both branches, eagerly
        got = adlab.derivative(m, x, mode=mode, jit=False)
        np.testing.assert_allclose(got, iffy_gradient(x), rtol=1e-13)
        p = adlab.prepare(m, x, mode=mode, jit=False)
        np.testing.assert_allclose(p(-x), iffy_gradient(-x), rtol=1e-13)


@pytest.mark.parametrize("mode", ["numeric", "complex-step"])
@pytest.mark.parametrize("jit", [True, False])
def test_python_if_in_batched_modes_suggests_np_where_not_jit_false(mode, jit):
    """numeric and complex step batch f with vmap: jit=False would not help."""
    m = model(IFFY)
    with pytest.raises(adlab.ModelError, match="control flow on a traced value") as info:
        adlab.derivative(m, X, mode=mode, jit=jit)
    assert info.value.lineno == 6
    assert "vmap" in str(info.value) and "np.where" in str(info.value)
    assert "jit=False" not in str(info.value)


@pytest.mark.parametrize(
    ("interface", "eager", "numpy"),
    [
        ("python", "pass jit=False", "backend='numpy'"),
        ("cli", "add --no-jit", "--modes 'numeric(numpy)'"),
        ("lab", 'untick "jit"', 'tick "numpy"'),
        ("accuracy", None, None),  # every scheme is traced: no eager run to offer
    ],
)
def test_control_flow_advice_is_in_the_interfaces_terms(interface, eager, numpy):
    from adlab.engine.model import REMEDIES, speaking_to

    m = model(IFFY)
    others = [text for name, kinds in REMEDIES.items() if name != interface
              for text in kinds.values() if text]  # fmt: skip
    for mode, wanted in (("reverse", eager), ("numeric", numpy)):
        with speaking_to(interface), pytest.raises(adlab.ModelError) as info:
            adlab.derivative(m, X, mode=mode)
        hint = info.value.hint
        assert "np.where" in hint
        assert (wanted is None) or (wanted in hint), hint
        assert not any(text in hint for text in others), hint
    with pytest.raises(adlab.ModelError) as info:  # outside the block: Python's terms again
        adlab.derivative(m, X, mode="reverse")
    assert "jit=False" in str(info.value)


@pytest.mark.parametrize("scheme", ["numeric", "forward-over-reverse"])
def test_python_if_in_a_hessian_is_advised_a_composition_that_runs_it(scheme):
    """NumPy takes no Hessians, and jit=False leaves a batched composition batched: the
    advice names a composition that runs f eagerly, and that advice works."""
    m = model(IFFY)
    with pytest.raises(adlab.ModelError, match="control flow on a traced value") as info:
        adlab.derivative(m, X, mode="hessian", scheme=scheme)
    hint = info.value.hint
    assert "scheme='forward-over-reverse' with jit=False" in hint, hint
    assert "backend='numpy'" not in hint, hint
    got = adlab.derivative(m, X, mode="hessian", scheme="forward-over-reverse", jit=False)
    np.testing.assert_allclose(got, np.diag(-np.sin(X)), atol=1e-12)  # x[0] < 0: sum(sin(x))


def test_unknown_interface_is_refused():
    from adlab.engine.model import speaking_to

    with pytest.raises(ValueError, match="interface must be one of"), speaking_to("gui"):
        pass


def test_python_if_runs_under_numpy_backend():
    m = model(IFFY)
    got = adlab.derivative(m, X, mode="numeric", backend="numpy")
    np.testing.assert_allclose(got, iffy_gradient(X), rtol=1e-7)


# ------------------------------------------------ complex step, non-analytic
@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("np.real(y)", "`np.real` is applied"),
        ("np.conj(y)", "`np.conj` is applied"),
        # inside a library function: its name, and what it uses
        ("np.linalg.norm(y) * y", "`np.linalg.norm` (it uses `"),
        # abs, max, comparisons and logaddexp compare real parts: test_gradbench_engine.py
    ],
)
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_complex_step_refuses_non_analytic_f_naming_what_the_user_wrote(expr, words, backend):
    m = model("def f(x):\n    y = np.sin(x)\n    z = " + expr + "\n    return np.sum(z * y)\n")
    with pytest.raises(adlab.ModelError, match="complex step needs an analytic f") as info:
        adlab.derivative(m, X, mode="complex-step", backend=backend)
    message = str(info.value)
    assert words in message, message
    assert info.value.lineno == 7 and expr in message, message
    assert "forward or reverse mode" in message  # what to do instead
    # ... while the other modes take the same f
    adlab.derivative(m, X, mode="reverse")


def test_complex_step_accepts_non_analytic_ops_on_data_only():
    m = adlab.Model.from_source(
        "def setup(n, rng):\n    return rng.normal(size=n), rng.normal(size=n)\n\n\n"
        "def f(x, d):\n    return np.sum(np.abs(d) * np.maximum(d, 0.0) * x**2)\n"
    )
    x, d = m.setup(5)
    got = adlab.derivative(m, x, d, mode="complex-step")
    np.testing.assert_allclose(got, 2 * x * np.abs(d) * np.maximum(d, 0.0), rtol=1e-14)


# ----------------------------------------------------------------- memory
@pytest.fixture
def sixteen_gb(monkeypatch):
    """Pretend 16 GiB are available, so refusals do not depend on this machine."""
    monkeypatch.setattr(adlab.engine.programs.memory, "available_bytes", lambda: 16 * 2**30)


@pytest.fixture
def no_compile(monkeypatch):
    """Fail the test if anything gets as far as lowering a program for XLA."""

    def refuse(*args, **kwargs):
        raise AssertionError("lowered for XLA: the size check came too late")

    monkeypatch.setattr(jax.stages.Traced, "lower", refuse)


def estimated_bytes(message: str) -> float:
    return parse_bytes(re.search(r"needs about ([\d.]+ [KMGT]?B)\b", message).group(1))


BIG = 200_000


@pytest.mark.parametrize(
    ("mode", "scheme", "jit", "batch_rows"),
    [
        ("numeric", "central", True, 2 * BIG),
        ("numeric", "central", False, 2 * BIG),
        ("numeric", "richardson", True, 4 * BIG),
        ("numeric", "forward", True, BIG),
        ("complex-step", "central", True, BIG),  # complex128: 16 bytes
        ("forward", "central", True, BIG),
    ],
)
def test_too_large_is_refused_before_allocating(sixteen_gb, no_compile, mode, scheme, jit,
                                                batch_rows):  # fmt: skip
    m = adlab.load_model("normal_logpdf")
    args = m.setup(BIG)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB, high-water mark
    with pytest.raises(adlab.SizeError, match="needs about") as info:
        adlab.derivative(m, *args, mode=mode, scheme=scheme, jit=jit)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert grew < 512 * 2**20, f"peak memory grew by {grew / 2**20:.0f} MB"
    message = str(info.value)
    # the estimate: at least the (rows x n) batch of perturbed points, in 8 bytes
    assert estimated_bytes(message) >= 0.99 * batch_rows * BIG * 8, message
    # every one of these modes evaluates its batch in chunks: refused as too long, not too big
    assert "in chunks" in message and "smaller n" in message


def test_dense_jacobian_too_large_is_refused(sixteen_gb, no_compile):
    m = adlab.Model.from_function(lambda x: 2.0 * x, name="double")
    expected = r"the derivative \(\(200000,\) x \(200000,\)\)"
    with pytest.raises(adlab.SizeError, match=expected) as info:
        adlab.derivative(m, np.ones(BIG), mode="reverse")
    assert estimated_bytes(str(info.value)) >= 0.99 * BIG * BIG * 8


def test_eager_untraceable_f_is_still_size_checked(sixteen_gb):
    """jit=False with Python control flow: no program to read sizes from, so the
    batch of n tangents (n x n) is the estimate."""
    m = model(IFFY)
    with pytest.raises(adlab.SizeError, match=f"batch of {BIG} copies") as info:
        adlab.derivative(m, np.ones(BIG), mode="forward", jit=False)
    assert estimated_bytes(str(info.value)) >= 0.99 * BIG * BIG * 8


def test_reverse_gradient_at_the_same_size_is_not_refused(sixteen_gb):
    m = adlab.load_model("normal_logpdf")
    theta, data = m.setup(BIG)
    got = adlab.derivative(m, theta, data, mode="reverse")
    np.testing.assert_allclose(got, data["y"] - theta, rtol=1e-12)


def test_available_memory_is_read():
    assert adlab.engine.programs.memory.available_bytes() > 0


# ------------------------------------------------------------ bad options
@pytest.mark.parametrize(
    ("n", "message"),
    [
        (0, "n must be a positive integer (n >= 1), got 0"),
        (-1, "n must be a positive integer (n >= 1), got -1"),
        (1.5, "n must be a positive integer, got 1.5"),
        (True, "n must be a positive integer, got True"),
        ("10", "n must be a positive integer, got '10'"),
    ],
)
def test_impossible_sizes(n, message):
    m = adlab.load_model("rosenbrock")
    with pytest.raises(ValueError, match=re.escape(message)):
        m.setup(n)


def test_numpy_integer_sizes_are_fine():
    (x,) = adlab.load_model("rosenbrock").setup(np.int64(4))
    assert x.shape == (4,)


R = adlab.load_model("rosenbrock")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "backward"}, "unknown mode 'backward'; choose one of"),
        ({"mode": "numeric", "scheme": "five-point"},
         "scheme must be one of ['central', 'forward', 'g9', 'richardson'], got 'five-point'"),
        ({"mode": "reverse", "scheme": "centrl"},
         "scheme must be one of ['central', 'forward', 'g9', 'richardson'], got 'centrl'"),
        ({"precision": "float16"}, "precision must be 'float32' or 'float64', got 'float16'"),
        ({"precision": "double"}, "precision must be 'float32' or 'float64', got 'double'"),
        ({"backend": "pytorch"}, f"backend must be one of {list(adlab.BACKENDS)}, got 'pytorch'"),
        ({"wrt": 3}, "wrt=3 is out of range: f gets 1 argument(s)"),
        ({"wrt": "x"}, "wrt must be an argument index or a tuple of indices, got 'x'"),
        ({"mode": "complex-step", "step": -1e-20}, "complex-step needs a positive step"),
    ],
)  # fmt: skip
def test_unknown_options(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        adlab.derivative(R, X, **options)


def test_unknown_mode_lists_the_modes():
    with pytest.raises(ValueError) as info:
        adlab.derivative(R, X, mode="symbolic")
    for mode in adlab.MODES:
        assert repr(mode) in str(info.value)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_ad_modes_need_a_framework_with_ad(mode):
    with pytest.raises(ValueError, match=f"mode '{mode}' needs {mode}-mode AD") as info:
        adlab.derivative(R, X, mode=mode, backend="numpy")
    assert "'numeric', 'complex-step'" in str(info.value)


def test_non_float_argument_to_differentiate():
    m = adlab.Model.from_function(lambda x: np.sum(x), name="s")
    with pytest.raises(TypeError, match="dtype <U1.*float array"):
        adlab.derivative(m, np.array(["a", "b"]))
