"""Crossovers: the n at which one series of a sweep overtakes another, beyond the noise.

Question 1 of QUESTIONS.md is a crossover (finite differences win below about
100 parameters, reverse mode above); so is question 3's ForwardDiff vs the
reverse-mode packages. But two medians that cross are not yet a finding: two
series at the dispatch floor, or within each other's noise, cross back and
forth from one run to the next (an A/A test, one sweep's series against the
same series of the next, found 17 such crossings in 3 runs).

So every comparison goes through ``compare``: A is faster than B at one size
only where the intervals of their medians (``median_lo_s``, ``median_hi_s``)
are apart by more than the machine's noise; two points at the floor are tied.
A crossover is ``significant`` where that verdict changes sides: the series
slower beyond noise below is faster beyond noise above, or the two are tied
below and one pulls ahead ("reverse is faster from n ≈ 40; the two are tied
below"). "Above" means the size where the verdict changes and the next one
measured, where there is one: a burst of load on a shared machine can span one
size's round robin in one sweep and so make that size's verdict alone (an A/A
test of two sweeps at 2 ms repeats found 3 such one-size verdicts in 3 runs),
and "faster from n ≈ 40" is a claim about the sizes above, not about one size.
At the largest size there is nothing to confirm with, and the verdict stands.
Where only the medians cross, or the next size does not confirm a verdict, the
crossover is returned with ``significant=False``: the two are tied there.

Where the verdict flips between two neighbouring sizes, the crossover's n and
time are interpolated linearly in log-log coordinates (the coordinates the plot
is drawn in) where the medians cross; where they are tied over sizes in
between, it is the middle of those sizes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from .._vocab import Record


def _interval(r: Record) -> tuple[float, float]:
    lo = r.median_lo_s if r.median_lo_s is not None else r.median_s
    hi = r.median_hi_s if r.median_hi_s is not None else r.median_s
    return lo, hi


def _noise(r: Record) -> float:
    x = (r.env or {}).get("noise")
    return float(x) if isinstance(x, int | float) and math.isfinite(x) and x > 0 else 0.0


def _floor(r: Record) -> float | None:
    """The floor that bounds ``r``: a program run on a worker thread has its own."""
    if r.dispatch == "async" and r.async_floor_s:
        return r.async_floor_s
    return r.floor_s


def _speed_ratio(a: Record, b: Record) -> float:
    """How much faster the machine ran for one record than for the other, as the
    floors measured beside each say (1 within one size of one sweep). Like is compared
    with like: the hand-off's floors where both ran on a worker thread."""
    both_async = a.dispatch == b.dispatch == "async"
    fa, fb = (_floor(a), _floor(b)) if both_async else (a.floor_s, b.floor_s)
    if fa and fb and fa > 0 and fb > 0:
        return max(fa / fb, fb / fa)
    return 1.0


def _together(a: Record, b: Record) -> bool:
    """Whether the two were measured together: one size of one sweep, repeats in turn."""
    sweep = (a.env or {}).get("sweep")
    return a.n == b.n and sweep is not None and sweep == (b.env or {}).get("sweep")


def compare(a: Record, b: Record) -> int:
    """-1 when ``a`` is faster than ``b`` beyond the noise, +1 when slower, 0 when tied.

    Beyond the noise: the top of one median's interval stays below the bottom
    of the other's. Two points of one size of one sweep took their repeats in
    turn, so load that came and went hit both: their intervals are compared as
    they are. Records measured apart (two sweeps) are compared with a margin:
    the noise the machine showed before each sweep (``env["noise"]``) times how
    much the machine's own speed differed between them, the ratio of the floors
    measured beside each (the thread hand-off's, ``async_floor_s``, for programs
    run on a worker thread). Two points at the same dispatch floor (``at_floor``;
    one run inline and one on a worker thread have different floors) are tied:
    both times are the cost of a call. Records without intervals compare by
    their medians.

    Returns:
        -1, 0 or +1.

    Example:
        >>> records = list(adlab.bench("rosenbrock", [3], ["reverse", "forward"], warn=False))
        >>> a, b = (r for r in records if r.mode != "primal")
        >>> adlab.compare(a, b) in (-1, 0, 1)
        True
    """
    if a.at_floor and b.at_floor and _floor(a) == _floor(b):
        return 0
    (a_lo, a_hi), (b_lo, b_hi) = _interval(a), _interval(b)
    margin = 1.0
    if not _together(a, b):
        margin = (1.0 + max(_noise(a), _noise(b))) * _speed_ratio(a, b)
    if a_hi * margin < b_lo:
        return -1
    if b_hi * margin < a_lo:
        return 1
    return 0


