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
from collections.abc import Iterator

import numpy as np

import jax

try:  # private, but it is exactly what ``jax.enable_x64`` does inside
    from jax._src.config import enable_x64 as _X64_STATE

    _X64_STATE.swap_local  # noqa: B018 - probe that the API is there
    _X64_STATE.set_local  # noqa: B018
except (ImportError, AttributeError):  # pragma: no cover - other JAX versions
    _X64_STATE = None

DTYPES = {"float32": np.float32, "float64": np.float64}
COMPLEX = {"float32": np.complex64, "float64": np.complex128}


def dtype_of(precision: str) -> type[np.floating]:
    """The NumPy float type for a precision name, with a clear error otherwise."""
    try:
        return DTYPES[precision]
    except KeyError:
        raise ValueError(
            f"precision must be 'float32' or 'float64', got {precision!r}"
        ) from None


def swap_x64(enabled: bool) -> object:
    """Set JAX's x64 state for this thread; return a token for ``restore_x64``."""
    if _X64_STATE is not None:
        return _X64_STATE.swap_local(enabled)
    cm = jax.enable_x64(enabled)  # pragma: no cover
    cm.__enter__()  # pragma: no cover
    return cm  # pragma: no cover


def restore_x64(token: object) -> None:
    """Undo one ``swap_x64``."""
    if _X64_STATE is not None:
        _X64_STATE.set_local(token)
    else:  # pragma: no cover
        token.__exit__(None, None, None)  # type: ignore[attr-defined]


@contextlib.contextmanager
def precision_scope(precision: str) -> Iterator[None]:
    """Run a block with JAX at ``precision``, restoring the caller's state after."""
    dtype_of(precision)
    token = swap_x64(precision == "float64")
    try:
        yield
    finally:
        restore_x64(token)
