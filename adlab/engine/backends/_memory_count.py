"""The counters of memory the Python frameworks share: Python's allocator, and the process's.

``tracemalloc`` sees every array NumPy allocates (NumPy reports them to it), so it
counts NumPy's and autograd's memory exactly, above what was held before. A
framework whose arrays live outside Python's allocator (eager JAX on a CPU) has
only the process's own counter, its peak resident memory (Linux's ``VmHWM``, reset
by writing ``5`` to ``/proc/self/clear_refs``): pages, not arrays.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

#: what the records say of Python's allocator's counter
TRACEMALLOC = "tracemalloc (NumPy's arrays and Python's objects)"
#: what the records say of the process's counter
RSS_COUNTER = "the process's peak resident memory (Linux VmHWM), pages"
_STATUS = "/proc/self/status"


def of_wrt(f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> Callable:
    """``f`` as a function of ``inputs[i]`` for i in ``wrt`` alone, the others held: what a
    framework's reverse mode differentiates, to count what its forward pass keeps."""

    def g(*w: Any) -> Any:
        args = list(inputs)
        for i, a in zip(wrt, w, strict=True):
            args[i] = a
        return f(*args)

    return g


def traced_peak(run: Callable[[], Any]) -> float:
    """The most bytes ``run()`` held at once in Python's allocator, above what was held
    before (tracemalloc started for the call, unless the user had it running)."""
    ours = not tracemalloc.is_tracing()
    if ours:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        out = run()
        _, peak = tracemalloc.get_traced_memory()
        del out
    finally:
        if ours:
            tracemalloc.stop()
    return float(max(peak - before, 0))


def traced_growth(run: Callable[[], Any], less: Callable[[Any], float]) -> float:
    """The bytes still held after ``run()`` while its result lives (less ``less(result)``,
    the result's own): what a taped forward pass keeps for its backward pass."""
    ours = not tracemalloc.is_tracing()
    if ours:
        tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        out = run()
        after, _ = tracemalloc.get_traced_memory()
        held = after - before - less(out)
        del out
    finally:
        if ours:
            tracemalloc.stop()
    return float(max(held, 0))


def _status_kb(field: str) -> int | None:
    try:
        with open(_STATUS) as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def rss_peak(run: Callable[[], Any]) -> float | None:
    """The process's peak resident memory over ``run()`` above its resident memory before
    (Linux only; None where the peak cannot be reset)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    before = _status_kb("VmRSS")
    out = run()
    peak = _status_kb("VmHWM")
    del out
    if before is None or peak is None:
        return None
    return float(max(peak - before, 0) * 1024)
