"""The JavaScript a jaxpr becomes: its values, its buffers, and the code being written.

Every value is a ``Float64Array`` (integers and booleans too: float64 holds every
integer below 2**53 exactly; the rules keep integer semantics where they differ,
as in division). Buffers are allocated once, when the program is loaded, so a call
allocates nothing; reshapes and other moves that keep row-major order reuse their
operand's buffer, and a row of a stacked buffer (a scan's ``x``) is read in place, at
its offset (``Val.base``).

The values (``Val``) and what the buffers hold (``Buffers``) are in ``values``. ``Code``
is the walk (``_walk.Walker``) that writes the code; the rule tables are the emitter's
(``emit.Program``). It knows its buffers, so it counts them: all of them are held through
a call, and in a reverse-mode program the tape is the buffers
that equations depending on the primal inputs wrote and equations depending on the
cotangent read: the walk's own facts (``Walker.sources``), not the program's text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._walk import Walker
from .passes import Ix, Loop, hoisted, shifted
from .reuse import LOOPS, Liveness
from .values import Buffers, Val, number

#: bytes per element of every buffer: the emitted code holds every value in a Float64Array
ITEMSIZE = 8
#: the marks of a program's inputs (``Walker.walk``): its arguments, and a reverse-mode
#: program's cotangent
PRIMAL, COTANGENT = "primal", "cotangent"


#: the most an element may cost (``rules.COSTS``: an add 1, a division 2, a call of
#: ``Math`` 20) to be computed again in each of several consumers rather than buffered
RECOMPUTE = 2
_NUMBER = re.compile(r"\(?-?(?:\d[\d.e+-]*|Infinity)\)?|NaN")  # as ``number`` writes it


def _never(eqn: Any, var: Any) -> bool:
    return False


class Code(Walker):
    """The JS text of one jaxpr being written: allocations, body, constants."""

    label, backend = "JavaScript", "js"
    #: the primitives that take fused operands, and which (the emitter's table)
    fusing: Mapping[str, Callable[[Any, Any], bool]] = {}

    def __init__(self, files: frozenset[str]) -> None:
        super().__init__(files)
        self.allocs: list[str] = []
        self.body: list[str] = []
        self.consts: list[np.ndarray] = []
        self._count = 0
        self._uses: dict[Any, list] = {}  # a variable's consumers (None: an output)
        self._bytes: dict[str, int] = {}  # each buffer's bytes, by name
        self._forward: set[str] = set()  # the buffers forward equations made from the inputs
        self._taped: set[str] = set()  # those of them the backward equations read
        self._backward = False  # writing an equation that reads the cotangent (or in one)
        self._memo: dict[tuple[str, int], str] = {}  # fused elements written in this body
        self._cuts: set[int] | None = None  # where ``loop``'s first pass cuts
        self._reads: set[tuple[str, int | None]] = set()  # ... the buffers it reads, where
        self._pending: Loop | None = None  # the last loop, written when the next is not
        self.live = Liveness(lambda b: self._bytes[b] // ITEMSIZE if b in self._bytes else None)

    @property
    def covers(self) -> str:  # type: ignore[override]
        return (f"{len(self.rules)} of JAX's primitives: elementwise arithmetic, sums, "
                "products of matrices, slicing, loops")  # fmt: skip

    def temp(self, prefix: str = "t") -> str:
        """A new name: of one element of a fused value, or (``prefix``) a loop's counter."""
        self._count += 1
        return f"{prefix}{self._count}"

    def fuses(self, var: Any, cost: int = 0) -> bool:
        """Whether ``var`` can be computed inside its consumers' loops: each goes over
        the same elements (``fusing``), and where there are several, an element costs
        no more than ``RECOMPUTE`` to compute again in each (cheaper than a buffer's
        store and loads, and the loops that would fill it) and none reads it at another
        element (``shifted``: computed again there, it shares nothing with the others;
        buffered in a joined loop, it is a variable handed on, ``registers``)."""
        uses = self._uses.get(var, [])  # none: dead (a split's piece nothing reads)
        if len(uses) > 1 and cost and (cost > RECOMPUTE or shifted(self._uses, self.fusing, var)):
            return False
        return all(e is not None and self.fusing.get(e.primitive.name, _never)(e, var)
                   for e in uses)  # fmt: skip

    def node(self, shape: tuple[int, ...], dtype: Any, ins: list[Val],
             expr: Callable[[list[str]], str], cost: int) -> Val:  # fmt: skip
        """The fused value whose element is ``expr`` of its operands' elements (read at
        the same place; a scalar everywhere), each computed once per loop body."""
        key = self.temp("v")
        size = math.prod(shape)

        def fused(ix: Ix) -> tuple[list[str], str]:
            done = self._memo.get((key, ix.off))
            if done is not None:
                return [], done
            lines, args = [], []
            for v in ins:
                pre, e = self.read_at(v, ix, size)
                lines += pre
                args.append(e)
            t = self.temp()
            self._memo[(key, ix.off)] = t
            return [*lines, f"const {t} = {expr(args)};"], t

        reads = frozenset().union(*(v.buffers for v in ins))
        total = cost + sum(v.cost for v in ins if v.fused is not None)
        return Val(key, tuple(shape), np.dtype(dtype), fused=fused, reads=reads, cost=total)

    def read_at(self, v: Val, ix: Ix, size: int | None = None) -> tuple[list[str], str]:
        """(statements, expression) of ``v``'s element at ``ix`` in a loop over ``size``
        elements (a scalar read at 0 wherever it is used)."""
        if v.fused is not None:
            return v.fused(ix)
        if v.literal:
            return [], v.name
        if v.shape == () or (size is not None and v.size == 1 and size != 1):
            self._reads.add((v.name, None))
            return [], v.index("0")
        base = int(v.base or 0) if str(v.base or 0).isdigit() else None
        self._reads.add((v.name, None if base is None else ix.off + base))
        # each element loaded once a pass (V8 loads it again after any store to a typed
        # array: another may share its bytes)
        key = (v.name, v.base, ix.off)
        done = self._memo.get(key)
        if done is not None:
            return [], done
        t = self._memo[key] = self.temp()
        return [f"const {t} = {v.index(ix.text)};"], t

    def scalar(self, v: Val) -> str:
        """``v``'s one element, read in the loop being written (where it reads it is known
        to that loop: ``Loop.joins``)."""
        if not v.literal:
            self._reads.add((v.name, None))
        return v.at("0")

    def store(self, v: Val, ix: Ix, e: str) -> list[str]:
        """The statement writing ``e`` at ``ix`` of the buffer ``v``; a later read of that
        element in the pass takes ``e`` (no other of ``v``'s is still known)."""
        for key in [k for k in self._memo if k[0] == v.name]:
            del self._memo[key]
        if e.isidentifier() or _NUMBER.fullmatch(e):  # a name, or a literal
            self._memo[(v.name, v.base, ix.off)] = e
        return [f"{v.index(ix.text)} = {e};"]

    def region(self, ix: Ix, start: int, stop: int) -> bool:
        """Whether the elements ``ix`` reads lie in ``start`` ... ``stop - 1`` (all of them,
        or none): a piecewise read. Where they straddle it, the loop is cut there (the
        first pass of ``loop`` finds the cuts; its pieces never straddle)."""
        first, last = ix.lo + ix.off, ix.hi + ix.off
        if start <= first and last <= stop:
            return True
        if last <= start or stop <= first:
            return False
        if self._cuts is None:
            raise AssertionError("a piecewise read straddles a piece of its loop")
        self._cuts.update((start - ix.off, stop - ix.off))
        return True

    def loop(self, size: int, body: Callable[[Ix], list[str]], writes: str,
             head: Sequence[str] = (), tail: Sequence[str] = ()) -> None:  # fmt: skip
        """A loop over ``size`` elements whose ``body(ix)`` reads fused values and writes
        the buffer ``writes`` (at ``ix``; or, with ``tail``, after the loop). It is cut into
        pieces where a piecewise read changes side, so no element needs a branch; the
        pieces run in order (a running sum adds in the same order). It joins the loop
        before it where the order of their passes allows (``Loop.joins``): one pass (a
        shorter one's body in the pieces below its length), the values they share
        computed once."""
        self._cuts, self._reads = set(), set()
        pieces = [(0, size)]
        while True:  # passes over each piece: where to cut (a piece's own piecewise reads
            for lo, hi in pieces:  # show once it is a piece), and what every piece reads
                self._memo = {}
                body(Ix("i", 0, lo, hi))
            cuts = sorted({0, size, *(c for c in self._cuts if 0 < c < size)})
            if list(zip(cuts, cuts[1:], strict=False)) == pieces:
                break
            pieces = list(zip(cuts, cuts[1:], strict=False))
        loop = Loop(
            size,
            [(body, size)],
            set(self._cuts),
            list(head),
            list(tail),
            {writes} if not tail else set(),
            {writes} if tail else set(),
            self._reads,
            "up" if tail else "",
        )  # a sum adds in order
        self._cuts, self._reads = None, set()
        last = self._pending
        order = last.joins(loop) if last is not None else None
        if order is not None:
            last.join(loop, order)
            return
        self.flush()
        self._pending = loop
        self.body.append(loop.mark)  # its place, written at ``flush`` (a comment may go above)

    def flush(self) -> None:
        """The loop waiting to be joined, written."""
        loop, self._pending = self._pending, None
        if loop is None:
            return
        lines = list(loop.head)
        spans = list(zip(loop.cuts, loop.cuts[1:], strict=False))
        for lo, hi in reversed(spans) if loop.order == "down" else spans:
            self._memo = {}
            inner = " ".join(line for body, n in loop.bodies if hi <= n  # its elements
                             for line in body(Ix("i", 0, lo, hi)))  # fmt: skip
            if hi - lo == 1:
                lines.append(f"{{ const i = {lo}; {inner} }}")
            elif loop.order == "down":
                lines.append(f"for (let i = {hi - 1}; i >= {lo}; i--) {{ {inner} }}")
            else:
                lines.append(f"for (let i = {lo}; i < {hi}; i++) {{ {inner} }}")
        self._memo = {}
        lines = hoisted(loop, lines, self.temp)
        at = len(self.body) - 1 - self.body[::-1].index(loop.mark)
        whole = len(lines) > 1 or loop.tail
        self.body[at : at + 1] = ["{", *lines, *loop.tail, "}"] if whole else lines

    def materialize(self, v: Val) -> Val:
        """A fused value written into a buffer (for a consumer that indexes it)."""
        if v.fused is None:
            return v
        buf = self.fresh(v.shape, v.dtype)

        def body(ix: Ix) -> list[str]:
            pre, e = self.read_at(v, ix)
            return [*pre, *self.store(buf, ix, e)]

        self.loop(v.size, body, buf.name)
        return buf

    def fresh(self, shape: tuple[int, ...], dtype: Any) -> Val:
        """A preallocated buffer: one free again (``reuse``), or a new one."""
        size = max(math.prod(shape), 1)
        name = self.live.take(size)
        self._forward.discard(name)  # taken again: what it holds now is what counts
        if name is None:
            name = self.temp("B")  # loop counters are lower case
            self.allocs.append(f"const {name} = new Float64Array({size});")
            self._bytes[name] = size * ITEMSIZE
        if not self._backward and PRIMAL in self.sources:
            self._forward.add(name)
        return Val(name, tuple(shape), np.dtype(dtype))

    def forget(self, name: str) -> None:
        """The buffer ``name`` is not made after all (its value became a variable:
        ``registers``)."""
        self.allocs = [a for a in self.allocs if not a.startswith(f"const {name} = ")]
        del self._bytes[name]
        self._forward.discard(name)
        self._taped.discard(name)

    def allocated(self) -> set[str]:
        """The names of the buffers made so far."""
        return set(self._bytes)

    def elements(self, name: str) -> int:
        """How many elements the buffer ``name`` holds."""
        return self._bytes[name] // ITEMSIZE

    def const(self, value: Any) -> Val:
        """A constant array, shipped beside the source (scalars inline)."""
        a = np.asarray(value)
        if a.ndim == 0:
            return Val(number(a.item()), (), a.dtype, literal=True)
        self.consts.append(np.ascontiguousarray(a, dtype=np.float64).ravel())
        return Val(f"C[{len(self.consts) - 1}]", a.shape, a.dtype)

    def literal(self, value: Any) -> Val:
        a = np.asarray(value)
        return self.const(a) if a.ndim else Val(number(a.item()), (), a.dtype, literal=True)

    def emit(self, *lines: str) -> None:
        self.flush()
        self.body.extend(lines)

    def buffers(self) -> Buffers:
        return Buffers(sum(self._bytes.values()), sum(self._bytes[n] for n in self._taped))

    # ------------------------------------------------------------ the walk's hooks
    def start(self, jaxpr: Any) -> None:
        uses: dict[Any, list] = {}  # anew at each inlining of a body called twice
        for eqn in jaxpr.eqns:
            for v in eqn.invars:
                if not hasattr(v, "val"):
                    uses.setdefault(v, []).append(eqn)
        for v in jaxpr.outvars:
            if not hasattr(v, "val"):
                uses.setdefault(v, []).append(None)  # an output: a buffer of its own
        self._uses.update(uses)

    def equation(self, eqn: Any, ins: list[Val]) -> list[Val]:
        outer, loop = self._backward, eqn.primitive.name in LOOPS
        self._backward = outer or COTANGENT in self.sources  # a body: as its equation
        self.live.depth += loop
        try:
            outs = super().equation(eqn, ins)
        finally:
            self._backward = outer
            self.live.depth -= loop
        self.live.written(eqn, outs, self._uses)
        return outs

    def enter(self, eqn: Any, ins: list[Val]) -> list[Val]:
        self._tape(ins)
        return [self.materialize(v) for v in ins]

    def apply(self, rule: Any, eqn: Any, ins: list[Val]) -> list[Val]:
        self._tape(ins)
        if eqn.primitive.name not in self.fusing:  # it indexes its operands: buffers
            ins = [self.materialize(v) for v in ins]
        return rule(self, eqn, ins)

    def finish(self, outs: list[Val]) -> list[Val]:
        return [self.materialize(v) for v in outs]  # (a loop after may join their loops)

    def _tape(self, ins: list[Val]) -> None:
        """The forward buffers a backward equation reads (a fused read too) are taped."""
        if self._backward:
            for v in ins:
                self._taped.update(v.buffers & self._forward)
