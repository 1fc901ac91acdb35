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
from adlab.measure.timing import REPEATS, SPREAD_LIMIT, measure, summarize


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
