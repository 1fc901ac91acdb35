"""Evaluating f at many perturbed copies of one argument.

Shared by finite differences and complex step. Under JAX every perturbed
point goes through one ``jax.vmap``-ed call, so XLA sees a single batched
computation (this is what keeps numeric modes near the cost of "f on a batch
of points"). Under NumPy we perturb one coordinate at a time in a plain loop,
as hand-written finite differences (G9.js) do, never materialising the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np


def _with_arg(f: Callable, args: Sequence[Any], i: int, shape: tuple[int, ...]) -> Callable:
    """``x_flat -> f(*args with args[i] = x_flat reshaped)``."""

    def at(xf):
        new = list(args)
        new[i] = xf.reshape(shape)
        return f(*new)

    return at


#: Batches of up to this many elements (points x coordinates) are built by a
#: scatter into copies of x; larger ones by one elementwise select that XLA
#: fuses into f. Both give the same points, bit for bit.
SCATTER_MAX = 4096


def jax_batch(
    f: Callable,
    args: Sequence[Any],
    i: int,
    cols: np.ndarray,
    values,
    scatter_max: int = SCATTER_MAX,
) -> Any:
    """f at x_i + values[r] e_{cols[r]} for each row r, batched with vmap: (k, *out).

    ``cols`` is a NumPy array (static: XLA sees constants, not index arithmetic).

    Every perturbed point differs from x in one coordinate. How the batch is
    built matters on CPU for tiny n: JAX's CPU client runs a program inline
    only when XLA counts fewer than 1000 flops in it, and hands it to a worker
    thread otherwise (a thread wake-up: 5 us idle, tens of us on a busy
    machine). A dense ``x + diag(+-h)`` costs 2-3 flops per batch element (select,
    negate, add) and pushed a 10-parameter central difference over that line;
    a scatter of k values into broadcast copies of x costs k. Large batches
    use the dense form, which XLA fuses into f's loop without materialising it.
    The points are the same either way; f's own rounding may differ in the
    last bit, as XLA fuses it differently with the two (``scatter_max=0``
    keeps the dense form throughout).
    """
    import jax  # local: keeps this helper importable in docs without JAX set up

    x = jnp.asarray(args[i])
    values = jnp.asarray(values)
    xf = x.ravel().astype(jnp.result_type(x.dtype, values.dtype))
    k, n = values.shape[0], xf.size
    if k * n <= scatter_max:
        batch = jnp.broadcast_to(xf, (k, n)).at[np.arange(k), cols].add(values)
    else:
        hit = jnp.asarray(cols)[:, None] == jnp.arange(n)[None, :]  # no (k, n) constant
        batch = xf[None, :] + jnp.where(hit, values[:, None], jnp.zeros((), values.dtype))
    at = _with_arg(f, args, i, x.shape)
    return jax.vmap(at)(batch)


def jax_at(f: Callable, args: Sequence[Any], i: int) -> Any:
    """f at the unperturbed point."""
    return f(*args)


def numpy_batch(f: Callable, args: Sequence[Any], i: int, offsets: np.ndarray) -> np.ndarray:
    """f at x + offsets[j, b] e_j for each block b and coordinate j: (k*n, *out).

    Rows come in the same layout as ``jax_batch`` (block-major), so the
    difference formulas see one layout for both backends. ``offsets`` is an
    (n, k) array, possibly complex. One coordinate is perturbed at a time in a
    private copy of x, with no per-evaluation allocation beyond f's own: this
    is the hand-written finite-difference loop, and its cost should be f's.
    """
    x = np.asarray(args[i])
    n, k = offsets.shape
    work = x.astype(np.result_type(x.dtype, offsets.dtype)).ravel()  # private copy
    view = work.reshape(x.shape)  # what f sees; shares memory with work
    new = list(args)
    new[i] = view
    out = None
    for j in range(n):
        base = work[j]
        for b in range(k):
            work[j] = base + offsets[j, b]
            value = f(*new)
            if out is None:
                value = np.asarray(value)
                out = np.empty((k * n, *value.shape), dtype=value.dtype)
            out[b * n + j] = value  # copies, so later perturbations can't alias it
        work[j] = base
    return out


def to_jacobian(cols, out_shape: tuple[int, ...], x_shape: tuple[int, ...], xp=np):
    """(n, *out) per-coordinate derivatives -> JAX's layout out_shape + x_shape."""
    moved = xp.moveaxis(cols, 0, -1) if out_shape else cols
    return moved.reshape(out_shape + x_shape)
