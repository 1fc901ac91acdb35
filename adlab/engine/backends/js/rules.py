"""How each JAX primitive is written in JavaScript: one rule per primitive, as data.

A rule ``rule(prog, eqn, ins) -> outs`` appends loops to ``prog`` (a
``code.Code``) that fill fresh buffers, or returns its operand under a new
shape where the bytes do not move (reshape, squeeze). Loops index row-major
arrays with the strides worked out here, at translation time, so the emitted
code has only constants and loop counters in it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .code import Code, Val

Rule = Callable[[Code, Any, list[Val]], list[Val]]
RULES: dict[str, Rule] = {}
#: the primitives that take fused operands, and which: ``fuses(eqn, var)`` says whether
#: ``eqn`` reads ``var`` element by element in its own loop's order
FUSES: dict[str, Callable[[Any, Any], bool]] = {}


def _same_shape(eqn: Any, var: Any) -> bool:
    return tuple(eqn.outvars[0].aval.shape) == tuple(var.aval.shape)


def strides(shape: tuple[int, ...]) -> list[int]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def offset(terms: list[tuple[str, int]], base: int = 0) -> str:
    """``base + sum(var * stride)``, the zero strides left out."""
    parts = [v if s == 1 else f"{v} * {s}" for v, s in terms if s]
    if base or not parts:
        parts.append(str(base))
    return " + ".join(parts)


def nest(shape: tuple[int, ...], body: list[str], var: str = "c") -> list[str]:
    """``body`` inside for-loops over ``shape`` (counters ``c0``, ``c1``, ...)."""
    head = [f"for (let {var}{d} = 0; {var}{d} < {n}; {var}{d}++) {{" for d, n in enumerate(shape)]
    return head + body + ["}"] * len(shape)


def block(lines: list[str]) -> list[str]:
    return ["{", *lines, "}"]


def read(v: Val, index: str) -> str:
    return v.name if v.literal else v.index(index)


def out(prog: Code, eqn: Any, k: int = 0) -> Val:
    aval = eqn.outvars[k].aval
    return prog.fresh(tuple(aval.shape), aval.dtype)


def shaped(prog: Code, v: Val, shape: tuple[int, ...], dtype: Any = None) -> Val:
    """``v`` seen with another shape (row-major order kept: no bytes move)."""
    dtype = np.dtype(dtype if dtype is not None else v.dtype)
    if v.literal and shape != ():
        buf = prog.fresh(shape, dtype)
        prog.emit(f"{buf.name}.fill({v.name});")
        return buf
    return dataclasses.replace(v, shape=tuple(shape), dtype=dtype)


def rule(*names: str):
    def deco(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn

    return deco


# ------------------------------------------------------------ elementwise
def elementwise(name: str, template: Callable[..., str], cost: int = 1) -> None:
    """``name`` as ``out[i] = template(operands at i, eqn)``, one loop (or, fused, none:
    computed in its consumers' loops)."""

    def fn(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
        aval = eqn.outvars[0].aval
        shape, size = tuple(aval.shape), math.prod(aval.shape)
        flat = all(v.literal or v.size == 1 or v.shape == shape for v in ins)
        if flat:
            # operands fused into this loop: theirs only where they cover every element
            ins = [v if v.fused is None or v.shape == shape else prog.materialize(v)
                   for v in ins]  # fmt: skip
            val = prog.node(shape, aval.dtype, ins,
                            lambda args: template(*args, eqn=eqn, ins=ins), cost)  # fmt: skip
            if size > 1 and prog.fuses(eqn.outvars[0], val.cost):
                return [val]
            return [prog.materialize(val)]
        ins = [prog.materialize(v) for v in ins]
        o = out(prog, eqn)
        # JAX's jaxprs broadcast size-1 dimensions implicitly: (4, 1) * (1, 6)
        args = [v.at("0") if v.literal or v.size == 1 else read(v, offset(_broadcast_terms(
            v.shape, o.shape))) for v in ins]  # fmt: skip
        expr = template(*args, eqn=eqn, ins=ins)
        prog.emit(*block(["let k = 0;", *nest(o.shape, [f"{o.name}[k++] = {expr};"])]))
        return [o]

    RULES[name] = fn
    FUSES[name] = _same_shape


def _broadcast_terms(shape: tuple[int, ...], to: tuple[int, ...]) -> list[tuple[str, int]]:
    """Reads of an operand of ``shape`` at the counters of ``to`` (dimensions of size 1
    read at 0; a shorter shape aligned to the right, as NumPy's broadcasting)."""
    lead, st = len(to) - len(shape), strides(shape)
    return [(f"c{lead + d}", 0 if n == 1 else st[d]) for d, n in enumerate(shape)]


def _math(fn: str) -> Callable[..., str]:
    return lambda a, **_: f"Math.{fn}({a})"


#: what an element of an operation costs, roughly (an add 1): whether to compute it again
#: in each consumer (``code.RECOMPUTE``) rather than buffer it
CALL, DIVIDE = 20, 2
for _name in ("exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
              "asin", "acos", "atan", "asinh", "acosh", "atanh", "sqrt", "cbrt"):  # fmt: skip
    elementwise(_name, _math(_name), CALL)
for _name in ("abs", "sign", "floor", "ceil"):
    elementwise(_name, _math(_name), DIVIDE)
elementwise("neg", lambda a, **_: f"-({a})")
elementwise("rsqrt", lambda a, **_: f"1 / Math.sqrt({a})", CALL)
elementwise("logistic", lambda a, **_: f"1 / (1 + Math.exp(-({a})))", CALL)
elementwise("square", lambda a, **_: f"{a} * {a}")
elementwise("exp2", lambda a, **_: f"Math.pow(2, {a})", CALL)
elementwise("is_finite", lambda a, **_: f"(Number.isFinite({a}) ? 1 : 0)")
elementwise("add", lambda a, b, **_: f"{a} + {b}")
elementwise("add_any", lambda a, b, **_: f"{a} + {b}")
elementwise("sub", lambda a, b, **_: f"{a} - {b}")
elementwise("mul", lambda a, b, **_: f"{a} * {b}")
elementwise("max", lambda a, b, **_: f"Math.max({a}, {b})")
elementwise("min", lambda a, b, **_: f"Math.min({a}, {b})")
elementwise("pow", lambda a, b, **_: f"Math.pow({a}, {b})", CALL)
elementwise("atan2", lambda a, b, **_: f"Math.atan2({a}, {b})", CALL)
# C's fmod, as lax.rem: the dividend's sign
elementwise("rem", lambda a, b, **_: f"{a} % {b}", CALL)
elementwise("clamp", lambda lo, x, hi, **_: f"Math.min(Math.max({x}, {lo}), {hi})")
for _name, _op in (("eq", "==="), ("ne", "!=="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                   ("ge", ">=")):  # fmt: skip
    elementwise(_name, lambda a, b, _op=_op, **_: f"({a} {_op} {b} ? 1 : 0)")


def _div(a: str, b: str, *, ins: list[Val], **_: Any) -> str:
    # integer division rounds toward zero (lax.div), as C's does
    return f"Math.trunc({a} / {b})" if ins[0].is_int else f"{a} / {b}"


def _logical(op: str, bitwise: str) -> Callable[..., str]:
    def template(a: str, b: str, *, ins: list[Val], **_: Any) -> str:
        if ins[0].dtype == np.bool_:
            return f"({a} {op} {b} ? 1 : 0)"
        return f"({a} {bitwise} {b})"

    return template


def _not(a: str, *, ins: list[Val], **_: Any) -> str:
    return f"({a} ? 0 : 1)" if ins[0].dtype == np.bool_ else f"(~{a})"


def _integer_pow(a: str, *, eqn: Any, **_: Any) -> str:
    y = int(eqn.params["y"])
    if y == 0:
        return "1"
    times = " * ".join([a] * abs(y))
    return f"({times})" if y > 0 else f"1 / ({times})"


def _select(pred: str, *cases: str, **_: Any) -> str:
    if len(cases) == 2:
        return f"({pred} ? {cases[1]} : {cases[0]})"
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        expr = f"({pred} === {k} ? {cases[k]} : {expr})"
    return expr


elementwise("div", _div, DIVIDE)
elementwise("and", _logical("&&", "&"))
elementwise("or", _logical("||", "|"))
elementwise("xor", _logical("!==", "^"))
elementwise("not", _not)
elementwise("integer_pow", _integer_pow)
elementwise("select_n", _select)


@rule("convert_element_type")
def _convert(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    (a,), new = ins, np.dtype(eqn.params["new_dtype"])
    if new == np.bool_ and a.dtype != np.bool_:
        template = "({} !== 0 ? 1 : 0)"
    elif np.issubdtype(new, np.integer) and not a.is_int:
        template = "Math.trunc({})"  # float -> int rounds toward zero, as lax's
    elif new == np.float32:
        template = "Math.fround({})"
    else:
        return [shaped(prog, a, a.shape, new)]
    o = out(prog, eqn)
    prog.emit(f"for (let i = 0; i < {o.size}; i++) {o.name}[i] = "
              f"{template.format(a.at('i', o.size))};")  # fmt: skip
    return [o]


# -------------------------------------------------------- moves in place
@rule("reshape", "squeeze", "expand_dims", "copy", "copy_p", "stop_gradient",
      "optimization_barrier")  # fmt: skip
def _same_bytes(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    ins = [a if a.fused is None or prog.fuses(v, a.cost) else prog.materialize(a)
           for a, v in zip(ins, eqn.outvars, strict=False)]  # fmt: skip
    return [shaped(prog, a, tuple(v.aval.shape), v.aval.dtype)
            for a, v in zip(ins, eqn.outvars, strict=False)]  # fmt: skip


# ------------------------------------------------------------- gathers
def copy_from(prog: Code, o: Val, a: Val, terms: list[tuple[str, int]], base: int = 0) -> None:
    """``o`` in row-major order, element (c0, c1, ...) read at ``offset(terms, base)`` of ``a``."""
    if a.literal or a.size == 1:
        prog.emit(f"{o.name}.fill({read(a, '0')});")
        return
    src = read(a, offset(terms, base))
    prog.emit(*block(["let k = 0;", *nest(o.shape, [f"{o.name}[k++] = {src};"])]))


@rule("empty", "empty2")
def _empty(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """A placeholder JAX never reads (a branch's stand-in for a value only another branch
    makes): zeros."""
    aval = eqn.outvars[0].aval
    zero = Val("0.0", (), np.dtype(aval.dtype), literal=True)
    return [shaped(prog, zero, tuple(aval.shape))]


@rule("iota")
def _iota(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    o = out(prog, eqn)
    line = f"{o.name}[k++] = c{eqn.params['dimension']};"
    prog.emit(*block(["let k = 0;", *nest(o.shape, [line])]))
    return [o]
