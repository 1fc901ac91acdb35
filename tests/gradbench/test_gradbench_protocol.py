"""adlab as a GradBench tool, against transcripts recorded from GradBench's own evals.

The fixtures (``tests/fixtures/gradbench/transcripts``, recorded by ``record.sh`` there)
are real sessions: GradBench's eval scripts (commit f26651a7) sent the messages, adlab's
tool answered, and the eval checked each answer against GradBench's C++ reference and
said so in its ``analysis``. Here the eval's messages are replayed into the tool and
every response checked against the recorded one. No network, no GradBench, no C++.

Internals: the tool's parts beside its protocol: the harness that runs GradBench's evals
(gradbench.harness), the tool's Options, Tool and serve loop and its jobs (gradbench.jobs,
patched to fail on purpose), the adapters (catalog.gradbench, one broken on purpose) and the
timing of its runs (measure.timing.timed_runs).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from adlab import MODES
from adlab.gradbench import harness
from adlab.gradbench.jobs import Options
from adlab.gradbench.tool import Tool, serve
from adlab.measure.timing import timed_runs

HERE = Path(__file__).parents[1] / "fixtures" / "gradbench" / "transcripts"
TRANSCRIPTS = sorted(HERE.glob("*.jsonl"))
#: the one-off timings a response may carry beside its runs' "evaluate"
ONE_OFF = {"prepare", "compile", "warmup", "bind"}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def options_of(entries: list[dict]) -> Options:
    """The tool's options as its ``start`` response recorded them."""
    config = entries[1]["response"]["config"]
    jit = config.get("jit")
    return Options(mode=config["mode"], scheme=config.get("scheme", "central"),
                   backend=config["backend"], precision=config["precision"],
                   jit=None if jit == "framework default" else jit)  # fmt: skip


def pairs(entries: list[dict]) -> list[tuple[dict, dict]]:
    """(message, recorded response), in order."""
    messages = [e["message"] for e in entries if "message" in e]
    responses = [e["response"] for e in entries if "response" in e]
    assert len(messages) == len(responses)
    return list(zip(messages, responses, strict=True))


def close(expected, actual, tol: float) -> bool:
    """GradBench's own comparison (ADBench's): |a - b| / max(1, |a| + |b|), same shapes
    and the same keys (gmm's Jacobian is an object of arrays)."""
    if isinstance(expected, dict) or isinstance(actual, dict):
        return (isinstance(expected, dict) and isinstance(actual, dict)
                and expected.keys() == actual.keys()
                and all(close(expected[k], actual[k], tol) for k in expected))  # fmt: skip
    if isinstance(expected, list) != isinstance(actual, list):
        return False
    a, b = np.asarray(expected, dtype=float), np.asarray(actual, dtype=float)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), 1) <= tol))


def check_timings(message: dict, response: dict, first_of_shape: bool) -> None:
    """One "evaluate" per run (min_runs, then min_seconds), one-off costs named apart."""
    timings = response["timings"]
    names = [t["name"] for t in timings]
    assert all(isinstance(t["nanoseconds"], int) and t["nanoseconds"] >= 0 for t in timings)
    assert set(names) <= ONE_OFF | {"evaluate"}, names
    runs = [t["nanoseconds"] for t in timings if t["name"] == "evaluate"]
    given = message["input"] if isinstance(message["input"], dict) else {}
    assert len(runs) >= given.get("min_runs", 1)
    if len(runs) > given.get("min_runs", 1):  # more runs only while under min_seconds
        assert sum(runs[:-1]) < given.get("min_seconds", 0) * 1e9
    # compiled once per (function, shapes): reported with the first, bound after
    assert ("compile" in names) == ("warmup" in names) == first_of_shape, (message["id"], names)
    assert ("bind" in names) == (not first_of_shape), (message["id"], names)
    assert names.index("evaluate") == len(names) - len(runs)  # one-off costs first


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_replayed_transcript_answers_as_recorded(path):
    entries = load(path)
    tolerance = 1e-6 if options_of(entries).mode == "numeric" else 1e-10
    tool = Tool(options_of(entries))
    seen = set()
    analysed = 0
    for message, recorded in pairs(entries):
        response = tool.respond(message)
        assert response["id"] == message["id"] == recorded["id"]
        kind = message["kind"]
        if kind == "start":
            assert response["tool"] == "adlab" and response["config"] == recorded["config"]
        elif kind == "define":
            assert response == {"id": message["id"], "success": True} == recorded
        elif kind == "evaluate":
            assert response["success"] is True, response.get("error")
            assert close(recorded["output"], response["output"], tolerance), (
                message["id"], recorded["output"], response["output"])  # fmt: skip
            shape = (message["function"], message.get("description"))
            check_timings(message, response, shape not in seen)
            check_timings(message, recorded, shape not in seen)
            seen.add(shape)
        else:
            assert kind == "analysis"
            assert response == {"id": message["id"]} == recorded
            # the fixture's facts: GradBench's eval judged the recorded answer valid
            assert message["valid"] is True, message.get("error")
            analysed += 1
    assert analysed == sum(m["kind"] == "evaluate" for m, _ in pairs(entries)) > 0


