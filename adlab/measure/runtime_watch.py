"""A stopwatch whose repeats are timed inside the runtime that runs the program.

A program that runs outside Python (JavaScript in Node or in the Lab's page) has a
``timer`` (``Prepared.timer``): timed from Python, each call would be a round trip
through a pipe, which is not the program. ``RuntimeStopwatch`` keeps ``Stopwatch``'s
interface and rules, so a sweep takes its repeats in turn with the Python series',
stops them by the same interval rule and charges them to the same budget; only where
the clock is read differs. Its ``start`` makes one Python call (which sends the inputs
and gives the result the sweep checks), then asks the runtime for the first call's
seconds (kept apart), warm-up and a loop count; each ``repeat`` asks it for one more
repeat of about ``target_s``. The round trip is outside the timed loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .timing import Stopwatch


def timer_of(fn: Callable) -> Any:
    """The runtime timer behind ``fn`` (a ``Prepared``, or its bound ``with_error``), or None."""
    owner = getattr(fn, "__self__", fn)
    return getattr(owner, "timer", None)


class RuntimeStopwatch(Stopwatch):
    """``Stopwatch`` for a program timed where it runs (see the module docstring).

    Attributes (besides ``Stopwatch``'s):
        timer: the program's timer (``backends.js.timer.JsTimer``).
        env: what the runtime said of itself (its version, the timer's resolution).
        where, device: where it ran ("node", "browser") and on what ("cpu", "wasm" ...).
    """

    #: repeats asked of the runtime per round of the round robin: one, as a Python
    #: series takes, so a change of load hits every series alike (the round trip,
    #: ~0.1 ms, is outside the timed loop)
    batch = 1

    def __init__(self, fn: Callable, args: Sequence[Any] = (), **options: Any) -> None:
        super().__init__(fn, args, **options)
        self.timer = timer_of(fn)
        if self.timer is None:
            raise TypeError(f"{fn!r} has no runtime timer: time it with Stopwatch")
        self.env: dict[str, Any] = {}
        self.where: str | None = None
        self.device: str | None = getattr(self.timer, "device", None)

    def start(self) -> None:
        """One Python call (it sends the inputs; its result is kept), then the runtime's
        first call, warm-up and calibration; its last trial is the first repeat."""
        t0 = self.clock()
        self.result = self.fn(*self.args)
        called = self.clock() - t0
        budget = None if self.budget_s is None else max(self.budget_s - called, 0.0)
        t0 = self.clock()
        started = self.timer.start(self.target_s, budget)
        self.spent_s = self.clock() - t0 + (called if self.charge_first else 0.0)
        self.where = self.timer.where
        self.env = dict(started.get("env") or {})
        self.first_call_s = float(started["first_s"])
        self.warm_calls = [float(s) for s in started["warm_s"]]
        self.loops = int(started["loops"])
        sample = float(started["sample_s"])
        self.samples = [sample]
        self._per_repeat = sample * self.loops
        self._timer = self.timer  # Stopwatch.wants: started, repeats may follow

    def repeat(self) -> None:
        """One more round: ``batch`` repeats timed in the runtime (an exception is kept
        in ``error``)."""
        t0 = self.clock()
        try:
            self.samples.extend(self.timer.repeats(self.batch))
        except Exception as exc:  # the sweep shows it as the point's reason; others go on
            self.error = exc
        finally:
            self.spent_s += self.clock() - t0


def stopwatch(fn: Callable, args: Sequence[Any] = (), **options: Any) -> Stopwatch:
    """A ``Stopwatch`` on ``fn(*args)``: a ``RuntimeStopwatch`` where ``fn`` runs outside
    Python and has a timer, and the call is the one it times (``p(*p.inputs)``)."""
    owner = getattr(fn, "__self__", fn)
    inputs = getattr(owner, "inputs", None)
    if timer_of(fn) is not None and inputs is not None and _same(args, inputs):
        return RuntimeStopwatch(fn, args, **options)
    return Stopwatch(fn, args, **options)


def _same(args: Sequence[Any], inputs: Sequence[Any]) -> bool:
    return len(args) == len(inputs) and all(a is b for a, b in zip(args, inputs, strict=True))
