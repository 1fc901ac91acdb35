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

import numpy as np

import jax.numpy as jnp


def _with_arg(f: Callable, args: Sequence[Any], i: int, shape: tuple[int, ...]) -> Callable:
    """``x_flat -> f(*args with args[i] = x_flat reshaped)``."""

    def at(xf):
        new = list(args)
        new[i] = xf.reshape(shape)
        return f(*new)

    return at


def jax_batch(f: Callable, args: Sequence[Any], i: int, offsets) -> Any:
    """f at x_i + each row of ``offsets`` (k, n), batched with vmap: (k, *out)."""
    import jax  # local: keeps this helper importable in docs without JAX set up

    x = jnp.asarray(args[i])
    at = _with_arg(f, args, i, x.shape)
    return jax.vmap(at)(x.ravel()[None, :] + offsets)


def jax_at(f: Callable, args: Sequence[Any], i: int) -> Any:
    """f at the unperturbed point."""
    return f(*args)


def numpy_columns(
    f: Callable, args: Sequence[Any], i: int, perturbations: Sequence[Any], dtype
) -> list[np.ndarray]:
    """For each j: [f(x + p e_j) for p in perturbations[j]], one coordinate at a time.

    ``perturbations`` is a (n, k) array of offsets, possibly complex.
    """
    x = np.asarray(args[i])
    shape = x.shape
    kind = np.result_type(x.dtype, np.asarray(perturbations).dtype)
    work = x.astype(kind).ravel()  # a private copy we perturb in place
    at = _with_arg(f, args, i, shape)
    out = []
    for j, offsets in enumerate(perturbations):
        base = work[j]
        row = []
        for p in offsets:
            work[j] = base + p
            row.append(np.asarray(at(work)))
        work[j] = base
        out.append(np.stack(row))
    return out


def to_jacobian(cols, out_shape: tuple[int, ...], x_shape: tuple[int, ...], xp=np):
    """(n, *out) per-coordinate derivatives -> JAX's layout out_shape + x_shape."""
    moved = xp.moveaxis(cols, 0, -1) if out_shape else cols
    return moved.reshape(out_shape + x_shape)
