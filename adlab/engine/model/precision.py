"""Per-call floating-point precision, without touching JAX's global flag.

JAX decides float32 vs float64 by its ``jax_enable_x64`` state, which is
thread-local when set through a context manager. adlab sets it around each
call so that one caller's choice never leaks into another's (or into another
test). ``jax.enable_x64(v)`` builds a context manager object per call, which
costs about 1 us; on the hot path of a prepared derivative that is 15% of a
tiny jitted call, so we use the state's own swap/restore when it exists and
fall back to the public context manager otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import jax
import numpy as np


def _private_x64_state() -> object | None:
    """JAX's own x64 state, whose swap/restore ``jax.enable_x64`` does inside; None
    where a JAX version moved it (then the public context manager serves, ~1 us slower)."""
    try:
        from jax._src.config import enable_x64 as state
    except ImportError:
        return None
    if not (hasattr(state, "swap_local") and hasattr(state, "set_local")):
        return None
    return state


_X64_STATE = _private_x64_state()

DTYPES = {"float32": np.float32, "float64": np.float64}
COMPLEX = {"float32": np.complex64, "float64": np.complex128}


def dtype_of(precision: str) -> type[np.floating]:
    """The NumPy float type for a precision name, with a clear error otherwise."""
    try:
        return DTYPES[precision]
    except KeyError:
        raise ValueError(f"precision must be 'float32' or 'float64', got {precision!r}") from None


def _swap_x64(enabled: bool) -> object:
    cm = jax.enable_x64(enabled)
    cm.__enter__()
    return cm


def _restore_x64(token: object) -> None:
    token.__exit__(None, None, None)  # type: ignore[attr-defined]


#: ``swap_x64(enabled)`` sets JAX's x64 state for this thread and returns a
#: token; ``restore_x64(token)`` undoes it. Bound to the state's own methods,
#: not wrapped: each Python frame costs ~50 ns on a ~10 us prepared call.
swap_x64: Callable[[bool], object] = _X64_STATE.swap_local if _X64_STATE is not None else _swap_x64
restore_x64: Callable[[object], None] = (
    _X64_STATE.set_local if _X64_STATE is not None else _restore_x64
)


@contextlib.contextmanager
def precision_scope(precision: str) -> Iterator[None]:
    """Run a block with JAX at ``precision``, restoring the caller's state after."""
    dtype_of(precision)
    token = swap_x64(precision == "float64")
    try:
        yield
    finally:
        restore_x64(token)
