"""A closed jaxpr, at fixed shapes, as a JavaScript function over Float64Arrays.

Every value is a ``Float64Array`` (integers and booleans too: float64 holds every
integer below 2**53 exactly; the rules keep integer semantics where they differ,
as in division). Buffers are allocated once, when the program is loaded, so a call
allocates nothing: ``(C) => { const b1 = new Float64Array(5); ...; return
function(a0, a1) { ...; return [b7]; }; }``, C being the constants. Reshapes and
other moves that keep row-major order reuse their operand's buffer.

Calls (``jit``, ``custom_jvp_call``) are inlined. A primitive with no rule
(``rules.RULES``) is a ``ModelError`` naming the model's line that made it.

The emitter knows its buffers, so it counts them (``Buffers``): all of them are held
through a call, and in a reverse-mode program (JAX's transposed equations, whose name
stack says ``transpose``) the tape is the buffers the forward equations write and the
transposed ones read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._vocab import ModelError
from ...model.userline import eqn_line, source_line
from ...programs.jaxpr import call_body

#: call-like primitives whose body is inlined (``jaxpr.call_body`` finds it)
CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
                   "custom_vjp_call", "custom_vjp_call_jaxpr", "remat", "checkpoint",
                   "custom_lin"})  # fmt: skip
#: a buffer's name in the emitted source (loop counters and temporaries are lower case)
BUFFER = re.compile(r"\bB\d+\b")
#: bytes per element of every buffer: the emitted code holds every value in a Float64Array
ITEMSIZE = 8


@dataclass(frozen=True)
class Buffers:
    """What the emitted program's own buffers hold, in bytes: ``held``, every one (made
    when it is loaded, all held through a call: temporaries and outputs; its arguments and
    constants not counted); ``residual``, those the forward equations write and JAX's
    transposed (backward) equations read, the tape of a reverse-mode program (0: none)."""

    held: int
    residual: int


def transposed(eqn: Any) -> bool:
    """Whether JAX wrote ``eqn`` in a reverse pass (``backward_pass`` names its equations'
    stack ``transpose(...)``)."""
    return "transpose(" in str(getattr(eqn.source_info, "name_stack", ""))


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

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def is_int(self) -> bool:
        return np.issubdtype(self.dtype, np.integer) or self.dtype == np.bool_

    def at(self, i: str, size: int | None = None) -> str:
        """The element read at flat index ``i`` (a scalar read at 0 wherever it is used)."""
        if self.literal or self.lines is not None:
            return self.name
        if self.shape == () or (size is not None and self.size == 1 and size != 1):
            return f"{self.name}[0]"
        return f"{self.name}[{i}]"


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


class Program:
    """The JS text of one jaxpr being built: allocations, body, constants."""

    def __init__(self, files: frozenset[str]) -> None:
        self.files = files
        self.allocs: list[str] = []
        self.body: list[str] = []
        self.consts: list[np.ndarray] = []
        self._count = 0
        self._where: list[Any] = []  # the enclosing call equations (outermost first)
        self._uses: dict[Any, list] = {}  # a variable's consumers (None: an output)
        self._bytes: dict[str, int] = {}  # each buffer's bytes, by name
        self._forward: set[str] = set()  # the buffers made before the reverse pass
        self._taped: set[str] = set()  # those of them the reverse pass reads
        self._backward = False  # emitting JAX's transposed equations (or a call of them)

    def temp(self) -> str:
        """A new name for one element of a fused value."""
        self._count += 1
        return f"t{self._count}"

    def fuses(self, var: Any, everywhere: bool = False) -> bool:
        """Whether ``var`` can be computed inside its one consumer's loop: that consumer
        goes over the same elements in the same order (``rules.FUSES``). ``everywhere``:
        in each of its consumers' loops (for a read that costs no more than a load)."""
        from .rules import FUSES

        uses = self._uses.get(var, [None])
        if len(uses) > 1 and not everywhere:
            return False
        return all(e is not None and FUSES.get(e.primitive.name, _never)(e, var) for e in uses)

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
        self._count += 1
        name = f"B{self._count}"  # loop counters are lower case
        size = max(math.prod(shape), 1)
        self.allocs.append(f"const {name} = new Float64Array({size});")
        self._bytes[name] = size * ITEMSIZE
        if not self._backward:
            self._forward.add(name)
        return Val(name, tuple(shape), np.dtype(dtype))

    def const(self, value: Any) -> Val:
        """A constant array, shipped beside the source (scalars inline)."""
        a = np.asarray(value)
        if a.ndim == 0:
            return Val(number(a.item()), (), a.dtype, literal=True)
        self.consts.append(np.ascontiguousarray(a, dtype=np.float64).ravel())
        return Val(f"C[{len(self.consts) - 1}]", a.shape, a.dtype)

    def emit(self, *lines: str) -> None:
        if self._backward:  # a forward buffer read here is on the tape (a fused read too)
            self._taped.update(n for line in lines for n in BUFFER.findall(line)
                               if n in self._forward)  # fmt: skip
        self.body.extend(lines)

    def buffers(self) -> Buffers:
        return Buffers(sum(self._bytes.values()), sum(self._bytes[n] for n in self._taped))

    # --------------------------------------------------------------- jaxprs
    def run(self, jaxpr: Any, consts: list, inputs: list[Val]) -> list[Val]:
        """Emit ``jaxpr``'s equations with its inputs bound to ``inputs``; its outputs."""
        env: dict[Any, Val] = {}
        uses: dict[Any, list] = {}  # anew at each inlining of a body called twice
        for eqn in jaxpr.eqns:
            for v in eqn.invars:
                if not hasattr(v, "val"):
                    uses.setdefault(v, []).append(eqn)
        for v in jaxpr.outvars:
            if not hasattr(v, "val"):
                uses.setdefault(v, []).append(None)  # an output: a buffer of its own
        self._uses.update(uses)
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[v] = self.const(c)
        for v, val in zip(jaxpr.invars, inputs, strict=True):
            env[v] = val
        for eqn in jaxpr.eqns:
            ins = [self.read(env, v) for v in eqn.invars]
            outs = self.equation(eqn, ins)
            for v, val in zip(eqn.outvars, outs, strict=True):
                env[v] = val
        return [self.materialize(self.read(env, v)) for v in jaxpr.outvars]

    def read(self, env: dict, v: Any) -> Val:
        if hasattr(v, "val"):  # a Literal
            return (
                self.const(v.val)
                if np.ndim(v.val)
                else Val(
                    number(np.asarray(v.val).item()), (), np.asarray(v.val).dtype, literal=True
                )
            )
        return env[v]

    def equation(self, eqn: Any, ins: list[Val]) -> list[Val]:
        outer = self._backward
        self._backward = outer or transposed(eqn)  # a call's body: as the call
        try:
            return self._equation(eqn, ins)
        finally:
            self._backward = outer

    def _equation(self, eqn: Any, ins: list[Val]) -> list[Val]:
        from .rules import RULES

        name = eqn.primitive.name
        if name in CALLS:
            body = call_body(eqn)
            if body is not None:
                ins = [self.materialize(v) for v in ins]
                self._where.append(eqn)
                try:
                    return self.run(body[0], body[1], ins)
                finally:
                    self._where.pop()
        rule = RULES.get(name)
        if rule is None:
            raise self.uncovered(eqn)
        from .rules import FUSES

        if name not in FUSES:  # it indexes its operands: they need buffers
            ins = [self.materialize(v) for v in ins]
        return rule(self, eqn, ins)

    def uncovered(self, eqn: Any) -> ModelError:
        """The error for a primitive with no rule, at the model's line that made it."""
        name = eqn.primitive.name
        where = None
        for e in (eqn, *reversed(self._where)):  # inside a library call: the call's line
            where = eqn_line(e, self.files)
            if where:
                break
        lineno = where[1] if where else None
        from .rules import RULES

        return ModelError(
            f"the operation {name!r} (JAX's primitive) has no JavaScript translation in "
            f"adlab yet, so backend='js' cannot run this model",
            lineno=lineno, line=source_line(*where) if where else None,
            hint=(f"write {'line ' + str(lineno) if lineno else 'f'} with operations js "
                  f"translates ({len(RULES)} of JAX's primitives: elementwise arithmetic, "
                  "sums, products of matrices, slicing), or run it on another backend, "
                  "e.g. backend='jax'"),
        )  # fmt: skip


