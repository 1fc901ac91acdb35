"""The trusted reference derivative and the error metrics against it.

The reference is float64 reverse mode. It is *checked*, not assumed: forward
mode computes the same derivative by a different route, and when the two
disagree beyond rounding the reference is marked untrusted and the mismatch
is reported instead of hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: forward and reverse float64 must agree to this (componentwise, with floor)
AGREEMENT = 1e-12
#: components below FLOOR * max|ref| are compared against that floor instead
FLOOR = 1e-6


def _flat(a: Any) -> np.ndarray:
    if isinstance(a, tuple):
        return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in a])
    return np.ravel(np.asarray(a, dtype=np.float64))


def max_relative_error(approx: Any, ref: Any, floor: float = FLOOR) -> float:
    """max_i |a_i - r_i| / max(|r_i|, floor * max_j |r_j|).

    The floor keeps components that are (nearly) zero from dividing by zero;
    when the whole reference is zero this is the absolute error.
    """
    a, r = _flat(approx), _flat(ref)
    if a.shape != r.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {r.shape}")
    if not np.all(np.isfinite(a)):
        return float("inf")
    scale = np.max(np.abs(r)) if r.size else 0.0
    if scale == 0.0:
        return float(np.max(np.abs(a - r))) if r.size else 0.0
    denom = np.maximum(np.abs(r), floor * scale)
    return float(np.max(np.abs(a - r) / denom))


def normwise_relative_error(approx: Any, ref: Any) -> float:
    """||a - r||_2 / ||r||_2 (the absolute error when r is zero)."""
    a, r = _flat(approx), _flat(ref)
    if not np.all(np.isfinite(a)):
        return float("inf")
    norm = np.linalg.norm(r)
    diff = np.linalg.norm(a - r)
    return float(diff / norm) if norm > 0 else float(diff)


@dataclass(frozen=True)
class Reference:
    """A reference derivative and whether it can be trusted.

    Attributes:
        value: the float64 reverse-mode derivative (NumPy).
        trusted: forward and reverse agree to ``AGREEMENT``.
        mismatch: their max relative difference (shown, never hidden).
    """

    value: Any
    trusted: bool
    mismatch: float


def reference(model: Any, *args: Any, wrt: Any = None) -> Reference:
    """The float64 reverse-mode derivative, cross-checked against forward mode."""
    from ._derivative import derivative  # the engine; imported late to avoid a cycle

    rev = derivative(model, *args, mode="reverse", wrt=wrt, precision="float64")
    fwd = derivative(model, *args, mode="forward", wrt=wrt, precision="float64")
    mismatch = max_relative_error(fwd, rev)
    return Reference(rev, mismatch <= AGREEMENT, mismatch)
