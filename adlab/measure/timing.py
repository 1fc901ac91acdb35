"""Steady-state timing of one callable: first call apart, warm-up, autorange, repeats.

The first call is kept apart (``first_call_s``): it may do one-off work that
no later call repeats (eager JAX compiles each operation at a new shape;
PyTorch's first ``torch.func`` jvp or vmap sets itself up for a second or
more), so it is neither a sample nor charged to a budget. Warm-up goes on
until a call is steady, within ``STEADY`` of the one before it, and the
budget is reckoned from those warm calls.

The loop count is the one the last warm-up call names, target / call, checked
by one trial that becomes the first repeat (``_autorange``; timeit's own
``autorange`` climbs 1, 2, 5, 10, ... loops and overshoots its target by 1.5x on
average). timeit's target is 0.2 s per repeat; a sweep of 40 points cannot
afford that, so the Timer gets a clock that runs ``0.2 / target_s`` times fast,
and every reading is scaled back.

Every JAX result is waited for (``block_until_ready``), so we time the
computation, not its asynchronous dispatch. ``gc`` is off while timing, as
timeit does.

Several callables can be timed together, their repeats taken in turn
(``Stopwatch``, ``interleave``): a sweep does so for all series of one size,
so a change of load on a shared machine hits them all alike. Each median
comes with a bootstrap interval (``median_interval``): the claim "A is faster
than B" is made only where the intervals say so (``adlab.measure.findings``).
"""

from __future__ import annotations

import math
import random
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._vocab import Timing
from .intervals import MAX_REPEATS, median_interval, settled

#: a warm-up call within this factor of the one before it is steady (one-off setup
#: such as a compile costs 10-1000x a call; a busy machine's jitter stays within 2x)
STEADY = 2.0
#: warm-up calls at the most, the first included, when calls never settle
MAX_WARMUPS = 10
#: default seconds per repeat that autorange aims for (timeit's CLI: 0.2)
TARGET_S = 0.01
#: default number of repeats (as timeit's CLI)
REPEATS = 5
#: spread (IQR / median) above which a timing is flagged ``unstable``
SPREAD_LIMIT = 0.25
#: fewer repeats than this cannot tell a spread: flagged ``unstable``
MIN_REPEATS = 3

_AUTORANGE_TARGET = 0.2  # hard-coded in timeit.Timer.autorange


def _has_jax_leaf(result: Any) -> bool:
    import jax

    return any(hasattr(leaf, "block_until_ready") for leaf in jax.tree_util.tree_leaves(result))


def awaited_call(fn: Callable, args: Sequence[Any] = ()) -> tuple[float, Any]:
    """Seconds for ``fn(*args)`` with its result computed (JAX's waited for), and the result."""
    t0 = time.perf_counter()
    result = fn(*args)
    if _has_jax_leaf(result):
        import jax

        jax.block_until_ready(result)
    return time.perf_counter() - t0, result


def timed_runs(fn: Callable, args: Sequence[Any] = (), *, min_runs: int = 1,
               min_seconds: float = 0.0) -> tuple[list[float], Any]:  # fmt: skip
    """Seconds of each awaited call of ``fn(*args)``, at least ``min_runs`` calls and until
    they add up to ``min_seconds`` (GradBench's rule for its ``evaluate``); the last result.

    Every call is timed on its own, no loop amortising dispatch: a caller wanting
    the steady per-call time of a fast callable wants ``time_call``.
    """
    seconds: list[float] = []
    result = None
    while len(seconds) < max(min_runs, 1) or sum(seconds) < min_seconds:
        taken, result = awaited_call(fn, args)
        seconds.append(taken)
    return seconds, result


