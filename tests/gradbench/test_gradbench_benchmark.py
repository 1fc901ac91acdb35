"""benchmarks/gradbench.py's reading of GradBench transcripts and its tables, on recorded sessions.

The sessions (tests/fixtures/gradbench/benchmark, see SOURCE.md there) were recorded from real
runs; nothing here runs GradBench or times anything. Expected figures are recomputed here from
the raw timings in the transcript, never copied from a run.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "gradbench" / "benchmark"


@pytest.fixture(scope="module")
def bench():
    # benchmarks/ is no package, and its gradbench.py would shadow GradBench's own: load by path.
    spec = importlib.util.spec_from_file_location(
        "gradbench_benchmark", ROOT / "benchmarks" / "gradbench.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def entries(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]


def evaluate_timings(log: list[dict], function: str) -> list[dict]:
    """The timings the tool gave for the evaluate message of ``function``, read directly."""
    ids = {e["message"]["id"] for e in log
           if "message" in e and e["message"].get("function") == function}  # fmt: skip
    return next(
        e["response"]["timings"] for e in log if "response" in e and e["response"]["id"] in ids
    )


def seconds_named(timings: list[dict], name: str) -> list[float]:
    return [t["nanoseconds"] / 1e9 for t in timings if t["name"] == name]


@pytest.mark.parametrize("tool", ["manual", "jax", "adlab-reverse"])
def test_a_valid_session_gives_one_row_per_size_with_medians_of_evaluate_timings(bench, tool):
    log = entries(f"llsq-{tool}")
    (row,) = bench.rows_from(log, "llsq", tool)
    primal = seconds_named(evaluate_timings(log, "primal"), "evaluate")
    gradient_timings = evaluate_timings(log, "gradient")
    gradient = seconds_named(gradient_timings, "evaluate")
    assert row.size == "n=16,m=8" and row.verdict == "valid" and row.tool == tool
    assert row.primal_s == pytest.approx(statistics.median(primal))
    assert row.derivative_s == pytest.approx(statistics.median(gradient))
    assert row.ratio == pytest.approx(statistics.median(gradient) / statistics.median(primal))
    assert row.runs == len(gradient) >= 3  # the eval asked for --min-runs 3
    # GradBench's scorer takes the mean of its timer's runs, the first one included: the
    # jax tool reports those apart ("published"), the others time only once
    published = seconds_named(gradient_timings, "published") or gradient
    assert row.published_s == pytest.approx(statistics.fmean(published))
    assert row.published_median_s == pytest.approx(statistics.median(published))
    assert row.first_s == pytest.approx(published[0])
    others = [t["nanoseconds"] / 1e9 for t in gradient_timings
              if t["name"] not in ("evaluate", "published")]  # fmt: skip
    assert row.setup_s == pytest.approx(sum(others))


def test_compile_is_kept_out_of_evaluate_where_the_tool_says_so(bench):
    adlab = entries("llsq-adlab-reverse")
    names = {t["name"] for t in evaluate_timings(adlab, "gradient")}
    assert "compile" in names  # adlab reports compile apart: setup, not a run
    (row,) = bench.rows_from(adlab, "llsq", "adlab-reverse")
    assert row.setup_s > 0
    jax = entries("llsq-jax")  # GradBench's timer, then the honest one, on the same program
    timings = evaluate_timings(jax, "gradient")
    assert len(seconds_named(timings, "published")) >= 3 <= len(seconds_named(timings, "evaluate"))
    (row,) = bench.rows_from(jax, "llsq", "jax")
    assert row.setup_s == 0  # GradBench's runs are neither setup nor honest runs


def test_an_undefined_module_reads_no_model_with_the_tools_reason(bench):
    (row,) = bench.rows_from(entries("det-jax"), "det", "jax")
    assert row.verdict.startswith("no model")
    assert "det" in row.verdict and "\n" not in row.verdict
    assert row.derivative_s is None and row.ratio is None


def test_hello_has_no_pair_only_the_verdict(bench):
    log = entries("hello-manual")
    (row,) = bench.rows_from(log, "hello", "manual")
    asked = sum(1 for e in log if "message" in e and e["message"]["kind"] == "evaluate")
    assert row.verdict == "valid" and row.runs == asked and row.size == ""


def test_invalid_failed_and_stopped_sessions_say_so(bench):
    log = entries("llsq-manual")
    for e in log:  # the eval rejects the gradient
        if "message" in e and e["message"]["kind"] == "analysis" and e["message"]["of"] == 4:
            e["message"] |= {"valid": False, "error": "Found 1 mismatches\nat [0]: 1.0 != 2.0"}
    (row,) = bench.rows_from(log, "llsq", "manual")
    assert row.verdict == "gradient invalid: at [0]: 1.0 != 2.0"
    failed = []  # the tool fails the primal (id 2); the eval then sends no analysis of it (id 3)
    for e in entries("llsq-manual"):
        if e.get("response", {}).get("id") == 2:
            e["response"] = {"id": 2, "success": False, "error": "Traceback\nSizeError: too big"}
        if 3 not in (e.get("message", {}).get("id"), e.get("response", {}).get("id")):
            failed.append(e)
    (row,) = bench.rows_from(failed, "llsq", "manual")
    assert row.verdict == "primal failed: SizeError: too big" and row.primal_s is None
    cut = entries("llsq-manual")[:-3]  # the gradient asked; the tool died before answering
    assert cut[-1]["message"]["function"] == "gradient"
    size, stop = bench.rows_from(_Transcript(cut, "the tool exited (1)"), "llsq", "manual")
    assert size.verdict == "no derivative answered" and size.derivative_s is None
    assert stop.verdict == "stopped: the tool exited (1)"


class _Transcript(list):
    def __init__(self, items, problem):
        super().__init__(items)
        self.problem = problem


def _rows(bench):
    return [r for t in ("manual", "jax", "adlab-reverse")
            for r in bench.rows_from(entries(f"llsq-{t}"), "llsq", t)]  # fmt: skip


def test_the_goal_compares_adlabs_best_valid_ratio_with_manuals(bench):
    rows = _rows(bench)
    by_tool = {r.tool: r for r in rows}
    ours, manual = by_tool["adlab-reverse"].ratio, by_tool["manual"].ratio
    line = bench.goal_table(rows).splitlines()[2]
    assert "adlab-reverse" in line
    assert line.rstrip(" |").endswith("yes" if ours <= manual else "no")
    # a mode that is not valid is not adlab's best
    broken = [dataclasses.replace(r, verdict="gradient invalid: x") if r.tool.startswith("adlab")
              else r for r in rows]  # fmt: skip
    line = bench.goal_table(broken).splitlines()[2]
    assert "none valid" in line and line.rstrip(" |").endswith("-")


def test_rounds_are_merged_into_medians_of_each_rounds_ratio(bench):
    """--rounds: a primal and its derivative are timed in separate messages, so each
    round's ratio is paired within its session, and the median of those is reported."""
    row = bench.Row("gmm", "manual", "valid", size="2_5", primal_s=1.0, derivative_s=2.0, runs=3)
    rounds = [[row], [dataclasses.replace(row, primal_s=2.0)],  # 1x
              [dataclasses.replace(row, derivative_s=6.0)]]  # 6x  # fmt: skip
    (merged,) = bench.merge_rounds(rounds)
    assert merged.ratio == 2.0 and sorted(merged.ratios) == [1.0, 2.0, 6.0]
    assert (merged.primal_s, merged.derivative_s, merged.runs) == (1.0, 2.0, 9)
    assert "2x (1x-6x)" in bench.main_table([merged])
    bad = bench.merge_rounds([[row], [dataclasses.replace(row, verdict="dir invalid: x")]])
    assert bad[0].verdict == "dir invalid: x"
    assert bench.merge_rounds([[row]])[0] == row  # one round: as it was


