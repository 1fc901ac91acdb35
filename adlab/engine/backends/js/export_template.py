"""A program's text with its numbers as polynomials in n (``export_sizes``).

Programs emitted at several n that are the same text but for their numbers are one
``Template``: each number the same at every n, or a ``Poly`` (a length, a loop's bound, a
stride), or a float JAX computed from n (``Scaled``). ``span`` finds for which n its
lengths and the pieces of its loops are all still at least zero.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

#: a number in the emitted code (not a part of a name: B12, a0, P1)
_NUMBER = re.compile(r"(?<![\w$.])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w$.])")


@dataclass(frozen=True)
class Poly:
    """A polynomial in n with rational coefficients (``coefs[k]`` of n**k)."""

    coefs: tuple[Fraction, ...]

    def __post_init__(self) -> None:  # no leading zeros: equal polynomials compare equal
        coefs = list(self.coefs)
        while len(coefs) > 1 and coefs[-1] == 0:
            coefs.pop()
        object.__setattr__(self, "coefs", tuple(Fraction(c) for c in coefs))

    @classmethod
    def const(cls, v: int) -> Poly:
        return cls((Fraction(v),))

    @classmethod
    def fit(cls, ns: list[int], vs: list[Fraction]) -> Poly | None:
        """The polynomial of degree 3 at most through the first (n, v), if it holds at all
        the others (one at least)."""
        pts = list(zip(ns, vs, strict=True))[: min(4, len(ns) - 1)]
        coefs = [Fraction(0)] * len(pts)
        for j, (nj, vj) in enumerate(pts):  # Lagrange's basis, expanded
            basis, denom = [Fraction(1)], Fraction(1)
            for m, (nm, _) in enumerate(pts):
                if m != j:
                    basis = [a - nm * b for a, b in zip([0, *basis], [*basis, 0], strict=True)]
                    denom *= nj - nm
            for k, b in enumerate(basis):
                coefs[k] += vj * b / denom
        p = cls(tuple(coefs))
        return p if all(p(n) == v for n, v in zip(ns, vs, strict=True)) else None

    def __call__(self, n: int) -> Fraction:
        return sum((c * n**k for k, c in enumerate(self.coefs)), Fraction(0))

    @property
    def constant(self) -> bool:
        return len(self.coefs) == 1

    @property
    def integral(self) -> bool:
        return all(c.denominator == 1 for c in self.coefs)

    @property
    def whole(self) -> bool:
        """Whether it is a whole number at every whole n (n (n - 1) / 2 is): its forward
        differences at 0 are (its coefficients on the binomials C(n, k))."""
        row = [self(n) for n in range(len(self.coefs))]
        while row:
            if row[0].denominator != 1:
                return False
            row = [b - a for a, b in zip(row, row[1:], strict=False)]
        return True

    def __mul__(self, other: Any) -> Poly:
        other = other if isinstance(other, Poly) else Poly.const(other)
        out = [Fraction(0)] * (len(self.coefs) + len(other.coefs) - 1)
        for i, a in enumerate(self.coefs):
            for j, b in enumerate(other.coefs):
                out[i + j] += a * b
        return Poly(tuple(out))

    __rmul__ = __mul__

    def __add__(self, other: Poly) -> Poly:
        a, b = self.coefs, other.coefs
        size = max(len(a), len(b))
        return Poly(tuple((a[k] if k < len(a) else 0) + (b[k] if k < len(b) else 0)
                          for k in range(size)))  # fmt: skip

    def text(self, times: str = "*") -> str:
        """As a person writes it: ``2*n + 1``, ``n*n`` (``times`` between factors)."""
        scale = math.lcm(*(c.denominator for c in self.coefs))
        terms = []
        for k in range(len(self.coefs) - 1, -1, -1):
            c = self.coefs[k] * scale
            if c == 0 and (k or terms):
                continue
            powers = times.join(["n"] * k)
            body = (str(abs(c)) if not k or abs(c) != 1 else "") + (times if k and abs(c) != 1
                                                                    else "") + powers  # fmt: skip
            sign = "-" if c < 0 else "+"
            terms.append(f"{sign} {body}" if terms else ("-" if c < 0 else "") + body)
        text = " ".join(terms)
        return f"({text}) / {scale}" if scale != 1 else text

    def js(self) -> str:
        """A JavaScript expression of ``n``, parenthesised unless it is a name or a number."""
        text = self.text(" * ")
        return text if re.fullmatch(r"n|\d+", text) else f"({text})"

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class Scaled:
    """A float constant c n: JAX's own arithmetic with n (gmm's n log 2 pi), equal to
    c times n to the last bit or two."""

    c: float

    @classmethod
    def fit(cls, ns: list[int], vs: list[float]) -> Scaled | None:
        c = vs[0] / ns[0]
        return cls(c) if all(_near(c * n, v) for n, v in zip(ns, vs, strict=True)) else None

    def __call__(self, n: int) -> float:
        return self.c * n

    def js(self) -> str:
        return f"({self.c!r} * n)"


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 2 * math.ulp(max(abs(a), abs(b)))


@dataclass(frozen=True)
class Template:
    """A program's text with its numbers apart: ``texts[k]`` then ``holes[k]`` ..., each hole
    a number's own text (the same at every n) or a ``Poly``."""

    texts: tuple[str, ...]
    holes: tuple[str | Poly | Scaled, ...]

    def matches(self, source: str, n: int) -> bool:
        """Whether ``source`` (emitted at n) is this template at n."""
        texts, numbers = split(normal(source))
        if texts != self.texts:
            return False
        return all(got == hole if isinstance(hole, str) else
                   _near(float(got), hole(n)) if isinstance(hole, Scaled) else
                   Fraction(got) == hole(n)
                   for got, hole in zip(numbers, self.holes, strict=True))  # fmt: skip

    def bounds(self) -> set[Poly]:
        """What must not be negative for the program to mean at n what it means at the
        samples: each number that grows with n (a length, a bound, an offset), and each
        piece of a loop's length (the pieces in the same order; one may be empty)."""
        out = {h for h in self.holes if isinstance(h, Poly)}
        for k in range(len(self.holes) - 1):
            a, b = _poly(self.holes[k]), _poly(self.holes[k + 1])
            if a is None or b is None or not self.texts[k].endswith("for (let i = "):
                continue
            if self.texts[k + 1] == "; i < ":  # for (let i = lo; i < hi; i++)
                out.add(b + a * -1)
            elif self.texts[k + 1] == "; i >= ":  # for (let i = hi - 1; i >= lo; i--)
                out.add(a + _ONE + b * -1)
        return {p for p in out if not p.constant or p.coefs[0] < 0}

    def js(self) -> str:
        """The program's source at any n: a factory of its constants and ``n``; a piece of a
        loop one element long at every n is a block again (``normal``)."""
        out = [self.texts[0].replace("(function (C) {", "(function (C, n) {", 1)]
        texts, holes = list(self.texts[1:]), list(self.holes)
        for k in range(len(holes)):
            if (out[-1].endswith("for (let i = ") and texts[k] == "; i < " and k + 1 < len(holes)
                    and texts[k + 1].startswith("; i++) { ")
                    and _poly(holes[k]) is not None
                    and _poly(holes[k + 1]) == _poly(holes[k]) + _ONE):  # fmt: skip
                out[-1] = out[-1].removesuffix("for (let i = ") + "{ const i = "
                texts[k] = "; "
                texts[k + 1] = texts[k + 1].removeprefix("; i++) { ")
                holes[k + 1] = ""
            hole = holes[k]
            if isinstance(hole, Scaled):
                hole = hole.js()
            elif isinstance(hole, Poly):
                bare = out[-1].endswith(("(", "[", "= ", "< ")) and texts[k].startswith(
                    (")", "]", ";"))  # fmt: skip
                hole = hole.text(" * ") if bare else hole.js()
            out += [hole, texts[k]]
        return "".join(out)


