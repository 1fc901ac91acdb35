"""The loops: ``scan`` (what ``fori_loop`` and ``scan`` lower to), written as a JavaScript
loop of jax-js operations (see ``rules`` for what a rule is).

jax-js 0.1.25 has no loop primitive (no ``scan``, no ``while_loop``), so the loop is
JavaScript's, as backend "tfjs" writes it, and jax-js's transforms see what it runs:
``grad``, ``jvp`` and ``vjp`` trace each step as it runs; ``jit`` traces the whole loop
once and compiles the unrolled steps (its compile time grows with the number of steps).
The body is written once, in a block of its own (``code.Block``: what a step makes is
disposed by the end of the step); its carries are ``let`` variables handed to the
step and reassigned at its end, its ``xs`` rows sliced at each step, its ``ys`` a list
made one array by ``np.stack``.

A ``while`` loop (its count decided by values) and ``cond`` (its branch chosen by a
value) are refused at their line: jax-js's ``jit`` traces without values, so it could
not choose.
"""

from __future__ import annotations

from typing import Any

from .._walk import scan_of
from .code import Block, Code, Val, jaxjs_dtype
from .rules import rule


def _assign(names: list[str], values: list[Val]) -> str | None:
    """One statement giving each name its value at once (a swap reads the old values)."""
    if not names:
        return None
    return f"[{', '.join(names)}] = [{', '.join(v.name for v in values)}];"


@rule("scan")
def _scan(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    loop = scan_of(eqn, ins)
    if loop.length == 0:
        raise t.uncovered(eqn, "of no steps")
    carried = [t.temp("k") for _ in loop.carries]
    for name, init in zip(carried, loop.carries, strict=True):
        t.line(f"let {name} = {init.name};")
    lists = [t.temp("y") for _ in eqn.outvars[len(carried) :]]
    for y in lists:
        t.line(f"const {y} = new Array({loop.length});")
    step, row = t.temp("s"), t.temp("row")
    outer = t.block
    body = Block(f"for (let {step} = 0; {step} < {loop.length}; {step}++) {{", tail="}")
    outer.items.append(body)
    t.block = body
    try:
        t.line(f"const {row} = {f'{loop.length - 1} - {step}' if loop.reverse else step};")
        carries = []  # the step owns the carries it is handed
        for name, init in zip(carried, loop.carries, strict=True):
            own = t.temp("c")
            t.line(f"const {own} = {name};")
            carries.append(t.owned(own, init.shape, init.dtype))
        xs = []
        for x in loop.xs:
            picked = f"{x.name}.slice({row})"  # a number drops the axis: row `row`
            xs.append(t.bind(picked, x.shape[1:], jaxjs_dtype(x.dtype)))
        got = t.inside(eqn, loop.body, loop.body_consts, [*loop.consts, *carries, *xs])
        for y, v in zip(lists, got[len(carried) :], strict=True):
            t.line(f"{y}[{row}] = {v.name};")
        assign = _assign(carried, got[: len(carried)])
        if assign:
            t.line(assign)
    finally:
        t.block = outer
    outs = [t.owned(name, init.shape, init.dtype) for name, init in zip(carried, loop.carries,
                                                                       strict=True)]  # fmt: skip
    ys = [t.bind(f"np.stack({y})", tuple(v.aval.shape), v.aval.dtype)
          for y, v in zip(lists, eqn.outvars[len(carried) :], strict=True)]  # fmt: skip
    return [*outs, *ys]


@rule("while", "cond")
def _by_value(t: Code, eqn: Any, ins: list[Val]) -> None:
    what = "a loop whose count" if eqn.primitive.name == "while" else "a branch that"
    raise t.uncovered(eqn, f"{what} a value decides: jax-js 0.1.25 has no while_loop or "
                      "cond, and its jit traces without values; fori_loop with fixed "
                      "bounds, scan, or np.where run")  # fmt: skip
