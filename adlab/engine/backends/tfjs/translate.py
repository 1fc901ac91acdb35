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
"""

from __future__ import annotations

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


class Translation:
    """The JS text of one jaxpr being translated: its lines and constants."""

    def __init__(self, files: frozenset[str]) -> None:
        self.files = files
        self.lines: list[str] = []
        self.consts: list[tuple[np.ndarray, str]] = []  # (values, TF.js dtype)
        self._count = 0
        self._where: list[Any] = []  # the enclosing call equations (outermost first)

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
        return outs

    def uncovered(self, eqn: Any, why: str = "") -> ModelError:
        """The error for an operation TF.js cannot run, at the model's line that made it."""
        name = eqn.primitive.name
        where = None
        for e in (eqn, *reversed(self._where)):  # inside a library call: the call's line
            where = eqn_line(e, self.files)
            if where:
                break
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


def translate(closed: Any, files: frozenset[str]) -> tuple[str, list, list[Val]]:
    """(source, constants, outputs) of a closed jaxpr: the source is a JS factory
    ``(function (tf, C, H) { return function (a0, ...) { ...; return [...]; }; })``;
    the constants are (values, TF.js dtype) pairs."""
    t = Translation(files)
    jaxpr = closed.jaxpr
    inputs = [Val(f"a{k}", tuple(v.aval.shape), tf_dtype(v.aval.dtype))
              for k, v in enumerate(jaxpr.invars)]  # fmt: skip
    outs = t.run(jaxpr, list(closed.consts), inputs)
    args = ", ".join(v.name for v in inputs)
    source = "\n".join([
        "(function (tf, C, H) {", f"  return function ({args}) {{",
        *("    " + line for line in t.lines),
        f"    return [{', '.join(o.name for o in outs)}];", "  };", "})",
    ])  # fmt: skip
    return source, t.consts, outs