def _statement(
    fn: Callable, args: Sequence[Any], result: Any, speed: float, clock: Callable[[], float]
) -> timeit.Timer:
    """A Timer whose statement calls ``fn(*args)`` and waits for its result.

    The statement is compiled by timeit (no wrapper function per call), and
    the wait is the cheapest one that fits the result's type. The Timer's
    clock runs ``speed`` times fast (see the module docstring).
    """
    import jax

    names = {"_fn": fn, "_args": tuple(args), "_block": jax.block_until_ready}
    if isinstance(result, jax.Array):
        stmt = "_fn(*_args).block_until_ready()"
    elif _has_jax_leaf(result):
        stmt = "_block(_fn(*_args))"
    else:
        stmt = "_fn(*_args)"
    return timeit.Timer(stmt, timer=lambda: clock() * speed, globals=names)


#: a trial of at least this fraction of the target is kept as the first repeat
ENOUGH = 0.7


def _autorange(timer: timeit.Timer, call: float) -> tuple[int, float]:
    """The loop count for repeats of about 0.2 s on the timer's clock, and the last
    trial's seconds (kept as the first repeat).

    The count is the one the last warm-up call (``call`` seconds on the timer's
    clock) names, 0.2 s / ``call``; a trial that falls short of ``ENOUGH`` of
    0.2 s scales it by what it fell short, and tries again. timeit's own
    ``autorange`` climbs 1, 2, 5, 10, ... loops and keeps the first trial past
    0.2 s, which overshoots by 1.5x on average (up to 2.5x: 2 loops of 0.19 s
    become 5): a sweep's repeats took that much longer than their target.
    """
    number = max(1, math.ceil(_AUTORANGE_TARGET / call)) if call > 0 else 1
    while True:
        taken = timer.timeit(number)
        if taken >= ENOUGH * _AUTORANGE_TARGET:
            return number, taken
        grow = _AUTORANGE_TARGET / taken if taken > 0 else 10.0
        number = max(number + 1, math.ceil(number * min(grow, 10.0)))


def summarize(
    samples: Sequence[float], *, loops: int, compile_s: float = 0.0, first_call_s: float = 0.0
) -> Timing:
    """A ``Timing`` from per-call seconds, one sample per repeat."""
    a = np.asarray(samples, dtype=float)
    median = float(np.median(a))
    q1, q3 = np.percentile(a, [25, 75])
    iqr = float(q3 - q1)
    unstable = len(a) < MIN_REPEATS or (median > 0 and iqr / median > SPREAD_LIMIT)
    lo, hi = median_interval(a)
    return Timing(
        compile_s=float(compile_s),
        first_call_s=float(first_call_s),
        min_s=float(a.min()),
        median_s=median,
        iqr_s=iqr,
        loops=int(loops),
        repeats=len(a),
        unstable=bool(unstable),
        median_lo_s=lo,
        median_hi_s=hi,
    )


