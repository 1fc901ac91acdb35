"""One point of a sweep in the making: its series, its primal, its stopwatch.

A sweep prepares and warms up every point of a size before any repeat is
taken (``sweep._Run._size``); a ``Point`` holds what that leaves behind until
the repeats are in, and turns its timing and XLA cost into ``Record`` fields.
"""

from __future__ import annotations

import math
from typing import Any

from .._vocab import Record, Timing
from ..engine.model.source import Model
from .floor import at_floor
from .series import Series
from .timing import Stopwatch

#: what a record's ``flops_counter`` says for a count from XLA's cost analysis
XLA_COUNTER = "XLA cost analysis: every operation"


def finite(x: Any) -> float | None:
    """A float, or None for None, NaN and infinities (XLA says NaN for "not counted")."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def reason(exc: Exception) -> str:
    """A skip reason: a ValueError speaks for itself (ModelError, SizeError), others are named."""
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"


def memory_fields(p: Any, notes: list[str], over: bool = False) -> dict[str, Any]:
    """The record's memory fields from ``p.memory()``; where the counter failed, none,
    and a note saying why (the timing stands). ``over``: the point's budget allowed it one
    call only, and its memory would take another (every counter but a compiled program's
    analysis watches a call): none, and a note, rather than doubling the point's time."""
    if over:
        notes.append("memory not measured: it would take one more call, past the budget "
                     "(p.memory() measures it)")  # fmt: skip
        return {}
    try:
        return p.memory()
    except Exception as exc:  # a counter's failure must not lose the point's timing
        notes.append(f"memory not measured: {reason(exc)}")
        return {}


class Point:
    """One record in the making at one size.

    Attributes:
        m, v, args: the model, the series and the size's arguments (or the
            exception ``setup`` raised).
        primal: the point of f with the same options (None for a primal).
        base: the record fields known before measuring.
        skipped: the reason it is not measured, once known.
        prepared, notes, cost, dispatch: ``prepare``'s program, its caveats, its cost
            (XLA's; PyTorch's flop count, left until ``fields``) and how JAX's CPU
            client runs it ("inline" or "async").
        watch: the stopwatch whose repeats the sweep interleaves.
        prepare_s: the seconds ``prepare`` took, charged to the point's budget.
        record: the finished record.
    """

    def __init__(self, m: Model, v: Series, args: tuple | Exception, primal: Point | None,
                 base: dict[str, Any]) -> None:  # fmt: skip
        self.m, self.v, self.args, self.primal, self.base = m, v, args, primal, base
        self.skipped: str | None = None
        self.prepared: Any = None
        self.notes: list[str] = []
        self.cost: Any = None
        self.dispatch: str | None = None
        self.watch: Stopwatch | None = None
        self.prepare_s = 0.0  # seconds its prepare took (of its budget)
        self.record: Record | None = None

    def estimate_s(self) -> float | None:
        """Seconds per call so far (before the interleaved repeats: autorange's trial)."""
        if self.record is not None:
            return self.record.median_s
        return self.watch.samples[0] if self.watch and self.watch.samples else None

    def primal_s(self) -> float | None:
        """The median of the primal beside it (its record comes first)."""
        rec = self.primal.record if self.primal else None
        return rec.median_s if rec else None

    def counted(self) -> dict[str, Any] | None:
        """The cost, counted now where it was left until after the timing (PyTorch
        counts by running the derivative once more, under ``FlopCounterMode``)."""
        if self.cost is None and self.prepared is not None:
            self.cost = self.prepared.cost()
        return self.cost

    def fields(self, t: Timing, floor: Timing | None) -> dict[str, Any]:
        """Record fields from the timing, the floor that bounds it (measured beside it;
        for a program run on a worker thread, the hand-off's) and its cost."""
        out: dict[str, Any] = dict(
            compile_s=t.compile_s, first_call_s=t.first_call_s, min_s=t.min_s,
            median_s=t.median_s, iqr_s=t.iqr_s, loops=t.loops, repeats=t.repeats,
            unstable=t.unstable, median_lo_s=t.median_lo_s, median_hi_s=t.median_hi_s,
            at_floor=at_floor(t, floor),
        )  # fmt: skip
        primal_s = t.median_s if self.v.mode == "primal" else self.primal_s()
        if self.v.mode == "primal":
            out["primal_s"] = primal_s
        if primal_s:
            out["ratio_to_primal"] = t.median_s / primal_s
        cost = self.counted()
        if cost:
            out.update(
                flops=finite(cost["flops"]),
                flops_counter=cost.get("counter", XLA_COUNTER),
                bytes_accessed=finite(cost.get("bytes_accessed")),
                temp_bytes=finite(cost.get("temp_bytes")),
                dispatch=self.dispatch,
            )
            primal = self.primal.counted() if self.primal else None
            pcost = cost if self.v.mode == "primal" else primal
            if pcost:
                out["primal_flops"] = finite(pcost["flops"])
                if out["flops"] is not None and out["primal_flops"]:
                    out["flops_ratio"] = out["flops"] / out["primal_flops"]
        return out
