"""Per-point time budget: predict the next size's cost from the sizes measured.

Per series (label), the time of one call is extrapolated on log-log axes
through the last two measured sizes, t(n) = t2 (n / n2)^p. With one size
measured, a derivative that needs several passes of f (``f_evals`` > 1, as
forward mode and finite differences) is taken to grow as n passes, each
growing as f itself did between the two sizes (f is measured first at each
size): at small n a call is mostly fixed overhead (PyTorch's jacfwd: 12 ms at
n = 10), and n^2 from there predicted seconds where it took milliseconds.
Without f's time, p is assumed: 2 for several passes (n passes of O(n) work
each), else 1. The exponent is clamped to [0, 3].

A point needs its compile and at least ``MIN_CALLS`` calls: the first call
(kept apart), one warm-up call and one timed repeat. When that is over the
budget the point is skipped with its reason, before anything runs (but
see below: not on a predicted compile alone after small compiles).

The prediction is made from warm calls. A first call can cost far more than
the calls after it, and whether it will again at the next size depends on
why: eager JAX compiles each operation at every new shape, while PyTorch's
first ``torch.func`` jvp sets itself up once a process (1.6 s here, then
2.5 ms a call). So a first call's excess over a warm call is predicted only
once it has recurred: the smaller excess of the last two sizes.

Compile time is usually flat in n (20-60 ms here), but not when jit unrolls a
Python loop over the elements: a loop model compiled in 0.3 s at n = 30, 1.2 s
at n = 100 and 21 s at n = 300. So once the last compile took
``COMPILE_GROWS_S`` or more it may be extrapolated like the calls; below that it
is fixed overhead plus noise, and extrapolating noise would skip points for nothing.

Growth needs evidence from this run. A program loaded from adlab's cache
brings what compiling it took back then (``Prepared.cold_compile_s``): a past
measurement under unknown load. The cache keeps CPU seconds, not the wall
seconds a busy machine stretches several times over (issue 31), but those too can
run high. Complex step on ``normal_logpdf`` read 0.096 s
at n = 1, 0.47 s at n = 3 and 0.19 s at n = 10 from a cache filled under load,
where it compiles in 0.004-0.05 s; extrapolated, the first two skipped every
size from n = 10 on, on every later run (issue 22). So growth is
claimed from the last two sizes only where both compiled in this process;
where one of them came from the cache, only when the last three sizes all grew
(each step's exponent at least ``AGREE_POWER``), and then at the smaller of the
two exponents. Otherwise the last compile is taken as flat.

And a prediction is no measurement: a series that compiled in under
``SMALL_COMPILE_S`` at every size below is never skipped on its predicted
compile alone (the point fits the budget without it). It is prepared, and the
compile it measures speaks. A prepare that overran the budget (``add_overrun``)
ends that for the series: its larger sizes are predicted from what was measured,
and one that took ``OVERRUN_BOUNDS`` budgets or more bounds their compile from
below, so a loop's next size is skipped instead of compiling longer still. One
just over the budget may be a burst of load (2.0-2.4 s for a 0.4 s compile here,
at load 12 on 2 cores): the larger sizes are still tried.

Memory is predicted as time is: per series, the peak bytes of one call
(``Record.peak_bytes``, ``add_memory``) on log-log axes through the last two sizes
measured (``loglog``; none from one size). A point whose predicted peak is over
``memory.FRACTION`` of the memory free now (``memory.available_bytes``, read at each
check: other programs come and go) is skipped with both figures, before it is
prepared: nothing of it is allocated, so a sweep is not killed by the kernel's OOM
killer. The engine's own refusal (``SizeError``, from the traced program's largest
array) stays below this: it needs no smaller size, this catches what grows without
one huge array (a loop's residuals, a batch of perturbed copies).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from .._format import human_bytes, seconds
from ..engine.programs import memory

#: calls a point needs at the least (the first call, one warm-up call, one repeat)
MIN_CALLS = 3
#: bounds on the extrapolation exponent
MIN_POWER, MAX_POWER = 0.0, 3.0
#: compiles shorter than this are taken as flat in n
COMPILE_GROWS_S = 0.1
#: each step's exponent, at the least, for three sizes read from the cache to agree on growth
AGREE_POWER = 0.5
#: a series that compiled faster than this at every size below is not skipped on its
#: predicted compile alone: it is prepared, and its measured compile decides
SMALL_COMPILE_S = 1.0
#: a prepare over this many budgets bounds the compile of the larger sizes from below
OVERRUN_BOUNDS = 2.0


#: f's series label and its seconds per call at the size being predicted
Primal = tuple[str, float]


@dataclass
class _Point:
    n: int
    call_s: float
    compile_s: float
    first_call_s: float
    f_evals: int | None
    cached: bool = False  # compile_s read from adlab's cache: compiled in another process


@dataclass
class Budget:
    """Measured history per series, and the prediction for its next size."""

    budget_s: float
    history: dict[str, list[_Point]] = field(default_factory=dict)
    #: per series, (n, seconds) of each prepare that overran the budget
    overruns: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    #: per series, (n, bytes) of each peak measured (``Record.peak_bytes``)
    peaks: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def add(
        self, label: str, n: int, call_s: float, compile_s: float, first_call_s: float,
        f_evals: int | None, cached: bool = False,
    ) -> None:  # fmt: skip
        """A measured point; ``cached``: ``compile_s`` is what compiling took when its
        program was compiled, read from adlab's cache, not measured in this process."""
        point = _Point(n, call_s, compile_s, first_call_s, f_evals, cached)
        self.history.setdefault(label, []).append(point)

    def add_overrun(self, label: str, n: int, prepare_s: float) -> None:
        """A prepare at ``n`` that took ``prepare_s``, over the budget (measured here)."""
        self.overruns.setdefault(label, []).append((n, prepare_s))

    def add_memory(self, label: str, n: int, peak_bytes: float | None) -> None:
        """The peak bytes one call at ``n`` held (None, or 0: not measured, not kept)."""
        if peak_bytes:
            self.peaks.setdefault(label, []).append((n, float(peak_bytes)))

    def predict_peak(self, label: str, n: int) -> tuple[float, float, int, int] | None:
        """(bytes, exponent, n of the two sizes it rests on) of the peak at ``n``,
        extrapolated through the last two sizes measured below it; None with fewer."""
        below = sorted((m, b) for m, b in self.peaks.get(label, []) if m < n)
        sizes = sorted({m for m, _ in below})
        if len(sizes) < 2:
            return None
        last = {m: b for m, b in below}  # the last measured at each size
        pair = [(sizes[-2], last[sizes[-2]]), (sizes[-1], last[sizes[-1]])]
        value, power = loglog(pair, n, 1.0)
        return value, power, sizes[-2], sizes[-1]

    def over_memory(self, label: str, n: int) -> str | None:
        """The skip reason when the point's predicted peak is over ``memory.FRACTION``
        of the memory free now, else None (also with nothing to predict from)."""
        predicted = self.predict_peak(label, n)
        if predicted is None:
            return None
        peak, power, a, b = predicted
        free = memory.available_bytes()
        if peak <= memory.FRACTION * free:
            return None
        return (f"predicted peak {human_bytes(peak)}; {human_bytes(free)} of memory free, "
                f"a point may take {memory.FRACTION:.0%} ({human_bytes(memory.FRACTION * free)})"
                f": its peak grew as n^{power:.2g} from n = {a} to {b}")  # fmt: skip

    def _measured_below(self, label: str, n: int) -> list[_Point]:
        return sorted((p for p in self.history.get(label, []) if p.n < n), key=lambda p: p.n)

    def predict_call(self, label: str, n: int, primal: Primal | None = None) -> float | None:
        """Predicted seconds of one call at ``n``, or None with nothing to go on.

        With one size measured and ``primal`` given (its label, and its seconds per
        call at ``n``), the work per pass of f grows as f itself did from that size;
        the passes grow with n where there are several (see the module docstring).
        """
        pts = self._measured_below(label, n)
        if not pts:
            return None
        last = pts[-1]
        several = (last.f_evals or 1) > 1
        growth = self._primal_growth(primal, last.n)
        if growth is not None and all(p.n == last.n for p in pts):
            return last.call_s * (n / last.n if several else 1.0) * growth
        return _extrapolate(pts, n, lambda p: p.call_s, 2.0 if several else 1.0)

    def _primal_growth(self, primal: Primal | None, at: int) -> float | None:
        """f's time at the new size over its time at size ``at`` (at least 1: f at a
        larger size taking less is noise), or None where either is unknown."""
        if primal is None:
            return None
        label, now_s = primal
        then = [p.call_s for p in self.history.get(label, []) if p.n == at]
        if not then or not then[-1] > 0 or not now_s > 0:
            return None
        return max(now_s / then[-1], 1.0)

    def predict_compile(self, label: str, n: int) -> float:
        """Predicted compile seconds at ``n`` (0 with nothing to go on): extrapolated
        where the sizes below show growth (``_compile_power``), else the last compile;
        at least an overrun below of ``OVERRUN_BOUNDS`` budgets."""
        pts = self._measured_below(label, n)
        overrun = self._overrun_below(label, n)[0]
        overrun = overrun if overrun >= OVERRUN_BOUNDS * self.budget_s else 0.0
        if not pts:
            return overrun
        last = pts[-1]
        power = _compile_power(pts) if last.compile_s >= COMPILE_GROWS_S else None
        predicted = last.compile_s * (n / last.n) ** power if power else last.compile_s
        return max(predicted, overrun)

    def _compiles_small(self, label: str, n: int) -> bool:
        """Whether every size below ``n`` compiled in under ``SMALL_COMPILE_S``, within
        the budget."""
        pts = self._measured_below(label, n)
        overran = self._overrun_below(label, n)[0] > 0
        return bool(pts) and not overran and max(p.compile_s for p in pts) < SMALL_COMPILE_S

    def _overrun_below(self, label: str, n: int) -> tuple[float, int]:
        """(seconds, n) of the longest prepare below ``n`` that overran; (0.0, 0): none."""
        return max(((s, m) for m, s in self.overruns.get(label, []) if m < n), default=(0.0, 0))

    def predict_first_excess(self, label: str, n: int) -> float:
        """Predicted seconds the first call at ``n`` costs beyond a warm one: the
        smaller excess of the last two sizes (0 until an excess has recurred)."""
        pts = self._measured_below(label, n)[-2:]
        if len(pts) < 2:
            return 0.0
        return max(0.0, min(p.first_call_s - p.call_s for p in pts))

    def predict_point(self, label: str, n: int, primal: Primal | None = None) -> float | None:
        """Predicted seconds for the whole point: compile + ``MIN_CALLS`` calls, the
        first with its recurring excess (``predict_first_excess``)."""
        call = self.predict_call(label, n, primal)
        if call is None:  # nothing measured: a long overrun below is all there is to go on
            return self.predict_compile(label, n) or None
        compile_s = self.predict_compile(label, n)
        return compile_s + self.predict_first_excess(label, n) + MIN_CALLS * call

    def over(self, label: str, n: int, primal: Primal | None = None) -> str | None:
        """The skip reason when the point is predicted over budget, in time or in memory
        (``over_memory``), else None (also where only its predicted compile puts it over
        budget, after small compiles below)."""
        too_big = self.over_memory(label, n)
        if too_big:
            return too_big
        predicted = self.predict_point(label, n, primal)
        if predicted is None or predicted <= self.budget_s:
            return None
        compile_s = self.predict_compile(label, n)
        if predicted - compile_s <= self.budget_s and self._compiles_small(label, n):
            return None  # prepared: its measured compile decides (module docstring)
        reason = f"predicted {seconds(predicted)} > budget {seconds(self.budget_s)}"
        below = self._measured_below(label, n)
        overrun_s, at = self._overrun_below(label, n)
        if overrun_s >= OVERRUN_BOUNDS * self.budget_s and overrun_s >= compile_s:
            reason += f" (preparing it took {seconds(overrun_s)} at n = {at})"
        elif compile_s > predicted / 2 and below and compile_s > below[-1].compile_s:
            reason += (f" (compiling {seconds(compile_s)}: compile time grows with n here, "
                       "as when jit unrolls a Python loop)")  # fmt: skip
        return reason