class Stopwatch:
    """One callable timed a repeat at a time, so that several can take turns.

    ``start()`` makes the first call (kept apart), warms up until a call is
    steady and lets autorange choose the loop count (its last trial is the
    first repeat); each ``repeat()`` times one more. Taking the repeats of
    several callables in turn (``interleave``) spreads a change of load over
    all of them alike, where timing one fully before the next would pin it on
    whichever ran then.

    The seconds the callable itself has taken after its first call are counted
    (``spent_s``), so a budget holds however its repeats are interleaved with
    others'. The first call is not charged (``charge_first`` charges it): a
    first call that does one-off work would otherwise use up the budget and be
    the only sample, a setup cost reported as the cost of a call.

    Attributes:
        result: the last warm-up call's result.
        samples: per-call seconds, one per repeat.
        warm_calls: seconds of each warm-up call after the first.
        error: an exception a repeat raised (no more repeats are taken).
    """

    def __init__(self, fn: Callable, args: Sequence[Any] = (), *, target_s: float = TARGET_S,
                 warmups: int = 1, budget_s: float | None = None, charge_first: bool = False,
                 clock: Callable[[], float] = time.perf_counter) -> None:  # fmt: skip
        if warmups < 1:
            raise ValueError(f"warmups must be >= 1, got {warmups}")
        if not target_s > 0:
            raise ValueError(f"target_s must be > 0, got {target_s}")
        self.fn, self.args = fn, tuple(args)
        self.target_s, self.warmups, self.budget_s = target_s, warmups, budget_s
        self.charge_first, self.clock = charge_first, clock
        self.result: Any = None
        self.samples: list[float] = []
        self.warm_calls: list[float] = []
        self.loops = 1
        self.first_call_s = 0.0
        self.spent_s = 0.0
        self.error: Exception | None = None
        self._per_repeat = math.inf
        self._speed = _AUTORANGE_TARGET / target_s  # autorange's clock runs this much fast
        self._timer: timeit.Timer | None = None

    def _call(self) -> float:
        """One call, its result waited for; its seconds."""
        t0 = self.clock()
        self.result = self.fn(*self.args)
        if _has_jax_leaf(self.result):
            import jax

            jax.block_until_ready(self.result)
        return self.clock() - t0

    def _fits(self, seconds: float) -> bool:
        return self.budget_s is None or self.spent_s + seconds <= self.budget_s

    def start(self) -> None:
        """The first call, warm-up calls until one is steady (within ``STEADY`` of the
        one before it; at least ``warmups`` calls in all, at most ``MAX_WARMUPS``),
        then autorange. One warm call is always made; when the budget has no room
        for another, the last warm call is the only sample (``loops`` = 1)."""
        self.first_call_s = self._call()
        self.spent_s = self.first_call_s if self.charge_first else 0.0
        calls = [self.first_call_s]
        while len(calls) < MAX_WARMUPS:
            if len(calls) >= max(2, self.warmups) and _steady(calls[-2], calls[-1]):
                break
            if len(calls) >= 2 and not self._fits(calls[-1]):
                break
            calls.append(self._call())
            self.spent_s += calls[-1]
        self.warm_calls = calls[1:]
        last = calls[-1]
        if not self._fits(last):
            self.samples = [last]
            return
        self._timer = _statement(self.fn, self.args, self.result, self._speed, self.clock)
        t0 = self.clock()
        self.loops, taken = _autorange(self._timer, last * self._speed)
        self.spent_s += self.clock() - t0
        self._per_repeat = taken / self._speed
        self.samples = [self._per_repeat / self.loops]

    def wants(self, repeats: int, width: float | None = None,
              most: int = MAX_REPEATS) -> bool:  # fmt: skip
        """Whether one more repeat is due: no error, it fits, and the repeats are not yet
        ``settled`` (fewer than ``repeats``; or, with a ``width``, the median's
        interval still wider than that, up to ``most`` repeats)."""
        if self._timer is None or self.error is not None:
            return False
        if settled(self.samples, repeats, width, most):
            return False
        return self._fits(self._per_repeat)

    def repeat(self) -> None:
        """Time one more repeat of ``loops`` calls (an exception is kept in ``error``)."""
        t0 = self.clock()
        try:
            taken = self._timer.timeit(self.loops) / self._speed
        except Exception as exc:  # the sweep shows it as the point's reason; others go on
            self.error = exc
            return
        finally:
            self.spent_s += self.clock() - t0
        self.samples.append(taken / self.loops)

    def timing(self, compile_s: float = 0.0) -> Timing:
        return summarize(self.samples, loops=self.loops, compile_s=compile_s,
                         first_call_s=self.first_call_s)  # fmt: skip


def _steady(before: float, call: float) -> bool:
    """Whether ``call`` is within ``STEADY`` of the call ``before`` it."""
    return call <= STEADY * before and before <= STEADY * call


