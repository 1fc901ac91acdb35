"""GradBench's workloads as catalog models, against GradBench's C++ reference.

The oracle is the output of GradBench's hand-written C++ tool (``tools/manual``)
on small inputs, recorded once as fixtures (``fixtures/gradbench/golden``, see
its README): an implementation that shares nothing with adlab. Each answer goes
through the adapter (``adlab.catalog.gradbench``) as the GradBench tool's does:
the eval's input JSON to the model's arguments, the derivative, the eval's
output JSON, compared in ADBench's measure (|a - b| / max(|a| + |b|, 1), the
eval's own, whose tolerance is 1e-4).

Tolerance: both sides are float64 evaluations of the same formulas, summed in
another order (a matrix product, pairwise sums, XLA's fusions); the largest
difference seen is 1.3e-15 (gmm's jacobian, on JAX and PyTorch alike), so 1e-12
leaves two digits of margin and is still eight below the eval's.

Internals: GradBench's table of evals and their adapters (catalog.gradbench:
GRADBENCH_EVALS, gradbench_eval), which give each workload's inputs and outputs as GradBench
sends them; the adapters are the GradBench tool's own.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab.catalog.gradbench import GRADBENCH_EVALS, gradbench_eval

GOLDEN = Path(__file__).parents[1] / "fixtures" / "gradbench" / "golden"
TOL = 1e-12
EVALS = ("hello", "llsq", "lse", "gmm", "ode", "det", "kmeans")


@functools.cache
def golden(name: str) -> list[dict]:
    return json.loads((GOLDEN / f"{name}.json").read_text())["cases"]


def mismatch(want, got, path="") -> list[str]:
    """Where ``got`` differs from ``want``: JSON types and lengths exactly, numbers
    in ADBench's measure above TOL."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (path, got)
        return [m for k in want for m in mismatch(want[k], got[k], f"{path}.{k}")]
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got)
        pairs = enumerate(zip(want, got, strict=True))
        return [m for i, (w, g) in pairs for m in mismatch(w, g, f"{path}[{i}]")]
    assert type(got) is float, (path, type(got))  # noqa: E721 - the eval checks JSON types
    diff = abs(want - got) / max(abs(want) + abs(got), 1.0)
    return [f"{path}: {got!r} != {want!r} ({diff:.2g})"] if diff > TOL else []


def answer(name: str, function: str, input, mode: str = "reverse", backend: str = "jax"):
    """The eval's output, computed by adlab as the GradBench tool computes it."""
    adapter = gradbench_eval(name)
    kind = adapter.kind(function)
    model, args = adapter.inputs(input, function)
    # unchecked, as the tool prepares it: the eval's own reference is the check
    if kind == "primal":
        result = adlab.derivative(model, *args, mode="primal", backend=backend)
    elif kind == "gradient":
        result = adlab.derivative(model, *args, mode=mode, backend=backend, check=False)
    else:  # dir: the Hessian is diagonal, so its diagonal is H times ones (one HVP)
        x, *data = args
        gradient = adlab.derivative(model, *args, mode=mode, backend=backend, check=False)
        diagonal = adlab.hvp(model, x, np.ones_like(x), *data, mode="forward-over-reverse")
        result = adapter.output(function, gradient / diagonal, input)
        return result
    return adapter.output(function, result, input)


def cases(names, exclude=()):
    return [
        pytest.param(name, i, id=f"{name}-{case['function']}-{i}")
        for name in names
        for i, case in enumerate(golden(name))
        if (name, case["function"]) not in exclude
        and not (name == "ode" and case["function"] == "gradient" and len(case["input"]["x"]) > 4)
    ]


# ------------------------------------------------------------ the adapters
def test_every_eval_has_an_adapter_and_its_models_are_in_the_catalog():
    assert set(EVALS) <= set(GRADBENCH_EVALS)
    models = {a.model_name for a in GRADBENCH_EVALS.values() if a.model_name}
    assert {"llsq", "lse", "gmm", "ode", "det", "kmeans"} <= models <= set(adlab.list_models())
    assert "gradbench" not in adlab.list_models()  # the adapters' module is no model
    for name in models:
        assert "GradBench" in adlab.load_model(name).doc and "n is" in adlab.load_model(name).doc


