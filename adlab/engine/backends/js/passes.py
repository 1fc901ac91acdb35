"""A loop being written by ``code.Code.loop``: where it reads a fused value (``Ix``), and
its passes (``Loop``): the bodies joined into it, where it is cut into pieces, and whether
a later loop can join it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ix:
    """Where a loop reads a fused value: its element ``var + off``, the counter ``var``
    going over ``lo`` ... ``hi - 1`` in the piece of the loop being written (``Code.loop``
    cuts a loop where a piecewise read, pad or concatenate, changes side)."""

    var: str
    off: int
    lo: int
    hi: int

    @property
    def text(self) -> str:
        if not self.off:
            return self.var
        return f"{self.var} + {self.off}" if self.off > 0 else f"{self.var} - {-self.off}"

    def shift(self, by: int) -> Ix:
        return dataclasses.replace(self, off=self.off + by)


@dataclass
class Loop:
    """A loop being written (``Code.loop``): its length, bodies, where it is cut, what
    comes before and after it, the buffers it writes element by element and those it
    writes after it ends (a sum's)."""

    size: int
    bodies: list[tuple[Callable[[Ix], list[str]], int]]  # each with its length
    cuts: Any
    head: list[str]
    tail: list[str]
    writes: set[str]
    done: set[str]
    reads: set[tuple[str, int | None]]
    #: the order its passes must run in: "up", "down", or "" (either)
    order: str = ""

    def __post_init__(self) -> None:
        self.cuts = sorted({0, self.size, *(c for c in self.cuts if 0 < c < self.size)})
        self.mark = f"/* loop {id(self)} */"

    def joins(self, later: Loop) -> str | None:
        """The order in which ``later`` can run in this loop's passes, its body after this
        one's ("up", "down", "" for either), or None: an element it reads that this one
        writes must be written already (the same element; an earlier one going up, a
        later one going down), one this one reads that it overwrites must be read
        already (the converse; what it writes after it ends, a sum's result, comes after
        every read), and a sum's result is not read."""
        if self.writes & later.writes or any(n in self.done for n, _ in later.reads):
            return None
        need = {self.order, later.order}
        for name, off in later.reads:  # written by this one first
            if name in self.writes:
                need.add(None if off is None else "up" if off < 0 else "down" if off else "")
        for name, off in self.reads:  # read by this one before the later overwrites it
            if name in later.writes:  # (what it writes after the loop, after every read)
                need.add(None if off is None else "up" if off > 0 else "down" if off else "")
        need.discard("")
        if None in need or len(need) > 1:
            return None
        return need.pop() if need else ""

    def join(self, other: Loop, order: str) -> None:
        self.order = order
        self.reads |= other.reads
        self.bodies += other.bodies
        self.cuts = sorted({*self.cuts, *other.cuts})  # (each's length among them)
        self.size = max(self.size, other.size)
        self.head += other.head
        self.tail += other.tail
        self.writes |= other.writes
        self.done |= other.done


def hoisted(loop: Loop, lines: list[str], temp: Callable[[str], str]) -> list[str]:
    """``lines`` (the loop's pieces, after its head), each scalar the loop reads from a buffer
    it never writes loaded once, before it (named by ``temp``): V8 loads a typed array's
    element again after any store to another (they may share their bytes), so a scalar read
    in the loop is a load at every element."""
    if not any(line.startswith("for ") for line in lines):
        return lines
    text = "\n".join(lines)
    consts = []
    for name in sorted({name for name, off in loop.reads if off is None}):
        read = re.compile(rf"\b{name}\[0\]")
        if not read.search(text) or re.search(rf"\b{name}\[[^\]]*\]\s*=[^=]", text):
            continue
        h = temp("h")
        consts.append(f"const {h} = {name}[0];")
        text = read.sub(h, text)
    if not consts:
        return lines
    at = len(loop.head)  # after the accumulators (which write no buffer)
    body = text.split("\n")
    return [*body[:at], *consts, *body[at:]]


#: the consumers that read a value at other elements than their own
SHIFTS = frozenset({"slice", "pad", "concatenate", "split"})


def shifted(uses: dict[Any, list], fusing: Any, var: Any, depth: int = 8) -> bool:
    """Whether a consumer of ``var`` (``uses``: a variable's consumers), or of what its
    fusing consumers (``fusing``) make, reads it at other elements than their own (a
    slice, a pad, a concatenation)."""
    for e in uses.get(var, []):
        if e is None:
            continue
        if e.primitive.name in SHIFTS:
            return True
        if depth and e.primitive.name in fusing and any(
                shifted(uses, fusing, v, depth - 1) for v in e.outvars):  # fmt: skip
            return True
    return False
