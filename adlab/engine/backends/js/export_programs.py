"""The programs a standalone module (``export``) holds, emitted with the model's lines.

Traced by JAX at one set of shapes, as ``backend="js"`` traces them (``emit``): f; f's
value and gradient in one program (reverse mode: JAX's VJP with the cotangent held at 1;
forward mode: the JVP along one direction, which the module loops over); with ``hvp``,
forward over reverse. ``Commented`` writes the model's line above the code each equation
becomes (the walk knows it: ``Walker.where``), so the module reads against the model.
What cannot be exported is refused here, before anything is written.
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ...._vocab import ModelError
from ...model.precision import precision_scope
from ...model.source import Model
from ...model.userline import source_line
from . import NO_COMPLEX
from .code import COTANGENT
from .emit import Program, emit

#: the modes a module can be exported in, and what each does
EXPORTS = {"reverse": "JAX's VJP program, one pass", "forward": "the JVP program, a pass per input"}
#: the modes there are (``adlab.MODES``), and why the others are not exported
REFUSED = {
    "complex-step": NO_COMPLEX,
    "numeric": "finite differences are an approximation; the exported reverse or forward "
    "program gives the exact gradient",
}
_WORDS = frozenset(
    """break case catch class const continue debugger default delete do else
enum export extends false finally for function if import in instanceof new null return super
switch this throw true try typeof var void while with yield let static await arguments eval
undefined NaN Infinity""".split()
)


class Commented(Program):
    """``Program``, with the model's line as a comment above the code of each equation
    (where it changes): ``// line 7: heading = np.cumsum(theta)``, and ``(backward)``
    in the equations that read the cotangent (JAX names the forward line they undo)."""

    stops = "adlab cannot export this model as JavaScript"
    instead = ("or leave it to Python: backend='jax' and the other frameworks still "
               "differentiate it there")  # fmt: skip

    def __init__(self, files: frozenset[str]) -> None:
        super().__init__(files)
        self._said: Any = None  # the (line, backward) of the last comment written
        self._made: dict[int, tuple[Any, tuple]] = {}  # by id: a value, and its line
        self._holders = itertools.count()  # the placeholders written

    def equation(self, eqn: Any, ins: list) -> list:
        said = (self.where(eqn), COTANGENT in self.sources)
        mark, last = self._mark()
        loop = getattr(self, "_pending", None)  # the loop ``Code.loop`` may join this one to
        parts = len(getattr(loop, "bodies", ()))
        outs = super().equation(eqn, ins)
        # only code that was written gets its line (a fused value is written in its
        # consumer's loop, under the consumer's line); a loop's own line goes above it, its
        # body's inside; a loop joined to the one before, beside that one's line
        if loop is not None and loop is getattr(self, "_pending", None):
            if len(getattr(loop, "bodies", ())) > parts:
                self._beside(getattr(loop, "mark", None), said)
        self._comment(mark, last, said)
        for v in outs:  # a value written later (a jaxpr's output: ``finish``) keeps its line
            self._made[id(v)] = (v, said)
        return outs

    def finish(self, outs: list) -> list:
        mark, last = self._mark()
        done = super().finish(outs)
        made = [self._made[id(v)][1] for v in outs if id(v) in self._made]
        self._comment(mark, last, made[0] if made else (None, False))
        return done

    def _mark(self) -> tuple[str, Any]:
        """A placeholder where the comment may go, found again by its text: code written
        meanwhile may also have expanded a loop written further up (``Code.flush``)."""
        mark = f"/* line {next(self._holders)} */"
        self.body.append(mark)
        return mark, self._said

    def _beside(self, mark: str | None, said: tuple) -> None:
        """The line ``said`` with the lines above the loop at ``mark`` (not written yet),
        which this equation's loop joined."""
        body, where = self.body, said[0]
        if mark is None or where is None or mark not in body:
            return
        at = body.index(mark)
        back = " (backward)" if said[1] else ""
        text = f"// line {where[1]}{back}: {(source_line(*where) or '').strip()}"
        said_here = [k for k in range(at - 1, -1, -1) if body[k].startswith("// line ")]
        top = said_here[0] if said_here else at  # the comments directly above, where any
        while top > 0 and body[top - 1].startswith("// line "):
            top -= 1
        if said_here and said_here[0] == at - 1 and text in body[top:at]:
            return  # said already, with the others above it
        if said_here and body[said_here[0]] == text:
            return  # the line in effect there (the loop's own equation was on it too)
        body.insert(at, text)
        if all(line.startswith("/* line ") for line in body[at + 2 :]):  # the last code yet
            self._said = said

    def _comment(self, mark: str, last: Any, said: tuple) -> None:
        """The line ``said`` in place of ``mark``, above the code written after it, where
        the last comment (``last``) was another line; nothing where no code was written."""
        body = self.body
        at = next(k for k in range(len(body) - 1, -1, -1) if body[k] == mark)
        wrote = at < len(body) - 1
        where = said[0]
        text = None
        if wrote and where is not None and said != last:
            back = " (backward)" if said[1] else ""
            text = f"// line {where[1]}{back}: {(source_line(*where) or '').strip()}"
        if text is not None and body[at + 1] != text:  # (a call's body said it already)
            body[at] = text
        else:
            del body[at]
        if wrote and self._said is last:  # no line said inside it: the code after is its own
            self._said = said