@dataclass(frozen=True)
class Crossover:
    """``faster`` overtakes ``slower`` (is faster above) at about ``n``.

    Attributes:
        faster: label of the series that is faster for larger n.
        slower: label of the series it overtakes.
        n: the interpolated size (a float; between ``n_below`` and ``n_above``);
            where the two tie at measured sizes, the middle of them.
        time_s: the interpolated time per derivative there.
        n_below, n_above: the measured sizes on either side (the first and last
            tied size, when they tie at measured sizes).
        significant: whether ``faster`` is faster beyond the noise above, and
            was not so already below; False: the medians cross inside the
            noise, the two are tied there.
        tied_below: the two are tied at every size below (no series was
            faster beyond noise there).

    Example:
        >>> c = adlab.Crossover("reverse", "forward", n=17, time_s=2e-5, n_below=10, n_above=30)
        >>> c.describe()
        'reverse overtakes forward at n ≈ 17'
    """

    faster: str
    slower: str
    n: float
    time_s: float
    n_below: int
    n_above: int
    significant: bool = True
    tied_below: bool = False

    def describe(self) -> str:
        """One line: "reverse overtakes numeric[central] at n ≈ 100"."""
        n = f"n \u2248 {self.n:.3g}"
        if not self.significant:
            return (f"{self.faster} and {self.slower} are tied near {n} "
                    "(their order flips within the noise)")  # fmt: skip
        if self.tied_below:
            return f"{self.faster} is faster than {self.slower} from {n}; the two are tied below"
        return f"{self.faster} overtakes {self.slower} at {n}"


def series_records(records: Iterable[Record]) -> dict[str, dict[int, Record]]:
    """label -> {n: record}, of the measured (not skipped) records."""
    out: dict[str, dict[int, Record]] = {}
    for r in records:
        if r.skipped or r.median_s is None or not r.median_s > 0 or not math.isfinite(r.median_s):
            continue
        out.setdefault(r.label, {})[r.n] = r
    return out


def computes(record: Record) -> str:
    """What a record's series computes: "hessian", "hvp", "primal" (f), or "first" (a
    gradient or Jacobian, in whichever mode). Only series that compute the same are
    compared (f with any): a gradient overtaking a Hessian says nothing."""
    return record.mode if record.order == 2 or record.mode == "primal" else "first"


def series_times(records: Iterable[Record]) -> dict[str, dict[int, float]]:
    """label -> {n: median seconds}, from the measured (not skipped) records."""
    return {lab: {n: r.median_s for n, r in rs.items()}
            for lab, rs in series_records(records).items()}  # fmt: skip


def _meet(ta, tb, lo: int, hi: int, w: float) -> tuple[float, float]:
    """(n, time) a fraction ``w`` of the way from lo to hi in log-log, on the mean of
    the two series' log times."""
    log_n = math.log(lo) + w * (math.log(hi) - math.log(lo))
    at = [0.5 * (math.log(ta[k]) + math.log(tb[k])) for k in (lo, hi)]
    return math.exp(log_n), math.exp(at[0] + w * (at[1] - at[0]))


def _verdict_changes(a, ra, b, rb) -> Iterator[tuple[Crossover, int, int]]:
    """The significant crossovers of a pair, each with the sizes (p, q) it spans:
    where the verdict of ``compare`` turns to one side from the other, or from ties."""
    ns = sorted(set(ra) & set(rb))
    ta = {n: ra[n].median_s for n in ns}
    tb = {n: rb[n].median_s for n in ns}
    verdict = {n: compare(ra[n], rb[n]) for n in ns}
    side = 0  # the last verdict that was not a tie
    for i, q in enumerate(ns):
        v = verdict[q]
        if v == 0 or v == side:
            side = side or v
            continue
        if i > 0 and i + 1 < len(ns) and verdict[ns[i + 1]] != v:
            continue  # the next size does not confirm it: one size's burst of load
        faster, slower = (a, b) if v < 0 else (b, a)
        if side == 0 and i == 0:
            side = v  # the first size: nothing below to cross from
            continue
        prev = [n for n in ns[:i] if verdict[n] != 0]
        p = prev[-1] if prev else ns[0]
        tied = [n for n in ns if p < n < q]
        if side == 0:  # tied below: faster from between the last tie and q
            n, t = _meet(ta, tb, ns[i - 1], q, 0.5)
            yield Crossover(faster, slower, n, t, ns[i - 1], q, True, True), ns[0], q
        elif tied:  # tied in between: the middle of the tie
            first, last = tied[0], tied[-1]
            n, t = _meet(ta, tb, first, last, 0.5) if first != last else (first, ta[first])
            yield Crossover(faster, slower, float(n), t, first, last), p, q
        else:  # p then q: where the log-difference of the medians crosses zero
            dp, dq = (math.log(ta[k]) - math.log(tb[k]) for k in (p, q))
            w = dp / (dp - dq) if dp != dq else 0.5
            n, t = _meet(ta, tb, p, q, min(max(w, 0.0), 1.0))
            yield Crossover(faster, slower, n, t, p, q), p, q
        side = v


