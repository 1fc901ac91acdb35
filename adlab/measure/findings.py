"""Crossovers: the n at which one series of a sweep overtakes another.

Question 1 of QUESTIONS.md is a crossover (finite differences win below about
100 parameters, reverse mode above); so is question 3's ForwardDiff vs the
reverse-mode packages. Given the measured time per derivative of each series,
a crossover lies between two consecutive sizes where the sign of
``log t_a - log t_b`` flips, or at a measured size where the two tie and the
order flips across it. Its n and time are interpolated linearly in log-log
coordinates, the coordinates the plot is drawn in.
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
        n: the interpolated size (a float; between ``n_below`` and ``n_above``);
            where the two tie at a measured size, that size.
        time_s: the interpolated time per derivative there.
        n_below, n_above: the measured sizes on either side (both the tied size,
            or the first and last of several tied sizes, when they tie).
    """

    faster: str
    slower: str
    n: float
    time_s: float
    n_below: int
    n_above: int

    def describe(self) -> str:
        """One line: "reverse overtakes numeric[central] at n ≈ 100"."""
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
    """Where ``log t_a - log t_b`` changes sign between two sizes, or through a tie.

    A size where the two are equal is no side: the sign before it is compared
    with the sign after it, so a faster below a tie at n = 100 and slower
    above crosses there (and a tie between two same-signed sides is a touch).
    """
    ns = sorted(set(ta) & set(tb))
    diff = {n: math.log(ta[n]) - math.log(tb[n]) for n in ns}
    signed = [n for n in ns if diff[n] != 0]
    for lo, hi in zip(signed, signed[1:], strict=False):
        if (diff[lo] < 0) == (diff[hi] < 0):
            continue
        faster, slower = (a, b) if diff[hi] < 0 else (b, a)
        tied = [n for n in ns if lo < n < hi]  # all tied: no sign between lo and hi
        if tied:
            first, last = tied[0], tied[-1]  # the middle of the tie, in log-log
            n = first if first == last else math.sqrt(first * last)
            t = ta[first] if first == last else math.sqrt(ta[first] * ta[last])
            yield Crossover(faster, slower, float(n), t, first, last)
            continue
        w = diff[lo] / (diff[lo] - diff[hi])  # where the log-difference crosses zero
        log_n = math.log(lo) + w * (math.log(hi) - math.log(lo))
        log_t = math.log(ta[lo]) + w * (math.log(ta[hi]) - math.log(ta[lo]))
        yield Crossover(faster, slower, math.exp(log_n), math.exp(log_t), lo, hi)


def crossovers(records: Iterable[Record], *, primal: bool = False) -> list[Crossover]:
    """Every crossover between every pair of series, ordered by n.

    Interpolated in log-log between the two sizes around it; a tie at a
    measured size is a crossover there when the order flips across it. Noise
    can make two close series cross several times; each crossing is reported,
    so a reader sees that the two are, in effect, tied there. Primal series
    (f itself, ``mode == "primal"``) take part only with ``primal=True``.
    """
    times = series_times(r for r in records if primal or r.mode != "primal")
    labels = sorted(times)
    out = [
        c
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        for c in _crossings(a, times[a], b, times[b])
    ]
    return sorted(out, key=lambda c: (c.n, c.faster, c.slower))
