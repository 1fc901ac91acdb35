"""Walking a traced JAX program (jaxpr), sub-programs included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def sub_jaxprs(param: Any) -> Iterator[Any]:
    if hasattr(param, "eqns"):
        yield param
    elif hasattr(param, "jaxpr") and hasattr(param.jaxpr, "eqns"):
        yield param.jaxpr
    elif isinstance(param, (tuple, list)):
        for p in param:
            yield from sub_jaxprs(p)


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of ``jaxpr``, descending into jit, scan, cond, while bodies."""
    for eqn in jaxpr.eqns:
        yield eqn
        for param in eqn.params.values():
            for sub in sub_jaxprs(param):
                yield from equations(sub)


def equations_within(jaxpr: Any, outer: tuple = ()) -> Iterator[tuple[Any, tuple]]:
    """Like ``equations``, with each equation's enclosing equations (outermost
    first): a library function jitted inside f (``jnp.linalg.norm``) is one
    outer equation whose body holds the primitives."""
    for eqn in jaxpr.eqns:
        yield eqn, outer
        for param in eqn.params.values():
            for sub in sub_jaxprs(param):
                yield from equations_within(sub, (*outer, eqn))


def call_body(eqn: Any) -> tuple[Any, list] | None:
    """(jaxpr, consts) of a call-like equation's body taking its operands, or None."""
    for param in eqn.params.values():
        jaxpr, consts = (param.jaxpr, param.consts) if hasattr(param, "consts") else (param, [])
        if (hasattr(jaxpr, "eqns") and len(jaxpr.invars) == len(eqn.invars)
                and len(jaxpr.outvars) == len(eqn.outvars)):  # fmt: skip
            return jaxpr, list(consts)
    return None