def _compile_power(pts: list[_Point]) -> float | None:
    """The exponent compile time grows with over the last sizes (``pts`` sorted by n),
    or None where they give no evidence of growth: through the last two where both
    compiled in this process, else the smaller of the last three's two steps where
    each grew by ``AGREE_POWER`` or more (a cached compile time alone is no evidence)."""
    if len(pts) >= 2 and not (pts[-1].cached or pts[-2].cached):
        last = _powers(pts[-2:])
        return min(max(last[0], MIN_POWER), MAX_POWER) if last else None
    steps = _powers(pts[-3:])
    if len(steps) == 2 and min(steps) >= AGREE_POWER:
        return min(min(steps), MAX_POWER)
    return None


def _powers(pts: list[_Point]) -> list[float]:
    """The log-log slope of compile time between each two neighbouring sizes of
    ``pts``; empty where a compile time is not positive or two sizes are equal."""
    pairs = list(itertools.pairwise(pts))
    if any(not (a.compile_s > 0 and b.compile_s > 0 and b.n > a.n) for a, b in pairs):
        return []
    return [math.log(b.compile_s / a.compile_s) / math.log(b.n / a.n) for a, b in pairs]


def _extrapolate(pts: list[_Point], n: int, value, default_power: float) -> float:
    """value at n on log-log axes through the last two sizes (``pts`` sorted by n);
    with one size, or a zero value, ``default_power``. Clamped to [MIN, MAX]_POWER."""
    last = pts[-1]
    prev = next((p for p in reversed(pts[:-1]) if p.n < last.n), None)
    pair = [(p.n, value(p)) for p in (prev, last) if p is not None]
    return loglog(pair, n, default_power)[0]


def loglog(pair: list[tuple[int, float]], n: int, default_power: float) -> tuple[float, float]:
    """(value at ``n``, exponent) on log-log axes through ``pair``'s two (size, value),
    ascending in size; with one, or a value not positive, ``default_power``. The exponent
    is clamped to [MIN, MAX]_POWER. The one extrapolation of time and memory (the
    advisor's memory too)."""
    (n2, v2) = pair[-1]
    power = default_power
    if len(pair) > 1:
        n1, v1 = pair[-2]
        if v1 > 0 and v2 > 0 and n2 > n1:
            power = math.log(v2 / v1) / math.log(n2 / n1)
    power = min(max(power, MIN_POWER), MAX_POWER)
    return v2 * (n / n2) ** power, power
