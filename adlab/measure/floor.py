"""The dispatch floor, and how noisy the machine is.

The floor is a trivial call (``x + 1`` on a scalar) through adlab's own call
path, per framework as its users run it (JAX jitted, the others eagerly;
``floor_kind``): the fixed cost of one call on this device. No derivative goes
below it, and one close to it is bound by that overhead, not by arithmetic.
A sweep times it at every size, its repeats taken in turn with the series',
so that a point and the floor it is compared with saw the same load.

As a sweep begins, the floor's spread over a few repeats says how noisy the
machine is (``machine_noise``: the repeats of the floor beside the first size,
and a few more). A quiet machine spreads a few percent; one
busy with other work spreads tens of percent, and then only large
differences can be told apart: a sweep warns (``NoisyMachineWarning``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._format import ratio
from .._vocab import Record, Timing
from ..engine.backends import DEFAULT, KNOWN, REFERENCE
from .timing import SPREAD_LIMIT, TARGET_S, Stopwatch, interleave, time_call

#: the floor's spread (IQR / median over its repeats) above which the machine is
#: too noisy: the same limit that marks a single point ``unstable``
NOISE_LIMIT = SPREAD_LIMIT
#: repeats of the floor that measure the noise (about 0.1 s at the default target)
NOISE_REPEATS = 9
#: a point within this factor of the floor is at the floor. A call with no
#: arithmetic to speak of costs more than ``x + 1`` by what it passes and returns:
#: normal_logpdf's primal at n = 1 (a vector and a dict of data) took 1.4-1.6x the
#: floor measured beside it, in five sweeps at loads of 1 to 2.5 on 2 cores.
FLOOR_BAND = 2.0
#: elements of the async floor's argument: 2 XLA flops each, over ``env.INLINE_FLOPS``
ASYNC_FLOOR_SIZE = 1024


class NoisyMachineWarning(UserWarning):
    """The machine was too noisy, before a sweep, to tell small differences apart.

    Example:
        >>> issubclass(adlab.NoisyMachineWarning, UserWarning)
        True
    """


_FLOOR_SOURCE = '''"""A trivial call: the floor under every derivative."""


def setup(n, rng):
    return (np.zeros(n),)


def f(x):
    return {f}
'''


@functools.cache
def floor_call(precision: str = "float64", handed_over: bool = False, backend: str = DEFAULT,
               device: str | None = None) -> Any:  # fmt: skip
    """The prepared trivial call (compiled once per process); call it on its ``inputs``.

    ``backend``: the floor of that framework, run as its users run it (JAX
    jitted, the others eagerly): each framework's fixed cost of one call.

    ``handed_over``: the floor of a program JAX's CPU client hands to a worker
    thread (``env.dispatch`` "async": over ``env.INLINE_FLOPS``): a sum of
    squares of ``ASYNC_FLOOR_SIZE`` zeros, 2 flops each, a microsecond of
    arithmetic. Its cost is the thread hand-off, which on a busy machine swings
    from a few to over a hundred microseconds as other programs come and go.
    """
    import jax

    from ..engine.derivative import prepare
    from ..engine.model.precision import dtype_of, precision_scope
    from ..engine.model.source import Model

    # models from source, so adlab's cache of compiled programs keeps them too
    if handed_over:
        model = Model.from_source(_FLOOR_SOURCE.format(f="np.sum(x * x)"), name="floor (async)")
        shape: tuple[int, ...] = (ASYNC_FLOOR_SIZE,)
    else:
        model = Model.from_source(_FLOOR_SOURCE.format(f="x + 1.0"), name="floor")
        shape = ()
    if backend != REFERENCE:  # prepare converts it for the framework (TF.js: on its device)
        return prepare(model, np.zeros(shape, dtype_of(precision)), mode="primal",
                       precision=precision, backend=backend, device=device)  # fmt: skip
    with precision_scope(precision):
        x = jax.device_put(np.zeros(shape, dtype_of(precision)))
        return prepare(model, x, mode="primal", precision=precision)


def floor_watch(
    precision: str,
    handed_over: bool = False,
    *,
    target_s: float = TARGET_S,
    backend: str = DEFAULT,
    device: str | None = None,
) -> Stopwatch:
    """A started ``Stopwatch`` on the floor, to interleave with other callables."""
    from .runtime_watch import stopwatch

    p = floor_call(precision, handed_over, backend, device)
    watch = stopwatch(p, p.inputs, target_s=target_s)  # JavaScript's: timed where it runs
    watch.start()
    return watch


def dispatch_floor(
    precision: str = "float64", target_s: float = TARGET_S, backend: str = DEFAULT
) -> float | None:
    """Median seconds of a trivial call (x + 1 on a scalar) through adlab's call path:
    jitted on JAX, as its users run it on the other frameworks (``backend``).

    Below this no derivative can go: it is the fixed cost of one call on this
    device. A derivative close to it is bound by overhead, not arithmetic.

    Returns:
        Seconds, a float, or None where the backend has no floor to time.

    Example:
        >>> floor = adlab.dispatch_floor(target_s=0.001)
        >>> 0 < floor < 0.01
        True
    """
    p = floor_call(precision, backend=backend)
    return time_call(p, p.inputs, target_s=target_s).median_s


def machine_noise(
    precision: str = "float64", target_s: float = TARGET_S, watch: Stopwatch | None = None
) -> float:
    """How noisy the machine is now: the floor's IQR / median over ``NOISE_REPEATS`` repeats.

    ``watch``: a started watch on the floor whose repeats so far count (a sweep's
    first size, taken in turn with its points), topped up to ``NOISE_REPEATS``; the
    floor's warm-up is then not paid twice.
    """
    if watch is None:
        watch = floor_watch(precision, target_s=target_s)
    interleave([watch], NOISE_REPEATS)
    t = watch.timing()
    return t.iqr_s / t.median_s if t.median_s > 0 else 0.0


def noise_text(noise: float) -> str:
    """Why a noise level is too much, and what to do: the warning's text."""
    return (
        f"this machine is noisy: a trivial jitted call varied by {noise:.0%} between repeats "
        f"(IQR / median; over {NOISE_LIMIT:.0%} is noisy). Differences smaller than that "
        "read as 'tied', and a crossover is stated only where it stands out of the noise. "
        "Close other programs, or measure again with more repeats."
    )


