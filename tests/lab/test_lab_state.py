"""The Lab's state alone (no widgets), on the path a Jupyter kernel takes.

In a kernel, results reach the traits through the kernel's IO loop (``post``),
never from the worker thread. Here a queue stands in for the IO loop, and the
test's thread plays the kernel's main thread.

Internals: the series' names as the Lab writes them (lab.modes.variant) and the sizes it
runs (lab.runner.log_sizes), to check what the state holds.
"""

from __future__ import annotations

import queue
import threading
import time

from _lab_helpers import FAST

from adlab.lab import LabState
from adlab.lab.modes import variant
from adlab.lab.runner import log_sizes
from adlab.measure import parse_variant


def test_results_change_only_on_the_ui_thread(tmp_path):
    loop: queue.Queue = queue.Queue()
    state = LabState(n=10, modes=["forward", "numeric"], frameworks=["jax", "numpy"],
                     post=loop.put, edits=tmp_path, **FAST)  # fmt: skip
    threads = set()
    state.observe(lambda _: threads.add(threading.current_thread()), ["results", "steps", "status"])
    state.run()
    start = time.monotonic()
    while state.running and time.monotonic() - start < 120:  # the IO loop, turning
        try:
            loop.get(timeout=0.05)()
        except queue.Empty:
            pass
    assert not state.running and state.status.startswith("Done")
    assert threads == {threading.current_thread()}
    assert state.results and state.steps and not state.bugs
    assert {r.label for r in state.results} >= {"forward", "numeric[central](numpy)"}


def test_wait_applies_results_on_the_calling_thread(tmp_path):
    loop: queue.Queue = queue.Queue()  # never turned: as in a cell running lab.run(wait=True)
    state = LabState(n=3, modes=["reverse"], post=loop.put, steps=False, edits=tmp_path, **FAST)
    state.run(wait=True)
    assert not state.running and state.results
    assert not loop.empty()  # the IO loop's callbacks find nothing left to do
    before = list(state.results)
    while not loop.empty():
        loop.get()()
    assert state.results == before


def test_log_sizes():
    assert log_sizes(1) == [1]
    assert log_sizes(7) == [1, 3, 7]
    assert log_sizes(1000) == [1, 3, 10, 30, 100, 300, 1000]
    assert log_sizes(10_000)[-3:] == [1000, 3000, 10_000]
    assert log_sizes(102) == [1, 3, 10, 30, 102]  # not 100 and 102
    assert log_sizes(2) == [1, 2] and log_sizes(4) == [1, 4]
    assert log_sizes(50, fixed=[5, 20, 100]) == [5, 20]
    assert log_sizes(2, fixed=[5, 20]) == [2]


def test_a_mode_on_a_framework_is_spelled_and_read_back_by_the_series_syntax():
    assert [
        variant(m, "richardson", f)
        for m, f in (
            ("forward", "jax"),
            ("numeric", "jax"),
            ("numeric", "numpy"),
            ("reverse", "torch"),
        )
    ] == ["forward", "numeric[richardson]", "numeric[richardson](numpy)", "reverse(torch)"]
    for mode in ("forward", "reverse", "numeric", "complex-step"):
        for framework in ("jax", "numpy", "torch", "tensorflow", "autograd"):
            v = parse_variant(variant(mode, "central", framework))
            assert (v.mode, v.backend or "jax") == (mode, framework)
