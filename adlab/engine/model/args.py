"""f's arguments: which are differentiated, cast to the precision, held by the backend."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .precision import dtype_of


def wrt_indices(wrt: int | tuple[int, ...]) -> tuple[int, ...]:
    """The differentiated argument(s) as a tuple of indices (``wrt`` as JAX's argnums)."""
    return wrt if isinstance(wrt, tuple) else (wrt,)


def cast_leaf(a: Any, dtype) -> Any:
    if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating):
        return a.astype(dtype, copy=False)
    if isinstance(a, (np.floating, float)) and not isinstance(a, bool):
        # a Python float would be converted on every jitted call (~5 us), and
        # with JAX's weak type rather than the precision asked for
        return dtype(a)
    if isinstance(a, jax.Array) and jax.numpy.issubdtype(a.dtype, jax.numpy.floating):
        return np.asarray(a).astype(dtype, copy=False)
    return a


def cast_args(args: tuple, dtype, wrt: tuple[int, ...]) -> tuple:
    """``args`` with every float leaf in ``dtype``; the ``wrt`` ones as float arrays."""
    out = list(jax.tree_util.tree_map(lambda a: cast_leaf(a, dtype), list(args)))
    for i in wrt:
        try:
            x = np.asarray(out[i])
        except Exception as exc:  # ragged lists, objects
            raise TypeError(f"argument {i} cannot be differentiated: {exc}") from None
        if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
            raise TypeError(
                f"argument {i} has dtype {x.dtype}; derivatives need a float array "
                f"(wrt={i} picks it: choose another argument with wrt=...)"
            )
        out[i] = x.astype(dtype)
    return tuple(out)


def backend_inputs(args: tuple, precision: str, backend: str, wrt: tuple[int, ...]) -> tuple:
    """``args`` cast to ``precision`` and held as the backend holds them (JAX, PyTorch:
    on the device), as a training loop holds them: calls copy nothing from the host."""
    from ..backends import get_backend

    cast = cast_args(tuple(args), dtype_of(precision), wrt)
    return get_backend(backend).convert(cast, precision)
