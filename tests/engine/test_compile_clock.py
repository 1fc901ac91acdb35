"""What adlab's cache keeps of a compile: its CPU seconds, shared among the compiles in
flight, at most its wall seconds (issue 31). The clocks are scripted: the sharing is
arithmetic, whatever the machine's load.

Internals: backends.jax.compile_clock (CompileClock) and the ``time`` it reads.
"""

from __future__ import annotations

import pytest

from adlab.engine.backends.jax import compile_clock
from adlab.engine.backends.jax.compile_clock import CompileClock


@pytest.fixture
def clocks(monkeypatch):
    """Scripted process CPU and wall clocks: each read takes the next value."""

    def scripted(cpu: list[float], wall: list[float]) -> None:
        monkeypatch.setattr(compile_clock.time, "process_time", iter(cpu).__next__)
        monkeypatch.setattr(compile_clock.time, "perf_counter", iter(wall).__next__)

    return scripted


def test_a_compile_that_waited_for_a_core_keeps_its_cpu_seconds(clocks):
    clocks(cpu=[10.0, 10.3], wall=[0.0, 2.5])  # 2.5 s waited, 0.3 s of work
    with CompileClock() as c:
        pass
    assert (c.wall_s, c.cpu_s, c.kept_s) == (2.5, pytest.approx(0.3), pytest.approx(0.3))


def test_a_compile_on_several_cores_keeps_its_wall_seconds(clocks):
    clocks(cpu=[0.0, 1.2], wall=[0.0, 0.5])
    with CompileClock() as c:
        pass
    assert c.kept_s == 0.5


def test_two_compiles_at_once_share_the_cpu_seconds_they_overlap(clocks):
    # a starts at CPU 0, b at 1, b ends at 3, a at 4: a alone 1 + half of 2 + alone 1
    clocks(cpu=[0.0, 1.0, 3.0, 4.0], wall=[0.0, 0.0, 10.0, 10.0])
    a = CompileClock().__enter__()
    b = CompileClock().__enter__()
    b.stop()
    a.stop()
    assert (a.cpu_s, b.cpu_s) == (3.0, 1.0)
    assert compile_clock._shares == {}


def test_stopped_once_and_on_leaving_an_error(clocks):
    clocks(cpu=[0.0, 1.0], wall=[0.0, 2.0])
    with pytest.raises(ValueError), CompileClock() as c:
        raise ValueError
    assert (c.cpu_s, c.wall_s) == (1.0, 2.0)
    c.stop()  # again: nothing read, nothing changed
    assert (c.cpu_s, c.wall_s) == (1.0, 2.0) and compile_clock._shares == {}
