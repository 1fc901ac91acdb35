"""Every hint adlab can produce names only functions that exist, and a hint for a model
running on another framework speaks that framework's terms, not JAX's (issue 23,
"Messages").

The hints are gathered three ways: the literal text of every hint in adlab's source
(``hint=``, ``hint = ...``, the (message, hint) pairs explain.py and userline.py return,
REMEDIES); the templates of ``explain`` rendered with every NumPy function name; and
the errors of small faulty models run on every backend.

Internals: every hint the source can produce is gathered, so the modules that write them are
read and called directly: explain.framework_gap, framework_imports.framework_refusal,
userline.remedy (messages no public call reaches for every NumPy name).
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
import types
import warnings

import jax
import numpy
import pytest

import adlab
from adlab._vocab import BACKENDS
from adlab.engine.model import REMEDIES, explain, framework_imports, speaking_to, userline

ROOT = pathlib.Path(adlab.__file__).parent
#: how hints spell a module -> the module
MODULES = {"math": "math", "np": "numpy", "jnp": "jax.numpy", "torch": "torch",
           "tf": "tensorflow", "lax": "jax.lax", "jax": "jax"}  # fmt: skip
NAME = re.compile(r"(?<![\w.])(math|np|jnp|torch|tf|lax|jax)((?:\.[A-Za-z_]\w*)+)")
#: JAX's own words: wrong in a hint for a model that runs on another framework
JAX_WORDS = re.compile(r"jnp\.|jax-ml|jax\.vmap|\blax\.|jax\.jit|jaxpr|Tracer", re.IGNORECASE)


def missing_names(text: str) -> list[str]:
    """The ``module.name`` references in ``text`` that do not exist."""
    missing = []
    for module, dotted in NAME.findall(text):
        path = MODULES[module]
        obj = importlib.import_module(path)
        for part in dotted.strip(".").split("."):
            path += "." + part
            found = getattr(obj, part, None)
            if found is None and isinstance(obj, types.ModuleType):
                try:  # a submodule its package does not import (torch.utils.cpp_extension)
                    found = importlib.import_module(path)
                except ImportError:
                    found = None
            obj = found
            if obj is None:
                break
        if obj is None:
            missing.append(module + dotted)
    return missing


def jax_words(backend: str, text: str) -> list[str]:
    """JAX's words in ``text``, a message or hint for a model running on ``backend``; a
    text that tells the user to run on JAX may name JAX's functions."""
    if backend == "jax" or "backend='jax'" in text:
        return []
    return JAX_WORDS.findall(text)


