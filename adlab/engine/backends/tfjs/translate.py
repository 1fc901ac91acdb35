"""A closed jaxpr, at fixed shapes, as a JavaScript function of TF.js tensors.

The source is a factory ``(function (tf, C, H) { return function (a0, ...) {
...; return [outputs]; }; })``: ``tf`` is TF.js, ``C`` the constants as tensors
(made once, when the program is loaded), ``H`` the runtime's helpers
(``runtime_tfjs.js``: ``stop``, a gradient stop TF.js lacks). Each equation is
one ``const`` bound to TF.js operations that have gradients in TF.js 4.22, so
``tf.grad`` of the function is TF.js's own reverse mode: ``dot_general`` is
transposes, reshapes and ``tf.matMul`` (TF.js has no gradient for ``einsum``),
slices are ``tf.slice`` (none for ``stridedSlice``), a gather along one axis is
``tf.gather`` (none for ``gatherND``).

Values are TF.js's: float32 (what TF.js computes in), int32 and bool. Calls
(``jit``, ``custom_jvp_call``) are inlined: TF.js differentiates their bodies. A
primitive with no rule (``rules.RULES``) is a ``ModelError`` naming the model's line.
A rule may write an operation TF.js runs but cannot differentiate (``no_gradient``):
``tf.grad`` through it is refused before it runs (``undifferentiable``), at the line
of the first such equation on a path from x to f.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._vocab import ModelError
from ...model.userline import eqn_line, source_line
from ...programs.jaxpr import call_body
from ..js.emit import CALLS


@dataclass(frozen=True)
class Val:
    """One value: its JS name, shape and TF.js dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str


