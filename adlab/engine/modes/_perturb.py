"""Shared by finite differences and complex step: their results in JAX's layout.

How each backend evaluates f at the perturbed points is its own
(``Backend.points``: ``jax.vmap`` of one batch under JAX, ``torch.func.vmap``,
``tf.vectorized_map``, one coordinate at a time for NumPy and autograd).
"""

from __future__ import annotations

import numpy as np


def to_jacobian(cols, out_shape: tuple[int, ...], x_shape: tuple[int, ...], xp=np):
    """(n, *out) per-coordinate derivatives -> JAX's layout out_shape + x_shape."""
    moved = xp.moveaxis(cols, 0, -1) if out_shape else cols
    return xp.reshape(moved, out_shape + x_shape)