# ------------------------------------------------------------- the source's
def _text(node: ast.AST) -> list[str]:
    """The texts a hint expression can produce, its f-string fields left as {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in _text(node.left) for b in _text(node.right)]
    if isinstance(node, ast.IfExp):
        return _text(node.body) + _text(node.orelse)
    if isinstance(node, ast.Tuple | ast.List | ast.Dict | ast.Call | ast.BoolOp):
        return [t for child in ast.iter_child_nodes(node) for t in _text(child)]
    return []


def source_hints() -> list[tuple[str, str]]:
    """(file, text) of every hint written in adlab's source."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text())
        pairs = path.name in ("explain.py", "framework_imports.py", "userline.py",
                              "complex_step.py")  # fmt: skip
        for node in ast.walk(tree):
            values = []
            if isinstance(node, ast.keyword) and node.arg == "hint":
                values = [node.value]
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = getattr(node, "targets", None) or [node.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if names & {"hint", "REMEDIES", "OTHER_MODES"} and node.value is not None:
                    values = [node.value]
            elif pairs and isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                values = node.value.elts[1:2]  # (message, hint)
            found += [(str(path.relative_to(ROOT)), t) for v in values for t in _text(v)]
    return found


def test_the_scan_finds_the_hints_it_is_meant_to():
    texts = " ".join(t for _, t in source_hints())
    for known in (
        "np is provided by adlab",
        "fix the syntax on line",
        'untick "jit"',
        "compare or clip the real part",
        "take this derivative another way",
    ):
        assert known in texts


def test_every_hint_in_the_source_names_functions_that_exist():
    bad = [(where, text, missing_names(text)) for where, text in source_hints()
           if missing_names(text)]  # fmt: skip
    assert not bad, bad


# ------------------------------------------------------ explain's templates
NUMPY_FUNCTIONS = sorted(n for n in dir(numpy) if not n.startswith("_")
                         and callable(getattr(numpy, n))
                         and not isinstance(getattr(numpy, n), type))  # fmt: skip


def _namespace(framework: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(__adlab_framework__=framework)


def _array_of(framework: str) -> object:
    return type("Tensor", (), {"__module__": f"{framework}.framework"})()


def explain_hints() -> list[tuple[str, str, str]]:
    """(backend, message, hint) of ``explain.framework_gap`` for every NumPy function name."""
    out = []
    for name in NUMPY_FUNCTIONS:
        errors = [
            *[(b, AttributeError(f"{b} has no np.{name} here", name=name, obj=_namespace(b)),
               f"np.{name}(x)") for b in ("torch", "tensorflow", "autograd")],
            *[(b, AttributeError(name, name=name, obj=_array_of(b)), f"x.{name}()")
              for b in ("torch", "tensorflow", "autograd")],
            ("autograd", NotImplementedError(f"VJP of {name} wrt argnums (0,) not defined"),
             f"np.{name}(x)"),
            # PyTorch's refusal of a Python number: beside a tensor, and alone
            ("torch", TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, "
                                "not float"), f"np.{name}(x, 2.0)"),
            ("torch", TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                                "not float"), f"np.{name}(float(len(x)))"),
            ("torch", TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                                "not list"), f"np.{name}([1.0, 2.0])"),
        ]  # fmt: skip
        for backend, exc, expr in errors:
            said = explain.framework_gap(exc, expr)
            if said:
                out.append((backend, *said))
    for expr in ("x > 0", "np.arctan2(x, 1.0)"):  # complex step on PyTorch and TensorFlow
        for backend, text in (
            ("torch", "\"gt_cpu\" not implemented for 'ComplexDouble'"),
            ("tensorflow", "DataType complex128 not in list"),
        ):
            out.append((backend, *explain.framework_gap(TypeError(text), expr)))
    return out


def test_explains_hints_name_functions_that_exist():
    hints = explain_hints()
    assert len(hints) > 3 * len(NUMPY_FUNCTIONS)  # every template was rendered
    bad = sorted({name for _, message, hint in hints for name in missing_names(hint)})
    assert not bad, bad  # was math.sum, math.arctan2, math.fmax, math.logaddexp, math.take


def test_explains_hints_speak_the_running_frameworks_terms():
    bad = [(backend, text) for backend, message, hint in explain_hints()
           for text in (message, hint) if jax_words(backend, text)]  # fmt: skip
    assert not bad, bad[:5]


@pytest.mark.parametrize("interface", sorted(REMEDIES))
def test_the_framework_refusal_names_functions_that_exist(interface):
    calls = {"torch": "torch.sum(x)", "tensorflow": "tf.reduce_sum(x)", "jax": "jnp.sum(x)",
             "autograd": "anp.sum(x)"}  # fmt: skip
    for backend, call in calls.items():
        tree = ast.parse(f"def f(x):\n    return {call}\n")
        with speaking_to(interface):
            message, hint = framework_imports.framework_refusal(
                tree, backend, "return ...", userline.remedy("framework")
            )
        assert not missing_names(message + " " + hint), (message, hint)
        assert "np.sum(...)" in hint


def test_the_remedies_name_options_that_exist():
    for kinds in REMEDIES.values():
        for text in filter(None, kinds.values()):
            text = text.format(backend="torch", label="PyTorch", mode="hessian")
            assert not missing_names(text)


