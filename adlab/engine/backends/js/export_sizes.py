"""Any n: an exported module whose sizes are expressions of n (``export``).

Where JAX traces f and its gradient at a symbolic n (``jax.export.symbolic_shape``:
nothing in f needs n's value, as ``range(len(x))`` or ``x[: n // 2]`` would), the
programs differ from one n to the next only in their numbers: a buffer's length, a loop's
bound, a stride. So they are emitted at several sizes (``SAMPLES``) and generalised
(``export_template``): the texts must be the same but for their numbers, and each number
the same at every sample or a polynomial in n (fitted on four samples, checked on the
others). The general program means at another n what it means at the samples where each
of its lengths, and each piece of each loop, is still at least zero (``span``), and where
``setup`` still makes arguments of those shapes: those are the n the module takes.

Where any of this fails, the module is built for the n given, and its header says why.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import jax
import numpy as np

from ...._vocab import ModelError
from ...model.precision import precision_scope
from ...model.source import Model
from .export_template import Poly, generalised, skeleton, span

#: the sizes the programs are emitted at to be generalised. At one where a size of n equals
#: a fixed one, the emitter may share a buffer between them: the samples that agree are
#: kept, ``AGREE`` of them at least. No ``AGREE`` of them leave one remainder by any
#: divisor from 2 to 10, so a program that changes with n's parity (or any n % k) never
#: passes for a general one.
SAMPLES = (13, 18, 21, 23, 26, 31, 36)
AGREE = 5


@dataclass(frozen=True)
class Sizes:
    """What an any-n module is written from: each argument's shape in n, the programs'
    general sources (factories of the constants and n), and the n they hold for."""

    shapes: list[tuple[Poly, ...]]
    sources: dict[str, str]
    least: int
    most: int | None  # (None: no end; a loop that runs a fixed length past n's may end it)
    reader: int  # the argument whose length gives n
    consts: list[list[np.ndarray]]  # each program's constants (the same at every n)

    @property
    def range(self) -> str:
        """The n it takes, as its header and errors say it: ``n >= 2``, ``1 <= n <= 99``."""
        if self.most is None:
            return f"n >= {self.least}"
        return f"{self.least} <= n <= {self.most}"

    def takes(self, n: int) -> bool:
        return self.least <= n and (self.most is None or n <= self.most)


def shapes_in_n(model: Model, seed: int) -> tuple[dict[int, tuple], list[tuple[Poly, ...]]]:
    """(the model's arguments at each sample, each leaf's shape as polynomials in n)."""
    made, trees = {}, {}
    for s in SAMPLES:  # (one by one: a model whose arguments multiply with n stops early)
        try:
            made[s] = model.setup(s, seed)
        except Exception as exc:  # noqa: BLE001 - a setup that cannot make this size
            raise NotGeneral(f"its setup fails at n={s}: {exc}") from None
        trees[s] = jax.tree_util.tree_flatten(made[s])
        if trees[s][1] != trees[SAMPLES[0]][1]:
            raise NotGeneral("f's arguments change in number with n")
    first = trees[SAMPLES[0]]
    shapes: list[tuple[Poly, ...]] = []
    for k in range(len(first[0])):
        each = [np.shape(trees[s][0][k]) for s in SAMPLES]
        if len({len(e) for e in each}) != 1:
            raise NotGeneral("an argument changes its number of axes with n")
        dims = []
        for column in zip(*each, strict=True):
            p = Poly.fit(list(SAMPLES), [Fraction(d) for d in column])
            if p is None or not p.integral:
                raise NotGeneral("an argument's shape is not a polynomial in n")
            dims.append(p)
        shapes.append(tuple(dims))
    if all(d.constant for shape in shapes for d in shape):
        raise NotGeneral("f's arguments do not change with n")
    return made, shapes


class NotGeneral(Exception):
    """Why a module is built for one n: its words say (the header shows them)."""


def symbolic(model: Model, fns: list, shapes: list[tuple[Poly, ...]], dtypes: list,
             extra: dict) -> None:  # fmt: skip
    """JAX traces each of ``fns`` (of the leaves, and one more input of a shape ``extra``
    names) at a symbolic n, or ``NotGeneral`` says why not."""
    (n,) = jax.export.symbolic_shape("n", constraints=("n >= 1",))

    def spec(shape: tuple[Poly, ...], dtype: Any) -> jax.ShapeDtypeStruct:
        dims = (sum((int(c) * n**k for k, c in enumerate(d.coefs)), 0) for d in shape)
        return jax.ShapeDtypeStruct(tuple(dims), dtype)

    specs = [spec(s, d) for s, d in zip(shapes, dtypes, strict=True)]
    try:
        with precision_scope("float64"), model.errors("f at a symbolic n"):
            for fn, more in fns:
                closed = jax.make_jaxpr(fn)(*specs, *(spec(s, np.float64) for s in extra[more]))
                odd = _STEPPED.search(str(closed))
                if odd:
                    raise NotGeneral(f"a size in f is {odd[0]}, not a polynomial in n")
    except NotGeneral:
        raise
    except ModelError as exc:
        at = f" at line {exc.lineno} ({exc.line.strip()})" if exc.lineno and exc.line else ""
        said = exc.reason.splitlines()[0].removesuffix(" (in f at a symbolic n)")
        raise NotGeneral(f"f needs n's value{at}: {said}") from None
    except Exception as exc:  # noqa: BLE001 - JAX's own words for what needs n's value
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise NotGeneral(f"f does not trace at a symbolic n ({text})") from None


#: a symbolic size that steps with n, as JAX prints it: x[: n // 2] is floordiv(n, 2)
_STEPPED = re.compile(r"\b(?:floordiv|mod|max|min|non_negative)\([^()]*(?:\([^()]*\)[^()]*)*\)")


def reader(shapes: list[tuple[Poly, ...]], x: int) -> int:
    """The argument whose length gives n: x where its length is a n + b, else the first."""
    order = [x, *(k for k in range(len(shapes)) if k != x)]
    for k in order:
        size = math.prod(shapes[k], start=Poly.const(1))
        if len(size.coefs) == 2 and size.integral and size.coefs[1] > 0:
            return k
    raise NotGeneral("no argument's length grows as a n + b, to read n from")


def general(model: Model, mode: str, hvp: bool, seed: int, x: int) -> Sizes:
    """The programs at any n (``x``: the index of x among the leaves); ``NotGeneral`` says why
    not. Errors of the export itself (an untranslated operation) pass through."""
    from .export_programs import programs, traced

    made, shapes = shapes_in_n(model, seed)
    leaves, tree = jax.tree_util.tree_flatten(made[SAMPLES[0]])
    dtypes = [np.asarray(leaf).dtype for leaf in leaves]
    fns = traced(model, tree, mode, hvp)
    more = {None: [], "scalar": [()], "x": [shapes[x]]}
    symbolic(model, [(fn, m) for fn, m, _ in fns.values()], shapes, dtypes, extra=more)
    at = {s: programs(model, made[s], mode, hvp) for s in SAMPLES}
    agree = _agreeing(at)
    first = at[agree[0]]
    sources = {}
    for key in first:
        t = generalised({s: at[s][key].source for s in agree})
        if t is None:
            raise NotGeneral("a number in the emitted program is no polynomial in n (a "
                             "constant f computes from n, as 1 / n)")  # fmt: skip
        sources[key] = t

    grows = set().union(*(t.bounds() for t in sources.values()))
    run = span(grows, SAMPLES[0])
    if run is None or run[0] > SAMPLES[0] or (run[1] is not None and run[1] < max(SAMPLES)):
        raise NotGeneral("a length in the emitted program is negative at some n it was "
                             "emitted at")  # fmt: skip
    low, most = run
    lowest = SAMPLES[0]
    for m in range(SAMPLES[0] - 1, low - 1, -1):  # down to the least n the model takes
        try:
            args = model.setup(m, seed)
        except Exception:  # noqa: BLE001 - a size the model does not take
            break
        shaped = [np.shape(leaf) for leaf in jax.tree_util.tree_leaves(args)]
        if shaped != [tuple(int(d(m)) for d in s) for s in shapes]:
            break
        lowest = m
    return Sizes(shapes, {k: t.js() for k, t in sources.items()}, lowest, most,
                 reader(shapes, x), [first[k].consts for k in first])  # fmt: skip


def _agreeing(at: dict[int, dict]) -> list[int]:
    """The samples whose programs are the same text but for numbers, with the same
    constants: the most that agree (``AGREE`` at least), or ``NotGeneral``."""
    groups: list[list[int]] = []
    for s, progs in at.items():
        key = {k: skeleton(p.source) for k, p in progs.items()}
        for g in groups:
            other = at[g[0]]
            if key == {k: skeleton(p.source) for k, p in other.items()} and all(
                    _same(p.consts, other[k].consts) for k, p in progs.items()):  # fmt: skip
                g.append(s)
                break
        else:
            groups.append([s])
    best = max(groups, key=len)
    if len(best) < AGREE:
        consts = all(_same(p.consts, at[SAMPLES[0]][k].consts)
                     for progs in at.values() for k, p in progs.items())  # fmt: skip
        raise NotGeneral("the emitted program changes with n other than in its sizes" if consts
                         else "a constant of the program changes with n (an array f builds "
                         "from n, as np.arange(n))")  # fmt: skip
    return best


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(p, q, equal_nan=True) for p, q in zip(a, b, strict=True))  # fmt: skip
