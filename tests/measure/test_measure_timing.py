"""time_call: honest statistics on any callable. Structure and honesty, never speed.

No test here asserts that something is fast. The sleep test asserts that a
known duration is *measured* as that duration, which is what a timer is for
(a sleep, not a busy wait: on a shared machine a spinning thread is preempted
and its wall time is not its own).

Internals: time_call's parts (measure.timing: measure, summarize, interleave, Stopwatch,
_autorange and its constants REPEATS, SPREAD_LIMIT, MAX_WARMUPS, ENOUGH, median_interval) on
callables and clocks made by hand: honesty is checked where it is decided.
"""

from __future__ import annotations

import math
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


def test_a_function_that_sleeps_is_timed_as_long_as_its_sleeps_took():
    # Each call times its own sleep: load on the other core stretches a sleep (2 ms read
    # 3.5 ms on a loaded machine) but stretches both clocks alike, so the timer's figure
    # lies between the shortest and the longest sleep it timed. An error in its arithmetic
    # (per loop, units) puts it outside, loaded or not.
    took = []

    def sleep():
        start = time.perf_counter()
        time.sleep(0.002)
        took.append(time.perf_counter() - start)

    t = adlab.time_call(sleep)
    assert min(took) >= 0.002
    assert min(took) <= t.median_s <= max(took) * 1.05 + 50e-6  # + the loop's own cost
    assert t.min_s <= t.median_s
    assert t.repeats == REPEATS and t.loops >= 1


def test_loops_fill_the_target():
    # about target_s / call loops: sleep(1 ms) lasts 1 ms or more, so at most 10 (a
    # warm-up call of 1 ms names 10; a short trial only adds loops)
    t = adlab.time_call(time.sleep, (0.001,), target_s=0.01, repeats=3)
    assert 3 <= t.loops <= 20
    assert t.loops * t.median_s >= 0.01 * 0.6


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


def test_a_deadline_keeps_one_warm_call_when_no_more_fit():
    """The first call alone says nothing of a steady one: one warm call is always made."""
    calls = 0

    def slow():
        nonlocal calls
        calls += 1
        time.sleep(0.05)

    t = adlab.time_call(slow, deadline=time.perf_counter() + 0.06)
    assert calls == 2  # the first call and one warm call: no autorange, no repeats
    assert (t.loops, t.repeats) == (1, 1) and t.unstable


def test_a_deadline_cuts_repeats_short_but_keeps_one():
    clock = _FakeClock()
    fn = clock.calls([0.02])  # 20 ms a call, every call
    watch = Stopwatch(fn, target_s=0.001, budget_s=0.15, charge_first=True, clock=clock)
    watch.start()
    interleave([watch], repeats=50)
    # first call and a steady warm call (40 ms), then one call per repeat (loops = 1)
    # until one more would pass 150 ms
    assert watch.warm_calls == [pytest.approx(0.02)] and watch.loops == 1
    assert len(watch.samples) == 5 and fn.count == 2 + 5


def test_warmups_are_not_counted_and_the_first_is_reported():
    clock = _FakeClock()
    fn = clock.calls([0.03, 0.001])  # a first call that compiles
    t = Stopwatch(fn, warmups=3, target_s=0.002, clock=clock)
    t.start()
    interleave([t], repeats=3)
    timing = t.timing()
    assert timing.first_call_s == pytest.approx(0.03)
    assert timing.median_s == pytest.approx(0.001) and timing.repeats == 3
    assert len(t.warm_calls) == 2  # warmups=3: three calls before timing, the first included