# ----------------------------------------------------------- models, run
SRC = """
def setup(n, rng):
    return (rng.normal(size=n),)


def f(x):
    y = {expr}
    return np.sum(y * x)
"""
FAULTY = ("x if x[0] > 0 else -x", "x[[[0, 1, 2]]][0]", "np.hypot(x, 2.0)",
          "np.sum(float(len(x))) * x", "np.log(float(len(x))) * x")  # fmt: skip


def _refusals(backend: str) -> list[tuple[str, str, str]]:
    out = []
    for expr in FAULTY:
        m = adlab.Model.from_source(SRC.format(expr=expr), "faulty")
        for mode in ("numeric", "complex-step", "reverse"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # complex step unchecked: a warning
                    adlab.derivative(m, *m.setup(3), mode=mode, backend=backend)
            except adlab.ModelError as err:
                out.append((mode, err.reason, err.hint or ""))
            except ValueError as err:  # a mode the backend does not have
                assert "does not have" in str(err)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_faulty_models_messages_are_in_the_running_frameworks_terms(backend):
    for mode, message, hint in _refusals(backend):
        assert not missing_names(hint), (mode, hint)
        assert not jax_words(backend, message), (mode, message)
        assert not jax_words(backend, hint), (mode, hint)


@pytest.mark.parametrize("backend", ["numpy", "torch", "tensorflow", "autograd"])
@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("x if x[0] > 0 else -x", "np.where(cond, a, b)"),
        ("x[[[0, 1, 2]]][0]", "x[np.asarray([[0, 1, 2]])]"),
        ("np.hypot(x, 2.0)", "np.sqrt(a**2 + b**2)"),
    ],
)
def test_jax_checking_f_for_another_framework_speaks_that_frameworks_terms(backend, expr, says):
    """Complex step traces f's JAX twin to check it: a failure there is told as adlab's
    check on JAX, in NumPy's words, with advice for the framework the user runs."""
    from adlab.engine.model import running_on

    m = adlab.Model.from_source(SRC.format(expr=expr), "faulty")
    x = m.setup(3)[0].astype(complex)
    with running_on(backend), pytest.raises(adlab.ModelError) as info, \
            m.errors("f, mode 'complex-step', n=3"):  # fmt: skip
        jax.make_jaxpr(m.function("jax"))(x)
    err = info.value
    assert err.lineno == 7 and says in err.hint, err
    assert "adlab checks f by tracing it with JAX" in str(err)
    assert not jax_words(backend, err.reason) and not jax_words(backend, err.hint), err
    assert not missing_names(err.hint), err.hint


@pytest.mark.parametrize(
    ("expr", "position", "kind", "python"),
    [
        ("np.arctan2(x, 2.0)", 2, "float", "math.atan2(...)"),
        ("np.fmax(x, 0.5)", 2, "float", None),
        ("np.take(x, [1, 0, 2])", 2, "list", None),
        ("np.log(float(len(x))) * x", 1, "float", "math.log(...)"),
        ("np.sum([1.0, 2.0]) * x", 1, "list", "Python's own sum(...)"),
    ],
)
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_the_advice_for_a_python_value_beside_a_tensor_works(expr, position, kind, python,
                                                             precision):  # fmt: skip
    """What the PyTorch refusal says to write runs on PyTorch and agrees with JAX."""
    name = re.match(r"np\.(\w+)", expr).group(1)
    call = expr.removesuffix(" * x")
    exc = TypeError(f"{name}(): argument 'other' (position {position}) must be Tensor, "
                    f"not {kind}")  # fmt: skip
    hint = explain.framework_gap(exc, call)[1]
    assert (python in hint) if python else ("compute it in Python" not in hint), hint
    fixed = re.search(r"an array: (.*?)(?:;| \(numbers)", hint).group(1)
    assert "np.asarray(" in fixed
    m = adlab.Model.from_source(SRC.format(expr=expr.replace(call, fixed)), "fixed")
    x = m.setup(3)[0]
    got = adlab.derivative(m, x, backend="torch", precision=precision)
    want = adlab.derivative(m, x)
    numpy.testing.assert_allclose(got, want, rtol=1e-12 if precision == "float64" else 1e-5)
