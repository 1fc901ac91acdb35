"""backend "jaxjs"'s memory: jax-js's own count of its buffers, read where the program runs.

jax-js keeps each buffer in a slot of its backend, with a reference count, through the
three calls of its Backend interface (``malloc``, ``incRef``, ``decRef``); the bundle
watches those calls (``js/jaxjs/src/memory.js``), so the live slots and bytes are jax-js's
own figure. One call of the program's driver is measured in its runtime (Node, or the
Lab's page; ``runtime_jaxjs.js``'s ``measure``), at the inputs its last call sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..js.node import JsError

#: what the records say of the peak
PEAK = ("jax-js's own count of its buffers (its backend's slots, each buffer once): the "
        "most bytes held during the call less those held before")  # fmt: skip
#: ... and of the residuals
RESIDUALS = ("the bytes jax-js's vjp, run eagerly, holds once it has run f's forward pass "
             "(x, f's other arguments, the constants and f's value not counted; under jit "
             "the fused program keeps what it keeps inside its kernels)")  # fmt: skip
#: the drivers whose derivative has a reverse part (``program.DRIVERS``)
REVERSE = ("jaxjs_grad", "jaxjs_rows")


def measure(fn: Any, reverse: bool, call: Callable[[], Any]) -> dict[str, Any]:
    """The memory fields of the program ``fn`` (a ``JaxjsFunction``) last ran, measured in
    its runtime: ``reverse``, whether the derivative has a reverse part; ``call()`` calls
    it at the prepared inputs (made first where it has not run, or its runtime restarted
    since and lost it: the call loads it again).

    Raises:
        NodeCrashed: Node ended or stopped answering (PageLost: the Lab's page did).
        RuntimeError: the runtime failed to measure it.
    """
    for attempt in (0, 1):
        if fn.last is None or attempt:
            call()
        loaded = fn.last
        taped = reverse and loaded.driver["kind"] in REVERSE
        try:
            got = loaded.ask({"op": "memory", "id": loaded.id, "reverse": taped})
            break
        except JsError as exc:
            if exc.kind == "lost" and attempt == 0:
                continue
            raise RuntimeError(f"measuring the jax-js program's memory failed: {exc}") from None
    residual = got.get("residual_bytes")
    counter = f"peak: {PEAK}; residuals: {RESIDUALS}" if taped else PEAK
    return {"peak_bytes": float(got["peak_bytes"]),
            "residual_bytes": None if residual is None else float(residual),
            "memory_counter": counter}  # fmt: skip