class _FakeClock:
    """A clock that moves only when a fake callable says its call took so long."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def calls(self, seconds: list[float]):
        """A callable whose k-th call takes ``seconds[k]`` (the last one from then on);
        ``.count`` counts its calls."""

        def fn():
            fn.count += 1
            self.now += seconds[min(fn.count, len(seconds)) - 1]

        fn.count = 0
        return fn


def test_a_slow_first_call_is_kept_apart_and_warm_calls_are_timed():
    """PyTorch's first torch.func jvp sets itself up for 1.6 s, then a call takes 2.5 ms:
    the first call must neither use up the budget nor be the measurement."""
    clock = _FakeClock()
    fn = clock.calls([1.6, 0.0025])
    watch = Stopwatch(fn, target_s=0.01, budget_s=1.0, clock=clock)
    watch.start()
    interleave([watch], repeats=5)
    t = watch.timing()
    assert t.first_call_s == pytest.approx(1.6)
    assert t.median_s == pytest.approx(0.0025) and t.min_s == pytest.approx(0.0025)
    assert t.repeats == 5 and not t.unstable
    assert t.loops * t.median_s >= 0.01  # autorange filled the target from warm calls
    # the second call is 640x faster than the first, the third as fast as the second: steady
    assert watch.warm_calls == pytest.approx([0.0025, 0.0025])
    assert watch.spent_s < 1.0  # the first call was not charged to the budget


def test_warm_up_goes_on_until_a_call_is_steady():
    clock = _FakeClock()
    fn = clock.calls([2.0, 0.5, 0.01, 0.011, 0.01])  # settles at the fourth call
    watch = Stopwatch(fn, target_s=0.01, clock=clock)
    watch.start()
    assert watch.warm_calls == pytest.approx([0.5, 0.01, 0.011])
    assert watch.samples == [pytest.approx(0.01)]


def test_warm_up_that_never_settles_stops_at_max_warmups():
    from adlab.measure.timing import MAX_WARMUPS

    clock = _FakeClock()
    seconds = [1.0 if k % 2 else 0.01 for k in range(1, 3 * MAX_WARMUPS)]
    fn = clock.calls(seconds)
    watch = Stopwatch(fn, target_s=0.01, budget_s=100.0, clock=clock)
    watch.start()
    assert len(watch.warm_calls) == MAX_WARMUPS - 1


def test_a_first_call_charged_to_the_budget_still_gets_one_warm_call():
    """charge_first (a deadline): a first call past the budget leaves room for nothing,
    yet the sample is a warm call, never the first."""
    clock = _FakeClock()
    fn = clock.calls([5.0, 0.1])
    watch = Stopwatch(fn, target_s=0.01, budget_s=1.0, charge_first=True, clock=clock)
    watch.start()
    interleave([watch], repeats=5)
    t = watch.timing()
    assert (t.first_call_s, t.median_s) == (pytest.approx(5.0), pytest.approx(0.1))
    assert (t.loops, t.repeats, fn.count) == (1, 1, 2) and t.unstable


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
    """After each callable's warm-up and autorange, repeats go in rounds, one of each
    callable per round: a change of load during them hits every callable alike. Each
    round's order is new, so no callable always follows the same neighbour."""
    order: list[str] = []
    watches = [Stopwatch(lambda: None, target_s=1e-4) for _ in "abc"]
    for k, w in zip("abc", watches, strict=True):
        w.start()
        w.repeat = lambda w=w, k=k, take=w.repeat: (order.append(k), take())[1]
    interleave(watches, repeats=9)
    rounds = [order[i : i + 3] for i in range(0, len(order), 3)]
    assert len(rounds) == 8  # autorange's trial was the first repeat of each
    assert all(sorted(r) == list("abc") for r in rounds)
    before = {k: {r[r.index(k) - 1] for r in rounds if r.index(k) > 0} for k in "abc"}
    assert all(len(b) == 2 for b in before.values()), before
    assert [len(w.samples) for w in watches] == [9, 9, 9]


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
    broken = False

    def flaky():
        if broken:
            raise RuntimeError("gone")

    bad, good = Stopwatch(flaky, target_s=1e-6), Stopwatch(lambda: None, target_s=1e-6)
    for w in (bad, good):
        w.start()
    broken = True  # after the warm-up: in the repeats
    interleave([bad, good], repeats=5)
    assert isinstance(bad.error, RuntimeError) and len(bad.samples) == 1
    assert len(good.samples) == 5
    calls = 0

    def fails_later():
        nonlocal calls
        calls += 1
        if calls > 20:  # past the warm-up (at most MAX_WARMUPS calls) and autorange
            raise RuntimeError("gone")

    with pytest.raises(RuntimeError, match="gone"):
        measure(fails_later, repeats=1000, target_s=1e-6)


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


def test_the_loop_count_is_the_one_the_warm_up_names_and_a_short_trial_scales_it():
    from adlab.measure.timing import ENOUGH, _autorange

    steady = _Clockwork(0.0011)  # 0.2 s / 1.1 ms: 182 loops, 0.2002 s; one trial, kept
    assert _autorange(steady, 0.0011) == (182, pytest.approx(0.2002))
    assert steady.tried == [182]
    # timeit's autorange would have kept 200 loops (1, 2, 5, ..., 100 fall short): 0.22 s
    slow_warm_up = _Clockwork(0.0011)  # a warm-up 3x slower names 61: 0.067 s, too short
    number, taken = _autorange(slow_warm_up, 0.0033)
    assert slow_warm_up.tried == [61, number] and taken >= ENOUGH * 0.2
    assert number == math.ceil(61 * 0.2 / (61 * 0.0011))
    unknown = _Clockwork(0.0011)  # no warm-up time: from 1, growing at most 10x a trial
    number, taken = _autorange(unknown, 0.0)
    assert unknown.tried[:3] == [1, 10, 100] and taken >= ENOUGH * 0.2
