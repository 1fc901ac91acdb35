"""Run one GradBench eval against one tool through pipes, as GradBench's intermediary does.

GradBench's own intermediary is its Rust CLI (``crates/gradbench/src/intermediary.rs``),
which cannot be built here. This is the same relay: the eval's messages go to the
tool line by line, each response back to the eval, and every line is kept in the
intermediary's log format (``{"elapsed": {"nanoseconds": ...}, "message" | "response": ...}``),
so a transcript recorded here reads like one GradBench records.

The eval runs as GradBench's Dockerfiles run it: ``python/gradbench/gradbench/evals/<eval>/run.py``
from the checkout's root (its reference binaries are found by relative path), with
``python/gradbench`` on ``PYTHONPATH``. The session ends when the eval closes its stdout.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any


@dataclass
class Outcome:
    """What happened to one ``evaluate``: the tool's success, then the eval's analysis.

    ``valid`` is None when no analysis came: GradBench's evals send one only after
    a success.
    """

    id: int
    function: str
    description: str | None
    success: bool
    valid: bool | None = None
    error: str | None = None
    timings: list[dict] = field(default_factory=list)


@dataclass
class Summary:
    """The eval's verdicts on one session: counts, and one ``Outcome`` per evaluate.

    ``undefined`` counts ``define`` messages the tool answered with success false;
    ``problem`` says why the session ended early (the tool died, bad JSON), else None.
    """

    outcomes: list[Outcome]
    undefined: int
    problem: str | None

    @property
    def valid(self) -> int:
        return sum(o.valid is True for o in self.outcomes)

    @property
    def invalid(self) -> int:
        return sum(o.valid is False for o in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(not o.success for o in self.outcomes)

    @property
    def ok(self) -> bool:
        """Every answer valid, none failed, the module defined, the session whole."""
        return (self.problem is None and self.undefined == 0 and self.failed == 0
                and self.invalid == 0 and self.valid == len(self.outcomes))  # fmt: skip

    def __str__(self) -> str:
        text = f"{self.valid} valid, {self.invalid} invalid, {self.failed} failed"
        if self.undefined:
            text += f", {self.undefined} undefined"
        return text + (f" ({self.problem})" if self.problem else "")


class Transcript(list):
    """The session's log entries in order, in GradBench's log format.

    ``problem`` is as in ``Summary``; the processes' stderr is kept for a reader.
    """

    problem: str | None = None
    eval_stderr: str = ""
    tool_stderr: str = ""

    def messages(self) -> list[dict]:
        """The eval's messages, in order."""
        return [e["message"] for e in self if "message" in e]

    def responses(self) -> list[dict]:
        """The tool's responses, in order."""
        return [e["response"] for e in self if "response" in e]

    def summary(self) -> Summary:
        return summarize(self)


def summarize(entries: Sequence[dict], problem: str | None = None) -> Summary:
    """Pair each ``evaluate`` with its response and the eval's ``analysis`` of it."""
    pending: dict[int, dict] = {}
    outcomes: dict[int, Outcome] = {}
    undefined = 0
    for entry in entries:
        if "message" in entry:
            m = entry["message"]
            pending[m["id"]] = m
            if m.get("kind") == "analysis" and m.get("of") in outcomes:
                o = outcomes[m["of"]]
                o.valid, o.error = bool(m.get("valid")), m.get("error")
            continue
        r = entry["response"]
        m = pending.get(r.get("id"), {})
        if m.get("kind") == "define" and not r.get("success"):
            undefined += 1
        elif m.get("kind") == "evaluate":
            outcomes[m["id"]] = Outcome(
                id=m["id"], function=m.get("function", ""), description=m.get("description"),
                success=bool(r.get("success")), error=r.get("error"),
                timings=list(r.get("timings") or []),
            )  # fmt: skip
    problem = problem if problem is not None else getattr(entries, "problem", None)
    return Summary(outcomes=list(outcomes.values()), undefined=undefined, problem=problem)


def eval_command(eval_name: str, eval_args: Sequence[str] = ()) -> list[str]:
    """How GradBench's Dockerfiles start an eval, with this Python (run from the checkout)."""
    script = f"python/gradbench/gradbench/evals/{eval_name}/run.py"
    return [sys.executable, script, *eval_args]


def _drain(stream: IO[str], into: list[str]) -> threading.Thread:
    """Read a pipe to its end on a thread, so a chatty stderr never blocks its writer."""
    thread = threading.Thread(target=lambda: into.extend(stream), daemon=True)
    thread.start()
    return thread