def noisy(records: Iterable[Record]) -> str | None:
    """The noise warning's text when the records' machine was too noisy, else None: by
    the floor timed alone too (``env["noise_alone"]``) where the sweep measured it."""
    levels = [r.env.get("noise_alone", r.env.get("noise")) for r in records if r.env]
    worst = max((x for x in levels if x is not None), default=None)
    return noise_text(worst) if worst is not None and worst > NOISE_LIMIT else None


def floor_kind(backend: str | None) -> str:
    """What the dispatch floor of ``backend`` is, in words: its framework and how
    ``x + 1`` ran there ("JAX (jitted)", "PyTorch (eager)", "autograd (plain NumPy)").

    Each framework's floor is its own: from about 3 us for an eager PyTorch call to
    600 us for an eager TensorFlow one on this CPU, so one floor for all would read
    TensorFlow's overhead as arithmetic, or PyTorch's arithmetic as overhead.
    """
    known = KNOWN[backend or DEFAULT]
    if not known.has_ad:  # the baseline: x + 1 in NumPy is all it runs
        return known.label
    if known.executable is not None:  # js: timed inside Node (timing.js), no pipe timed
        return f"{known.label} (in {known.executable}, timed inside it)"
    # x + 1 needs no tape: a framework without a compiler runs it in plain NumPy
    how = "jitted" if known.default_jit else "eager" if known.compiler else "plain NumPy"
    return f"{known.label} ({how})"


#: what a ratio to the primal reads at the dispatch floor, where both are the cost of a call
AT_FLOOR = "at the floor"


def ratio_text(r: Record) -> str:
    """A derivative's time over its primal's, as people read it: "8.6x", or "at the floor"
    where the derivative is within noise of the dispatch floor (then both times are the
    cost of a call, and "0.8x" would only say which call the noise favoured)."""
    if r.at_floor and r.mode != "primal":
        return AT_FLOOR
    return ratio(r.ratio_to_primal)


def at_floor(t: Timing, floor: Timing | None) -> bool | None:
    """Whether a timing is within noise of the floor measured beside it (None: no floor);
    for a program JAX runs on a worker thread, the floor is the hand-off's.

    Its median must be within ``FLOOR_BAND`` times the top of the floor's interval
    (not its own interval's bottom: on a busy machine that reaches down to the floor
    for points whose typical call takes a hundred times longer).
    """
    if floor is None:
        return None
    hi = floor.median_hi_s if floor.median_hi_s is not None else floor.median_s
    return bool(t.median_s <= FLOOR_BAND * hi)
