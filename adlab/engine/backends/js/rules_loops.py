"""The loops and branches: ``scan`` (what ``fori_loop`` and ``scan`` lower to, and JAX's
backward pass of one), ``while`` and ``cond``, written as JavaScript loops and branches
around their bodies' code (see ``rules`` for what a rule is).

A body is written once, whatever the trip count, so the program's size does not grow
with the steps: its buffers are made once, with the program's, and written anew at each
step. A scan's carries live in buffers of their own, copied from the initial values
before the loop and from the body's new values at the end of each step; its ``xs`` are
read in place, at the step's row of their stacked buffers (``Val.row``); its ``ys`` are
copied into stacked buffers at that row. The walk (``_walk``) splits the operands and
walks the bodies, so an operation with no rule inside one is named at its own line.
"""

from __future__ import annotations

from typing import Any

from .._walk import cond_of, scan_of, while_of
from .code import Code, Ix, Val
from .rules import out, rule


def _copy(prog: Code, dst: Val, src: Val) -> None:
    """``src``'s elements written into ``dst`` (a buffer, or a row of one)."""
    if src.name == dst.name and src.base == dst.base and not src.literal:
        return  # the same elements
    if not dst.base and (src.literal or src.size == 1 and dst.size != 1):
        prog.emit(f"{dst.name}.fill({src.at('0')});")
        return
    if dst.size == 1:
        prog.emit(f"{dst.index('0')} = {src.at('0')};")
        return

    def body(ix: Ix) -> list[str]:  # a loop that may join the one before
        pre, e = prog.read_at(src, ix, dst.size)
        return [*pre, *prog.store(dst, ix, e)]

    prog.loop(dst.size, body, dst.name)


def _carry(prog: Code, carries: list[Val], new: list[Val]) -> None:
    """The body's new carries copied into the carry buffers at the end of a step. A new
    value read from another carry's buffer (a swap) is copied aside first: no copy may
    read a carry already overwritten."""
    names = {c.name for c in carries}
    staged = []
    for c, v in zip(carries, new, strict=True):
        if v.buffers & (names - {c.name}):
            aside = prog.fresh(v.shape, v.dtype)
            _copy(prog, aside, v)
            v = aside
        staged.append(v)
    for c, v in zip(carries, staged, strict=True):
        _copy(prog, c, v)


def _carried(prog: Code, eqn: Any, inits: list[Val]) -> list[Val]:
    """The carry buffers of a loop, holding its initial values."""
    carries = [out(prog, eqn, k) for k in range(len(inits))]
    for c, v in zip(carries, inits, strict=True):
        _copy(prog, c, v)
    return carries


@rule("scan")
def _scan(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """``length`` steps of the body; ``unroll`` is left to V8, which sees one loop."""
    loop = scan_of(eqn, ins)
    carries = _carried(prog, eqn, loop.carries)
    ys = [out(prog, eqn, k) for k in range(len(carries), len(eqn.outvars))]
    step = prog.temp("step")
    row = f"{loop.length - 1} - {step}" if loop.reverse else step
    prog.emit("{", f"for (let {step} = 0; {step} < {loop.length}; {step}++) {{")
    before = prog.allocated()
    got = prog.inside(eqn, loop.body, loop.body_consts,
                      [*loop.consts, *carries, *(x.row(row) for x in loop.xs)])  # fmt: skip
    for y, v in zip(ys, got[len(carries) :], strict=True):  # before the carries: a y may
        _copy(prog, y.row(row), v)  # be the step's old carry
    # a new carry in a buffer of the body's own, which nothing else holds, trades places
    # with its carry's buffer instead of being copied into it (their names are the
    # function's variables); after an odd number of steps, copied back once
    mine = prog.allocated() - before
    names = [v.name for v in got]
    swap = [k for k, v in enumerate(got[: len(carries)])
            if v.name in mine and not v.base and names.count(v.name) == 1]  # fmt: skip
    _carry(prog, [c for k, c in enumerate(carries) if k not in swap],
           [v for k, v in enumerate(got[: len(carries)]) if k not in swap])  # fmt: skip
    pairs = [(carries[k].name, got[k].name) for k in swap]
    trade = [f"{{ const was = {c}; {c} = {v}; {v} = was; }}" for c, v in pairs]
    prog.emit(*trade, "}")
    if pairs:  # (asked in the program: its text the same at every length, ``export_sizes``)
        prog.emit(f"if ({loop.length} % 2) {{", *(f"{v}.set({c});" for c, v in pairs), *trade,
                  "}")  # fmt: skip
    prog.emit("}")
    return [*carries, *ys]


@rule("while")
def _while(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    loop = while_of(eqn, ins)
    carries = _carried(prog, eqn, loop.carries)
    prog.emit("for (;;) {")
    (go,) = prog.inside(eqn, loop.cond.jaxpr, list(loop.cond.consts),
                        [*loop.cond_consts, *carries])  # fmt: skip
    prog.emit(f"if (!({go.at('0')})) break;")
    new = prog.inside(eqn, loop.body.jaxpr, list(loop.body.consts),
                      [*loop.body_consts, *carries])  # fmt: skip
    _carry(prog, carries, new)
    prog.emit("}")
    return carries


@rule("cond")
def _cond(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """The branch the index picks, its outputs copied into the cond's buffers."""
    split = cond_of(eqn, ins)
    outs = [out(prog, eqn, k) for k in range(len(eqn.outvars))]
    index, last = split.index.at("0"), len(split.branches) - 1
    for k, branch in enumerate(split.branches):
        head = f"if ({index} === {k}) {{" if k < last else "{"
        prog.emit(head if k == 0 else f"else {head}")
        got = prog.inside(eqn, branch.jaxpr, list(branch.consts), split.operands)
        for o, v in zip(outs, got, strict=True):
            _copy(prog, o, v)
        prog.emit("}")
    return outs
