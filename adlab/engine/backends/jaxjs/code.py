"""The jax-js a jaxpr becomes: its values, the blocks of code being written, and who owns what.

jax-js counts references by hand: every function takes ownership of its arguments, so a
value read twice must be read as ``v.ref`` (one more reference) all but the last time,
and a value never read must be disposed, or its memory leaks (README of @jax-js/jax,
"Reference counting"). The rules do not say which read is the last: they write each
read of a value as a mark, ``«v3»`` (``Val.name``), and ``Block.finish`` settles the
marks once the whole program is written, block by block (a function body, a loop's
step): in the block that owns a value, the textually last read on a line of its own
takes the reference (JavaScript evaluates arguments left to right, so every other read
has added its own by then), every other read is ``v3.ref``; a value last read inside a
nested block (a loop's body reads it at every step) is read as ``.ref`` there and
disposed after that block; a value never read is disposed where it was made. Constants
are held by the program and always read as ``C[i].ref``.

``Code`` is the walk (``_walk.Walker``) that writes it; the rule tables are the
translator's (``translate.Translation``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._walk import Walker

#: the most elements an equation of constants may make to be computed at translation
FOLDED = 4096
#: a read of a value owned by the code: «name»
MARK = re.compile(r"«(\w+)»")


@dataclass(frozen=True)
class Val:
    """One value: how the code reads it (a mark, or ``C[i].ref``), its shape and jax-js dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def raw(self) -> str:
        """The JavaScript variable itself (a mark's name)."""
        return self.name.strip("«»")