def test_transcripts_cover_each_mode_and_eval():
    modes = {options_of(load(p)).mode for p in TRANSCRIPTS}
    evals = {load(p)[0]["message"]["eval"] for p in TRANSCRIPTS}
    assert set(MODES) <= modes
    assert {"hello", "llsq", "lse", "gmm", "ode", "det", "kmeans"} <= evals


def test_the_comparison_tells_a_wrong_answer():
    assert close({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 1e-12]}, 1e-10)
    assert not close({"a": [1.0, 2.0]}, {"a": [1.0, 2.001]}, 1e-10)
    assert not close([1.0, 2.0], [1.0], 1e-10) and not close(1.0, [1.0], 1e-10)
    assert not close({"a": 1.0}, {"b": 1.0}, 1e-10)


@pytest.mark.parametrize("mode", ["forward", "numeric", "complex-step"])
def test_kmeans_newton_direction_in_every_mode_agrees_with_the_valid_one(mode):
    """The recorded reverse-mode answer was judged valid by GradBench; the Hessian's
    diagonal taken by forward over forward, differences and complex step agrees."""
    entries = load(HERE / "kmeans_reverse.jsonl")
    message, recorded = next((m, r) for m, r in pairs(entries) if m.get("function") == "dir")
    response = Tool(Options(mode=mode)).respond(message)
    assert response["success"] is True, response.get("error")
    assert close(recorded["output"], response["output"], 1e-6)


def test_kmeans_direction_where_no_second_derivative_says_what_to_do(monkeypatch):
    import adlab.gradbench.jobs as jobs

    monkeypatch.setattr(jobs, "NESTING", ("jax",))  # as the engine had it: JAX only
    entries = load(HERE / "kmeans_reverse.jsonl")
    message = next(m for m, _ in pairs(entries) if m.get("function") == "dir")
    response = Tool(Options(mode="reverse", backend="autograd")).respond(message)
    assert response["success"] is False and "--backend jax" in response["error"]


@pytest.mark.parametrize("eval_name", ["llsq", "kmeans"])
def test_a_new_input_of_the_same_shapes_is_answered_as_a_fresh_tool_would(eval_name):
    """A job compiled for one input answers the next (new x and data) by rebinding."""
    entries = load(HERE / f"{eval_name}_reverse.jsonl")
    first = [m for m, _ in pairs(entries) if m["kind"] == "evaluate"][-1]
    second = json.loads(json.dumps(first))
    for key in ("x", "centroids", "points"):
        if key in second["input"]:
            second["input"][key] = (np.asarray(second["input"][key]) * 1.1).tolist()
    reused = Tool(Options(mode="reverse"))
    before = reused.respond(first)
    again = reused.respond(second)
    fresh = Tool(Options(mode="reverse")).respond(second)
    assert "bind" in [t["name"] for t in again["timings"]]  # the same job, rebound
    assert close(fresh["output"], again["output"], 1e-12)
    assert not close(before["output"], again["output"], 1e-6)  # the new input was used


# ---------------------------------------------------------------- errors
@pytest.fixture(scope="module")
def tool():
    return Tool(Options(mode="reverse"))


def llsq_input(n=16, m=4, **extra):
    return {"x": np.linspace(0.1, 0.4, m).tolist(), "n": n, "min_runs": 1,
            "min_seconds": 0.0, **extra}  # fmt: skip


def test_define_of_an_eval_adlab_has_no_model_for_is_refused_with_a_reason(tool):
    response = tool.respond({"id": 7, "kind": "define", "module": "no_such_eval"})
    assert response["id"] == 7 and response["success"] is False
    assert "no_such_eval" in response["error"] and "llsq" in response["error"]


def test_define_a_mode_the_backend_cannot_run_is_refused_with_a_reason():
    response = Tool(Options(mode="reverse", backend="numpy")).respond(
        {"id": 1, "kind": "define", "module": "llsq"})  # fmt: skip
    assert response["success"] is False and "reverse" in response["error"]


def test_a_broken_input_is_a_failure_and_the_session_goes_on(tool):
    broken = {"id": 3, "kind": "evaluate", "module": "llsq", "function": "gradient",
              "input": {"n": 16, "min_runs": 1, "min_seconds": 0}}  # fmt: skip
    response = tool.respond(broken)
    assert response["id"] == 3 and response["success"] is False
    assert "'x'" in response["error"] and "llsq" in response["error"]
    good = {"id": 4, "kind": "evaluate", "module": "llsq", "function": "primal",
            "input": llsq_input()}  # fmt: skip
    assert tool.respond(good)["success"] is True