def interleave(watches: Sequence[Stopwatch], repeats: int, width: float | None = None,
               most: int = MAX_REPEATS) -> None:  # fmt: skip
    """Repeats of started stopwatches in turn (round robin) until each has ``repeats``
    or no budget left for one more; with a ``width``, each goes on past ``repeats``
    until its median's interval is that narrow (relative), at most ``most`` repeats
    (``intervals.settled``). Each stops on its own: a steady callable does not wait
    for a noisy one.

    Each round takes them in a new order (shuffled, seeded): a repeat pays for what
    ran before it (a worker thread to wake, a cache another program filled), and in a
    fixed order each callable would always pay for the same neighbour, a bias no
    interval shows (one sweep's numeric[central] beside an identical copy of itself:
    told apart at n = 100, twice in 9 sweeps at load 7, 2 ms repeats)."""
    due = list(watches)
    order = random.Random(0)
    while True:
        # a watch not due stays so (its samples and spending no longer change): not
        # asked again, as each asking may cost a bootstrap
        due = [w for w in due if w.wants(repeats, width, most)]
        if not due:
            return
        turn = list(due)
        order.shuffle(turn)
        for w in turn:
            w.repeat()


def measure(
    fn: Callable,
    args: Sequence[Any] = (),
    *,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    compile_s: float = 0.0,
    deadline: float | None = None,
    warmups: int = 1,
    width: float | None = None,
) -> tuple[Timing, Any]:
    """``time_call`` that also returns the last warm-up call's result.

    ``deadline`` (a ``time.perf_counter()`` value) bounds the measurement
    after its first two calls: the first call (kept apart) and one warm call
    are always made, since a first call alone says nothing of a steady one.
    When one more call would end past the deadline after the warm-up, the last
    warm call is the measurement (``loops = repeats = 1``, flagged unstable);
    otherwise repeats stop before one would end past it (at least one is
    kept). ``warmups`` sets the fewest warm-up calls, the first included
    (warm-up goes on anyway until a call is steady). ``width``: repeats go on
    past ``repeats`` until the median's interval is that narrow (``intervals.settled``).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    from .runtime_watch import stopwatch  # a program run outside Python: timed where it runs

    budget = None if deadline is None else deadline - time.perf_counter()
    watch = stopwatch(fn, args, target_s=target_s, warmups=warmups, budget_s=budget,
                      charge_first=True)  # fmt: skip
    watch.start()
    interleave([watch], repeats, width)
    if watch.error is not None:
        raise watch.error
    return watch.timing(compile_s), watch.result


def time_call(
    fn: Callable,
    args: Sequence[Any] = (),
    *,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    compile_s: float = 0.0,
    deadline: float | None = None,
    warmups: int = 1,
    width: float | None = None,
) -> Timing:
    """Time ``fn(*args)`` honestly; works on any Python callable.

    The first call is kept apart (not counted, reported as ``first_call_s``);
    warm-up calls follow until one is within ``STEADY`` of the one before it;
    then ``timeit.Timer.autorange`` picks the loop count so that one repeat lasts
    about ``target_s``; then ``repeats`` repeats (autorange's last trial is the
    first of them). JAX results are waited for with ``block_until_ready``.

    Args:
        fn: the callable; a ``Prepared`` derivative, a jitted function, anything.
        args: its positional arguments.
        repeats: number of repeats; median and IQR are taken over them.
        target_s: seconds per repeat that autorange aims for.
        compile_s: compile time measured elsewhere, copied into the ``Timing``.
        deadline: a ``time.perf_counter()`` value the measurement must not
            run past (see ``measure``).
        warmups: the fewest uncounted calls before timing (the first is
            ``first_call_s``); more are made until a call is steady.
        width: None: exactly ``repeats`` repeats. A number (0.1, as a sweep
            takes): ``repeats`` is the fewest, and repeats go on until the median's
            interval is at most that wide relative to it, ``MAX_REPEATS`` at the most.

    Returns:
        A ``Timing``; per-call seconds ``min_s``, ``median_s``, ``iqr_s``.

    Example:
        >>> t = adlab.time_call(sorted, ([3, 1, 2],), repeats=3, target_s=0.001)
        >>> t.median_s > 0, t.repeats >= 3
        (True, True)
    """
    return measure(fn, args, repeats=repeats, target_s=target_s, compile_s=compile_s,
                   deadline=deadline, warmups=warmups, width=width)[0]  # fmt: skip