def split(source: str) -> tuple[tuple[str, ...], list[str]]:
    numbers = _NUMBER.findall(source)
    return tuple(_NUMBER.split(source)), numbers


#: a piece of a loop one element long, as ``code.Code.flush`` writes it
_BLOCK = re.compile(r"\{ const i = (\d+); ")


def normal(source: str) -> str:
    """``source`` with each piece of a loop one element long written as a loop: a piece
    that is one element long at one n only (a loop's middle, at a small n) matches."""
    return _BLOCK.sub(lambda m: f"for (let i = {m[1]}; i < {int(m[1]) + 1}; i++) {{ ", source)


def _poly(hole: str | Poly | Scaled) -> Poly | None:
    return hole if isinstance(hole, Poly) else None if isinstance(hole, Scaled) else Poly(
        (Fraction(hole),))  # fmt: skip


_ONE = Poly.const(1)


def generalised(sources: dict[int, str]) -> Template | None:
    """The template of programs emitted at each n of ``sources``; None: their texts differ
    elsewhere than in numbers, or a number is no polynomial in n."""
    parts = {n: split(normal(s)) for n, s in sources.items()}
    ns = list(parts)
    texts = parts[ns[0]][0]
    if any(parts[n][0] != texts for n in ns):
        return None
    holes: list[str | Poly | Scaled] = []
    for column in zip(*(parts[n][1] for n in ns), strict=True):
        if len(set(column)) == 1:
            holes.append(column[0])
            continue
        p = Poly.fit(ns, [Fraction(v) for v in column])
        if all(v.isdigit() for v in column):  # a length, a bound, an index: whole at any n
            p = p if p is not None and p.whole else None
        else:
            p = p or Scaled.fit(ns, list(map(float, column)))
        if p is None:
            return None
        holes.append(p)
    return Template(texts, tuple(holes))



def span(polys: set[Poly], inside: int) -> tuple[int, int | None] | None:
    """The run of n >= 1 around ``inside`` where every polynomial in ``polys`` is >= 0:
    (least, most), most None where it has no end. Each is checked exactly at the integers
    up to its largest real root; above it, its sign is its leading coefficient's. None:
    negative at ``inside``, or a root past a million."""
    lo, hi = 1, None
    for p in polys:
        if p.constant:
            if p.coefs[0] < 0:
                return None
            continue
        roots = np.roots([float(c) for c in reversed(p.coefs)])
        last = int(math.ceil(max([r.real for r in roots if abs(r.imag) < 1e-9] or [0.0]))) + 1
        if last > 10**6:
            return None
        bad = [n for n in range(1, last + 1) if p(n) < 0]
        if p.coefs[-1] < 0:  # negative from past its last root on
            bad.append(last + 1)
        if inside in bad:
            return None
        lo = max([lo, *(n + 1 for n in bad if n < inside)])
        above = [n - 1 for n in bad if n > inside]
        hi = min([*above, *([hi] if hi is not None else [])], default=None)
    return lo, hi


def skeleton(source: str) -> tuple[str, ...]:
    """``source``'s text without its numbers: the same for programs that differ only in them."""
    return split(normal(source))[0]
