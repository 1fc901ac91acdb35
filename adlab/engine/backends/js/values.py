"""The values of an emitted program (``Val``: a buffer, a literal, or a value fused into its
consumers' loops), and what its buffers hold (``Buffers``); ``code.Code`` writes them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .passes import Ix


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
    #: a fused value, computed inside its consumers' loops instead of a buffer of its
    #: own: ``fused(ix)`` is (the statements, the expression) of its element at ``ix``
    fused: Callable[[Ix], tuple[list[str], str]] | None = None
    #: ... the buffers they read
    reads: frozenset[str] = frozenset()
    #: ... and what an element costs to compute (``COSTS``), for recomputing it per use
    cost: int = 0
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
        return self.reads if self.fused is not None else frozenset({self.name})

    def index(self, i: str) -> str:
        """The element at flat index ``i`` of a value held in a buffer."""
        return f"{self.name}[{self.base} + {i}]" if self.base else f"{self.name}[{i}]"

    def at(self, i: str, size: int | None = None) -> str:
        """The element read at flat index ``i`` (a scalar read at 0 wherever it is used)."""
        if self.fused is not None:
            raise AssertionError("a fused value is read through Code.read_at")
        if self.literal:
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
