"""Walking a traced JAX program (jaxpr), sub-programs included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _sub_jaxprs(param: Any) -> Iterator[Any]:
    if hasattr(param, "eqns"):
        yield param
    elif hasattr(param, "jaxpr") and hasattr(param.jaxpr, "eqns"):
        yield param.jaxpr
    elif isinstance(param, (tuple, list)):
        for p in param:
            yield from _sub_jaxprs(p)


def equations(jaxpr: Any) -> Iterator[Any]:
    """Every equation of ``jaxpr``, descending into jit, scan, cond, while bodies."""
    for eqn in jaxpr.eqns:
        yield eqn
        for param in eqn.params.values():
            for sub in _sub_jaxprs(param):
                yield from equations(sub)