def test_an_unknown_function_names_those_the_eval_has(tool):
    response = tool.respond({"id": 5, "kind": "evaluate", "module": "llsq",
                             "function": "hessian", "input": llsq_input()})  # fmt: skip
    assert response["success"] is False
    assert "'hessian'" in response["error"] and "gradient" in response["error"]


def test_a_model_error_is_a_failure_naming_the_models_line(monkeypatch):
    from dataclasses import replace

    from adlab.catalog import gradbench as adapters

    broken = adapters.HELLO.source.replace("return x * x", "return np.squre(x)")
    monkeypatch.setitem(adapters.GRADBENCH_EVALS, "hello", replace(adapters.HELLO, source=broken))
    tool = Tool(Options(mode="reverse"))
    message = {"id": 1, "kind": "evaluate", "module": "hello", "function": "double", "input": 2.0}
    response = tool.respond(message)
    assert response["success"] is False
    assert "ModelError: line" in response["error"] and "squre" in response["error"]
    monkeypatch.undo()  # the session goes on, with the model as it is
    response = tool.respond(message)
    assert response["success"] is True and response["output"] == 4.0


def test_a_size_refusal_is_a_failure_with_its_message(monkeypatch):
    import adlab.gradbench.jobs as jobs
    from adlab import SizeError

    def refuse(*args, **kwargs):
        raise SizeError("the derivative would take 80 GB; try a smaller n")

    monkeypatch.setattr(jobs, "prepare", refuse)
    tool = Tool(Options(mode="forward"))
    response = tool.respond({"id": 2, "kind": "evaluate", "module": "llsq",
                             "function": "gradient", "input": llsq_input()})  # fmt: skip
    error = "SizeError: the derivative would take 80 GB; try a smaller n"
    assert response == {"id": 2, "success": False, "error": error}


def test_runs_follow_min_runs_and_min_seconds(tool):
    message = {"id": 9, "kind": "evaluate", "module": "llsq", "function": "gradient",
               "input": llsq_input(n=8, min_runs=3)}  # fmt: skip
    runs = [t for t in tool.respond(message)["timings"] if t["name"] == "evaluate"]
    assert len(runs) == 3
    message["input"] = llsq_input(n=8, min_runs=1, min_seconds=0.05)
    runs = [t["nanoseconds"] for t in tool.respond(message)["timings"] if t["name"] == "evaluate"]
    assert sum(runs) >= 0.05e9 and sum(runs[:-1]) < 0.05e9


def test_timed_runs_counts_calls_and_returns_the_last_result():
    calls = []
    seconds, result = timed_runs(lambda: calls.append(1) or len(calls), min_runs=4)
    assert len(seconds) == len(calls) == 4 and result == 4
    seconds, _ = timed_runs(lambda: sum(range(1000)), min_runs=1, min_seconds=0.02)
    assert sum(seconds) >= 0.02 and sum(seconds[:-1]) < 0.02


# ---------------------------------------------------------------- the stream
def test_serve_answers_every_line_even_unreadable_ones():
    double = {"id": 2, "kind": "evaluate", "module": "hello", "function": "double", "input": 1.5}
    lines = ['{"id": 0, "kind": "start", "eval": "hello"}', "not json",
             '{"id": 1, "kind": "define", "module": "hello"}', json.dumps(double)]  # fmt: skip
    out = io.StringIO()
    serve(lines, out, Options(mode="forward"))
    responses = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in responses] == [0, None, 1, 2]
    assert responses[1]["success"] is False and "not json" in responses[1]["error"]
    assert responses[3]["success"] is True and responses[3]["output"] == 3.0


