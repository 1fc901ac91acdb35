"""A sweep's records carry memory, measured once per point after its repeats.

Memory is measured outside the timed loop, so the times a sweep reports are those of
calls with no counter running (``tracemalloc``, the profiler and the allocator's
statistics would slow them): every point's ``memory()`` comes after the interleaved
repeats of its size are in. Figures (a sweep with memory against without, M4) are
``benchmarks/memory.py``'s, never asserted here.

Internals: wraps ``measure.sweep.interleave`` (the repeats of one size) and
``engine.prepared.Prepared.memory`` to see their order.
"""

from __future__ import annotations

import adlab
from adlab.engine.prepared import Prepared
from adlab.measure import sweep as sweep_module


def test_records_carry_memory_and_false_leaves_it_out() -> None:
    # budget_s: a point that overran it is called no more, not even for its memory; a busy
    # machine (load 4-7) overran 0.3 s by forward mode's prepare alone
    kw = dict(budget_s=5.0, repeats=3, interval_width=None, warn=False)
    on = list(adlab.bench("rosenbrock", [10, 100], ["forward", "reverse"], **kw))
    off = list(adlab.bench("rosenbrock", [10], ["reverse"], memory=False, **kw))
    for r in on:
        assert r.peak_bytes is not None and r.memory_counter, r
        assert (r.residual_bytes is not None) == (r.mode == "reverse"), r
    # forward mode's n tangents at once grow as n^2 (jacfwd's basis); reverse's as n
    fwd = {r.n: r.peak_bytes for r in on if r.mode == "forward"}
    assert fwd[100] > 20 * fwd[10]
    assert all(r.peak_bytes is None and r.memory_counter is None for r in off)


def test_memory_is_measured_after_the_repeats(monkeypatch) -> None:
    events: list[str] = []
    timed, measured = sweep_module.interleave, Prepared.memory

    def interleave(*a, **k):
        events.append("repeats")
        out = timed(*a, **k)
        events.append("repeats done")
        return out

    def memory(self):
        events.append("memory")
        return measured(self)

    monkeypatch.setattr(sweep_module, "interleave", interleave)
    monkeypatch.setattr(Prepared, "memory", memory)
    records = list(adlab.bench("rosenbrock", [10, 30], ["reverse"], budget_s=0.3, repeats=3,
                               interval_width=None, warn=False))  # fmt: skip
    assert all(r.peak_bytes is not None for r in records)
    # per size: the repeats, then each point's memory once (the primal's and reverse's)
    assert events == ["repeats", "repeats done", "memory", "memory"] * 2
