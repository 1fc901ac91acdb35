"""Which framework takes each level of a nested derivative: a record's ``levels``.

A second derivative nests two modes ("forward-over-reverse"), and a first derivative of a
model that takes its own ``grad`` (particle, saddle) nests the model's ``grad`` inside.
On the JavaScript backends the levels are not all taken by one framework: f is traced
with JAX, so a ``grad`` inside the model is JAX's, traced into f's program and emitted
as JavaScript (``js``) or translated to TF.js's or jax-js's operations with it, and only
the outer level is TF.js's ``tf.grad`` or jax-js's own transform. The words come from
each framework's facts entry (``Facts.takes``).
"""

from __future__ import annotations

from .facts import BASELINE, JAVASCRIPT, REFERENCE, facts_of

#: the modes whose records have an order-2 composition in ``scheme``
SECOND_ORDER = ("hessian", "hvp", "gradient-and-hvp")


def takes(backend: str, mode: str) -> str:
    """How ``backend`` takes a derivative in ``mode`` ("reverse", "forward"), in words."""
    facts = facts_of(backend)
    return facts.takes.get(mode) or f"{facts.label}'s {mode} mode"


def levels(backend: str, mode: str, scheme: str | None = None, inner: str = "reverse",
           own_grad: bool = False) -> str | None:  # fmt: skip
    """Who takes each level of a derivative on ``backend``, outermost first, as
    "outer: ...; inner: ..."; None where one framework takes its one level (a first
    derivative of a model without ``grad``), or where ``backend`` nests no modes.

    Args:
        mode, scheme: the record's (a second-order mode's composition in ``scheme``).
        inner: the mode of the model's own ``grad`` (``prepare``'s ``inner``).
        own_grad: the model takes its own derivative (``Model.uses_grad``).

    Example:
        >>> levels("jaxjs", "reverse", own_grad=True)
        "outer: jax-js's grad (reverse); inner: JAX's grad (reverse), traced into f and translated to jax-js operations"
    """  # noqa: E501
    facts = facts_of(backend)
    if mode in SECOND_ORDER:
        scheme = scheme or "forward-over-reverse"
        if scheme not in facts.nests:  # refused there (``why_not_nested``): no levels to name
            return None
        outer, _, under = scheme.partition("-over-")
        if not under:  # numeric, complex-step: of the reverse gradient
            return f"outer: {_inexact(scheme)} of the gradient; inner: {takes(backend, 'reverse')}"
        if backend == JAVASCRIPT:  # JAX's program of the whole nesting, emitted as one
            return (f"outer: {takes(REFERENCE, outer)}; inner: {takes(REFERENCE, under)}; "
                    "one program, emitted as JavaScript")  # fmt: skip
        return f"outer: {takes(backend, outer)}; inner: {takes(backend, under)}"
    if not own_grad or mode == "primal":
        return None
    if mode in ("forward", "reverse"):
        top = takes(backend, mode)
    else:  # numeric, complex-step: of f, whose grad is inside
        top = f"{_inexact(scheme if mode == 'numeric' else mode)} of f on {facts.label}"
    return f"outer: {top}; inner: {_own_grad(backend, inner)}"


def _inexact(scheme: str | None) -> str:
    """A numeric scheme or complex step, in words ("central differences")."""
    if scheme == "complex-step":
        return "complex step"
    return f"{scheme if scheme not in (None, 'numeric') else 'central'} differences"


def _own_grad(backend: str, inner: str) -> str:
    """Who takes the model's own ``grad`` on ``backend``."""
    if backend == BASELINE:
        return "central differences (NumPy has no AD)"
    facts = facts_of(backend)
    if not facts.traced:
        return takes(backend, inner)
    how = "emitted as JavaScript" if backend == JAVASCRIPT else (
        f"translated to {facts.label} operations")  # fmt: skip
    return f"{takes(REFERENCE, inner)}, traced into f and {how}"
