"""A sweep's reference derivatives, and a measured point's errors against them.

One reference per model and size, computed only when a point needs it (a
skipped point does not), under the same budget as a point: it compiles
reverse (and forward) mode, which for an unrolled loop takes far longer than
the derivative being measured.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from ..accuracy.hessian_reference import ROUTES, hessian_reference
from ..accuracy.reference import (
    Reference,
    max_relative_error,
    max_relative_size,
    normwise_relative_error,
    reference,
)
from ..engine.backends import REFERENCE
from ..engine.compare import tolerance, verdict
from ..engine.model.args import wrt_indices
from ..engine.model.source import Model
from .budget import Budget
from .series import Series

#: the "auto" reference checks reverse against forward mode up to this many inputs
CHECK_MAX_INPUTS = 2000
REFERENCES = ("auto", "checked", "reverse", None)
#: the second derivatives, each with its own reference (``hessian_reference``)
SECOND = ("hessian", "hvp")


class References:
    """The references of one sweep, one per model at the current size.

    ``prepare(m, point, series)`` gives the sweep's own ``(Prepared, notes)``,
    so that a reference and the measured point share one compile.
    """

    def __init__(self, kind: str | None, budget: Budget, prepare: Callable) -> None:
        self.kind = kind
        self.budget = budget
        self._prepare = prepare
        self._refs: dict[tuple[int, str], Reference | str | None] = {}

    def new_size(self) -> None:
        self._refs = {}

    def get(self, m: Model, point: tuple | Exception, n: int, mode: str = "reverse"
            ) -> Reference | str | None:  # fmt: skip
        """The reference at this size for ``mode``'s derivative (a Jacobian, or a second
        derivative: "hessian", "hvp"), or a string saying why there is none."""
        what = mode if mode in SECOND else "jacobian"
        key = (id(m), what)
        if key not in self._refs:
            label = f"reference of {m.name}" + (f" ({what})" if what in SECOND else "")
            reason = self.budget.over(label, n)
            if reason:
                self._refs[key] = f"no reference: {reason}"
            else:
                start = time.perf_counter()
                self._refs[key] = self._compute(m, point, what)
                self.budget.add(label, n, 0.0, time.perf_counter() - start, 0.0, None)
        return self._refs[key]

    def _compute(self, m: Model, point: tuple | Exception, what: str) -> Reference | str | None:
        if self.kind is None or isinstance(point, Exception):
            return None
        kind = self.kind
        if kind == "auto":
            inputs = sum(int(np.size(point[i])) for i in wrt_indices(m.wrt))
            kind = "checked" if inputs <= CHECK_MAX_INPUTS else "reverse"

        def derive(route: str) -> Any:  # a mode, or a second derivative's composition
            series = (Series(what, scheme=route, jit=True, precision="float64", backend=REFERENCE)
                      if what in SECOND else
                      Series(route, jit=True, precision="float64", backend=REFERENCE))  # fmt: skip
            p, _ = self._prepare(m, point, series)
            return jax.tree_util.tree_map(np.asarray, p(*p.inputs))

        try:
            if kind == "checked":
                if what in SECOND:
                    return hessian_reference(m, *point, derive=derive)
                return reference(m, *point, derive=derive)
            first = ROUTES[0] if what in SECOND else "reverse"
            return Reference(derive(first), None, math.nan)  # unchecked by choice: no note
        except Exception as exc:
            return f"no reference: {exc}"


def point_errors(value: Any, estimate: Any, ref: Reference | str | None, notes: list[str],
                 mode: str = "reverse", scheme: str | None = None,
                 precision: str = "float64") -> dict:  # fmt: skip
    """A point's ``Record`` fields for its errors against ``ref`` (notes get the caveats).

    The error estimate (Richardson's own) is on the scale of ``error``: max
    componentwise, each component against the reference's, with the same floor.
    """
    if ref is None:
        return {}
    if isinstance(ref, str):
        notes.append(ref)
        return {}
    value = jax.tree_util.tree_map(np.asarray, value)
    out = dict(
        error=max_relative_error(value, ref.value),
        error_norm=normwise_relative_error(value, ref.value),
        reference_trusted=ref.trusted,
    )
    if ref.trusted is not True and ref.note:
        notes.append(f"reference {ref.note}")
    elif ref.trusted:  # a derivative off its checked reference is never called trusted
        wrong = verdict(value, ref.value, tolerance(mode, scheme, precision))
        out["trusted"] = wrong is None
        if wrong:
            notes.append(f"not trusted: {wrong}")
    if estimate is not None:
        out["error_estimate"] = max_relative_size(jax.tree_util.tree_map(np.asarray, estimate),
                                                  ref.value)  # fmt: skip
    return out
