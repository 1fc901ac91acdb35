"""The advisor: which way of taking the derivative is fastest at one n, beyond the noise.

A user's question is rarely "where do the curves cross"; it is "I have this
model at n = 1000: which mode?". ``advise`` measures the candidate modes at
that n, their repeats taken in turn (one size of ``bench``), and
``advice_from`` answers from the records: the fastest mode, by how much over
the runner-up, at what error. Two modes whose times are within each other's
noise (``findings.compare``) are a tie, and said as one: "forward and reverse
are within noise at n = 10; either".

A mode not measured at n (skipped by the budget, or too large for memory) is
predicted from the sizes measured below n, and said to be predicted; and the advice
names each mode it did not measure at n, and why, as its record says it ("forward:
predicted 47 s (22,041 f evals) > budget 2 s"). Time is
taken as a fixed cost per call plus a cost per XLA flop, both read from the
last two sizes measured; the flops at n are extrapolated from theirs (XLA
counts them exactly, so their growth is known, where the time of small sizes
is mostly the cost of a call and hides it). Without flops (NumPy), or where
the times do not grow, the time itself is extrapolated on log-log axes.

Memory is weighed too. Each candidate's peak at n is its record's, or for a
predicted mode extrapolated as the sweep's budget does (``budget.loglog``, through
the last two sizes). Given ``memory_limit`` ("4GB"), a mode whose peak is past it
is ruled out, and said so with its figure; and where the fastest needs far more
than another candidate (``MEMORY_APART`` times, and ``MEMORY_WORTH`` at least), the
sentence says both: "reverse is fastest, 8x faster than forward, but needs 3.2 GB;
forward needs 40 MB".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._format import human_bytes, parse_bytes, ratio, seconds
from .._vocab import Record
from .budget import loglog
from .findings import compare, series_records
from .series import Series, parse_variants
from .sweep import BUDGET_S, bench, default_modes

#: a predicted time is taken as known within this factor either way: predictions of
#: n = 1000 from n = 100 and 300 on normal_logpdf fell within 0.38x-3.7x of the time
#: then measured (five modes, two sweeps, on 2 cores at a load of 3)
PREDICTION_SPREAD = 3.0
#: a predicted mode is measured at these fractions of n, the budget allowing
SMALLER = (1 / 30, 1 / 10, 1 / 3)
#: errors this far apart are worth a word even where the times tie
ERRORS_APART = 100.0
#: the fastest mode's peak memory is worth a word where it is this many times another
#: candidate's ...
MEMORY_APART = 10.0
#: ... and this many bytes at least (below, any machine has it to spare)
MEMORY_WORTH = 100e6


@dataclass(frozen=True)
class Advice:
    """The fastest way to take the derivative at ``n``, and the evidence.

    Attributes:
        model: the model's name.
        n: the size asked about.
        best: the label of the fastest mode (None: nothing was measured).
        runner_up: the next fastest (None with fewer than two).
        speedup: the runner-up's time over the best's (>= 1).
        tied: the other labels within noise of the best (a prediction is within
            noise of what lies within ``PREDICTION_SPREAD`` of it).
        error: the best's error against the reference (for a predicted best, at
            the largest size it was measured at).
        predicted: the labels whose time at n is a prediction, not a measurement.
        times: label -> seconds per call at n, measured (the median) or predicted.
        predicted_from: predicted label -> the largest size its prediction rests on.
        records: the evidence: every record the advice was drawn from.
        errors: label -> its error (as ``error`` is the best's).
        memory: label -> peak bytes of one call at n, measured or (for a predicted
            label) predicted; a label whose peak is unknown is left out.
        memory_limit: the bytes a call may hold (None: no limit).
        ruled_out: label -> its peak at n, past ``memory_limit``: not a candidate.
        skipped: label -> why it was not measured at n (its record's ``skipped``), for
            each derivative series skipped there, predicted or not.

    Example:
        >>> advice = adlab.advise("rosenbrock", 3, ["forward", "reverse"], budget_s=0.5, warn=False)
        >>> sorted(advice.times)  # each mode's time at n; advice.best: the fastest
        ['forward', 'reverse']
    """

    model: str
    n: int
    best: str | None
    runner_up: str | None
    speedup: float | None
    tied: tuple[str, ...]
    error: float | None
    predicted: tuple[str, ...]
    times: Mapping[str, float] = field(default_factory=dict)
    predicted_from: Mapping[str, int] = field(default_factory=dict)
    records: tuple[Record, ...] = ()
    errors: Mapping[str, float | None] = field(default_factory=dict)
    memory: Mapping[str, float] = field(default_factory=dict)
    memory_limit: float | None = None
    ruled_out: Mapping[str, float] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)

    def _named(self, label: str) -> str:
        if label in self.predicted:
            return (f"{label} (predicted from n <= {self.predicted_from[label]}: "
                    f"~{seconds(self.times[label])})")  # fmt: skip
        return label

    def describe(self) -> str:
        """One sentence: "At n = 1000 on normal_logpdf: reverse is fastest, 37x faster
        than forward (error 2e-16)." Ties are said as ties. The modes not measured at n
        follow, each with why: " Not measured at n = 1000: forward: predicted 47 s
        (22,041 f evals) > budget 2 s." """
        where = f"at n = {self.n} on {self.model}"
        at = f"At n = {self.n} on {self.model}"
        if self.best is None and self.ruled_out:
            text = f"{at}: no mode fits the memory limit of {self._past_limit()}."
        elif self.best is None:
            text = f"{at}: no mode was measured (see the reasons)."
        else:
            text = self._verdict(at, where) + self._memory_words() + self._ruled_out_words()
        return text + self._skipped_words()

    def _verdict(self, at: str, where: str) -> str:
        if self.runner_up is None:
            what = "fits the memory limit" if self.ruled_out else "was measured"
            return f"{at}: only {self._named(self.best)} {what}{_error_text(self.error)}"
        group = [self.best, *self.tied]
        about = "~" if set(self.predicted) & {self.best, self.runner_up} else ""
        if not self.tied:
            return (f"{at}: {self._named(self.best)} is fastest, "
                    f"{about}{ratio(self.speedup)} faster than {self._named(self.runner_up)}"
                    f"{_error_text(self.error)}")  # fmt: skip
        text = f"{_joined([self._named(x) for x in group])} are within noise {where}; "
        text += "either" if len(group) == 2 else "any of them"
        rest = [x for x in self.times if x not in group]
        if rest:
            slower = min(rest, key=self.times.__getitem__)
            about = "~" if set(self.predicted) & {self.best, slower} else ""
            factor = self.times[slower] / self.times[self.best]
            text += f", {about}{ratio(factor)} faster than {self._named(slower)}"
        return text + self._accuracy(group)

    def _memory_words(self) -> str:
        """Where the fastest needs far more memory than the leanest other candidate
        (``MEMORY_APART``, ``MEMORY_WORTH``), both figures: ", but needs 3.2 GB; forward
        needs 40 MB." (tied: "; reverse needs 3.2 GB, forward 40 MB."); else "."."""
        peak = self.memory.get(self.best)
        others = {x: b for x, b in self.memory.items() if x != self.best and x in self.times}
        if peak is None or not others or peak < MEMORY_WORTH:
            return "."
        lean = min(others, key=others.__getitem__)
        if peak < MEMORY_APART * others[lean]:
            return "."
        slower = self.times[lean] / self.times[self.best]
        than = "" if lean == self.runner_up or slower < 1.5 else f" and is {ratio(slower)} slower"
        if self.tied:
            return f"; {self.best} needs {self._bytes(self.best)}, {lean} {self._bytes(lean)}."
        return (f", but needs {self._bytes(self.best)}; {lean} needs "
                f"{self._bytes(lean)}{than}.")  # fmt: skip

    def _bytes(self, label: str, table: Mapping[str, float] | None = None) -> str:
        """A label's peak, "~" before a predicted one."""
        value = (self.memory if table is None else table)[label]
        return ("~" if label in self.predicted else "") + human_bytes(value)

    def _past_limit(self) -> str:
        needs = "; ".join(f"{x} needs {self._bytes(x, self.ruled_out)}" for x in self.ruled_out)
        return f"{human_bytes(self.memory_limit)}: {needs}"

    def _skipped_words(self) -> str:
        if not self.skipped:
            return ""
        each = "; ".join(f"{x}: {why}" for x, why in self.skipped.items())
        return f" Not measured at n = {self.n}: {each}."

    def _ruled_out_words(self) -> str:
        return f" Ruled out by the memory limit of {self._past_limit()}." if self.ruled_out else ""

    def _accuracy(self, group: Sequence[str]) -> str:
        """Where tied modes' errors are far apart, which is the more accurate."""
        known = {x: self.errors[x] for x in group if self.errors.get(x) is not None}
        if len(known) < 2:
            return ""
        good, bad = min(known, key=known.__getitem__), max(known, key=known.__getitem__)
        eps = float(np.finfo(next(iter(self.records)).precision).eps) if self.records else 0.0
        if known[bad] <= ERRORS_APART * max(known[good], eps):
            return ""
        return (f" ({good} is the more accurate: error {known[good]:.1g} "
                f"against {known[bad]:.1g} for {bad})")  # fmt: skip


def _error_text(error: float | None) -> str:
    if error is None or not math.isfinite(error):
        return ""
    return f" (error {error:.1g})" if error else " (error 0 against the reference)"


def _joined(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def predict(measured: Mapping[int, Record], n: int) -> float | None:
    """Seconds per call at ``n`` from the records of one series at sizes below it, or
    None with fewer than two (see the module docstring for how)."""
    sizes = sorted(s for s in measured if s < n)
    if len(sizes) < 2:
        return None
    a, b = measured[sizes[-2]], measured[sizes[-1]]
    ta, tb = a.median_s, b.median_s
    grow = math.log(b.n / a.n)
    if a.flops and b.flops and b.flops > a.flops and tb > ta:
        per_flop = (tb - ta) / (b.flops - a.flops)  # beyond the fixed cost of a call
        flops = b.flops * (n / b.n) ** (math.log(b.flops / a.flops) / grow)
        return tb + per_flop * (flops - b.flops)
    power = min(max(math.log(tb / ta) / grow, 0.0), 3.0)
    return tb * (n / b.n) ** power


def predict_peak(measured: Mapping[int, Record], n: int) -> float | None:
    """Peak bytes at ``n`` from one series' records at sizes below it that measured
    one (through the last two, as the sweep's budget predicts), or None with fewer."""
    peaks = sorted((s, r.peak_bytes) for s, r in measured.items() if s < n and r.peak_bytes)
    return loglog(peaks[-2:], n, 1.0)[0] if len(peaks) >= 2 else None


def _as_predicted(last: Record, n: int, t: float) -> Record:
    """A stand-in record of a prediction, its interval ``PREDICTION_SPREAD`` wide, for
    ``compare`` (never shown: the evidence holds only what was measured)."""
    return replace(last, n=n, median_s=t, min_s=t, median_lo_s=t / PREDICTION_SPREAD,
                   median_hi_s=t * PREDICTION_SPREAD, at_floor=False)  # fmt: skip


def advice_from(
    records: Iterable[Record], n: int, model: str | None = None, *, predicted: bool = True,
    memory_limit: str | float | None = None,
) -> Advice:  # fmt: skip
    """The advice at ``n`` from records already measured (no new measurement).

    Every derivative series measured at ``n`` is a candidate with its record
    there; one measured only below ``n`` (at two sizes at least) is a candidate
    with a predicted time (and peak memory), unless ``predicted=False``. Primal
    series (f itself) are not candidates, nor is a series whose peak at ``n`` is past
    ``memory_limit`` (bytes, or text: "4GB"; ``Advice.ruled_out``).
    """
    limit = None if memory_limit is None else parse_bytes(memory_limit)
    records = tuple(records)
    by_label = series_records(r for r in records if r.mode != "primal")
    # the modes not measured at n, and why, as their records say it
    skipped = {r.label: r.skipped for r in records if r.n == n and r.mode != "primal"
               and r.skipped and n not in by_label.get(r.label, {})}  # fmt: skip
    at_n: dict[str, Record] = {}
    basis: dict[str, int] = {}
    memory: dict[str, float] = {}
    for label, rs in by_label.items():
        if n in rs:
            at_n[label] = rs[n]
            if rs[n].peak_bytes is not None:
                memory[label] = rs[n].peak_bytes
            continue
        t = predict(rs, n) if predicted else None
        if t is not None and t > 0 and math.isfinite(t):
            basis[label] = max(s for s in rs if s < n)
            at_n[label] = _as_predicted(rs[basis[label]], n, t)
            peak = predict_peak(rs, n)
            if peak is not None:
                memory[label] = peak
    ruled_out = {x: b for x, b in memory.items() if limit is not None and b > limit}
    name = model or next((r.model for r in records), "the model")
    ranked = sorted((x for x in at_n if x not in ruled_out), key=lambda x: at_n[x].median_s)
    if not ranked:
        guessed = tuple(x for x in ruled_out if x in basis)
        return Advice(name, n, None, None, None, (), None, guessed, predicted_from=basis,
                      records=records, memory=memory, memory_limit=limit,
                      ruled_out=ruled_out, skipped=skipped)  # fmt: skip
    best = ranked[0]
    runner = ranked[1] if len(ranked) > 1 else None
    times = {x: at_n[x].median_s for x in ranked}
    errors = {x: at_n[x].error for x in ranked}
    return Advice(
        model=name, n=n, best=best, runner_up=runner,
        speedup=times[runner] / times[best] if runner else None,
        tied=tuple(x for x in ranked[1:] if compare(at_n[best], at_n[x]) == 0),
        error=errors[best], predicted=tuple(x for x in [*ranked, *ruled_out] if x in basis),
        times=times, predicted_from=basis, records=records, errors=errors, memory=memory,
        memory_limit=limit, ruled_out=ruled_out, skipped=skipped,
    )  # fmt: skip


def _unaffordable(reason: str | None) -> bool:
    """Skipped for its cost (time budget or memory), not for an error in the model."""
    return bool(reason) and ("budget" in reason or "of memory" in reason)


def smaller_sizes(n: int) -> list[int]:
    """The sizes below ``n`` a predicted mode is measured at."""
    return sorted({s for s in (round(n * f) for f in SMALLER) if 1 <= s < n})


def advise(
    model: Any,
    n: int,
    modes: str | Sequence[str | Mapping[str, Any] | Series] | None = None,
    *,
    precision: str = "float64",
    backend: str | None = None,
    budget_s: float = BUDGET_S,
    records: Iterable[Record] = (),
    memory_limit: str | float | None = None,
    **options: Any,
) -> Advice:
    """Measure ``modes`` of ``model`` at ``n`` and say which is fastest beyond the noise.

    Args:
        model: a catalog name, a path to a model file, or a ``Model``.
        n: the size asked about.
        modes: the candidates (``bench``'s variants); default: ``DEFAULT_MODES`` that
            ``backend`` runs.
        precision, backend, budget_s: as in ``bench`` (``backend=None``: its default).
        records: records of an earlier sweep of the same model, for context: a
            mode skipped at ``n`` is predicted from their sizes below ``n``.
        memory_limit: the memory one call may hold, as bytes or text ("4GB", "512MB",
            "1.5 GB"): a mode whose peak at ``n``, measured or predicted, is past it is
            ruled out, and said so with its figure. None: no limit (the advice still
            says where the fastest needs far more memory than another).
        **options: passed on to ``bench`` (scheme, jit, repeats, target_s, seed,
            settings, warn, ...).

    Returns:
        An ``Advice``; ``describe()`` says it in one sentence. A mode too costly
        to run at ``n`` is measured at a few smaller sizes (``smaller_sizes``)
        and its time at ``n`` predicted.

    Example:
        >>> advice = adlab.advise("rosenbrock", 3, ["forward", "reverse"], budget_s=0.5, warn=False)
        >>> advice.model, advice.n, sorted(advice.times)
        ('rosenbrock', 3, ['forward', 'reverse'])
    """
    n = int(n)
    limit = None if memory_limit is None else parse_bytes(memory_limit)  # refused before measuring
    variants = parse_variants(default_modes(backend) if modes is None else modes)
    if backend is not None:
        options["backend"] = backend
    options.update(precision=precision, budget_s=budget_s)
    fresh = list(bench(model, [n], variants, **options))
    earlier = [r for r in records if r.n < n]
    known = series_records(r for r in earlier if r.mode != "primal")
    wanted = {r.label for r in fresh if r.mode != "primal" and _unaffordable(r.skipped)
              and len(known.get(r.label, {})) < 2}  # fmt: skip
    more: list[Record] = []
    if wanted and smaller_sizes(n):
        labels = [r.label for r in fresh if r.mode != "primal"]
        again = [v for v, label in zip(variants, labels, strict=False) if label in wanted]
        if len(labels) != len(variants):  # variants on models of their own: all again
            again = variants
        more = list(bench(model, smaller_sizes(n), again, **options))
    return advice_from([*earlier, *more, *fresh], n, memory_limit=limit)
