"""adlab as a GradBench tool: one response per message, on stdin/stdout.

The protocol is GradBench's (``CONTRIBUTING.md``, "Protocol" and "Specification",
github.com/gradbench/gradbench): the eval sends ``start``, ``define``,
``evaluate`` and ``analysis`` messages, one JSON object a line, and the tool
answers each with the message's ``id``. Only ``define`` and ``evaluate`` get
substantive answers.

Timing differs from GradBench's own Python tools (``gradbench/wrap.py``), which
time the first call with its compile and never wait for JAX's asynchronous
results: here each (function, shapes) is compiled once and that cost reported
apart (``"prepare"``, ``"compile"``, ``"warmup"``, ``"bind"``), and each ``"evaluate"`` timing
is one call with its result awaited (``adlab.measure.timing.timed_runs``).

No failure of a model, a size refusal or a bad input ends the session: each
becomes ``success: false`` with adlab's message, and the next message is read.
"""

from __future__ import annotations

import contextlib
import json
import sys
import traceback
import warnings
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from .._vocab import ModelError
from ..catalog.gradbench import gradbench_eval
from ..engine.backends import get_backend
from ..engine.backends.js.node import answers_within
from ..engine.modes import get_rule
from ..engine.programs.memory import SizeError
from ..measure.timing import timed_runs
from .argmin import ArgminJob
from .jobs import Job, Options, timing

#: the tool's name in ``start``'s response
TOOL = "adlab"
#: jobs kept at once; an eval walks its sizes upwards and rarely comes back
CACHED_JOBS = 8


def error_text(exc: BaseException) -> str:
    """An error as the eval's log shows it: adlab's own message for what a user can
    cause (it names the line and what to do), the traceback for anything else."""
    if isinstance(exc, (ModelError, SizeError, ValueError, TypeError, KeyError)):
        return f"{type(exc).__name__}: {exc}"
    return "".join(traceback.format_exception(exc)).strip()


def _runs(input: Any) -> tuple[int, float]:
    """GradBench's ``min_runs`` and ``min_seconds``, where the input has them."""
    if isinstance(input, dict):
        return int(input.get("min_runs", 1)), float(input.get("min_seconds", 0.0))
    return 1, 0.0


def _key(module: str, function: str, settings: dict, args: tuple) -> tuple:
    """What a compiled job depends on: the function, the model's settings, the shapes."""
    shapes = tuple((np.shape(a), np.asarray(a).dtype.str) for a in args)
    return module, function, tuple(sorted(settings.items())), shapes


def _preview(input: Any) -> str:
    """The input's keys and sizes, not its numbers: enough to see what is missing."""
    if isinstance(input, dict):
        parts = [f"{k}: {len(v)} items" if isinstance(v, list) else f"{k}: {v!r}"[:40]
                 for k, v in input.items()]  # fmt: skip
        return "got {" + ", ".join(parts) + "}"
    return f"got {json.dumps(input)[:80]}"


class Tool:
    """The protocol's state: the tool's options and the jobs compiled so far."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self._jobs: dict[tuple, Job] = {}

    def respond(self, message: dict) -> dict:
        """The response to one message (never raises for a bad message)."""
        response: dict[str, Any] = {"id": message.get("id")}
        kind = message.get("kind")
        # one call in Node past --max-seconds (jax-js or TF.js, op by op) stops it there
        why = (f" (the tool's --max-seconds {self.options.max_seconds:g} for one call of the "
               f"framework in Node: run the tool with --backend js, the program itself "
               f"emitted, or --backend jax, or allow it with a larger --max-seconds)")  # fmt: skip
        try:
            with warnings.catch_warnings(record=True) as caught, answers_within(
                self.options.max_seconds, why
            ):
                warnings.simplefilter("always")  # shown on stderr, never a failed answer
                self._respond(kind, message, response)
        except Exception as exc:  # one bad input must not end the session
            response.update(success=False, error=error_text(exc))
        for w in caught:
            print(f"adlab: {w.category.__name__}: {w.message}", file=sys.stderr)
        return response

    def _respond(self, kind: Any, message: dict, response: dict) -> None:
        if kind == "start":
            response.update(tool=TOOL, config=self.options.config())
        elif kind == "define":
            response.update(self.define(message))
        elif kind == "evaluate":
            response.update(self.evaluate(message))

    def define(self, message: dict) -> dict:
        """success true for the evals adlab has a model for, and that the tool's mode
        and backend can run; else false and the reason."""
        try:
            gradbench_eval(message.get("module", ""))
        except ValueError as exc:  # the adapters' own words: which evals adlab answers
            return {"success": False, "error": str(exc)}
        refusal = get_rule(self.options.mode).refusal(get_backend(self.options.backend))
        if refusal:
            return {"success": False, "error": refusal}
        return {"success": True}

    def evaluate(self, message: dict) -> dict:
        """Compile once per (function, shapes), bind the input, time ``min_runs`` runs
        (and ``min_seconds``), and answer the last run's result in the eval's shapes."""
        module = message.get("module", "")
        adapter = gradbench_eval(module)
        function, input = message.get("function", ""), message.get("input")
        kind = adapter.kind(function)
        try:
            model, args = adapter.inputs(input, function)
            key = _key(module, function, adapter.settings(input), args)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, ModelError):  # the model's setup failed: its own words
                raise
            raise ValueError(
                f"the {module} eval's input to {function!r} is not what adlab's {module} "
                f"model reads ({type(exc).__name__}: {exc}); GradBench's eval documents "
                f"the input ({_preview(input)})"
            ) from exc
        timings = []
        job = self._jobs.get(key)
        if job is None:
            job = (ArgminJob(adapter, function, model, args, self.options) if kind == "argmin"
                   else Job(kind, model, args, self.options))  # fmt: skip
            timings += job.timings
            if len(self._jobs) >= CACHED_JOBS:
                self._jobs.pop(next(iter(self._jobs)))
            self._jobs[key] = job
        timings += job.bind(args)
        min_runs, min_seconds = _runs(input)
        seconds, result = timed_runs(job.call, min_runs=min_runs, min_seconds=min_seconds)
        timings += [timing("evaluate", s) for s in seconds]
        output = adapter.output(function, job.to_numpy(result), input)
        return {"success": True, "output": output, "timings": timings}


def serve(lines: Iterable[str], out: IO[str], options: Options) -> int:
    """Answer each message line on ``out``, until the eval closes its end.

    Anything the model or a framework prints goes to stderr: stdout carries only
    the protocol.
    """
    tool = Tool(options)
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError(f"a message is a JSON object, got {type(message).__name__}")
        except ValueError as exc:  # answered, so that the eval is not left waiting
            error = f"adlab could not read the message {line.strip()[:200]!r}: {exc}"
            response = {"id": None, "success": False, "error": error}
        else:
            with contextlib.redirect_stdout(sys.stderr):
                response = tool.respond(message)
        out.write(json.dumps(response) + "\n")
        out.flush()
    return 0
