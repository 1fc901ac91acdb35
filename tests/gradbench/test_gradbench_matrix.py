"""A sample of the eval x framework x mode table (``benchmarks/gradbench_matrix.py``), in
process: the tool's answers to GradBench's messages against the manual tool's golden
outputs and GradBench's published particle and saddle answers; refusals say why and what to do.

Internals: GradBench's rr/ff/fr/rf names as outer and inner modes (catalog.gradbench:
COMBINATIONS, combination), the mapping the table is built on, and the GradBench tool's
Options and Tool in process; the tool's public face is its protocol.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_gradbench_models import golden, mismatch

from adlab.catalog import gradbench as evals
from adlab.gradbench.jobs import Options
from adlab.gradbench.tool import Tool

#: GradBench's expected outputs (evals/particle/run.py, evals/saddle/run.py)
PARTICLE_W = 0.2071918746486116
SADDLE_POINT = [8.246324826140356e-06] * 4


def respond(tool: Tool, module: str, function: str, input) -> dict:
    message = {"id": 1, "kind": "evaluate", "module": module, "function": function,
               "input": {**input, "min_runs": 1, "min_seconds": 0}}  # fmt: skip
    return tool.respond(message)


def eval_measure(want: float, got: float) -> float:
    """GradBench's comparison (``gradbench/comparison.py``): |a - b| / max(|a| + |b|, 1)."""
    return abs(want - got) / max(abs(want) + abs(got), 1.0)


# one framework per mode beside JAX's own tests: the frameworks' forward and reverse modes
SAMPLE = [("lse", "torch", "forward"), ("gmm", "tensorflow", "reverse"),
          ("llsq", "autograd", "forward"), ("det", "torch", "reverse"),
          ("ode", "autograd", "reverse")]  # fmt: skip


@pytest.mark.parametrize(("name", "backend", "mode"), SAMPLE)
def test_framework_answers_match_the_cpp_reference(name, backend, mode):
    tool = Tool(Options(mode=mode, backend=backend))
    for case in golden(name)[:2]:
        r = respond(tool, name, case["function"], case["input"])
        assert r["success"], r.get("error")
        assert mismatch(case["output"], r["output"]) == []


@pytest.mark.parametrize("function", sorted(evals.COMBINATIONS))
def test_particle_on_jax_reaches_gradbench_answer(function):
    r = respond(Tool(Options(mode="reverse")), "particle", function, {"w": 0.0})
    assert r["success"], r.get("error")
    assert eval_measure(PARTICLE_W, r["output"]) <= 1e-9
    assert [t["name"] for t in r["timings"]][-1] == "evaluate"


def test_saddle_on_jax_reaches_gradbench_point_in_forward_over_reverse():
    r = respond(Tool(Options(mode="forward")), "saddle", "fr", {"start": [1.0, 1.0]})
    assert r["success"], r.get("error")
    np.testing.assert_allclose(r["output"], SADDLE_POINT, rtol=1e-9)


def test_a_descent_past_max_seconds_is_refused_saying_what_to_do():
    tool = Tool(Options(mode="reverse", backend="autograd", max_seconds=1e-6))
    r = respond(tool, "particle", "rf", {"w": 0.0})
    assert r["success"] is False and "output" not in r
    assert "rf (reverse over forward) on autograd" in r["error"]
    assert "What to do: run the tool with --backend jax" in r["error"]
    assert "--max-seconds" in r["error"]


def test_the_function_names_the_modes_unless_the_tool_differences():
    assert evals.combination("rf", "forward") == ("reverse", "forward")
    assert evals.combination("fr", "reverse") == ("forward", "reverse")
    assert evals.combination("ff", "numeric") == ("numeric", "forward")


def test_numpy_says_its_inner_derivative_is_differences():
    start = Tool(Options(mode="numeric", backend="numpy")).respond({"id": 0, "kind": "start"})
    assert "central differences" in start["config"]["inner"]
    jax = Tool(Options(mode="reverse")).respond({"id": 0, "kind": "start"})
    assert "inner" not in jax["config"]


def test_an_eager_forward_jacobian_past_max_seconds_is_refused_saying_what_to_do():
    case = golden("lse")[1]  # a gradient: one tangent per input on TensorFlow, eagerly
    tool = Tool(Options(mode="forward", backend="tensorflow", max_seconds=1e-6))
    r = respond(tool, "lse", case["function"], case["input"])
    assert r["success"] is False and "output" not in r
    assert "pushes one tangent per input" in r["error"]
    assert "What to do: run the tool with --mode reverse" in r["error"]


def test_an_outer_mode_the_framework_lacks_is_refused_for_that_not_for_its_time():
    """particle's ff on tfjs (TF.js has no forward mode): no advice of a larger
    --max-seconds, which could never help, and no value of f spent on an estimate."""
    tool = Tool(Options(mode="reverse", backend="tfjs", max_seconds=1e-6))
    r = respond(tool, "particle", "ff", {"w": 0.0})
    assert r["success"] is False and "output" not in r
    assert "particle's ff (forward over forward)" in r["error"]
    assert "needs forward-mode AD, which backend='tfjs' does not have" in r["error"]
    assert "--max-seconds" not in r["error"]


def test_a_call_in_node_past_max_seconds_is_stopped_saying_what_to_do():
    """jax-js runs op by op in Node: one call past --max-seconds stops Node there (the
    session answers, refused with the limit and what to do), never a session past its time."""
    case = golden("llsq")[1]
    tool = Tool(Options(mode="reverse", backend="jaxjs", max_seconds=0.01))
    r = respond(tool, "llsq", case["function"], case["input"])
    assert r["success"] is False and "output" not in r
    assert "did not answer within 0.01 s" in r["error"]
    assert "--max-seconds 0.01 for one call of the framework in Node" in r["error"]
    assert "--backend js" in r["error"]
