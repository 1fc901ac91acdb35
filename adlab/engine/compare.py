"""How far one derivative is from another, and how far it may be before it is wrong.

The error metrics and tolerances live here, below the accuracy layer that reports them,
so that ``derivative`` and ``hessian`` can hold their own result to a reference before
calling it trusted (``adlab.engine.derivative.crosscheck``, which computes that reference
with ``prepare``). ``adlab.accuracy.reference`` re-exports the metrics.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: components below FLOOR * max|ref| are compared against that floor instead
FLOOR = 1e-6
FLOORS = {"float64": 1e-12, "float32": 1e-5}


def flat(a: Any) -> np.ndarray:
    """``a`` (an array, or a tuple of them) as one float64 vector."""
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
    d, r = flat(delta), flat(ref)
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

    Returns:
        The largest componentwise relative error, a float.

    Example:
        >>> round(adlab.max_relative_error(np.array([1.0, 2.002]), np.array([1.0, 2.0])), 6)
        0.001
    """
    a, r = flat(approx), flat(ref)
    if a.shape != r.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {r.shape}")
    if not np.all(np.isfinite(a)):
        return math.inf
    return max_relative_size(a - r, r, floor)


def normwise_relative_error(approx: Any, ref: Any) -> float:
    """||a - r||_2 / ||r||_2 (the absolute error when r is zero); inf when a is not finite.

    Returns:
        The normwise relative error, a float.

    Example:
        >>> error = adlab.normwise_relative_error(np.array([3.0, 4.05]), np.array([3.0, 4.0]))
        >>> round(float(error), 6)
        0.01
    """
    a, r = flat(approx), flat(ref)
    if a.shape != r.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {r.shape}")
    if not np.all(np.isfinite(a)):
        return math.inf
    norm = np.linalg.norm(r)
    diff = np.linalg.norm(a - r)
    return float(diff / norm) if norm > 0 else float(diff)


def tolerance(mode: str, scheme: str | None, precision: str) -> tuple[float, float] | None:
    """(relative, absolute): how far (normwise) a result of ``mode`` may be from the exact
    derivative before it is called wrong; None: no fixed claim (finite differences in
    float32, whose error can be anything from 1e-4 to 1: ``crosscheck.differences32`` holds
    them to their own error at the step they took instead).

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
    a, r = flat(a), flat(r)
    return bool(np.all(np.isfinite(a)) and np.linalg.norm(a - r) <= rtol * np.linalg.norm(r) + atol)


def verdict(value: Any, ref: Any, tol: tuple[float, float] | None) -> str | None:
    """Why ``value`` is not ``ref`` within ``tol`` (``tolerance``), with both numbers;
    None if it is."""
    if tol is None or close(value, ref, *tol):
        return None
    a, r = flat(value), flat(ref)
    bad = np.abs(a - r)
    i = int(np.argmax(np.where(np.isfinite(bad), bad, np.inf)))
    size = "not finite" if not np.all(np.isfinite(a)) else (
        f"{np.linalg.norm(a - r):.1e} apart, normwise; {normwise_relative_error(a, r):.1e} "
        f"relative")  # fmt: skip
    allowed = f"{tol[0]:.0e} relative" if tol[0] > 0 else f"{tol[1]:.0e} absolute"
    return (
        f"it disagrees with JAX's checked float64 derivative ({size}; allowed {allowed}): "
        f"entry {i} is {a[i]:.6g} where the reference gives {r[i]:.6g}"
    )