def tf_dtype(dtype: Any) -> str:
    """TF.js's dtype for a NumPy one: float32 for every float, int32 for every integer."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "bool"
    if np.issubdtype(dtype, np.integer):
        return "int32"
    if np.issubdtype(dtype, np.floating):
        return "float32"
    raise TypeError(f"TF.js has no dtype for {dtype}")


@dataclass(frozen=True)
class Step:
    """One equation a rule translated: its primitive, the names it reads and binds, the
    TF.js functions it calls, and why TF.js cannot differentiate it (None: it can)."""

    primitive: str
    ins: frozenset[str]
    outs: frozenset[str]
    calls: frozenset[str]
    no_gradient: str | None
    where: tuple | None  # (file, line) of the model's line that made it


class Translation:
    """The JS text of one jaxpr being translated: its lines, constants and steps."""

    def __init__(self, files: frozenset[str]) -> None:
        self.files = files
        self.lines: list[str] = []
        self.consts: list[tuple[np.ndarray, str]] = []  # (values, TF.js dtype)
        self.steps: list[Step] = []
        self.outputs: list[str] = []  # the names the program returns
        self._count = 0
        self._where: list[Any] = []  # the enclosing call equations (outermost first)
        self._no_gradient: str | None = None  # what the rule running says it cannot give

    def const(self, value: Any) -> Val:
        """A constant array (a scalar too), made a tensor once, at load."""
        a = np.asarray(value)
        dtype = tf_dtype(a.dtype)
        self.consts.append((a, dtype))
        return Val(f"C[{len(self.consts) - 1}]", tuple(a.shape), dtype)

    def bind(self, expr: str, shape: tuple[int, ...], dtype: Any) -> Val:
        self._count += 1
        name = f"v{self._count}"
        self.lines.append(f"const {name} = {expr};")
        return Val(name, tuple(int(s) for s in shape), tf_dtype(dtype))

    def run(self, jaxpr: Any, consts: list, inputs: list[Val]) -> list[Val]:
        env: dict[Any, Val] = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[v] = self.const(c)
        for v, val in zip(jaxpr.invars, inputs, strict=True):
            env[v] = val
        for eqn in jaxpr.eqns:
            ins = [self.read(env, v) for v in eqn.invars]
            for v, val in zip(eqn.outvars, self.equation(eqn, ins), strict=True):
                env[v] = val
        return [self.read(env, v) for v in jaxpr.outvars]

    def read(self, env: dict, v: Any) -> Val:
        return self.const(v.val) if hasattr(v, "val") else env[v]

    def equation(self, eqn: Any, ins: list[Val]) -> list[Val]:
        name = eqn.primitive.name
        if name in CALLS:
            body = call_body(eqn)
            if body is not None:
                self._where.append(eqn)
                try:
                    return self.run(body[0], body[1], ins)
                finally:
                    self._where.pop()
        from .rules import RULES  # the rules import this module's Translation

        rule = RULES.get(name)
        if rule is None:
            raise self.uncovered(eqn)
        first = len(self.lines)
        self._no_gradient = None
        exprs = rule(self, eqn, ins)
        if isinstance(exprs, (str, Val)):
            exprs = [exprs]
        outs = []
        for expr, var in zip(exprs, eqn.outvars, strict=True):
            aval = var.aval
            if isinstance(expr, Val):
                outs.append(expr)
            else:
                outs.append(self.bind(expr, tuple(aval.shape), aval.dtype))
        calls = re.findall(r"\btf\.(\w+)\(", "\n".join(self.lines[first:]))
        self.steps.append(Step(name, frozenset(v.name for v in ins),
                               frozenset(v.name for v in outs), frozenset(calls),
                               self._no_gradient, self.where(eqn)))  # fmt: skip
        return outs

    def no_gradient(self, why: str) -> None:
        """Said by a rule whose TF.js operation has no gradient in TF.js (``why``: which,
        in words): ``tf.grad`` through this equation is refused (``undifferentiable``)."""
        self._no_gradient = why

    def on_path(self, x: str) -> list[Step]:
        """The steps on a path from input ``x`` (its JS name) to the outputs: those TF.js's
        ``tf.grad`` with respect to x walks back through."""
        reached, live = {x}, set(self.outputs)
        forward = []
        for step in self.steps:
            if step.ins & reached:
                reached |= step.outs
                forward.append(step)
        path = []
        for step in reversed(forward):
            if step.outs & live:
                live |= step.ins
                path.append(step)
        return path[::-1]

    def undifferentiable(self, x: str) -> ModelError | None:
        """Why ``tf.grad`` with respect to input ``x`` cannot run (at the model's line of
        the first step on the path that TF.js cannot differentiate), or None."""
        for step in self.on_path(x):
            if step.no_gradient:
                return self.refusal(step, step.no_gradient)
        return None

    def refusal(self, step: Step | None, why: str) -> ModelError:
        """The error for a step TF.js's reverse mode cannot go through (None: a step
        not found)."""
        where = step.where if step else None
        what = (f"the operation {step.primitive!r} (JAX's primitive; {why})"
                if step else f"an operation of this model ({why})")  # fmt: skip
        return ModelError(
            f"TensorFlow.js cannot differentiate {what}, so backend='tfjs' cannot take "
            "mode 'reverse' (tf.grad) of this model",
            lineno=where[1] if where else None, line=source_line(*where) if where else None,
            hint=("mode='numeric' on backend='tfjs' differentiates it (finite differences "
                  "of the same TF.js program), or take mode 'reverse' on backend='jax' "
                  "or backend='js'"),
        )  # fmt: skip

    def where(self, eqn: Any) -> tuple | None:
        """(file, line) of the model's line that made ``eqn`` (inside a library call: the
        call's line), or None."""
        for e in (eqn, *reversed(self._where)):
            found = eqn_line(e, self.files)
            if found:
                return found
        return None

    def uncovered(self, eqn: Any, why: str = "") -> ModelError:
        """The error for an operation TF.js cannot run, at the model's line that made it."""
        name = eqn.primitive.name
        where = self.where(eqn)
        lineno = where[1] if where else None
        detail = f" ({why})" if why else ""
        return ModelError(
            f"the operation {name!r} (JAX's primitive){detail} has no TensorFlow.js "
            f"translation in adlab yet, so backend='tfjs' cannot run this model",
            lineno=lineno, line=source_line(*where) if where else None,
            hint=(f"write {'line ' + str(lineno) if lineno else 'f'} with operations tfjs "
                  "translates (elementwise arithmetic, sums, products of matrices, "
                  "slicing, concatenation), or run it on another backend, e.g. "
                  "backend='js' or backend='jax'"),
        )  # fmt: skip


def translate(closed: Any, files: frozenset[str]) -> tuple[str, list, Translation]:
    """(source, constants, translation) of a closed jaxpr: the source is a JS factory
    ``(function (tf, C, H) { return function (a0, ...) { ...; return [...]; }; })``;
    the constants are (values, TF.js dtype) pairs; the translation knows its steps."""
    t = Translation(files)
    jaxpr = closed.jaxpr
    inputs = [Val(f"a{k}", tuple(v.aval.shape), tf_dtype(v.aval.dtype))
              for k, v in enumerate(jaxpr.invars)]  # fmt: skip
    outs = t.run(jaxpr, list(closed.consts), inputs)
    t.outputs = [o.name for o in outs]
    args = ", ".join(v.name for v in inputs)
    source = "\n".join([
        "(function (tf, C, H) {", f"  return function ({args}) {{",
        *("    " + line for line in t.lines),
        f"    return [{', '.join(o.name for o in outs)}];", "  };", "})",
    ])  # fmt: skip
    return source, t.consts, t
