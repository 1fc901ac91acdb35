"""time_call: honest statistics on any callable. Structure and honesty, never speed.

No test here asserts that something is fast. The sleep test asserts that a
known duration is *measured* as that duration, which is what a timer is for
(a sleep, not a busy wait: on a shared machine a spinning thread is preempted
and its wall time is not its own).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import adlab
from adlab.measure.timing import (
    REPEATS,
    SPREAD_LIMIT,
    Stopwatch,
    interleave,
    measure,
    median_interval,
    summarize,
)


def test_a_function_that_sleeps_a_known_time_measures_within_10_percent():
    t = adlab.time_call(time.sleep, (0.002,))
    assert t.median_s == pytest.approx(0.002, rel=0.10)
    assert t.min_s <= t.median_s
    assert t.repeats == REPEATS and t.loops >= 1


def test_loops_come_from_autorange_and_fill_the_target():
    # autorange tries 1, 2, 5, 10, 20, 50, ... loops until a repeat lasts target_s.
    t = adlab.time_call(time.sleep, (0.001,), target_s=0.01, repeats=3)
    assert t.loops in (5, 10, 20)
    assert t.loops * t.median_s >= 0.01 * 0.9


def test_summary_statistics_are_the_textbook_ones():
    samples = [1.0, 2.0, 3.0, 4.0, 100.0]
    t = summarize(samples, loops=10, compile_s=0.5, first_call_s=7.0)
    assert t.min_s == 1.0
    assert t.median_s == 3.0
    q1, q3 = np.percentile(samples, [25, 75])
    assert t.iqr_s == q3 - q1 == 2.0
    assert (t.loops, t.repeats, t.compile_s, t.first_call_s) == (10, 5, 0.5, 7.0)
    assert t.unstable  # IQR / median = 0.67 > SPREAD_LIMIT


def test_unstable_flags_a_large_spread_or_too_few_repeats():
    steady = summarize([1.0, 1.01, 0.99, 1.0, 1.02], loops=1)
    assert not steady.unstable
    spread = 1.0 + 2 * SPREAD_LIMIT
    assert summarize([1.0, 1.0, spread, spread, spread], loops=1).unstable
    assert summarize([1.0, 1.0], loops=1).unstable  # two repeats cannot show a spread


class _Lazy:
    """Stands in for a jax.Array: counts the waits it gets."""

    waits = 0

    def block_until_ready(self):
        _Lazy.waits += 1
        return self


def test_every_call_waits_for_its_result():
    calls = 0

    def fn():
        nonlocal calls
        calls += 1
        return _Lazy()

    _Lazy.waits = 0
    adlab.time_call(fn, repeats=3, target_s=0.001)
    assert calls > 3 and _Lazy.waits == calls


def test_jax_results_are_waited_for_tree_wise():
    f = jax.jit(lambda x: {"a": x * 2, "b": (x + 1, jnp.sum(x))})
    x = jnp.ones(100)
    t, out = measure(f, (x,), repeats=3, target_s=0.001)
    assert t.median_s > 0 and set(out) == {"a", "b"}


def test_a_deadline_stops_after_the_warm_up_when_no_second_call_fits():
    calls = 0

    def slow():
        nonlocal calls
        calls += 1
        time.sleep(0.05)

    t = adlab.time_call(slow, deadline=time.perf_counter() + 0.06)
    assert calls == 1  # the warm-up only: no autorange, no repeats
    assert (t.loops, t.repeats) == (1, 1) and t.unstable
    assert t.median_s == t.first_call_s


def test_a_deadline_cuts_repeats_short_but_keeps_one():
    calls = 0

    def slow():
        nonlocal calls
        calls += 1
        time.sleep(0.02)

    t = adlab.time_call(slow, repeats=50, target_s=0.001, deadline=time.perf_counter() + 0.15)
    assert 1 <= t.repeats < 50
    assert calls == 1 + t.repeats  # warm-up, then one call per repeat (loops = 1)


def test_warmups_are_not_counted_and_the_first_is_reported():
    seen = []

    def fn():
        seen.append(time.perf_counter())
        if len(seen) == 1:
            time.sleep(0.03)  # a first call that compiles

    t = adlab.time_call(fn, warmups=2, repeats=3, target_s=0.001)
    assert t.first_call_s >= 0.03
    assert t.median_s < 0.03


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="repeats"):
        adlab.time_call(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="target_s"):
        adlab.time_call(lambda: None, target_s=0)


def test_dispatch_floor_is_a_positive_time():
    floor = adlab.dispatch_floor("float64", target_s=0.002)
    assert floor > 0 and np.isfinite(floor)


# ------------------------------------------------------------ interleaving
def test_interleaved_repeats_take_turns():
    """After each callable's warm-up and autorange, repeats go round robin: a change of
    load during them hits every callable alike."""
    log: list[str] = []
    watches = [Stopwatch(lambda k=k: log.append(k), target_s=1e-4) for k in "abc"]
    for w in watches:
        w.start()
    log.clear()
    interleave(watches, repeats=4)
    blocks = [k for i, k in enumerate(log) if i == 0 or log[i - 1] != k]  # one per repeat
    assert blocks == list("abc") * 3  # autorange's trial was the first repeat of each
    assert [len(w.samples) for w in watches] == [4, 4, 4]


def test_a_budget_stops_one_callable_and_the_others_go_on():
    slow, fast = [], []

    def sleepy():
        slow.append(1)
        time.sleep(0.02)

    watches = [Stopwatch(sleepy, target_s=0.001, budget_s=0.1),
               Stopwatch(lambda: fast.append(1), target_s=0.001)]  # fmt: skip
    for w in watches:
        w.start()
    interleave(watches, repeats=10)
    assert 1 <= len(watches[0].samples) < 10  # 20 ms a call: 0.1 s holds 5 at most
    assert len(watches[1].samples) == 10


def test_a_repeat_that_raises_is_kept_and_ends_that_callable_only():
    calls = 0

    def flaky():
        nonlocal calls
        calls += 1
        if calls > 3:
            raise RuntimeError("gone")

    bad, good = Stopwatch(flaky, target_s=1e-6), Stopwatch(lambda: None, target_s=1e-6)
    for w in (bad, good):
        w.start()
    interleave([bad, good], repeats=5)
    assert isinstance(bad.error, RuntimeError) and len(good.samples) == 5
    with pytest.raises(RuntimeError, match="gone"):
        calls = 0
        measure(flaky, repeats=50, target_s=1e-6)


def test_the_median_interval_is_seeded_and_made_of_samples():
    samples = [3.0, 1.0, 2.0, 5.0, 4.0]
    lo, hi = median_interval(samples)
    assert (lo, hi) == median_interval(samples)  # seeded: the same every time
    assert lo in samples and hi in samples and lo <= 3.0 <= hi
    # with 5 repeats a 95% interval of the median is their range (P(median <= x_(1))
    # = P(3 of 5 draws are x_(1)) = 5.8% > 2.5%); with 7, one outlier stays out of it
    assert (lo, hi) == (1.0, 5.0)
    assert median_interval([1.0] * 6 + [100.0]) == (1.0, 1.0)
    assert median_interval([2.0]) == (2.0, 2.0)


def test_a_timing_carries_the_interval_of_its_median():
    t = summarize([1.0, 2.0, 3.0, 4.0, 100.0], loops=1)
    assert t.median_lo_s <= t.median_s <= t.median_hi_s
    assert (t.median_lo_s, t.median_hi_s) == median_interval([1.0, 2.0, 3.0, 4.0, 100.0])


class _Clockwork:
    """A timeit.Timer stand-in whose every call takes ``call`` seconds: no clock read."""

    def __init__(self, call: float) -> None:
        self.call, self.tried = call, []

    def timeit(self, number: int) -> float:
        self.tried.append(number)
        return number * self.call


def test_autorange_begins_where_the_warm_up_says_and_stops_where_autorange_would():
    from adlab.measure.timing import _autorange

    steady = _Clockwork(0.0011)  # autorange: 1, 2, ..., 100, then 200 lasts 0.22 >= 0.2
    assert _autorange(steady, 0.0011) == (200, pytest.approx(0.22))
    assert steady.tried == [200]  # the warm-up named it: no thrown-away trials
    slow_warm_up = _Clockwork(0.0011)  # a warm-up 3x slower names 100, which falls short
    assert _autorange(slow_warm_up, 0.0033)[0] == 200 and slow_warm_up.tried == [100, 200]
    unknown = _Clockwork(0.0011)  # no warm-up time: autorange's own sequence from 1
    assert _autorange(unknown, 0.0)[0] == 200
    assert unknown.tried == [1, 2, 5, 10, 20, 50, 100, 200]
