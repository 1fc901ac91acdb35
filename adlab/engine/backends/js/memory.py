"""backend "js"'s memory: the emitted program's own buffers, counted by its emitter.

The emitted program allocates its buffers once, when it is loaded, and every call
writes them all (``emit``; a buffer whose values are done with is taken again by a
later value of its size, ``reuse``, and counted once): so a call holds all of them at
once, plus the typed arrays its driver (``runtime.js``) makes per call: the Jacobian a
JVP per column or a VJP per row fills, the stencil's values of finite differences. That sum is
the peak; the arguments and the constants, held before the call, are not in it.
A reverse-mode program's tape is the buffers its forward equations write and its
backward ones read (``code.Buffers``). Nothing is asked of the runtime: the
figures are the same in Node and in the Lab's page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .code import ITEMSIZE

#: what the records say of the count
COUNTER = ("the emitted program's own buffers (Float64Array, 8 bytes a value; its "
           "arguments and constants not counted) and its driver's typed arrays per "
           "call")  # fmt: skip
#: ... and of the residuals
RESIDUALS = ("the emitted program's own buffers that its forward equations write and "
             "JAX's transposed equations read")  # fmt: skip


def driver_bytes(driver: dict[str, Any]) -> int:
    """The bytes of the typed arrays ``runtime.js``'s driver ``driver["kind"]`` makes in one
    call (its timed ``work``: "once" returns the program's own buffers, no copy)."""
    kind, n, m = driver["kind"], driver["n"], driver["m"]
    values = {
        "once": 0,
        "columns": n + m * n,  # the direction v, the Jacobian
        "rows": m + m * n,  # the cotangent c, the Jacobian
        # the slopes (and Richardson's estimate), the stencil's four values, f(x) (forward)
        "numeric": m * n * (2 if driver.get("scheme") == "richardson" else 1)
        + 4 * m
        + (m if driver.get("scheme") == "forward" else 0),
        "g9": n,  # the gradient
    }[kind]
    return values * ITEMSIZE


def measure(fn: Any, reverse: bool, call: Callable[[], Any]) -> dict[str, Any]:
    """The memory fields of the program ``fn`` (a ``JsFunction``) last ran: ``reverse``,
    whether the derivative has a reverse part (its residuals are counted); ``call()``
    calls it at the prepared inputs, made where it has not run yet."""
    if fn.last is None:
        call()
    loaded = fn.last
    buffers = loaded.buffers
    counter = COUNTER
    residual = None
    if reverse:
        residual = float(buffers.residual)
        counter = f"peak: {COUNTER}; residuals: {RESIDUALS}"
    return {"peak_bytes": float(buffers.held + driver_bytes(loaded.driver)),
            "residual_bytes": residual, "memory_counter": counter}  # fmt: skip