def run_eval(
    eval_name: str,
    tool_cmd: str | Sequence[str],
    gradbench_dir: str | os.PathLike,
    log: str | os.PathLike | IO[str] | None = None,
    *,
    eval_args: Sequence[str] = (),
    timeout_s: float | None = None,
    tool_cwd: str | os.PathLike | None = None,
) -> Transcript:
    """Run GradBench's eval ``eval_name`` against ``tool_cmd``; returns the transcript.

    Args:
        eval_name: a folder of ``python/gradbench/gradbench/evals`` (``llsq``, ``hello``...).
        tool_cmd: the tool's command (a list, or a string split as a shell would).
        gradbench_dir: the GradBench checkout; the eval runs there, and so does the
            tool unless ``tool_cwd`` says otherwise (both with ``python/gradbench``
            on ``PYTHONPATH``, so GradBench's own Python tools run as they are).
        log: a path or an open text file: the transcript is written there as JSON
            lines as it happens.
        eval_args: the eval's own arguments (sizes: ``-n 16 32``, ``--min-runs 1``...).
        timeout_s: the whole session's limit; past it both processes are killed and
            the transcript's ``problem`` says so.

    Returns:
        A ``Transcript`` (a list of log entries); ``.summary()`` counts the eval's
        verdicts: valid, invalid, failed per evaluate.
    """
    root = Path(gradbench_dir).resolve()
    tool_argv = shlex.split(tool_cmd) if isinstance(tool_cmd, str) else list(tool_cmd)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(root / "python" / "gradbench"), env.get("PYTHONPATH")) if p
    )
    pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True, bufsize=1, env=env)  # fmt: skip
    evaluator = subprocess.Popen(eval_command(eval_name, eval_args), cwd=root, **pipes)
    tool = subprocess.Popen(tool_argv, cwd=tool_cwd or root, **pipes)
    eval_err: list[str] = []
    tool_err: list[str] = []
    drains = [_drain(evaluator.stderr, eval_err), _drain(tool.stderr, tool_err)]
    timer = None
    timed_out = threading.Event()
    if timeout_s is not None:

        def _kill() -> None:
            timed_out.set()
            for proc in (evaluator, tool):
                proc.kill()

        timer = threading.Timer(timeout_s, _kill)
        timer.start()
    out = open(log, "w") if isinstance(log, (str, os.PathLike)) else log  # noqa: SIM115
    transcript = Transcript()
    start = time.perf_counter_ns()
    try:
        transcript.problem = _relay(evaluator, tool, transcript, out, start)
    finally:
        if timer is not None:
            timer.cancel()
        for proc in (evaluator, tool):
            for pipe in (proc.stdin, proc.stdout):
                try:
                    pipe.close()
                except OSError:  # a pipe the other side already broke
                    pass
        for proc in (evaluator, tool):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for d in drains:
            d.join(timeout=5)
        for proc in (evaluator, tool):
            proc.stderr.close()
        if out is not None and out is not log:
            out.close()
    transcript.eval_stderr, transcript.tool_stderr = "".join(eval_err), "".join(tool_err)
    if transcript.problem and transcript.problem.startswith("the tool exited"):
        tail = transcript.tool_stderr.strip().splitlines()[-5:]
        transcript.problem += (": " + " / ".join(tail)) if tail else ""
    if timed_out.is_set():
        transcript.problem = f"the session ran past {timeout_s} s and was stopped"
    elif transcript.problem is None and evaluator.returncode not in (0, None):
        tail = transcript.eval_stderr.strip().splitlines()[-5:]
        transcript.problem = f"the eval exited with {evaluator.returncode}: " + " / ".join(tail)
    return transcript


def _relay(evaluator: subprocess.Popen, tool: subprocess.Popen, transcript: Transcript,
           out: IO[str] | None, start: int) -> str | None:  # fmt: skip
    """Message, response, message... until the eval closes its stdout; returns a problem or None."""

    def keep(kind: str, line: str) -> dict:
        try:
            body: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _Stop(f"invalid JSON from the {'eval' if kind == 'message' else 'tool'}: "
                        f"{line.strip()[:200]!r} ({exc})") from None  # fmt: skip
        entry = {"elapsed": {"nanoseconds": time.perf_counter_ns() - start}, kind: body}
        transcript.append(entry)
        if out is not None:
            out.write(json.dumps(entry) + "\n")
            out.flush()
        return body

    try:
        for line in evaluator.stdout:
            message = keep("message", line)
            try:
                tool.stdin.write(line if line.endswith("\n") else line + "\n")
                tool.stdin.flush()
            except (BrokenPipeError, OSError):
                return f"the tool exited ({tool.poll()}) before message {message.get('id')}"
            answer = tool.stdout.readline()
            if not answer:
                code = tool.wait()
                return f"the tool exited ({code}) without answering message {message.get('id')}"
            keep("response", answer)
            try:
                evaluator.stdin.write(answer)
                evaluator.stdin.flush()
            except (BrokenPipeError, OSError):
                return None  # the eval has stopped listening: it is done
    except _Stop as stop:
        return str(stop)
    return None


class _Stop(Exception):
    """The relay cannot go on (bad JSON); the reason is the session's problem."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m adlab.gradbench.harness EVAL --tool CMD [--log FILE] [-- EVAL ARGS]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m adlab.gradbench.harness",
        description="Run one of GradBench's evals against a tool; print the eval's verdicts.",
    )
    parser.add_argument("eval", help="the eval: hello, llsq, lse, gmm, ode, det, kmeans...")
    parser.add_argument("--tool", required=True,
                        help="its command: 'python -m adlab gradbench --mode reverse'")  # fmt: skip
    parser.add_argument("--gradbench", default=os.environ.get("GRADBENCH_DIR", "."),
                        help="the GradBench checkout (default $GRADBENCH_DIR, else .)")  # fmt: skip
    parser.add_argument("--log", help="write the transcript here (JSON lines)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds for the session")
    parser.epilog = "After --, the eval's own arguments: -- -n 16 32 --min-runs 1"
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, eval_args = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    transcript = run_eval(args.eval, args.tool, args.gradbench, args.log,
                          eval_args=eval_args, timeout_s=args.timeout)  # fmt: skip
    summary = transcript.summary()
    print(f"{args.eval}: {summary}")
    for o in summary.outcomes:
        if o.error or o.valid is False:
            print(f"  [{o.id}] {o.function} {o.description or ''}: {o.error}", file=sys.stderr)
    return 0 if summary.ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
