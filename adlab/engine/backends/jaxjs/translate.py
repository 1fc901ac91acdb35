"""A closed jaxpr, at fixed shapes, as a JavaScript function of jax-js arrays.

The source is a factory ``(function (jax, C) { ...; return function (a0, ...) { ...;
return [outputs]; }; })``: ``jax`` is jax-js, ``C`` the constants as jax-js arrays (made
once, when the program is loaded, and held by it). The function follows jax-js's own
convention: it takes ownership of its arguments and hands its outputs over (``code``
settles every reference), so jax-js's ``grad``, ``jvp``, ``vjp`` and ``jit`` take it as
they take any function of theirs. Each equation is one ``const`` bound to jax-js
operations (``rules``; the loops: ``rules_loops``). Calls (``jit``, ``custom_jvp_call``)
are inlined: jax-js differentiates their bodies. A primitive with no rule is a
``ModelError`` naming the model's line (the walk's, ``_walk``).
"""

from __future__ import annotations

import re
from typing import Any

from . import rules_loops  # noqa: F401  (registers its rules)
from .code import Code, Val, jaxjs_dtype
from .rules import RULES


class Translation(Code):
    """The code of one jaxpr, written by the rules of this backend."""

    rules = RULES


def translate(closed: Any, files: frozenset[str], jit: bool = False) -> tuple[str, list]:
    """(source, constants) of a closed jaxpr: the source is a JS factory ``(function (jax,
    C) { return function (a0, ...) { ...; return [...]; }; })``; the constants are
    (values, jax-js dtype) pairs. ``jit``: the program runs under jax-js's ``jit``."""
    t = Translation(files, jit)
    inputs = []
    for k, v in enumerate(closed.jaxpr.invars):
        inputs.append(t.owned(f"a{k}", tuple(v.aval.shape), jaxjs_dtype(v.aval.dtype)))
    outs: list[Val] = t.walk(closed, inputs)
    t.line(f"return [{', '.join(o.name for o in outs)}];")
    t.body.finish()
    args = ", ".join(f"a{k}" for k in range(len(inputs)))
    body, consts = _used(t.body.text("    "), t.consts)
    source = "\n".join([
        "(function (jax, C) {",
        "  const np = jax.numpy, lax = jax.lax, nn = jax.nn;",
        f"  return function ({args}) {{",
        *body,
        "  };",
        "})",
    ])  # fmt: skip
    return source, consts


def _used(lines: list[str], consts: list) -> tuple[list[str], list]:
    """The lines with their constants renumbered, and those they read: the constants that
    folding consumed (``Code.folded``) are not shipped."""
    used: dict[int, int] = {}
    for line in lines:
        for k in re.findall(r"\bC\[(\d+)\]", line):
            used.setdefault(int(k), len(used))
    renumbered = [re.sub(r"\bC\[(\d+)\]", lambda m: f"C[{used[int(m.group(1))]}]", line)
                  for line in lines]  # fmt: skip
    return renumbered, [consts[k] for k in used]