def test_the_jax_table_sets_the_published_mean_against_the_honest_median(bench):
    rows = _rows(bench)
    by_tool = {r.tool: r for r in rows}
    table = bench.jax_table(rows)
    cells = [c.strip() for c in table.splitlines()[2].strip("|").split("|")]
    header = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
    got = dict(zip(header, cells, strict=True))
    jax = by_tool["jax"]
    assert got["first run"] == bench.seconds(jax.first_s)
    assert got["published (mean)"] == bench.seconds(jax.published_s)
    assert got["honest median"] == bench.seconds(jax.derivative_s)
    assert got["published / honest"] == bench.ratio(jax.published_s / jax.derivative_s)


def test_every_table_line_has_its_headers_number_of_cells(bench):
    rows = _rows(bench) + bench.rows_from(entries("det-jax"), "det", "jax")
    for table in (bench.main_table(rows), bench.goal_table(rows), bench.jax_table(rows)):
        counts = {line.count("|") for line in table.splitlines()}
        assert len(counts) == 1, table


def test_each_adlab_mode_is_its_own_tool(bench):
    tools = bench.tool_commands(["reverse", "numeric"], "torch", "forward")
    assert tools["adlab-reverse"][-4:] == ["--mode", "reverse", "--backend", "torch"]
    assert tools["adlab-numeric"][-2:] == ["--scheme", "forward"]
    assert {"manual", "jax"} <= set(tools)


def test_gradbenchs_tensorflow_js_tool_runs_only_when_given_its_folder(bench, tmp_path):
    assert "tensorflow-js" not in bench.tool_commands(["reverse"], "tfjs", None)
    cmd = bench.tool_commands(["reverse"], "tfjs", None, str(tmp_path))["tensorflow-js"]
    # tsx by absolute URL and run.ts by absolute path: the tool runs from GradBench's root
    assert cmd[:2] == ["node", "--import"]
    assert cmd[2] == (tmp_path / "node_modules" / "tsx" / "dist" / "loader.mjs").as_uri()
    assert cmd[3] == str(tmp_path / "tensorflow" / "run.ts")
