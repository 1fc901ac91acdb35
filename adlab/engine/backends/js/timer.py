"""A JavaScript program timed inside the runtime that runs it, not across the pipe.

Timed from Python, a call of the emitted program is a round trip to Node: JSON, base64
and two pipes, 50-100 us, which would be most of what a sweep reports for programs that
take a few microseconds. So a ``Prepared`` on a JavaScript backend carries a ``timer``
(``Prepared.timer``), and a sweep's stopwatch (``adlab.measure.runtime_watch``) asks it
for repeats instead of timing the Python call: ``timing.js`` reads ``performance.now()``
around loops of calls, in Node or in the Lab's page, with the rules of a Python series
(first call apart, warm-up, repeats of ``target_s``).

The timer times the program at the inputs its last call sent: the stopwatch makes that
call first (``p(*p.inputs)``), so the repeats are of the call a sweep times.
"""

from __future__ import annotations

from typing import Any

from .node import JsError


class JsTimer:
    """Repeats of one emitted program, timed by ``timing.js`` where it runs.

    Args:
        fn: the ``JsFunction`` the program's calls go through (its ``last`` program).
        device: what it runs on ("cpu": plain JavaScript).
    """

    def __init__(self, fn: Any, device: str = "cpu") -> None:
        self.fn = fn
        self.device = device
        self._loaded: Any = None

    @property
    def where(self) -> str:
        """Where its last call ran: "node" or "browser"."""
        loaded = self.fn.last
        transport = getattr(loaded, "transport", None)
        return getattr(transport, "where", "node")

    def _ask(self, msg: dict) -> dict:
        loaded = self.fn.last
        if loaded is None:
            raise RuntimeError("a JavaScript program is timed after its first call: call it "
                               "once (p(*p.inputs)) first")  # fmt: skip
        try:
            return loaded.ask({**msg, "id": loaded.id})
        except JsError as exc:
            raise RuntimeError(f"timing the JavaScript program failed: {exc}") from None

    def start(self, target_s: float, budget_s: float | None = None) -> dict[str, Any]:
        """Warm-up and the loop count, in the runtime: ``first_s`` (the program's first call,
        alone), ``warm_s``, ``loops``, ``sample_s`` (the first repeat, seconds per call) and
        ``env`` (the runtime, its version, the timer's resolution, cross-origin isolation)."""
        started = self._ask({"op": "time_start", "target_s": target_s, "budget_s": budget_s})
        return {**started, "env": runtime_env(started.get("env") or {})}

    def repeats(self, k: int = 1) -> list[float]:
        """``k`` more repeats: seconds per call of each."""
        return [float(s) for s in self._ask({"op": "time_repeats", "k": int(k)})["samples_s"]]


def environment(transport: Any) -> dict[str, Any]:
    """What records' ``env`` says of the JavaScript runtime ``transport`` runs (``runtime_env``)."""
    return runtime_env(transport.request({"op": "describe"}))


def runtime_env(d: dict[str, Any]) -> dict[str, Any]:
    """Records' ``env`` fields from ``timing.js``'s ``describe``: ``js_runtime`` ("node" or
    "browser"), ``js_runtime_version`` (Node's version or the browser's user agent),
    ``timer``, ``timer_resolution_s``, ``cross_origin_isolated`` (None outside a page)."""
    return {
        "js_runtime": d.get("runtime"),
        "js_runtime_version": d.get("runtime_version"),
        "timer": d.get("timer"),
        "timer_resolution_s": d.get("timer_resolution_s"),
        "cross_origin_isolated": d.get("cross_origin_isolated"),
    }
