"""A closed jaxpr, at fixed shapes, as a JavaScript function over Float64Arrays.

The source is a factory: ``(C) => { const B1 = new Float64Array(5); ...; return
function(a0, a1) { ...; return [B7]; }; }``, C being the constants; its buffers are
made once, when the program is loaded (``code``). The walk (``_walk``) inlines calls and
names the model's line of a primitive with no rule; the rules (``rules``,
``rules_sums``, ``rules_loops``) write each equation, a loop as a JavaScript loop.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import rules_loops, rules_moves, rules_sums  # noqa: F401  (they register their rules)
from .code import COTANGENT, PRIMAL, Buffers, Code, Val
from .registers import registers
from .rules import FUSES, RULES
from .scalars import scalars


def live(closed: Any) -> Any:
    """``closed`` without the equations its outputs do not need (JAX's own dead-code
    elimination, loop bodies too): a gradient's program still holds f's value, which
    nothing reads. Its inputs are kept, all of them: they are the program's arguments."""
    from jax._src.interpreters.partial_eval import dce_jaxpr  # no public name in JAX 0.10

    jaxpr, _ = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=True)
    return closed.replace(jaxpr=jaxpr)


class Program(Code):
    """The code of one jaxpr, written by the rules of this backend."""

    rules = RULES
    fusing = FUSES


def emit(closed: Any, files: frozenset[str], cotangent: str | None = None,
         program: type[Program] | None = None,
         ) -> tuple[str, list[np.ndarray], list[Val], Buffers]:  # fmt: skip
    """(source, constants, outputs, its buffers) of a closed jaxpr: the source is a JS
    factory expression ``(C) => function(a0, ...) { ...; return [outputs]; }``.

    Args:
        cotangent: in a reverse-mode program, its last input is the cotangent: "input",
            an argument like the others (a VJP per row); "one", held at 1 (a scalar f's
            gradient), no argument. The equations that read it are the backward ones.
        program: a subclass of ``Program`` that writes it (``export`` adds the model's
            lines as comments); None: ``Program``.
    """
    prog = (program or Program)(files)
    closed = live(closed)
    jaxpr = closed.jaxpr
    values = [Val(f"a{k}", tuple(v.aval.shape), np.dtype(v.aval.dtype))
              for k, v in enumerate(jaxpr.invars)]  # fmt: skip
    marks: Sequence[frozenset[str]] = ()
    if cotangent is not None:
        marks = [frozenset({PRIMAL})] * (len(values) - 1) + [frozenset({COTANGENT})]
    args = values
    if cotangent == "one":  # a scalar f's: the literal 1 wherever it is read
        if values[-1].shape != ():
            raise TypeError(f"a gradient needs a scalar f, not one of shape {values[-1].shape}")
        values[-1] = Val("1.0", (), values[-1].dtype, literal=True)
        args = values[:-1]
    outs = prog.walk(closed, values, marks)
    prog.flush()
    kept = {o.name for o in outs}
    for name in registers(prog.body, sorted(prog.allocated() - kept)):
        prog.forget(name)
    ret = []
    for o in outs:
        if o.literal:  # a constant output: a buffer holding it
            buf = prog.fresh(o.shape, o.dtype)
            prog.emit(f"{buf.name}.fill({o.name});")
            o = buf
        elif o.base:  # a part of a buffer, read in place: its own copy
            buf = prog.fresh(o.shape, o.dtype)
            prog.emit(f"for (let i = 0; i < {o.size}; i++) {buf.name}[i] = {o.index('i')};")
            o = buf
        ret.append(o.name)
    cut = groups(prog.body)
    ones = sorted(n for n in prog.allocated() - set(ret) if prog.elements(n) == 1)
    used = {n: [g for g in cut if any(re.search(rf"\b{n}\b", line) for line in g)]
            for n in ones}  # fmt: skip
    for group in cut:  # a one-element buffer only this function uses: its variable
        held = scalars(group, [n for n, where in used.items() if where == [group]])
        for name in held:
            prog.forget(name)
        if held:
            group.insert(0, f"let {', '.join(f'{n}v = 0' for n in held)};")
    listed = f"[{', '.join(ret)}]"
    allocs = [_BUFFER.sub(r"\1_", a) for a in prog.allocs]  # the factory's: B1_ ...
    if all(r.startswith(("B", "C[")) for r in ret):  # its own buffers: one list, made once
        allocs.append("const OUT = " + _BUFFER.sub(r"\1_", listed) + ";")
        listed = "OUT"
    params = ", ".join(v.name for v in args)
    parts, body = pieces(cut, params)
    source = "\n".join([
        "(function (C) {", *("  " + a for a in allocs), *("  " + p for p in parts),
        f"  return function ({params}) {{", *("    " + b for b in local(body, listed)),
        f"    return {listed};", "  };", "})",
    ])  # fmt: skip
    return source, prog.consts, outs, prog.buffers()


#: a buffer's name in the code
_BUFFER = re.compile(r"\b(B\d+)\b")


def local(lines: list[str], returned: str = "") -> list[str]:
    """``lines`` (a function's body), the buffers they use first bound to local names: V8
    keeps a local's array in a register through a loop, and reloads one of the factory's
    (a closure's variable) at each read."""
    used = sorted(set(_BUFFER.findall("\n".join([*lines, returned]))), key=lambda b: int(b[1:]))
    # (variables: a loop's carry trades buffers with its new value, rules_loops._scan)
    return [f"let {', '.join(f'{b} = {b}_' for b in used)};", *lines] if used else lines


#: the most characters of code in one emitted function: V8 optimises a function whole,
#: and a long one late or never (TurboFan skips bytecode over 60 KB; each loop of a long
#: one is compiled on its own first, on stack), so a long program is cut into functions
PIECE = 6000


def statements(body: list[str]) -> list[list[str]]:
    """``body``'s top-level statements (a model-line comment with the code after it; an
    ``else`` with its ``if``)."""
    out: list[list[str]] = []
    depth, glued = 0, False
    for line in body:
        text = line.lstrip()
        if not out or (depth == 0 and not glued and not text.startswith("else")):
            out.append([])
        out[-1].append(line)
        glued = text.startswith("//")  # a comment: the code after it is its statement
        if not glued:
            depth += text.count("{") - text.count("}")
    return out


def groups(body: list[str]) -> list[list[str]]:
    """``body``'s top-level statements in order, cut into groups of about ``PIECE``
    characters (one group where it is shorter): each becomes a function (``pieces``)."""
    if sum(len(line) for line in body) <= PIECE:
        return [list(body)]
    out: list[list[str]] = [[]]
    for st in statements(body):
        if out[-1] and sum(map(len, out[-1])) + sum(map(len, st)) > PIECE:
            out.append([])
        out[-1].extend(st)
    return out


def pieces(cut: list[list[str]], params: str) -> tuple[list[str], list[str]]:
    """(functions, the body calling them) of a body cut into ``groups``; one group is the
    body itself."""
    if len(cut) == 1:
        return [], cut[0]
    parts, calls = [], []
    for k, group in enumerate(cut):
        parts += [f"function P{k}({params}) {{", *("  " + line for line in local(group)), "}"]
        calls.append(f"P{k}({params});")
    return parts, calls
