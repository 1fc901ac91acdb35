"""The JavaScript a jaxpr becomes: its values, its buffers, and the code being written.

Every value is a ``Float64Array`` (integers and booleans too: float64 holds every
integer below 2**53 exactly; the rules keep integer semantics where they differ,
as in division). Buffers are allocated once, when the program is loaded, so a call
allocates nothing; reshapes and other moves that keep row-major order reuse their
operand's buffer, and a row of a stacked buffer (a scan's ``x``) is read in place, at
its offset (``Val.base``).

``Code`` is the walk (``_walk.Walker``) that writes it; the rule tables are the
emitter's (``emit.Program``). It knows its buffers, so it counts them (``Buffers``): all
of them are held through a call, and in a reverse-mode program the tape is the buffers
that equations depending on the primal inputs wrote and equations depending on the
cotangent read: the walk's own facts (``Walker.sources``), not the program's text.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._walk import Walker

#: bytes per element of every buffer: the emitted code holds every value in a Float64Array
ITEMSIZE = 8
#: the marks of a program's inputs (``Walker.walk``): its arguments, and a reverse-mode
#: program's cotangent
PRIMAL, COTANGENT = "primal", "cotangent"


@dataclass(frozen=True)
class Buffers:
    """What the emitted program's own buffers hold, in bytes: ``held``, every one (made
    when it is loaded, all held through a call: temporaries and outputs; its arguments and
    constants not counted); ``residual``, those the forward equations write and the
    backward equations read, the tape of a reverse-mode program (0: none)."""

    held: int
    residual: int


@dataclass(frozen=True)
class Val:
    """One value: its JS name (or a literal's text), shape and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    literal: bool = False
    #: a fused value: the statements that compute element ``i`` into ``name`` (a
    #: ``const``), written into its one consumer's loop instead of a buffer of its own
    lines: tuple[str, ...] | None = None
    #: ... and the buffers they read
    reads: frozenset[str] = frozenset()
    #: where it starts in the buffer ``name`` (an expression; "": at 0): a row of a
    #: stacked buffer, read in place
    base: str = ""

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_int(self) -> bool:
        return np.issubdtype(self.dtype, np.integer) or self.dtype == np.bool_

    @property
    def buffers(self) -> frozenset[str]:
        """The buffers a read of it reads."""
        if self.literal:
            return frozenset()
        return self.reads if self.lines is not None else frozenset({self.name})

    def index(self, i: str) -> str:
        """The element at flat index ``i`` of a value held in a buffer."""
        return f"{self.name}[{self.base} + {i}]" if self.base else f"{self.name}[{i}]"

    def at(self, i: str, size: int | None = None) -> str:
        """The element read at flat index ``i`` (a scalar read at 0 wherever it is used)."""
        if self.literal or self.lines is not None:
            return self.name
        if self.shape == () or (size is not None and self.size == 1 and size != 1):
            return self.index("0")
        return self.index(i)

    def row(self, k: str) -> Val:
        """Row ``k`` (an expression) of a stacked value, read in place."""
        step = math.prod(self.shape[1:])
        here = f"({k}) * {step}" if step != 1 else f"({k})"
        return dataclasses.replace(self, shape=self.shape[1:],
                                   base=f"{self.base} + {here}" if self.base else here)  # fmt: skip


def number(v: Any) -> str:
    """A JS literal of one float or integer (parenthesised when negative)."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "(-Infinity)"
    text = repr(v)  # Python's shortest round-trip form is valid JS: 1.0, 1e-05, -0.0
    return f"({text})" if text.startswith("-") else text


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

    @property
    def covers(self) -> str:  # type: ignore[override]
        return (f"{len(self.rules)} of JAX's primitives: elementwise arithmetic, sums, "
                "products of matrices, slicing, loops")  # fmt: skip

    def temp(self, prefix: str = "t") -> str:
        """A new name: of one element of a fused value, or (``prefix``) a loop's counter."""
        self._count += 1
        return f"{prefix}{self._count}"

    def fuses(self, var: Any, everywhere: bool = False) -> bool:
        """Whether ``var`` can be computed inside its one consumer's loop: that consumer
        goes over the same elements in the same order (``fusing``). ``everywhere``: in
        each of its consumers' loops (for a read that costs no more than a load)."""
        uses = self._uses.get(var, [None])
        if len(uses) > 1 and not everywhere:
            return False
        return all(e is not None and self.fusing.get(e.primitive.name, _never)(e, var)
                   for e in uses)  # fmt: skip

    def materialize(self, v: Val) -> Val:
        """A fused value written into a buffer (for a consumer that indexes it)."""
        if v.lines is None:
            return v
        buf = self.fresh(v.shape, v.dtype)
        self.emit(f"for (let i = 0; i < {v.size}; i++) {{ {' '.join(v.lines)} "
                  f"{buf.name}[i] = {v.name}; }}")  # fmt: skip
        return buf

    def fresh(self, shape: tuple[int, ...], dtype: Any) -> Val:
        """A new preallocated buffer."""
        name = self.temp("B")  # loop counters are lower case
        size = max(math.prod(shape), 1)
        self.allocs.append(f"const {name} = new Float64Array({size});")
        self._bytes[name] = size * ITEMSIZE
        if not self._backward and PRIMAL in self.sources:
            self._forward.add(name)
        return Val(name, tuple(shape), np.dtype(dtype))

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
        outer = self._backward
        self._backward = outer or COTANGENT in self.sources  # a body: as its equation
        try:
            return super().equation(eqn, ins)
        finally:
            self._backward = outer

    def enter(self, eqn: Any, ins: list[Val]) -> list[Val]:
        self._tape(ins)
        return [self.materialize(v) for v in ins]

    def apply(self, rule: Any, eqn: Any, ins: list[Val]) -> list[Val]:
        self._tape(ins)
        if eqn.primitive.name not in self.fusing:  # it indexes its operands: buffers
            ins = [self.materialize(v) for v in ins]
        return rule(self, eqn, ins)

    def finish(self, outs: list[Val]) -> list[Val]:
        return [self.materialize(v) for v in outs]

    def _tape(self, ins: list[Val]) -> None:
        """The forward buffers a backward equation reads (a fused read too) are taped."""
        if self._backward:
            for v in ins:
                self._taped.update(v.buffers & self._forward)