def test_the_command_speaks_the_protocol_on_stdout_only():
    """``python -m adlab gradbench`` replays the hello transcript's messages as recorded."""
    entries = load(HERE / "hello_reverse.jsonl")
    messages = "".join(json.dumps(e["message"]) + "\n" for e in entries if "message" in e)
    run = subprocess.run([sys.executable, "-m", "adlab", "gradbench", "--mode", "reverse"],
                         input=messages, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    responses = [json.loads(line) for line in run.stdout.splitlines()]
    recorded = [e["response"] for e in entries if "response" in e]
    assert [r["id"] for r in responses] == [r["id"] for r in recorded]
    outputs = [r.get("output") for r in responses]
    assert outputs == [r.get("output") for r in recorded]


def test_the_command_refuses_a_scheme_outside_numeric_mode():
    run = subprocess.run([sys.executable, "-m", "adlab", "gradbench", "--mode", "reverse",
                          "--scheme", "forward"], input="", capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 2 and "--scheme is for --mode numeric" in run.stderr


# ---------------------------------------------------------------- the harness
FAKE_EVAL = """
import json, sys
def send(m):
    print(json.dumps(m), flush=True)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)
send({"id": 0, "kind": "start", "eval": "fake"})
if send({"id": 1, "kind": "define", "module": "fake"})["success"]:
    r = send({"id": 2, "kind": "evaluate", "module": "fake", "function": "twice", "input": 2})
    send({"id": 3, "kind": "analysis", "of": 2, "valid": r.get("output") == 4})
    r = send({"id": 4, "kind": "evaluate", "module": "fake", "function": "twice", "input": 3})
    send({"id": 5, "kind": "analysis", "of": 4, "valid": r.get("output") == 6})
    send({"id": 6, "kind": "evaluate", "module": "fake", "function": "boom", "input": 0})
"""

FAKE_TOOL = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    r = {"id": m["id"]}
    if m["kind"] == "define":
        r["success"] = True
    elif m["kind"] == "evaluate":
        if m["function"] == "boom":
            r.update(success=False, error="boom")
        else:  # wrong on purpose for 3, so that the eval finds one invalid
            r.update(success=True, output=4 if m["input"] == 2 else 7)
    print(json.dumps(r), flush=True)
"""


def fake_checkout(tmp_path: Path) -> Path:
    script = tmp_path / "python" / "gradbench" / "gradbench" / "evals" / "fake" / "run.py"
    script.parent.mkdir(parents=True)
    script.write_text(textwrap.dedent(FAKE_EVAL))
    return tmp_path


def test_harness_relays_and_counts_the_evals_verdicts(tmp_path):
    tool = tmp_path / "tool.py"
    tool.write_text(FAKE_TOOL)
    log = tmp_path / "log.jsonl"
    transcript = harness.run_eval("fake", [sys.executable, str(tool)], fake_checkout(tmp_path),
                                  log=log, timeout_s=120)  # fmt: skip
    assert transcript.problem is None, transcript.eval_stderr
    assert [m["id"] for m in transcript.messages()] == list(range(7))
    assert [r["id"] for r in transcript.responses()] == list(range(7))
    summary = transcript.summary()
    assert (summary.valid, summary.invalid, summary.failed) == (1, 1, 1)
    assert not summary.ok and [o.valid for o in summary.outcomes] == [True, False, None]
    assert load(log) == list(transcript)  # the log is the transcript, line by line


def test_harness_says_when_the_tool_dies(tmp_path):
    tool = tmp_path / "tool.py"
    tool.write_text("import sys; sys.stdin.readline(); sys.exit('tool gave up')\n")
    transcript = harness.run_eval("fake", [sys.executable, str(tool)], fake_checkout(tmp_path),
                                  timeout_s=120)  # fmt: skip
    assert "the tool exited (1) without answering message 0" in transcript.problem
    assert "tool gave up" in transcript.problem
    assert not transcript.summary().ok


@pytest.mark.parametrize("transcript", ["llsq_reverse", "lse_complex_step", "gmm_reverse"])
def test_tfjs_answers_within_gradbenchs_own_tolerance(transcript):
    """backend tfjs (issue 25) computes in float32: each answer within GradBench's own
    tolerance (1e-4 in ADBench's measure, ``gradbench.comparison``) of the recorded
    answers its eval judged valid; its start says float32."""
    from adlab.engine.backends import installed

    if not installed("tfjs"):
        pytest.skip("Node.js is not installed")
    tool = Tool(Options(mode="reverse", backend="tfjs"))
    answered = 0
    for message, recorded in pairs(load(HERE / f"{transcript}.jsonl")):
        response = tool.respond(message)
        if message["kind"] == "start":
            assert response["config"]["precision"] == "float32"
        if message["kind"] == "evaluate":
            assert response["success"] is True, response.get("error")
            assert close(recorded["output"], response["output"], 1e-4), message["id"]
            answered += 1
    assert answered > 0


@pytest.mark.parametrize("backend", ["tfjs", "jax"])
def test_float32_differences_are_refused_not_answered_wrong(backend):
    """In float32, differences miss GradBench's tolerance (TF.js's llsq, lse and gmm were
    judged invalid): the tool refuses them with what to do; float64 differences answer."""
    options = {"backend": backend, "precision": None if backend == "tfjs" else "float32"}
    tool = Tool(Options(mode="numeric", **options))
    messages = list(pairs(load(HERE / "llsq_reverse.jsonl")))
    for message, _ in messages:
        response = tool.respond(message)
        if message["kind"] == "evaluate" and message["function"] != "primal":
            assert response["success"] is False
            assert "float32" in response["error"] and "--mode reverse" in response["error"]
    tool = Tool(Options(mode="numeric", backend="jax"))
    for message, _recorded in messages:
        response = tool.respond(message)
        if message["kind"] == "evaluate":
            assert response["success"] is True, response.get("error")
