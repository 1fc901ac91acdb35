"""Steady-state timing of one callable: warm-up, autorange, repeats, spread.

The loop count comes from ``timeit.Timer.autorange`` itself (1, 2, 5, 10,
20, 50, ... loops until one repeat lasts long enough). autorange's target is
0.2 s per repeat, fixed in Python 3.11; a sweep of 40 points cannot afford
that, so we hand autorange a clock that runs ``0.2 / target_s`` times fast:
its own rule then stops at ``target_s`` real seconds, and every reading is
scaled back. Nothing else about autorange changes.

Every JAX result is waited for (``block_until_ready``), so we time the
computation, not its asynchronous dispatch. ``gc`` is off while timing, as
timeit does.
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._vocab import Timing

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


def _statement(fn: Callable, args: Sequence[Any], result: Any, speed: float) -> timeit.Timer:
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
    clock = time.perf_counter
    return timeit.Timer(stmt, timer=lambda: clock() * speed, globals=names)


def summarize(
    samples: Sequence[float], *, loops: int, compile_s: float = 0.0, first_call_s: float = 0.0
) -> Timing:
    """A ``Timing`` from per-call seconds, one sample per repeat."""
    a = np.asarray(samples, dtype=float)
    median = float(np.median(a))
    q1, q3 = np.percentile(a, [25, 75])
    iqr = float(q3 - q1)
    unstable = len(a) < MIN_REPEATS or (median > 0 and iqr / median > SPREAD_LIMIT)
    return Timing(
        compile_s=float(compile_s),
        first_call_s=float(first_call_s),
        min_s=float(a.min()),
        median_s=median,
        iqr_s=iqr,
        loops=int(loops),
        repeats=len(a),
        unstable=bool(unstable),
    )


def measure(
    fn: Callable,
    args: Sequence[Any] = (),
    *,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    compile_s: float = 0.0,
    deadline: float | None = None,
    warmups: int = 1,
) -> tuple[Timing, Any]:
    """``time_call`` that also returns the warm-up call's result.

    ``deadline`` (a ``time.perf_counter()`` value) bounds the whole
    measurement: when one more call would end past it after the warm-up, the
    last warm-up call is the measurement (``loops = repeats = 1``, flagged
    unstable); otherwise repeats stop before one would end past it (at least
    one is kept). ``warmups`` > 1 is for callables whose first call does
    one-off work (eager JAX compiles each operation at a new shape).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if warmups < 1:
        raise ValueError(f"warmups must be >= 1, got {warmups}")
    if not target_s > 0:
        raise ValueError(f"target_s must be > 0, got {target_s}")
    calls = []
    for _ in range(warmups):
        start = time.perf_counter()
        result = fn(*args)
        if _has_jax_leaf(result):
            import jax

            jax.block_until_ready(result)
        calls.append(time.perf_counter() - start)
    first, last = calls[0], calls[-1]
    if deadline is not None and time.perf_counter() + last > deadline:
        return summarize([last], loops=1, compile_s=compile_s, first_call_s=first), result

    speed = _AUTORANGE_TARGET / target_s
    timer = _statement(fn, args, result, speed)
    loops, taken = timer.autorange()
    samples = [taken / speed / loops]
    per_repeat = taken / speed
    while len(samples) < repeats:
        if deadline is not None and time.perf_counter() + per_repeat > deadline:
            break
        samples.append(timer.timeit(loops) / speed / loops)
    return summarize(samples, loops=loops, compile_s=compile_s, first_call_s=first), result


def time_call(
    fn: Callable,
    args: Sequence[Any] = (),
    *,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    compile_s: float = 0.0,
    deadline: float | None = None,
    warmups: int = 1,
) -> Timing:
    """Time ``fn(*args)`` honestly; works on any Python callable.

    One warm-up call (not counted, reported as ``first_call_s``); then
    ``timeit.Timer.autorange`` picks the loop count so that one repeat lasts
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
        warmups: uncounted calls before timing (the first is ``first_call_s``).

    Returns:
        A ``Timing``; per-call seconds ``min_s``, ``median_s``, ``iqr_s``.
    """
    return measure(fn, args, repeats=repeats, target_s=target_s, compile_s=compile_s,
                   deadline=deadline, warmups=warmups)[0]  # fmt: skip
