"""GradBench's lstm eval: the catalog's ``lstm`` against GradBench's C++ reference, per framework.

The golden outputs (``fixtures/gradbench/golden/lstm.json``) were recorded from
GradBench's ``tools/manual`` (hand-written derivatives, after ADBench's; see the
README there) on inputs drawn by the eval's own ``gen_lstm``: 1 to 4 layers, 6 or
7 bits per character, 10 to 43 characters. Each is answered here through the
adapter (``adlab.catalog.gradbench``), as the GradBench tool answers it.

TensorFlow's forward mode is left to ``tests/engine/test_backends.py`` (against
JAX's, at 3 characters): eagerly it pushes one tangent per parameter, op by op.

Internals: the GradBench tool's parts in process (catalog.gradbench's adapter,
gradbench.jobs' Options, gradbench.tool's Tool), as test_gradbench_adbench.py: the tool's
public face is GradBench's protocol on stdin and stdout.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

import adlab
from adlab.catalog.gradbench import gradbench_eval
from adlab.gradbench.jobs import Options
from adlab.gradbench.tool import Tool

GOLDEN = Path(__file__).parents[1] / "fixtures" / "gradbench" / "golden"
# both sides are float64 evaluations of the same formulas (seen: 4.4e-16 apart)
RTOL, ATOL = 1e-12, 1e-14


@functools.cache
def golden() -> list[dict]:
    return json.loads((GOLDEN / "lstm.json").read_text())["cases"]


def answer(case: dict, backend: str, mode: str) -> object:
    adapter = gradbench_eval("lstm")
    model, args = adapter.inputs(case["input"], case["function"])
    if adapter.kind(case["function"]) == "primal":
        mode = "primal"
    # check=False: held to the golden output here, as the tool is (it prepares, unchecked);
    # the cross-check would compile JAX's program beside each framework's
    result = adlab.derivative(model, *args, mode=mode, backend=backend, check=False)
    return adapter.output(case["function"], result, case["input"])


def test_the_golden_cases_span_layers_and_bits():
    """What the fixture holds: the tests below are only as good as its spread."""
    inputs = [c["input"] for c in golden() if c["function"] == "objective"]
    assert sorted({len(i["main_params"]) // 2 for i in inputs}) == [1, 2, 3, 4]
    assert sorted({len(i["sequence"][0]) for i in inputs}) == [6, 7]
    for case in golden():
        if case["function"] == "jacobian":
            layers, b = len(case["input"]["state"]) // 2, len(case["input"]["state"][0])
            assert len(case["output"]) == 8 * layers * b + 3 * b


#: the golden inputs each framework answers (both functions each): JAX's reverse mode the
#: fewest and the most layers (1 and 4: an XLA program per shape; 2 and 3 lie between); the
#: others, eager, the two that differ most (1 layer of 7 bits, 3 layers of 6) or the
#: smallest (autograd's forward mode pushes its 77 tangents one at a time)
ENDS, SPREAD, SMALLEST = (0, 3), (0, 2), (0,)


@pytest.mark.parametrize(
    ("backend", "mode", "inputs"),
    [("jax", "reverse", ENDS), ("jax", "forward", SPREAD), ("torch", "reverse", SPREAD),
     ("torch", "forward", SPREAD), ("tensorflow", "reverse", SPREAD),
     ("autograd", "reverse", SPREAD), ("autograd", "forward", SMALLEST)],
    ids=lambda v: v if isinstance(v, str) else f"{len(v)}-inputs",
)  # fmt: skip
def test_lstm_matches_the_cpp_reference(backend, mode, inputs):
    for case in [c for i in inputs for c in golden()[2 * i : 2 * i + 2]]:
        got = answer(case, backend, mode)
        assert type(got) is type(case["output"])  # a float, or a flat list of them
        np.testing.assert_allclose(got, case["output"], rtol=RTOL, atol=ATOL)


def test_lstm_by_differences_on_numpy_is_close_to_the_reference():
    for case in golden()[:4]:
        got = answer(case, "numpy", "numeric")
        np.testing.assert_allclose(got, case["output"], rtol=1e-6, atol=1e-8)


def jaxpr_equations(n: int) -> int:
    """How many equations JAX's program of lstm's gradient holds, at n characters."""
    import jax

    model = adlab.load_model("lstm")
    args = model.setup(n)
    jaxpr = jax.make_jaxpr(jax.grad(model.function("jax")))(*args).jaxpr

    def count(j) -> int:
        inner = [sub for e in j.eqns for p in e.params.values() for sub in _jaxprs(p)]
        return len(j.eqns) + sum(count(s) for s in inner)

    return count(jaxpr)


def _jaxprs(param) -> list:
    if hasattr(param, "jaxpr"):  # a ClosedJaxpr
        return [param.jaxpr]
    if hasattr(param, "eqns"):
        return [param]
    if isinstance(param, (tuple, list)):
        return [j for p in param for j in _jaxprs(p)]
    return []


def test_the_program_does_not_grow_with_the_sequence():
    """The steps are one ``scan``: the program JAX compiles is the same size for 5
    characters and for 500, so its compile time does not grow with n (a Python loop
    over the characters would unroll into 100 times the equations)."""
    assert jaxpr_equations(5) == jaxpr_equations(500)


def test_setup_draws_a_text_as_the_eval_does():
    """setup's sequence is characters in 7 bits (the eval's bit count for lowercase text),
    and x has the eval's 8 l b + 3 b parameters whatever n."""
    for layers in (1, 3):
        model = adlab.load_model("lstm", LAYERS=layers)
        x, state, sequence = model.setup(40)
        assert sequence.shape == (40, 7) and state.shape == (2 * layers, 7)
        assert x.shape == (8 * layers * 7 + 3 * 7,)
        codes = sequence @ 2 ** np.arange(6, -1, -1)
        assert set(codes) <= {ord(" ")} | set(range(ord("a"), ord("z") + 1))
        assert 0.5 < model.function("numpy")(x, state, sequence) < 2.0


def test_the_tool_answers_lstm_as_the_eval_expects():
    """The whole route: the tool's evaluate in forward mode, two runs timed."""
    tool = Tool(Options(mode="forward"))
    for case in golden()[:4]:
        message = {"id": 1, "kind": "evaluate", "module": "lstm", "function": case["function"],
                   "input": case["input"] | {"min_runs": 2, "min_seconds": 0}}  # fmt: skip
        response = tool.respond(message)
        assert response["success"], response.get("error")
        assert [t["name"] for t in response["timings"]].count("evaluate") == 2
        np.testing.assert_allclose(response["output"], case["output"], rtol=RTOL, atol=ATOL)


def test_parameters_that_do_not_fit_the_state_are_refused_with_the_shapes():
    case = golden()[0]
    broken = case["input"] | {"extra_params": case["input"]["extra_params"][:2]}
    response = Tool(Options(mode="reverse")).respond(
        {"id": 3, "kind": "evaluate", "module": "lstm", "function": "objective",
         "input": broken})  # fmt: skip
    assert response["success"] is False
    assert "extra_params (2, 7)" in response["error"] and "(3, b)" in response["error"]
