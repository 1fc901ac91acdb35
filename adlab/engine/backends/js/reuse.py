"""Which of the emitted program's buffers are free again, for a later value of the same size.

A buffer is held while a value that reads it is alive: the variable it was written for,
a view of it (a slice read in place, a reshape), or a fused value that reads it in its
consumers' loops (``Val.buffers``). A variable is alive until its last consumer is
written (``code.Code.start`` counts them; an output of the program is never done). When
no live value reads a buffer, a later buffer of the same size takes it (``Code.fresh``),
so the program holds fewer bytes and its record (``code.Buffers``) counts each once.

Only buffers made and freed outside any loop or branch are taken again: a loop's body
runs many times, so a buffer free after its last read in one step is read again in the
next. A loop that writes a taken buffer while one waiting to be written still reads it
is joined to it, or written after it, only as ``passes.Loop.joins`` allows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

#: the primitives whose bodies run many times or may not run (loops, branches)
LOOPS = frozenset({"scan", "while", "cond"})


class Liveness:
    """The values alive in a program being written, and the buffers free again."""

    def __init__(self, own: Callable[[str], int | None]) -> None:
        self.own = own  # a buffer's size, if it is the program's own (else None)
        self.depth = 0  # inside how many loops or branches the writing is
        self._left: dict[Any, int] = {}  # a variable's consumers not yet written
        self._vals: dict[Any, Any] = {}  # ... and its value
        self._holders: Counter[str] = Counter()  # live values reading each buffer
        self._free: dict[int, list[str]] = {}  # free buffers by size

    def take(self, size: int) -> str | None:
        """A free buffer of ``size`` elements, now taken; None: none."""
        free = self._free.get(size)
        return free.pop() if free and self.depth == 0 else None

    def written(self, eqn: Any, outs: list, uses: dict[Any, list]) -> None:
        """``eqn`` is written: its outputs are alive, its operands one consumer nearer
        their end."""
        for var, val in zip(eqn.outvars, outs, strict=True):
            self._vals[var] = val
            self._left[var] = len(uses.get(var, []))
            self._holders.update(val.buffers)
            if not self._left[var]:
                self._end(var)
        for var in eqn.invars:
            if not hasattr(var, "val") and var in self._left:  # made here (not a literal,
                # not a body's input)
                self._left[var] -= 1
                if not self._left[var]:
                    self._end(var)

    def _end(self, var: Any) -> None:
        val = self._vals.pop(var)
        del self._left[var]
        for name in val.buffers:
            self._holders[name] -= 1
            size = self.own(name)
            if not self._holders[name] and self.depth == 0 and size is not None:
                self._free.setdefault(size, []).append(name)
