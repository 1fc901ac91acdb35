"""The stopping rule: repeats go on until the median's interval is narrow enough.

Synthetic samples and callables on a fake clock (time moves only when a fake call
says so), so what is tested is the rule, never how fast anything runs.

Internals: the stopping rule's parts (measure.intervals: median_interval, relative_width,
settled, INTERVAL_WIDTH, MAX_REPEATS; measure.timing: Stopwatch, interleave, summarize) on
synthetic samples and a fake clock; time_call shows only where they stopped.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import adlab
from adlab.measure.intervals import (
    INTERVAL_WIDTH,
    MAX_REPEATS,
    median_interval,
    relative_width,
    settled,
)
from adlab.measure.timing import Stopwatch, interleave

TIGHT = [1.0, 1.01, 0.99, 1.0, 1.02, 1.0, 0.995]
NOISY = [1.0, 1.8] * 20  # two modes: the median's interval spans both, however many


def test_tight_samples_settle_at_the_fewest_and_never_before():
    assert relative_width(TIGHT[:5]) <= INTERVAL_WIDTH
    assert [settled(TIGHT[:k], 5) for k in range(1, 6)] == [False] * 4 + [True]
    assert settled(TIGHT[:7], 5) and settled(TIGHT[:7], 7)
    assert not settled(TIGHT[:6], 7)  # the fewest is a floor, however tight


def test_noisy_samples_go_on_to_the_most():
    assert relative_width(NOISY[: MAX_REPEATS - 1]) > INTERVAL_WIDTH
    assert not any(settled(NOISY[:k], 5) for k in range(1, MAX_REPEATS))
    assert settled(NOISY[:MAX_REPEATS], 5)
    assert not settled(NOISY[:20], 5, most=21) and settled(NOISY[:21], 5, most=21)


def test_the_interval_is_looked_at_every_other_repeat():
    # a point that settles is looked at again two repeats later, not one
    assert not settled(TIGHT[:6], 5) and settled(TIGHT[:6], 4)


def test_no_width_is_a_fixed_count():
    assert not settled(NOISY[:4], 5, None) and settled(NOISY[:5], 5, None)
    assert settled(TIGHT[:3], 3, None)


def test_a_wider_target_settles_sooner():
    samples = [1.0, 1.1, 0.95, 1.05, 1.0]
    width = relative_width(samples)
    assert settled(samples, 5, width) and not settled(samples, 5, width * 0.99)


def test_the_width_is_that_of_the_interval_the_findings_use():
    t = adlab.measure.timing.summarize(TIGHT, loops=1)
    assert relative_width(TIGHT) == pytest.approx((t.median_hi_s - t.median_lo_s) / t.median_s)
    assert relative_width([]) == float("inf") and relative_width([0.0, 0.0]) == float("inf")


class _Clock:
    """A clock that moves only when a fake call says its call took so long."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def cycling(self, seconds: list[float]):
        """A callable whose calls take ``seconds`` in turn, over and over."""
        times = itertools.cycle(seconds)

        def fn():
            fn.count += 1
            self.now += next(times)

        fn.count = 0
        return fn


def _watch(seconds: list[float], **kw) -> Stopwatch:
    clock = _Clock()
    # target_s below a call: one call per repeat, so each sample is one call's time
    watch = Stopwatch(clock.cycling(seconds), target_s=1e-6, clock=clock, **kw)
    watch.start()
    return watch


def test_a_steady_callable_stops_at_the_fewest_repeats():
    watch = _watch([0.001])
    interleave([watch], 5, INTERVAL_WIDTH)
    assert len(watch.samples) == 5
    watch = _watch([0.001])
    interleave([watch], 7, INTERVAL_WIDTH)
    assert len(watch.samples) == 7  # never below the fewest asked for


def test_a_noisy_callable_runs_to_the_cap():
    watch = _watch([0.001, 0.0018])
    interleave([watch], 5, INTERVAL_WIDTH)
    assert len(watch.samples) == MAX_REPEATS
    watch = _watch([0.001, 0.0018])
    interleave([watch], 5, INTERVAL_WIDTH, most=9)
    assert len(watch.samples) == 9


def test_the_budget_caps_a_noisy_callable_before_the_most():
    # warm-up: the first call (uncharged) and one steady call, 1.8 ms; then 1.0 and 1.8
    # ms in turn: 30 ms holds about 20 calls in all, well short of 40 repeats
    watch = _watch([0.001, 0.0018], budget_s=0.03)
    interleave([watch], 5, INTERVAL_WIDTH, most=40)
    assert 5 <= len(watch.samples) < 40
    assert watch.spent_s <= 0.03


def test_interleaved_each_stops_on_its_own():
    steady, noisy = _watch([0.001]), _watch([0.001, 0.0018])
    interleave([steady, noisy], 5, INTERVAL_WIDTH)
    assert (len(steady.samples), len(noisy.samples)) == (5, MAX_REPEATS)


def test_time_call_without_a_width_takes_exactly_its_repeats():
    clock = _Clock()
    fn = clock.cycling([0.001, 0.0018])
    watch = Stopwatch(fn, target_s=1e-6, clock=clock)
    watch.start()
    interleave([watch], 5)
    assert len(watch.samples) == 5


@pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")
def test_a_sweep_takes_its_fewest_repeats_and_at_most_the_cap():
    fixed = list(adlab.bench("normal_logpdf", [2], ["reverse"], repeats=3, target_s=0.001,
                             interval_width=None, reference=None))  # fmt: skip
    assert [r.repeats for r in fixed] == [3, 3]
    adaptive = list(adlab.bench("normal_logpdf", [2], ["reverse"], repeats=3, target_s=0.001,
                                reference=None))  # fmt: skip
    assert all(3 <= r.repeats <= MAX_REPEATS for r in adaptive)


def _numpy_interval(samples, confidence, resamples=2000):
    """The bootstrap interval written with np.median and np.quantile: the oracle."""
    a = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(0)
    medians = np.median(a[rng.integers(0, len(a), size=(resamples, len(a)))], axis=1)
    tail = (1 - confidence) / 2
    return (float(np.quantile(medians, tail, method="lower")),
            float(np.quantile(medians, 1 - tail, method="higher")))  # fmt: skip


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_the_median_interval_is_numpys_median_and_quantiles(confidence):
    rng = np.random.default_rng(3)
    for n in range(2, 18):  # odd and even counts; ties in the integer draws
        for x in (rng.lognormal(size=n), rng.integers(0, 3, size=n).astype(float)):
            assert median_interval(x, confidence) == _numpy_interval(x, confidence)
