"""JAX's batch of perturbed points: f on many copies of x, one coordinate moved in each.

Shared by finite differences and complex step on the JAX backend. The perturbed
points go through ``jax.vmap``-ed calls of f, one for the whole batch or one
per cache-sized chunk, so XLA sees batched computations (this is what keeps
numeric modes near the cost of "f on a batch of points").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..base import with_arg

#: Batches of up to this many elements (points x coordinates) are built by a
#: scatter into copies of x; larger ones by one elementwise select that XLA
#: fuses into f. Both give the same points, bit for bit.
SCATTER_MAX = 4096
#: Batches of more than twice this many elements are evaluated in chunks of
#: about this many (1 MiB of float64), one after another.
CHUNK = 1 << 17


def n_chunks(k: int, n: int, chunk: int | None = CHUNK) -> int:
    """How many chunks ``jax_batch`` splits a batch of k points of size n into."""
    if chunk is None or k * n <= 2 * chunk:
        return 1
    return min(k, -(-k * n // chunk))


def _select(xf, cols, coords):
    """Rows of x with coordinate cols[r] replaced by coords[r], as one select."""
    hit = cols[:, None] == jnp.arange(xf.size)[None, :]  # no (k, n) constant
    return jnp.where(hit, coords[:, None], xf[None, :])


def jax_batch(
    f: Callable,
    args: Sequence[Any],
    i: int,
    cols: np.ndarray,
    coords,
    scatter_max: int = SCATTER_MAX,
    chunk: int | None = CHUNK,
) -> tuple[Any, Any]:
    """f at x_i with coordinate cols[r] set to coords[r], for each row r.

    Returns (F, points): F is (k, *out); points[r] is the coordinate the r-th
    evaluation saw, equal to coords[r] bit for bit. Callers that divide by
    the distance between points take it from ``points``: in the scatter form
    it is read back from the batch, so the arithmetic that made ``coords``
    has one consumer and XLA computes (and counts) it once instead of copying
    it into every fusion that reads it, which kept small Richardson programs
    over the 1000-flop line below.

    ``cols`` is a NumPy array (static: XLA sees constants, not index
    arithmetic); ``coords`` holds the perturbed coordinates themselves
    (x_j + h_j, computed by the caller), so building the batch adds no
    arithmetic of its own.

    How the batch is built matters on CPU:

    - Tiny batches: JAX's CPU client runs a program inline only when XLA
      counts fewer than 1000 flops in it, and hands it to a worker thread
      otherwise (a thread wake-up: 5 us idle, tens of us on a busy machine).
      A scatter of k coordinates into broadcast copies of x adds no counted
      arithmetic, where a dense select adds some per batch element.
    - Mid-sized batches: one select that XLA fuses into f.
    - Large batches (over ``2 * chunk`` elements): XLA would write the whole
      batch to memory and read it back, as it does not fit in cache. Chunks
      of about ``chunk`` elements, evaluated one after another with
      ``lax.map``, stay in cache, and bound the memory a big n needs. XLA's
      cost analysis counts a loop body once, so callers that report costs
      analyse the same computation with ``chunk=None`` (see ``Built.cost_fn``).

    The points are the same bit for bit in every form; f's own rounding may
    differ in the last bit, as XLA fuses f differently with each.
    """
    x = jnp.asarray(args[i])
    coords = jnp.asarray(coords)
    xf = x.ravel().astype(jnp.result_type(x.dtype, coords.dtype))
    k, n = coords.shape[0], xf.size
    at = jax.vmap(with_arg(f, args, i, x.shape))
    if k * n <= scatter_max:
        batch = jnp.broadcast_to(xf, (k, n)).at[np.arange(k), cols].set(coords)
        return at(batch), batch[np.arange(k), cols]
    trips = n_chunks(k, n, chunk)
    if trips == 1:
        return at(_select(xf, jnp.asarray(cols), coords)), coords
    rows = -(-k // trips)
    pad = trips * rows - k  # padding rows set coordinate 0 to x_0: f(x) itself
    c = np.concatenate([cols, np.zeros(pad, dtype=cols.dtype)]).reshape(trips, rows)
    v = jnp.concatenate([coords, jnp.broadcast_to(xf[0], (pad,))]).reshape(trips, rows)
    out = jax.lax.map(lambda cv: at(_select(xf, cv[0], cv[1])), (jnp.asarray(c), v))
    return out.reshape((trips * rows, *out.shape[2:]))[:k], coords
