"""The trusted reference derivative and the error metrics against it.

The reference is float64 reverse mode. It is *checked*, not assumed: forward
mode computes the same derivative by a different route (tangents pushed from
the inputs instead of adjoints pulled from the output, so every sum and
product is rounded in a different order). When the two disagree beyond
rounding, the reference is marked untrusted and the mismatch is reported
instead of hidden. Typical causes: cancellation inside the derivative
(components that are pure rounding noise), or a derivative rule that is
wrong in one mode.

Forward and reverse share every custom derivative rule (``jax.custom_jvp``
gives reverse mode by transposing the JVP), so a rule that is wrong in the
same way for both passes this check; finite differences and complex step,
which never use the rules, are what expose it (see ``adlab.step_errors``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: forward and reverse float64 must agree to this, normwise relative
AGREEMENT = 1e-13
#: components below FLOOR * max|ref| are compared against that floor instead
FLOOR = 1e-6


def _flat(a: Any) -> np.ndarray:
    if isinstance(a, tuple):
        return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in a])
    return np.ravel(np.asarray(a, dtype=np.float64))


def max_relative_size(delta: Any, ref: Any, floor: float = FLOOR) -> float:
    """max_i |d_i| / max(|r_i|, floor * max_j |r_j|): a difference, relative to ``ref``.

    The one home of the componentwise scale: ``max_relative_error`` is this
    applied to ``approx - ref``, and a method's own error estimate (Richardson)
    is this applied to the estimate, so the two are directly comparable. When
    the whole reference is zero this is the largest absolute value; inf when
    ``delta`` is not finite.
    """
    d, r = _flat(delta), _flat(ref)
    if d.shape != r.shape:
        raise ValueError(f"shapes differ: {d.shape} vs {r.shape}")
    if not r.size:
        return 0.0
    if not np.all(np.isfinite(d)):
        return math.inf
    scale = np.max(np.abs(r))
    if scale == 0.0:
        return float(np.max(np.abs(d)))
    denom = np.maximum(np.abs(r), floor * scale)
    return float(np.max(np.abs(d) / denom))


def max_relative_error(approx: Any, ref: Any, floor: float = FLOOR) -> float:
    """max_i |a_i - r_i| / max(|r_i|, floor * max_j |r_j|).

    The floor keeps components that are (nearly) zero from dividing by zero;
    when the whole reference is zero this is the absolute error. inf when
    ``approx`` is not finite.
    """
    a, r = _flat(approx), _flat(ref)
    if a.shape != r.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {r.shape}")
    if not np.all(np.isfinite(a)):
        return math.inf
    return max_relative_size(a - r, r, floor)


def normwise_relative_error(approx: Any, ref: Any) -> float:
    """||a - r||_2 / ||r||_2 (the absolute error when r is zero); inf when a is not finite."""
    a, r = _flat(approx), _flat(ref)
    if a.shape != r.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {r.shape}")
    if not np.all(np.isfinite(a)):
        return math.inf
    norm = np.linalg.norm(r)
    diff = np.linalg.norm(a - r)
    return float(diff / norm) if norm > 0 else float(diff)


@dataclass(frozen=True)
class Reference:
    """A reference derivative and whether it can be trusted.

    Attributes:
        value: the float64 reverse-mode derivative (NumPy; a tuple for tuple ``wrt``).
        trusted: True when forward and reverse agree to ``AGREEMENT`` (normwise);
            False when they do not; None when the check could not be made
            (``note`` says why).
        mismatch: their normwise relative difference ||fwd - rev|| / ||rev||,
            the number that decides ``trusted`` (nan when not checked).
        mismatch_componentwise: the same difference, max componentwise with the
            floor (shown beside it: one bad small component stands out here).
        forward: the float64 forward-mode derivative it was checked against.
        note: why the reference is untrusted or unchecked, else None.
    """

    value: Any
    trusted: bool | None
    mismatch: float
    mismatch_componentwise: float = math.nan
    forward: Any = None
    note: str | None = None


def reference(
    model: Any,
    *args: Any,
    wrt: Any = None,
    derive: Callable[[str], Any] | None = None,
    routes: tuple[str, str] = ("reverse", "forward"),
) -> Reference:
    """The float64 reverse-mode derivative, cross-checked against forward mode.

    Raises what reverse mode raises (``ModelError``, ``SizeError``); a failure of
    forward mode alone (e.g. a ``jax.custom_vjp`` model, which has no forward
    mode) gives an unchecked reference (``trusted=None``) with the reason.
    ``derive(mode)``, when given, computes the float64 derivative in ``mode``
    instead of ``adlab.derivative`` (a sweep passes its own compiled derivatives,
    so that nothing is compiled twice). ``routes`` names the two ways ``derive`` is
    asked for: the reference's, then the check's (a Hessian's are two compositions,
    ``adlab.accuracy.hessian_reference``).
    """
    from ..engine.derivative import derivative  # the engine; imported late to avoid a cycle

    if derive is None:

        def derive(mode: str) -> Any:
            return derivative(model, *args, mode=mode, wrt=wrt, precision="float64")

    rev = derive(routes[0])
    first_order = routes == ("reverse", "forward")
    words = "forward and reverse mode" if first_order else f"{routes[1]} and {routes[0]}"
    try:
        fwd = derive(routes[1])
    except Exception as exc:  # any failure of forward mode alone leaves it unchecked
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        failed = "forward mode" if first_order else routes[1]
        return Reference(rev, None, math.nan, note=f"not checked: {failed} failed ({first})")
    mismatch = normwise_relative_error(fwd, rev)
    componentwise = max_relative_error(fwd, rev)
    trusted = mismatch <= AGREEMENT
    note = None
    if not trusted:
        note = (
            f"{words} differ by {mismatch:.1e} (normwise; "
            f"{componentwise:.1e} componentwise), more than rounding ({AGREEMENT:.0e}): "
            "errors below that size are not measurable against this reference"
        )
    return Reference(rev, trusted, mismatch, componentwise, fwd, note)