def jaxjs_dtype(dtype: Any) -> str:
    """jax-js's dtype for a NumPy one: float32 and float64 as they are, int32 for every
    integer (jax-js has no 64-bit integers), bool."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "bool"
    if np.issubdtype(dtype, np.integer):
        return "int32"
    if dtype == np.float64:
        return "float64"
    if np.issubdtype(dtype, np.floating):
        return "float32"
    raise TypeError(f"jax-js has no dtype for {dtype}")


@dataclass
class Block:
    """Code that runs straight through once each time it is entered: a function's body, a
    loop's step. ``items`` are lines and nested blocks; ``owned``, the values it makes, each
    with the index of the item that makes it (-1: on entry)."""

    head: str = ""
    items: list[Any] = field(default_factory=list)
    tail: str = ""
    owned: list[tuple[str, int]] = field(default_factory=list)

    def own(self, name: str, at: int | None = None) -> None:
        """``name`` is made here, by the last item written (or at ``at``)."""
        self.owned.append((name, len(self.items) - 1 if at is None else at))

    def finish(self) -> None:
        """Settle every mark of the values this block owns (its nested blocks first)."""
        for item in self.items:
            if isinstance(item, Block):
                item.finish()
        disposals: list[tuple[int, str]] = []
        for name, made in self.owned:
            reads = [k for k, item in enumerate(self.items) if k > made and _reads(item, name)]
            for k in reads:
                self.items[k] = _settled(self.items[k], name, last=k == reads[-1])
            if not reads:
                disposals.append((made + 1, f"{name}.dispose();"))
            elif isinstance(self.items[reads[-1]], Block):
                disposals.append((reads[-1] + 1, f"{name}.dispose();"))
        for k, line in sorted(disposals, key=lambda d: d[0], reverse=True):
            self.items.insert(k, line)

    def text(self, indent: str = "") -> list[str]:
        inner = indent + "  " if self.head else indent
        lines = [indent + self.head] if self.head else []
        for item in self.items:
            lines += item.text(inner) if isinstance(item, Block) else [inner + item]
        return lines + ([indent + self.tail] if self.tail else [])


def _reads(item: Any, name: str) -> bool:
    if isinstance(item, Block):
        return any(_reads(i, name) for i in item.items)
    return f"«{name}»" in item


def _settled(item: Any, name: str, last: bool) -> Any:
    """``item`` with its reads of ``name`` settled: each a new reference (``.ref``), but the
    textually last one where ``last`` and ``item`` is a line (it takes the reference)."""
    mark = f"«{name}»"
    if isinstance(item, Block):
        item.items = [_settled(i, name, last=False) for i in item.items]
        return item
    head, sep, tail = item.rpartition(mark) if last else ("", "", item)
    if not sep:
        return item.replace(mark, f"{name}.ref")
    return head.replace(mark, f"{name}.ref") + name + tail


class Code(Walker):
    """The JavaScript of one jaxpr being translated: its blocks and its constants."""

    label, backend = "jax-js", "jaxjs"
    covers = "elementwise arithmetic, sums, products of matrices, slicing, gathers, scan loops"
    elsewhere = "backend='js' or backend='jax'"

    def __init__(self, files: frozenset[str], jit: bool = False) -> None:
        super().__init__(files)
        self.jit = jit  # the program runs under jax-js's jit (a rule may write it otherwise)
        self.body = Block()
        self.block = self.body  # where the code is being written now
        self.consts: list[tuple[np.ndarray, str]] = []  # (values, jax-js dtype)
        self._count = 0

    def const(self, value: Any) -> Val:
        """A constant array (a scalar too), made once, at load, and held by the program."""
        a = np.asarray(value)
        dtype = jaxjs_dtype(a.dtype)
        self.consts.append((a, dtype))
        return Val(f"C[{len(self.consts) - 1}].ref", tuple(a.shape), dtype)

    def folded(self, eqn: Any, ins: list[Val]) -> list[Val] | None:
        """The outputs of an equation whose operands are all constants (``np.linspace``'s
        grid, a reshaped literal), computed by JAX now, once and in f's precision, and
        held as constants; None where one operand is computed by f, or an output is large
        (it would travel as a constant)."""
        values = [self.value_of(v) for v in ins]
        if any(v is None for v in values) or eqn.effects:
            return None
        if sum(math.prod(v.aval.shape) for v in eqn.outvars) > FOLDED:
            return None
        outs = eqn.primitive.bind(*values, **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        return [self.const(np.asarray(o, dtype=v.aval.dtype))
                for o, v in zip(outs, eqn.outvars, strict=True)]  # fmt: skip

    def value_of(self, v: Val) -> Any:
        """The value of a constant (None: a value computed by f)."""
        found = re.fullmatch(r"C\[(\d+)\]\.ref", v.name)
        return None if found is None else self.consts[int(found.group(1))][0]

    def temp(self, prefix: str) -> str:
        """A new JavaScript name."""
        self._count += 1
        return f"{prefix}{self._count}"

    def line(self, text: str) -> None:
        self.block.items.append(text)

    def bind(self, expr: str, shape: tuple[int, ...], dtype: Any, prefix: str = "v") -> Val:
        """A new value, made by ``expr`` and owned by the block being written."""
        name = self.temp(prefix)
        self.line(f"const {name} = {expr};")
        self.block.own(name)
        return Val(f"«{name}»", tuple(int(s) for s in shape), jaxjs_dtype(dtype))

    def owned(self, name: str, shape: tuple[int, ...], dtype: str) -> Val:
        """A value the current block owns from its last item on, bound by hand (``name``)."""
        self.block.own(name)
        return Val(f"«{name}»", tuple(shape), dtype)

    def apply(self, rule: Any, eqn: Any, ins: list[Val]) -> list[Val]:
        """The rule's expressions bound to names (a rule may return a value as it is); an
        equation of constants alone, small, is computed here by JAX (``folded``)."""
        folded = self.folded(eqn, ins)
        if folded is not None:
            return folded
        exprs = rule(self, eqn, ins)
        if isinstance(exprs, (str, Val)):
            exprs = [exprs]
        return [expr if isinstance(expr, Val) else self.bind(expr, var.aval.shape, var.aval.dtype)
                for expr, var in zip(exprs, eqn.outvars, strict=True)]  # fmt: skip
