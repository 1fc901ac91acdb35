"""The loops and branches: ``scan`` (what ``fori_loop`` and ``scan`` lower to), ``while``
and ``cond``, written as JavaScript loops and branches of TF.js operations (see ``rules``
for what a rule is).

``tf.grad`` records the operations a call runs, so it differentiates through a loop as
through straight-line code: the body is written once, its carries are ``let`` variables
reassigned at the end of each step, its ``xs`` rows of ``tf.unstack``, its ``ys`` a list
made one tensor by ``tf.stack``. A ``while``'s condition and a ``cond``'s index are read
from their tensors (``dataSync``). An operation TF.js cannot differentiate inside a body
is said at the loop's line (``Code.no_gradient``); one with no rule, at its own line (the
walk's).
"""

from __future__ import annotations

from typing import Any

from .._walk import cond_of, scan_of, while_of
from .code import Code, Val, tf_dtype
from .rules import rule


def _carried(t: Code, eqn: Any, inits: list[Val]) -> list[Val]:
    """The loop's carries, ``let`` variables holding its initial values."""
    carries = []
    for var, init in zip(eqn.outvars, inits, strict=False):
        name = t.temp("k")
        t.lines.append(f"let {name} = {init.name};")
        carries.append(Val(name, init.shape, tf_dtype(var.aval.dtype)))
    return carries


def _assign(names: list[str], values: list[Val]) -> str | None:
    """One statement giving each name its value at once (a swap reads the old values)."""
    if not names:
        return None
    return f"[{', '.join(names)}] = [{', '.join(v.name for v in values)}];"


def _body(t: Code, first: int) -> None:
    """What a body's steps (from ``first`` on) say TF.js cannot differentiate, said of the
    loop: ``tf.grad`` runs through it as a whole."""
    for step in t.steps[first:]:
        if step.no_gradient:
            t.no_gradient(step.no_gradient)


def _inside(t: Code, eqn: Any, jaxpr: Any, consts: list, inputs: list[Val]) -> list[Val]:
    first = len(t.steps)
    outs = t.inside(eqn, jaxpr, consts, inputs)
    _body(t, first)
    return outs


@rule("scan")
def _scan(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    loop = scan_of(eqn, ins)
    if loop.length == 0:
        raise t.uncovered(eqn, "of no steps")
    carries = _carried(t, eqn, loop.carries)
    rows = []
    for x in loop.xs:
        name = t.temp("r")
        t.lines.append(f"const {name} = tf.unstack({x.name});")
        rows.append(name)
    lists = [t.temp("y") for _ in eqn.outvars[len(carries) :]]
    t.lines.extend(f"const {y} = new Array({loop.length});" for y in lists)
    step, row = t.temp("step"), t.temp("row")
    t.lines.append(f"for (let {step} = 0; {step} < {loop.length}; {step}++) {{")
    t.lines.append(f"const {row} = {f'{loop.length - 1} - {step}' if loop.reverse else step};")
    xs = [Val(f"{r}[{row}]", x.shape[1:], x.dtype) for r, x in zip(rows, loop.xs, strict=True)]
    got = _inside(t, eqn, loop.body, loop.body_consts, [*loop.consts, *carries, *xs])
    t.lines.extend(f"{y}[{row}] = {v.name};" for y, v in zip(lists, got[len(carries) :],
                                                            strict=True))  # fmt: skip
    assign = _assign([c.name for c in carries], got[: len(carries)])
    t.lines.extend([assign] if assign else [])
    t.lines.append("}")
    ys = [t.bind(f"tf.stack({y})", tuple(v.aval.shape), v.aval.dtype)
          for y, v in zip(lists, eqn.outvars[len(carries) :], strict=True)]  # fmt: skip
    return [*carries, *ys]


@rule("while")
def _while(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    loop = while_of(eqn, ins)
    carries = _carried(t, eqn, loop.carries)
    t.lines.append("for (;;) {")
    (go,) = _inside(t, eqn, loop.cond.jaxpr, list(loop.cond.consts),
                    [*loop.cond_consts, *carries])  # fmt: skip
    t.lines.append(f"if (!{go.name}.dataSync()[0]) break;")
    new = _inside(t, eqn, loop.body.jaxpr, list(loop.body.consts),
                  [*loop.body_consts, *carries])  # fmt: skip
    assign = _assign([c.name for c in carries], new)
    t.lines.extend([assign] if assign else [])
    t.lines.append("}")
    return carries


@rule("cond")
def _cond(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    split = cond_of(eqn, ins)
    outs = [Val(t.temp("o"), tuple(v.aval.shape), tf_dtype(v.aval.dtype)) for v in eqn.outvars]
    t.lines.append(f"let {', '.join(o.name for o in outs)};")
    index, last = f"{split.index.name}.dataSync()[0]", len(split.branches) - 1
    for k, branch in enumerate(split.branches):
        head = f"if ({index} === {k}) {{" if k < last else "{"
        t.lines.append(head if k == 0 else f"else {head}")
        got = _inside(t, eqn, branch.jaxpr, list(branch.consts), split.operands)
        t.lines.append(_assign([o.name for o in outs], got) or "")
        t.lines.append("}")
    return outs
