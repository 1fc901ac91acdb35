"""A compile's seconds twice: the wall seconds waited, and the CPU seconds it cost.

The wall seconds are what the user waited there and then (``Program.compile_s``).
They stretch with the machine's load: beside 8 CPU-burning processes on 2 cores,
compiles of at most 0.8 CPU seconds took up to 11.6 s, and a quiet sweep that later
loaded those programs from adlab's cache predicted its next sizes' compiles from
them and skipped 4-6 points that take a fraction of the budget (issue 31). So what
adlab's cache keeps, to predict later runs by, is the CPU seconds (at most the wall
seconds): the work, which a busy machine delays but hardly adds to.

Whose CPU seconds: not the calling thread's. XLA compiles on threads of its own
(jaxlib 0.10, CPU: three of them took 3.7 s of CPU while the caller took 0.004 s), so
``time.thread_time()`` undercounted compiles 7-55 times here. The process's CPU time
counts them, and counts also whatever else the process does meanwhile: a sweep compiles
two programs at once (``measure.preparing.compile_all``). So the process's CPU time
is shared out among the compiles in flight: each interval between one starting or
ending and the next is split evenly among those running through it. Anything else
the process runs meanwhile is charged too, which the bound by the wall seconds caps.
With little else running (2 cores) the CPU seconds were 0.9 of the wall seconds; where
XLA compiles on several cores at once they may exceed them, and the wall seconds are kept.
"""

from __future__ import annotations

import threading
import time

_lock = threading.Lock()
#: each compile in flight (by its clock's id): its share of the process's CPU so far
_shares: dict[int, float] = {}
_since = 0.0  # the process's CPU time when a compile last started or ended


def _settle(now: float) -> None:
    """Share the process's CPU time since the last start or end among those running."""
    global _since
    if _shares:
        part = (now - _since) / len(_shares)
        for k in _shares:
            _shares[k] += part
    _since = now


class CompileClock:
    """``with CompileClock() as c: ...; c.stop()``: ``wall_s``, ``cpu_s`` and ``kept_s``
    of what ran in between (stopped on leaving the block, if not before)."""

    def __init__(self) -> None:
        self.wall_s = self.cpu_s = 0.0
        self._start: float | None = None

    def __enter__(self) -> CompileClock:
        with _lock:
            _settle(time.process_time())
            _shares[id(self)] = 0.0
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._start is None:
            return
        self.wall_s = time.perf_counter() - self._start
        self._start = None
        with _lock:
            _settle(time.process_time())
            self.cpu_s = _shares.pop(id(self))

    @property
    def kept_s(self) -> float:
        """What adlab's cache keeps: the CPU seconds, at most the wall seconds."""
        return min(self.cpu_s, self.wall_s)
