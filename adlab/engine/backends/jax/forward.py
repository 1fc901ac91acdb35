"""JAX's forward-mode Jacobian, in chunks of columns when all n at once would not fit.

``jax.jacfwd`` pushes all n unit tangents through f at once (a vmap): every
intermediate of f is held n times, which for a scalar f of 40,000 inputs
(log-sum-exp) is 40,000 x 40,000 floats. The result is only n numbers, so
the columns are pushed in chunks, one chunk after another (``lax.map``),
each as large as ``memory.chunk_columns`` allows. A chunk's cost per column
is read from f's program: its largest value, times a few for the tangent
and the work arrays beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...model.args import wrt_indices
from ...model.userline import TRACER_ERRORS
from ...programs import memory
from ..base import with_arg

#: a column holds f's largest value about this many times (primal, tangent, work)
COPIES = 4


def column_bytes(g: Callable, xf: Any) -> float:
    jaxpr = jax.make_jaxpr(g)(jax.ShapeDtypeStruct(xf.shape, xf.dtype)).jaxpr
    largest, _ = memory.largest_array(jaxpr)
    return COPIES * max(largest, xf.size * np.dtype(xf.dtype).itemsize)


def _one(f: Callable, args: tuple, i: int) -> Any:
    """d f / d args[i], (*out, *x.shape), in chunks of columns if need be."""
    x = jnp.asarray(args[i])
    xf = x.ravel()
    n = xf.size
    g = with_arg(f, args, i, x.shape)
    try:
        cols = memory.chunk_columns(n, column_bytes(g, xf))
    except TRACER_ERRORS:
        # Python control flow on x: f cannot be traced abstractly to size the chunks.
        # Run eagerly (jit=False), jacfwd still works (x's values are concrete), so
        # it runs unchunked; under jit the same error is raised and explained there.
        cols = n
    if cols >= n:
        return jax.jacfwd(f, argnums=i)(*args)

    def push(start):  # columns start .. start + cols - 1 (past n: zero tangents)
        basis = (start + jnp.arange(cols))[:, None] == jnp.arange(n)[None, :]
        tangents = basis.astype(xf.dtype)
        return jax.vmap(lambda t: jax.jvp(g, (xf,), (t,))[1])(tangents)

    trips = math.ceil(n / cols)
    out = jax.lax.map(push, jnp.arange(trips) * cols)  # (trips, cols, *out)
    out = out.reshape((trips * cols, *out.shape[2:]))[:n]
    out = jnp.moveaxis(out, 0, -1)  # (*out, n)
    return out.reshape((*out.shape[:-1], *x.shape))


def jacfwd(f: Callable, wrt: int | tuple[int, ...]) -> Callable:
    """``jax.jacfwd(f, argnums=wrt)``, its columns in chunks where all would not fit."""

    def jac(*args: Any) -> Any:
        out = [_one(f, args, i) for i in wrt_indices(wrt)]
        return tuple(out) if isinstance(wrt, tuple) else out[0]

    return jac
