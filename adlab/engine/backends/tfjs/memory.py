"""backend "tfjs"'s memory: TF.js's own counters, read where the program runs.

One call of the program's driver is measured in its runtime (Node, or the Lab's page;
``runtime_tfjs.js``'s ``measure``), at the inputs its last call sent, as its timer
times it: the peak is ``tf.profile``'s ``peakBytes`` less ``tf.memory().numBytes``
before the call; the residuals of reverse mode are the tensors TF.js's tape saved in
the forward pass of ``tf.grad``, read off the tape as the backward pass starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..js.node import JsError

#: what the records say of the peak
PEAK = ("tf.profile's peakBytes less tf.memory().numBytes before the call (TF.js's count "
        "of its live tensors' bytes, a reshape or clone sharing a buffer counted "
        "again)")  # fmt: skip
#: ... and of the residuals
RESIDUALS = ("the tensors TF.js's tape saved in tf.grad's forward pass for the backward "
             "pass (its kernels' inputsToSave/outputsToSave), each data buffer once, "
             "f's arguments and the program's constants not counted")  # fmt: skip

#: the drivers that run tf.grad (``program.DRIVERS``): those with a tape
TAPED = ("tfjs_grad", "tfjs_rows")


def measure(fn: Any, reverse: bool, call: Callable[[], Any]) -> dict[str, Any]:
    """The memory fields of the program ``fn`` (a ``TfjsFunction``) last ran, measured in
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
        taped = reverse and loaded.driver["kind"] in TAPED
        try:
            got = loaded.ask({"op": "memory", "id": loaded.id, "reverse": taped})
            break
        except JsError as exc:
            if exc.kind == "lost" and attempt == 0:
                continue
            raise RuntimeError(f"measuring the TF.js program's memory failed: {exc}") from None
    residual = got.get("residual_bytes")
    counter = f"peak: {PEAK}; residuals: {RESIDUALS}" if taped else PEAK
    return {"peak_bytes": float(got["peak_bytes"]),
            "residual_bytes": None if residual is None else float(residual),
            "memory_counter": counter}  # fmt: skip
