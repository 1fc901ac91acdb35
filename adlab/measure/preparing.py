"""Preparing one series at one point: first or second order, dense or sparse.

The one place a sweep (and its references) turns a ``Series`` into a compiled
derivative: ``prepare`` for first derivatives (``sparse`` passed on),
``prepare_hessian`` and ``prepare_hvp`` for second ones. An HVP is taken along
``direction``: fixed for a shape, so every composition and the reference
multiply the Hessian by the same v.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.derivative import prepare
from ..engine.model import Model
from ..engine.second import prepare_hessian, prepare_hvp
from .series import Series


def direction(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A unit vector of ``shape`` from a seeded normal draw: an HVP's v in a sweep."""
    v = np.random.default_rng(seed).normal(size=shape)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else np.ones(shape)


def prepare_series(m: Model, point: tuple, v: Series) -> Any:
    """``v`` compiled at ``point`` (f's arguments), with ``v``'s resolved options."""
    options = dict(jit=v.jit, precision=v.precision, backend=v.backend)
    if v.mode == "hessian":
        return prepare_hessian(m, *point, mode=v.scheme, sparse=bool(v.sparse), **options)
    if v.mode == "hvp":
        i = m.wrt[0] if isinstance(m.wrt, tuple) else m.wrt
        u = direction(np.shape(point[i]))
        return prepare_hvp(m, point[0], u, *point[1:], mode=v.scheme, **options)
    return prepare(m, *point, mode=v.mode, scheme=v.scheme or "central",
                   sparse=bool(v.sparse), **options)  # fmt: skip
