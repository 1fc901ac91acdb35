"""The rules that move elements: views of a buffer read in place or fused into their
consumers' loops (slice, split, pad, concatenate: index arithmetic, the loop cut where a
piece changes), and the copies where they cannot be (transpose, rev, stack; see
``rules`` for what a rule is)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .code import Code, Ix, Val
from .rules import FUSES, block, copy_from, nest, offset, out, read, rule, shaped, strides


def view(prog: Code, eqn: Any, a: Val, at: Callable[[Ix], tuple[list[str], str]],
         k: int = 0) -> list[Val]:  # fmt: skip
    """Output ``k`` as a read of ``a`` elsewhere (``at(ix)``): fused, no buffer and no loop
    of its own, where its consumers fuse it; else written into its buffer by one loop."""
    var = eqn.outvars[k]
    v = Val(prog.temp("v"), tuple(var.aval.shape), np.dtype(var.aval.dtype), fused=at,
            reads=a.buffers, cost=a.cost)  # fmt: skip
    return [v] if prog.fuses(var, a.cost) else [prog.materialize(v)]


def _at(a: Val, var: Any, start: int) -> Val:
    """The elements of buffer ``a`` from ``start`` on, in place, as ``var``."""
    base = f"{a.base} + {start}" if a.base else str(start)
    return dataclasses.replace(a, shape=tuple(var.aval.shape), dtype=np.dtype(var.aval.dtype),
                               base=base if start or a.base else "")  # fmt: skip


def _flat_rows(shape: tuple[int, ...], config: list[tuple[int, int, int]]) -> bool:
    """Whether only the first dimension is cut or padded (the rest whole), step 1: the
    output's flat index is the operand's shifted."""
    return bool(shape) and all(c == (0, 0, 0) for c in config[1:]) and config[0][2] == 0


def _cut(eqn: Any, shape: tuple[int, ...]) -> list[tuple[int, int, int]]:
    p = eqn.params
    step = p["strides"] or (1,) * len(shape)
    return [(p["start_indices"][d], shape[d] - p["limit_indices"][d], step[d] - 1)
            for d in range(len(shape))]  # fmt: skip


def _pads_rows(eqn: Any, var: Any) -> bool:
    config = eqn.params["padding_config"]
    return (var is eqn.invars[0] and _flat_rows(tuple(var.aval.shape), config)
            and config[0][0] >= 0 and config[0][1] >= 0)  # fmt: skip


def _joins_rows(eqn: Any, var: Any) -> bool:
    """A concatenation whose pieces follow each other in row-major order."""
    return all(n == 1 for n in eqn.outvars[0].aval.shape[: eqn.params["dimension"]])


FUSES["slice"] = lambda eqn, var: _flat_rows(tuple(var.aval.shape), _cut(eqn, var.aval.shape))
FUSES["pad"] = _pads_rows
FUSES["concatenate"] = _joins_rows
for _name in ("reshape", "squeeze", "expand_dims"):  # the same elements in the same order
    FUSES[_name] = lambda eqn, var: True


@rule("broadcast_in_dim")
def _broadcast(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    a = ins[0]
    if a.size == 1 and a.fused is None:  # a scalar everywhere
        return view(prog, eqn, a, lambda ix: ([], prog.scalar(a)))
    dims, aval = eqn.params["broadcast_dimensions"], eqn.outvars[0].aval
    if math.prod(aval.shape) == a.size and list(dims) == sorted(dims):  # size-1 axes added:
        return [shaped(prog, a, tuple(aval.shape), aval.dtype)]  # the same bytes
    a = prog.materialize(a)
    o = out(prog, eqn)
    st = strides(a.shape)
    terms = [(f"c{d}", st[k] if a.shape[k] != 1 else 0) for k, d in enumerate(dims)]
    copy_from(prog, o, a, terms)
    return [o]


@rule("transpose")
def _transpose(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    a, o = ins[0], out(prog, eqn)
    st = strides(a.shape)
    copy_from(prog, o, a, [(f"c{d}", st[p]) for d, p in enumerate(eqn.params["permutation"])])
    return [o]


@rule("slice")
def _slice(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    a = ins[0]
    st, start = strides(a.shape), eqn.params["start_indices"]
    step = eqn.params["strides"] or (1,) * len(a.shape)
    base = sum(s * t for s, t in zip(start, st, strict=True))
    if not a.literal and _flat_rows(a.shape, _cut(eqn, a.shape)):  # x[1:], x[:-1]
        if a.fused is None:  # read in place, at its offset in the buffer
            return [_at(a, eqn.outvars[0], base)]
        return view(prog, eqn, a, lambda ix: prog.read_at(a, ix.shift(base)))
    a = prog.materialize(a)
    o = out(prog, eqn)
    copy_from(prog, o, a, [(f"c{d}", step[d] * st[d]) for d in range(len(st))], base)
    return [o]


@rule("rev")
def _rev(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    a, o = ins[0], out(prog, eqn)
    st, dims = strides(a.shape), set(eqn.params["dimensions"])
    terms = [(f"c{d}", -st[d] if d in dims else st[d]) for d in range(len(st))]
    base = sum((a.shape[d] - 1) * st[d] for d in dims)
    copy_from(prog, o, a, terms, base)
    return [o]


def _pieces(prog: Code, a: Val, outs: list[Val], axis: int) -> None:
    """Consecutive slices of ``a`` along ``axis`` into ``outs`` (split, unstack)."""
    st, at = strides(a.shape), 0
    for o in outs:
        shape = o.shape if len(o.shape) == len(a.shape) else (
            *o.shape[:axis], 1, *o.shape[axis:])  # fmt: skip
        view = Val(o.name, shape, o.dtype)
        copy_from(prog, view, a, [(f"c{d}", st[d]) for d in range(len(st))], at * st[axis])
        at += shape[axis]


def _splits_rows(eqn: Any, var: Any) -> bool:
    """A split whose pieces follow each other in row-major order."""
    return all(n == 1 for n in var.aval.shape[: eqn.params["axis"]])


FUSES["split"] = _splits_rows


@rule("split")
def _split(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    a = ins[0]
    if not a.literal and _splits_rows(eqn, eqn.invars[0]):  # each piece read in place
        if a.fused is None:
            at = itertools.accumulate((math.prod(v.aval.shape) for v in eqn.outvars), initial=0)
            return [_at(a, v, lo) for v, lo in zip(eqn.outvars, at, strict=False)]
        starts = itertools.accumulate((math.prod(v.aval.shape) for v in eqn.outvars), initial=0)
        return [view(prog, eqn, a, lambda ix, lo=lo: prog.read_at(a, ix.shift(lo)), k)[0]
                for k, lo in zip(range(len(eqn.outvars)), starts, strict=False)]  # fmt: skip
    a = prog.materialize(a)
    outs = [out(prog, eqn, k) for k in range(len(eqn.outvars))]
    _pieces(prog, ins[0], outs, eqn.params["axis"])
    return outs


@rule("unstack")
def _unstack(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    outs = [out(prog, eqn, k) for k in range(len(eqn.outvars))]
    _pieces(prog, ins[0], outs, eqn.params["axis"])
    return outs


def _place(prog: Code, o: Val, parts: list[Val], axis: int) -> None:
    """``parts`` laid side by side along ``axis`` of ``o`` (concatenate, stack)."""
    st, at = strides(o.shape), 0
    for a in parts:
        shape = a.shape if len(a.shape) == len(o.shape) else (*a.shape[:axis], 1,
                                                               *a.shape[axis:])  # fmt: skip
        dst = offset([(f"c{d}", st[d]) for d in range(len(st))], at * st[axis])
        src = read(a, "k++") if a.size > 1 else read(a, "0")
        prog.emit(*block(["let k = 0;", *nest(shape, [f"{o.name}[{dst}] = {src};"])]))
        at += shape[axis]


@rule("concatenate")
def _concatenate(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    if _joins_rows(eqn, None) and not any(v.literal for v in ins):
        starts = list(itertools.accumulate((v.size for v in ins), initial=0))

        def at(ix: Ix) -> tuple[list[str], str]:  # the piece the loop's piece reads
            # (one; in ``loop``'s first pass, every piece it straddles, for their cuts)
            got = [prog.read_at(v, ix.shift(-lo))
                   for v, lo, hi in zip(ins, starts, starts[1:], strict=False)
                   if prog.region(ix, lo, hi)]  # fmt: skip
            return got[0]

        # (fused: what it reads is its pieces' buffers, held while it is alive: ``reuse``)
        joined = Val("", (), np.dtype(np.float64), fused=at, cost=max(v.cost for v in ins),
                     reads=frozenset().union(*(v.buffers for v in ins)))  # fmt: skip
        return view(prog, eqn, joined, at)
    ins = [prog.materialize(v) for v in ins]
    o = out(prog, eqn)
    _place(prog, o, ins, eqn.params["dimension"])
    return [o]


@rule("stack")
def _stack(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    o = out(prog, eqn)
    _place(prog, o, ins, eqn.params["axis"])
    return [o]


@rule("pad")
def _pad(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    (a, value) = ins
    config = eqn.params["padding_config"]
    if not a.literal and _pads_rows(eqn, eqn.invars[0]):  # the gradient of x[1:]
        first = config[0][0] * math.prod(a.shape[1:])  # zeros (the value) around x

        def at(ix: Ix) -> tuple[list[str], str]:
            if prog.region(ix, first, first + a.size):
                return prog.read_at(a, ix.shift(-first))
            return [], read(value, "0")

        return view(prog, eqn, a, at)
    a = prog.materialize(a)
    o = out(prog, eqn)
    prog.emit(f"{o.name}.fill({read(value, '0')});")
    st = strides(o.shape)
    coords = [f"({lo} + c{d} * {interior + 1})" for d, (lo, _, interior) in enumerate(config)]
    dst = " + ".join(f"{c} * {s}" for c, s in zip(coords, st, strict=True)) or "0"
    line = f"{o.name}[{dst}] = {read(a, 'k')};"
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):  # negative padding crops
        inside = " && ".join(f"{c} >= 0 && {c} < {n}" for c, n in zip(coords, o.shape,
                                                                        strict=True))  # fmt: skip
        line = f"if ({inside}) {line}"
    prog.emit(*block(["let k = 0;", *nest(a.shape, [line, "k++;"])]))
    return [o]