def _median_crossings(a, ta: Mapping[int, float], b, tb: Mapping[int, float]):
    """Where ``log t_a - log t_b`` changes sign between two sizes, or through a tie
    (the sign before a tie is compared with the sign after it). Unjudged."""
    ns = sorted(set(ta) & set(tb))
    diff = {n: math.log(ta[n]) - math.log(tb[n]) for n in ns}
    signed = [n for n in ns if diff[n] != 0]
    for lo, hi in zip(signed, signed[1:], strict=False):
        if (diff[lo] < 0) == (diff[hi] < 0):
            continue
        faster, slower = (a, b) if diff[hi] < 0 else (b, a)
        tied = [n for n in ns if lo < n < hi]
        if tied:
            first, last = tied[0], tied[-1]
            n = first if first == last else math.sqrt(first * last)
            t = ta[first] if first == last else math.sqrt(ta[first] * ta[last])
            yield Crossover(faster, slower, float(n), t, first, last, False)
            continue
        w = diff[lo] / (diff[lo] - diff[hi])
        n, t = _meet(ta, tb, lo, hi, w)
        yield Crossover(faster, slower, n, t, lo, hi, False)


def _pair(a: str, ra: dict[int, Record], b: str, rb: dict[int, Record]) -> list[Crossover]:
    found = list(_verdict_changes(a, ra, b, rb))
    out = [c for c, _, _ in found]
    ta = {n: r.median_s for n, r in ra.items()}
    tb = {n: r.median_s for n, r in rb.items()}
    for c in _median_crossings(a, ta, b, tb):
        # a crossing of the medians inside a significant crossover's span is that crossover
        if not any(p <= c.n_below and c.n_above <= q for _, p, q in found):
            out.append(c)
    return out


def crossovers(records: Iterable[Record], *, primal: bool = False) -> list[Crossover]:
    """Every crossover between every pair of series that compute the same derivative
    (``computes``), ordered by n, each judged.

    A ``significant`` crossover is one the noise cannot explain (see the module
    docstring); the medians of two tied series may cross many times, and each
    such crossing is returned with ``significant=False``, so a reader sees
    that the two are, in effect, tied there. Primal series (f itself,
    ``mode == "primal"``) take part only with ``primal=True``.

    Example:
        >>> sweep = adlab.bench("rosenbrock", [3, 10], ["reverse", "forward"], warn=False)
        >>> records = list(sweep)
        >>> all(isinstance(c, adlab.Crossover) for c in adlab.crossovers(records))
        True
    """
    by_label = series_records(r for r in records if primal or r.mode != "primal")
    labels = sorted(by_label)
    what = {label: computes(next(iter(rs.values()))) for label, rs in by_label.items()}
    out = [
        c
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        if what[a] == what[b] or "primal" in (what[a], what[b])
        for c in _pair(a, by_label[a], b, by_label[b])
    ]
    return sorted(out, key=lambda c: (c.n, c.faster, c.slower))


def significant(found: Iterable[Crossover]) -> list[Crossover]:
    """Only the crossovers that stand out of the noise."""
    return [c for c in found if c.significant]


def tied_pairs(found: Iterable[Crossover]) -> list[tuple[str, str]]:
    """The pairs whose medians cross only inside the noise (no significant crossover)."""
    found = list(found)
    real = {frozenset((c.faster, c.slower)) for c in found if c.significant}
    pairs = dict.fromkeys(tuple(sorted((c.faster, c.slower))) for c in found
                          if not c.significant)  # fmt: skip
    return [p for p in pairs if frozenset(p) not in real]


def crossover_lines(records: Iterable[Record]) -> list[str]:
    """The crossovers of the derivatives in words: each significant one, then the pairs
    tied where their order flips (what a table of the records says under itself)."""
    found = crossovers(r for r in records if r.mode != "primal")
    out = [c.describe() for c in found if c.significant]
    return out + [f"{a} and {b}: tied where their order flips (within the noise)"
                  for a, b in tied_pairs(found)]  # fmt: skip
