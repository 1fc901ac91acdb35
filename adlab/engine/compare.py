"""How far one derivative is from another, and a derivative held to JAX's checked one.

The error metrics live here, below the accuracy layer that reports them, so
that ``derivative`` and ``hessian`` can hold their own result to a reference
before calling it trusted (``crosscheck``). ``adlab.accuracy.reference``
re-exports them.

``crosscheck`` is issue 23's "trusted means something": a framework's own
derivative rule can be wrong (PyTorch's reverse-over-forward through
``slogdet``), or NaN where the derivative is finite (a rule dividing by zero),
and nothing else would notice. So, where comparing costs little (a derivative
of at most ``CHECK_MAX`` entries), the result is compared once with JAX's
float64 reverse mode (for a Hessian, forward-over-reverse), which is itself
checked first: against central differences (where f is smooth there) or,
where those disagree (a kink), against forward mode (another route through
the same rules). An unchecked reference makes no claim either way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .backends import REFERENCE

#: components below FLOOR * max|ref| are compared against that floor instead
FLOOR = 1e-6
#: derivatives with more entries than this are not cross-checked: the reference
#: would cost as much as the derivative itself
CHECK_MAX = 1024
#: the reference agrees with central differences to this where f is smooth ...
DIFFERENCES_AGREE = 1e-5
#: ... or with forward mode (the same rules, another route) to this (relative)
FORWARD_AGREE = 1e-10
#: absolute floors, for derivatives that are zero but for rounding (a Hessian of
#: sum(x) reads 1e-16 here, -5e-17 there): the differences' noise, and each precision's
DIFFERENCES_FLOOR = 1e-9
FLOORS = {"float64": 1e-12, "float32": 1e-5}


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


def tolerance(mode: str, scheme: str | None, precision: str) -> tuple[float, float] | None:
    """(relative, absolute): how far (normwise) a result of ``mode`` may be from the exact
    derivative before it is called wrong; None: no claim (finite differences in float32,
    whose error can be anything from 1e-4 to 1).

    Exact modes (AD, complex step) are off by rounding only: 1e-8 leaves room for
    cancellation. Finite differences are off by their truncation and rounding
    errors, ~1e-8 (forward) to ~1e-11 (Richardson) where f is smooth, and where the
    derivative is zero by their noise, eps |f| / h: 1e-4 and 1e-6 flag only a wrong
    derivative, not an inexact one.
    """
    differences = mode == "numeric" or (scheme or "") == "numeric"
    if precision == "float32":
        return None if differences else (1e-2, FLOORS["float32"])
    return (1e-4, 1e-6) if differences else (1e-8, FLOORS["float64"])


def close(a: Any, r: Any, rtol: float, atol: float) -> bool:
    """||a - r|| <= rtol ||r|| + atol, and a finite."""
    a, r = _flat(a), _flat(r)
    return bool(np.all(np.isfinite(a)) and np.linalg.norm(a - r) <= rtol * np.linalg.norm(r) + atol)


def verdict(value: Any, ref: Any, tol: tuple[float, float] | None) -> str | None:
    """Why ``value`` is not ``ref`` within ``tol`` (``tolerance``), with both numbers;
    None if it is."""
    if tol is None or close(value, ref, *tol):
        return None
    a, r = _flat(value), _flat(ref)
    bad = np.abs(a - r)
    i = int(np.argmax(np.where(np.isfinite(bad), bad, np.inf)))
    size = "not finite" if not np.all(np.isfinite(a)) else (
        f"{np.linalg.norm(a - r):.1e} apart, normwise; {normwise_relative_error(a, r):.1e} "
        f"relative")  # fmt: skip
    return (f"it disagrees with JAX's checked float64 derivative ({size}; allowed {tol[0]:.0e} "
            f"relative): entry {i} is {a[i]:.6g} where the reference gives {r[i]:.6g}")


def crosscheck(model: Any, args: tuple, value: Any, *, wrt: Any, mode: str, scheme: str | None,
               precision: str, backend: str, order: int = 1, direction: Any = None,
               reference: bool = False) -> str | None:  # fmt: skip
    """Why ``value`` (``model``'s derivative at ``args``) cannot be trusted, or None: it
    agrees with JAX's checked float64 reference, or no check was made (too large, no
    JAX twin, a reference that failed or could not itself be checked). ``direction``:
    ``value`` is a Hessian-vector product along it (held to the Hessian times it).
    ``reference``: ``value`` is JAX's float64 reference itself, only checked to be
    finite (JAX's Hessian through svd is all NaN where the true one is finite)."""
    a = _flat(value)
    if not np.all(np.isfinite(a)):  # nothing to compare with: never called trusted
        i = int(np.argmin(np.isfinite(a)))
        return (f"entry {i} is {a[i]}: f may not be differentiable here, or a derivative rule "
                "divided by zero; compare mode='numeric'")  # fmt: skip
    if reference:  # the result is JAX's float64 reference itself
        return None
    tol = tolerance(mode, scheme, precision)
    size = np.size(value) if not isinstance(value, tuple) else sum(map(np.size, value))
    if direction is not None:
        size = np.size(direction) ** 2  # the reference is the whole Hessian
    if tol is None or size > CHECK_MAX or model.source is None and backend != REFERENCE:
        return None
    ref = _reference(model, args, wrt, order)
    if ref is not None and direction is not None:
        k = np.size(direction)  # a scalar x's Hessian is a scalar: (1, 1) here
        ref = np.reshape(np.reshape(ref, (k, k)) @ np.ravel(direction), np.shape(direction))
    if ref is None or _flat(ref).shape != _flat(value).shape:  # not the same derivative
        return None
    return verdict(value, ref, tol)


def _reference(model: Any, args: tuple, wrt: Any, order: int) -> Any:
    """JAX's float64 derivative, checked (None when it fails or cannot be checked)."""
    from .derivative import prepare  # the entry point: imported when first needed

    def run(mode: str, scheme: str = "central") -> Any:
        if order == 2:
            mode, scheme = "hessian", mode
        p = prepare(model, *args, mode=mode, scheme=scheme, wrt=wrt, precision="float64")
        out = p(*p.inputs)
        return tuple(map(np.asarray, out)) if isinstance(out, tuple) else np.asarray(out)

    first, *checks = (("forward-over-reverse", "numeric", "reverse-over-reverse") if order == 2
                      else ("reverse", "numeric", "forward"))  # fmt: skip
    try:
        ref = run(first)
        if not np.all(np.isfinite(_flat(ref))):
            return None
        agree = ((DIFFERENCES_AGREE, DIFFERENCES_FLOOR), (FORWARD_AGREE, FLOORS["float64"]))
        for check, (rtol, atol) in zip(checks, agree, strict=True):
            if close(run(check), ref, rtol, atol):
                return ref
    except Exception:  # the reference's own failure: no claim about the value
        return None
    return None