def emit(closed: Any, files: frozenset[str]
         ) -> tuple[str, list[np.ndarray], list[Val], Buffers]:  # fmt: skip
    """(source, constants, outputs, its buffers) of a closed jaxpr: the source is a JS
    factory expression ``(C) => function(a0, ...) { ...; return [outputs]; }``."""
    prog = Program(files)
    jaxpr = closed.jaxpr
    inputs = [Val(f"a{k}", tuple(v.aval.shape), np.dtype(v.aval.dtype))
              for k, v in enumerate(jaxpr.invars)]  # fmt: skip
    outs = prog.run(jaxpr, list(closed.consts), inputs)
    ret = []
    for o in outs:
        if o.literal:  # a constant output: a buffer holding it
            buf = prog.fresh(o.shape, o.dtype)
            prog.emit(f"{buf.name}.fill({o.name});")
            o = buf
        ret.append(o.name)
    args = ", ".join(v.name for v in inputs)
    listed = f"[{', '.join(ret)}]"
    if all(r.startswith(("B", "C[")) for r in ret):  # its own buffers: one list, made once
        prog.allocs.append(f"const OUT = {listed};")
        listed = "OUT"
    source = "\n".join([
        "(function (C) {", *("  " + a for a in prog.allocs),
        f"  return function ({args}) {{", *("    " + b for b in prog.body),
        f"    return {listed};", "  };", "})",
    ])  # fmt: skip
    return source, prog.consts, outs, prog.buffers()
