"""Crossovers: the n at which one series of a sweep overtakes another.

Question 1 of QUESTIONS.md is a crossover (finite differences win below about
100 parameters, reverse mode above); so is question 3's ForwardDiff vs the
reverse-mode packages. Given the measured time per derivative of each series,
a crossover lies between two consecutive sizes where the sign of
``log t_a - log t_b`` flips. Its n and time are interpolated linearly in
log-log coordinates, the coordinates the plot is drawn in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._vocab import Record


@dataclass(frozen=True)
class Crossover:
    """``faster`` overtakes ``slower`` (is faster above) at about ``n``.

    Attributes:
        faster: label of the series that is faster for larger n.
        slower: label of the series it overtakes.
        n: the interpolated size (a float; between ``n_below`` and ``n_above``).
        time_s: the interpolated time per derivative there.
        n_below, n_above: the measured sizes on either side.
    """

    faster: str
    slower: str
    n: float
    time_s: float
    n_below: int
    n_above: int

    def describe(self) -> str:
        return f"{self.faster} overtakes {self.slower} at n \u2248 {self.n:.3g}"


def series_times(records: Iterable[Record]) -> dict[str, dict[int, float]]:
    """label -> {n: median seconds}, from the measured (not skipped) records."""
    out: dict[str, dict[int, float]] = {}
    for r in records:
        if r.skipped or r.median_s is None or not r.median_s > 0 or not math.isfinite(r.median_s):
            continue
        out.setdefault(r.label, {})[r.n] = r.median_s
    return out


def _crossings(a: str, ta: Mapping[int, float], b: str, tb: Mapping[int, float]):
    ns = sorted(set(ta) & set(tb))
    for lo, hi in zip(ns, ns[1:], strict=False):
        d_lo = math.log(ta[lo]) - math.log(tb[lo])
        d_hi = math.log(ta[hi]) - math.log(tb[hi])
        if d_lo == 0 or d_lo * d_hi >= 0:
            continue  # no sign change (a tie at `lo` is counted by the previous interval)
        w = d_lo / (d_lo - d_hi)  # where the log-difference crosses zero
        log_n = math.log(lo) + w * (math.log(hi) - math.log(lo))
        log_t = math.log(ta[lo]) + w * (math.log(ta[hi]) - math.log(ta[lo]))
        faster, slower = (a, b) if d_hi < 0 else (b, a)
        yield Crossover(faster, slower, math.exp(log_n), math.exp(log_t), lo, hi)


def crossovers(records: Iterable[Record]) -> list[Crossover]:
    """Every crossover between every pair of series, ordered by n.

    Noise can make two close series cross several times; each crossing is
    reported, so a reader sees that the two are, in effect, tied there.
    """
    times = series_times(records)
    labels = sorted(times)
    out = [
        c
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        for c in _crossings(a, times[a], b, times[b])
    ]
    return sorted(out, key=lambda c: (c.n, c.faster, c.slower))
