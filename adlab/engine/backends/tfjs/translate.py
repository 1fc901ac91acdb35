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
primitive with no rule (``rules.RULES``) is a ``ModelError`` naming the model's line
(the walk's, ``_walk``; the code and its steps: ``code``).
A rule may write an operation TF.js runs but cannot differentiate (``no_gradient``):
``tf.grad`` through it is refused before it runs (``undifferentiable``), at the line
of the first such equation on a path from x to f.
"""

from __future__ import annotations

from typing import Any

from . import rules_loops  # noqa: F401  (registers its rules)
from .code import Code, Val, tf_dtype
from .rules import RULES


class Translation(Code):
    """The code of one jaxpr, written by the rules of this backend."""

    rules = RULES


def translate(closed: Any, files: frozenset[str]) -> tuple[str, list, Translation]:
    """(source, constants, translation) of a closed jaxpr: the source is a JS factory
    ``(function (tf, C, H) { return function (a0, ...) { ...; return [...]; }; })``;
    the constants are (values, TF.js dtype) pairs; the translation knows its steps."""
    t = Translation(files)
    inputs = [Val(f"a{k}", tuple(v.aval.shape), tf_dtype(v.aval.dtype))
              for k, v in enumerate(closed.jaxpr.invars)]  # fmt: skip
    outs = t.walk(closed, inputs)
    t.outputs = [o.name for o in outs]
    args = ", ".join(v.name for v in inputs)
    source = "\n".join([
        "(function (tf, C, H) {", f"  return function ({args}) {{",
        *("    " + line for line in t.lines),
        f"    return [{', '.join(o.name for o in outs)}];", "  };", "})",
    ])  # fmt: skip
    return source, t.consts, t
