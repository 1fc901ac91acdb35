"""A caller's last word before a derivative is compiled: ``admitting(check)``.

How many evaluations of f a derivative takes (``f_evals``) is known only once its mode
has built it, inside ``prepare``; and on some frameworks compiling is running:
``torch.compile`` and ``tf.function`` compile on their first call, JavaScript's programs
load on theirs. A sweep that skips a point its budget cannot afford (22,041 passes of f
for forward mode on mlp_batched at n = 300) must say so before then, or the point it
skips runs once anyway and the next point waits behind it (issue 38). So within
``admitting(check)``, ``prepare`` calls ``check(f_evals)`` after building the derivative
and before compiling it; ``check`` raises to refuse, and nothing is compiled or run.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

_check: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "adlab_admission", default=None
)


@contextlib.contextmanager
def admitting(check: Callable[[int], None]) -> Iterator[None]:
    """Within: each derivative ``prepare`` builds is compiled only if ``check(f_evals)``
    returns (this thread's context: each of a sweep's compiling threads has its own)."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def admit(f_evals: int) -> None:
    """Ask the innermost ``admitting``'s check, if any; what it raises propagates."""
    check = _check.get()
    if check is not None:
        check(f_evals)