@dataclass(frozen=True)
class Arg:
    """One argument of the exported functions: a leaf of f's arguments."""

    name: str  # as the model names it: theta, data['lengths']
    js: str  # its JavaScript parameter name
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Emitted:
    """One program: its factory's source, its constants, and its outputs' sizes."""

    source: str
    consts: list[np.ndarray]


def check_mode(mode: str) -> None:
    """A mode the module can be written in; else why not."""
    if mode in EXPORTS:
        return
    ok = " or ".join(repr(m) for m in EXPORTS)
    if mode in REFUSED:
        raise ModelError(f"mode {mode!r} is not exported: {REFUSED[mode]}",
                         hint=f"export mode {ok}")  # fmt: skip
    raise ValueError(f"mode must be {ok} (the modes adlab export writes), got {mode!r}")


#: the module's own names, which the exported functions read: no parameter may hide one
OURS = frozenset({"C", "K", "F", "VG", "HVP", "ARGS", "HVP_ARGS", "b64", "take", "count",
                  "inputs", "vg", "hv", "f", "grad", "valueAndGrad", "hvp"})  # fmt: skip


def js_name(text: str, taken: set[str]) -> str:
    """A JavaScript identifier for an argument, unlike those ``taken``."""
    name = re.sub(r"\W+", "_", text).strip("_") or "arg"
    if name[0].isdigit():
        name = f"_{name}"
    if name in _WORDS or name in OURS:
        name = f"{name}_"
    while name in taken:
        name = f"{name}_"
    taken.add(name)
    return name


def arguments(f: Callable, args: tuple) -> list[Arg]:
    """The leaves of f's arguments, named as the model names them: ``data['lengths']``
    (in JavaScript ``lengths``, a dict's key where it is a name, else the whole path:
    ``blocks_0``)."""
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    out, taken = [], set()
    for k, a in enumerate(args):
        base = params[k] if k < len(params) and not params[k].startswith("*") else f"arg{k}"
        for path, leaf in jax.tree_util.tree_flatten_with_path(a)[0]:
            name = base + jax.tree_util.keystr(path)
            key = getattr(path[-1], "key", None) if path else None
            short = key if isinstance(key, str) and key.isidentifier() else name
            out.append(Arg(name, js_name(short, taken), tuple(np.shape(leaf))))
    return out


def traced(model: Model, tree: Any, mode: str, hvp: bool) -> dict[str, tuple]:
    """What each program computes, as a function of the leaves of f's arguments (``tree``
    their structure) and of one more input: (function, that input: None, "scalar" or "x"
    for one of x's shape, the cotangent as ``emit`` takes it). ``f``; ``vg``, f's value
    and gradient (reverse) or value and one directional derivative (forward: the module
    loops over the columns); ``hvp``."""
    f = model.function("js")
    wrt = model.wrt
    n = tree.num_leaves

    def at_x(flat):
        new = jax.tree_util.tree_unflatten(tree, list(flat))
        return new[wrt], lambda x: f(*new[:wrt], x, *new[wrt + 1 :])

    def value_grad(*flat):  # the cotangent last: emit holds it at 1
        x, fx = at_x(flat[:n])
        y, pull = jax.vjp(fx, x)
        return y, pull(flat[n])[0]

    def value_jvp(*flat):
        x, fx = at_x(flat[:n])
        return jax.jvp(fx, (x,), (flat[n],))

    def hessian_v(*flat):
        x, fx = at_x(flat[:n])
        return jax.jvp(jax.grad(fx), (x,), (flat[n],))[1]

    out = {"f": (lambda *flat: f(*jax.tree_util.tree_unflatten(tree, list(flat))), None, None)}
    out["vg"] = (value_grad, "scalar", "one") if mode == "reverse" else (value_jvp, "x", None)
    if hvp:
        out["hvp"] = (hessian_v, "x", None)
    return out


def programs(model: Model, args: tuple, mode: str, hvp: bool) -> dict[str, Emitted]:
    """The emitted programs at ``args``' shapes (``traced``)."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    x = np.asarray(args[model.wrt], np.float64)
    extra = {None: [], "scalar": [np.zeros(())], "x": [np.zeros_like(x)]}
    out = {}
    with precision_scope("float64"), model.errors(f"f, exported in mode {mode!r}"):
        for key, (fn, more, cotangent) in traced(model, tree, mode, hvp).items():
            closed = jax.make_jaxpr(fn)(*leaves, *extra[more])
            source, consts, _, _ = emit(closed, model.files, cotangent, Commented)
            out[key] = Emitted(source, consts)
    return out


def checked(model: Model, args: tuple) -> None:
    """f's x is one array and f a scalar: what a gradient module is written for."""
    wrt = model.wrt
    if isinstance(wrt, tuple):
        raise ModelError(f"the model differentiates the arguments {wrt}; an exported module "
                         "differentiates one", hint="set wrt = 0 in the model")  # fmt: skip
    if len(jax.tree_util.tree_leaves(args[wrt])) != 1:
        raise ModelError(f"f's argument {wrt} (x) is not one array: an exported module takes "
                         "x as one Float64Array", hint="make x one 1-D array")  # fmt: skip
    f = model.function("js")
    with precision_scope("float64"), model.errors("f, exported"):
        shape = jax.eval_shape(f, *args).shape
    if shape != ():
        lineno, line = model.return_line
        raise ModelError(f"f returns an array of shape {tuple(shape)}; an exported module "
                         "holds the gradient of a scalar f", lineno=lineno, line=line,
                         hint="return a scalar, e.g. the sum of the squared residuals")  # fmt: skip
