"""The TF.js a jaxpr becomes: its values, its steps, and the code being written.

Each equation is one ``const`` bound to TF.js operations (``bind``); what each rule
wrote is kept as a ``Step`` (the names it reads and binds, the TF.js functions it calls,
whether TF.js can differentiate it), so that ``tf.grad``'s refusals name the model's line
before it runs (``undifferentiable``) or after TF.js's tape refused (``refusal``).

``Code`` is the walk (``_walk.Walker``) that writes it; the rule table is the
translator's (``translate.Translation``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._vocab import ModelError
from ...model.userline import source_line
from .._walk import Rule, Walker


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


class Code(Walker):
    """The JS text of one jaxpr being translated: its lines, constants and steps."""

    label, backend = "TensorFlow.js", "tfjs"
    covers = "elementwise arithmetic, sums, products of matrices, slicing, concatenation"
    elsewhere = "backend='js' or backend='jax'"

    def __init__(self, files: frozenset[str]) -> None:
        super().__init__(files)
        self.lines: list[str] = []
        self.consts: list[tuple[np.ndarray, str]] = []  # (values, TF.js dtype)
        self.steps: list[Step] = []
        self.outputs: list[str] = []  # the names the program returns
        self._count = 0
        self._no_gradient: str | None = None  # what the rule running says it cannot give

    def const(self, value: Any) -> Val:
        """A constant array (a scalar too), made a tensor once, at load."""
        a = np.asarray(value)
        dtype = tf_dtype(a.dtype)
        self.consts.append((a, dtype))
        return Val(f"C[{len(self.consts) - 1}]", tuple(a.shape), dtype)

    def temp(self, prefix: str) -> str:
        """A new name (a loop's counter, a carry, a list of rows)."""
        self._count += 1
        return f"{prefix}{self._count}"

    def bind(self, expr: str, shape: tuple[int, ...], dtype: Any) -> Val:
        name = self.temp("v")
        self.lines.append(f"const {name} = {expr};")
        return Val(name, tuple(int(s) for s in shape), tf_dtype(dtype))

    def apply(self, rule: Rule, eqn: Any, ins: list[Val]) -> list[Val]:
        """The rule's expressions bound to names, and what it did kept as a ``Step``."""
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
        self.steps.append(Step(eqn.primitive.name, frozenset(v.name for v in ins),
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

    def refusal(self, step: Step | None, why: str, hint: str | None = None) -> ModelError:
        """The error for a step TF.js's reverse mode cannot go through (None: a step
        not found); ``hint``: what to do instead, where not the usual."""
        where = step.where if step else None
        what = (f"the operation {step.primitive!r} (JAX's primitive; {why})"
                if step else f"an operation of this model ({why})")  # fmt: skip
        return ModelError(
            f"TensorFlow.js cannot differentiate {what}, so backend='tfjs' cannot take "
            "mode 'reverse' (tf.grad) of this model",
            lineno=where[1] if where else None, line=source_line(*where) if where else None,
            hint=hint or ("mode='numeric' on backend='tfjs' differentiates it (finite "
                          "differences of the same TF.js program), or take mode 'reverse' on "
                          "backend='jax' or backend='js'"),
        )  # fmt: skip