def test_an_unknown_eval_or_function_is_named_with_what_adlab_has():
    with pytest.raises(ValueError, match=r"no model for GradBench's 'nosuch' eval.*'llsq'"):
        gradbench_eval("nosuch")
    with pytest.raises(ValueError, match=r"no function 'hessian'.*\['gradient', 'primal'\]"):
        gradbench_eval("lse").kind("hessian")


# ------------------------------------------------------------ against the C++ reference
@pytest.mark.parametrize(("name", "i"), cases(EVALS))
def test_jax_reverse_matches_the_cpp_reference(name, i):
    case = golden(name)[i]
    got = answer(name, case["function"], case["input"])
    assert mismatch(case["output"], got) == []


CHEAP = ("hello", "llsq", "lse", "gmm", "ode", "det")


@pytest.mark.parametrize(("name", "i"), cases(CHEAP))
def test_jax_forward_matches_the_cpp_reference(name, i):
    case = golden(name)[i]
    assert mismatch(case["output"], answer(name, case["function"], case["input"], "forward")) == []


@pytest.mark.parametrize(("name", "i"), cases(CHEAP + ("kmeans",), exclude={("kmeans", "dir")}))
def test_torch_matches_the_cpp_reference(name, i):
    """The same model source on PyTorch (kmeans's dir needs an HVP: JAX only yet)."""
    case = golden(name)[i]
    got = answer(name, case["function"], case["input"], backend="torch")
    assert mismatch(case["output"], got) == []


@pytest.mark.parametrize(("name", "i"), cases(("llsq", "lse", "gmm")))
def test_js_matches_the_cpp_reference(name, i):
    """The same model's JAX programs emitted as JavaScript and run in Node (issue 25)."""
    from adlab.engine.backends import installed

    if not installed("js"):
        pytest.skip("Node.js is not installed")
    case = golden(name)[i]
    got = answer(name, case["function"], case["input"], backend="js")
    assert mismatch(case["output"], got) == []


def test_kmeans_hessian_is_diagonal_so_one_hvp_gives_its_diagonal():
    """``dir`` divides by H times ones; that is H's diagonal only because H is diagonal."""
    case = next(c for c in golden("kmeans") if c["function"] == "dir")
    model, (x, points) = gradbench_eval("kmeans").inputs(case["input"], "dir")
    H = adlab.hessian(model, x, points, mode="forward-over-reverse")
    assert np.count_nonzero(H - np.diag(np.diag(H))) == 0
    counts = np.diag(H).reshape(len(case["input"]["centroids"]), -1)[:, 0] / 2
    assert counts.sum() == len(case["input"]["points"])  # 2 per point, at its centroid
    ones = adlab.hvp(model, x, np.ones_like(x), points)
    np.testing.assert_array_equal(ones, np.diag(H))


def test_ode_gradient_converges_to_the_references_exact_one():
    """The C++ reference's ode gradient is that of the exact solution,
    y_{n-1}(2) = x_0 ... x_{n-1} 2^n / n!, not of RK4's: the two agree only where
    RK4 is exact (n <= 4: polynomials of degree <= 4, checked against the fixtures
    above). For n > 4 adlab's RK4 gradient converges to it as h^4."""
    gradients = [c for c in golden("ode") if c["function"] == "gradient"]
    case = next(c for c in gradients if len(c["input"]["x"]) == 5)
    want = np.array(case["output"])
    errors = []
    for steps in (20, 40):
        got = answer("ode", "gradient", {**case["input"], "s": steps})
        errors.append(np.max(np.abs(np.array(got) - want)))
    assert errors[1] < 1e-8
    assert 12 < errors[0] / errors[1] < 20  # 2^4 = 16: fourth order


def test_ode_gradient_without_its_function_is_the_jacobians_last_row():
    """A tool that asks for the model without naming the function gets all of y; the
    gradient's answer is then its Jacobian's last row, the same numbers."""
    case = next(c for c in golden("ode") if c["function"] == "gradient")
    adapter = gradbench_eval("ode")
    model, args = adapter.inputs(case["input"])
    jacobian = adlab.derivative(model, *args, mode="reverse")
    assert jacobian.shape == (len(args[0]), len(args[0]))
    assert mismatch(case["output"], adapter.output("gradient", jacobian, case["input"])) == []
