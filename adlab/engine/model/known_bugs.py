"""A framework's own wrong derivative, named where the cross-check meets it.

A framework's entry of facts lists the derivatives it is known to get wrong itself
(``facts.KnownBug``: the operations, the compositions they spoil, the framework's own
reports). When a result there disagrees with JAX's checked float64 one, or is NaN
(``crosscheck``), and the model calls one of those operations, the note names the
operation at the model's line, the framework's issue and what to do, so that the user
learns it is not their model. A result that agrees gets no note: such a bug bites only
at some points (PyTorch's second derivative of ``det`` is right until singular values
tie), and the check is what sees that.

Which operations the model calls is read from its JAX program, traced at the point
checked (only after a disagreement): JAX's twin of each is a jitted function of that
name (``jit[name=det]``). One that another library function calls (``inv``'s own
``solve``) is not the model's call, and is left out.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from ..backends import REFERENCE, facts_of, label_of
from ..backends.facts import KnownBug
from ..programs.jaxpr import equations_within
from .args import cast_args, wrt_indices
from .precision import precision_scope
from .userline import eqn_line, source_line

#: JAX's primitive for a call of a jitted function (its ``name`` param says which)
_CALLS = ("jit", "pjit")


def known_bug(model: Any, args: tuple, *, wrt: Any, backend: str, scheme: str | None,
              order: int) -> str | None:  # fmt: skip
    """The note for a derivative of ``model`` at ``args`` that ``backend`` got wrong, where
    the model calls an operation of one of its ``KnownBug``s for ``scheme``; else None."""
    bugs = [b for b in facts_of(backend).known_bugs if order == 2 and scheme in b.schemes]
    if not bugs or model.source is None:
        return None
    try:
        calls = _calls(model, args, wrt)
    except Exception:  # the trace's own failure: no claim
        return None
    for bug in bugs:
        for name, where in calls:
            spelled = next((op for op in bug.operations if op.rsplit(".", 1)[-1] == name), None)
            if spelled is not None:
                return _words(bug, spelled, where, backend)
    return None


def _calls(model: Any, args: tuple, wrt: Any) -> list[tuple[str, tuple[str, int] | None]]:
    """(name, the model's (file, line) or None) of each jitted library function the model
    calls itself, in the order of its program."""
    indices = wrt_indices(wrt)
    args = cast_args(tuple(args), np.float64, indices)
    f = model.function(REFERENCE)

    def at(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(indices, xs, strict=True):
            full[i] = x
        return f(*full)

    with precision_scope("float64"):
        jaxpr = jax.make_jaxpr(at)(*(args[i] for i in indices)).jaxpr
    found = []
    for eqn, outer in equations_within(jaxpr):
        if eqn.primitive.name not in _CALLS or any(e.primitive.name in _CALLS for e in outer):
            continue
        found.append((str(eqn.params.get("name")), eqn_line(eqn, model.files)))
    return found


def _words(bug: KnownBug, operation: str, where: tuple[str, int] | None, backend: str) -> str:
    line = source_line(*where) if where else None
    at = f" (line {where[1]}: `{line.strip()}`)" if where and line else ""
    repository = bug.issues[0].partition("#")[0]
    issues = ", ".join([bug.issues[0], *(i.removeprefix(repository) for i in bug.issues[1:])])
    return (f"The model calls np.{operation}{at}, {bug.what}: {label_of(backend)}'s own bug "
            f"({issues}), not the model's; {bug.instead}")  # fmt: skip
