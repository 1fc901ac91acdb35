"""PyTorch's flop count: ``torch.utils.flop_counter.FlopCounterMode`` over one eager call.

``FlopCounterMode`` counts from shapes, and only the operations it has a
formula for: matrix products (``mm``, ``addmm``, ``bmm``, ``baddbmm``),
convolutions and attention; "unsupported operations contribute zero FLOPs"
(its docstring). Elementwise work (``tanh``, ``exp``, ``+``) and reductions
add nothing. adlab adds the two products NumPy code writes most and PyTorch
leaves out, matrix-vector (``A @ x``: ``mv``, 2 m n) and dot (``np.dot(x, y)``:
``dot``, 2 n), at the same 2 flops per multiply-add as ``mm``.

XLA's cost analysis (JAX) counts every operation, so a PyTorch count and a JAX
count are different measures: a record says which counter gave its number
(``Record.flops_counter``), and a flops ratio compares counts of one counter.
The count is of the eager computation, also under ``torch.compile``: the
products it does are the same, and a dispatch mode does not see inside a
compiled graph.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

#: seconds a count may take before it is given up (None). A dispatch mode makes every
#: operation a Python call: a per-sample Python loop (mlp_per_sample, 100 samples, a
#: 0.2-0.3 s gradient) took 1.7 s to count, and 8-20 s at 100-1000 samples on a
#: loaded machine; its batched form about as long as a call
LIMIT_S = 2.0
#: what a record's ``flops_counter`` says for a PyTorch count
COUNTER = "torch FlopCounterMode: matrix products, convolutions and attention only"
#: what it says where the call has none of those: no count, not a count of zero
NOT_COUNTED = (
    "torch FlopCounterMode: not counted (it counts matrix products, convolutions "
    "and attention only, and this call has none)"
)


def _mv_flop(a_shape: tuple, b_shape: tuple, *args: Any, out_shape: Any = None,
             **kwargs: Any) -> int:  # fmt: skip
    """A matrix-vector product, (m, k) @ (k,): m * k multiply-adds."""
    m, k = a_shape
    return 2 * m * k


def _dot_flop(a_shape: tuple, b_shape: tuple, *args: Any, out_shape: Any = None,
              **kwargs: Any) -> int:  # fmt: skip
    """A dot product of two (k,) vectors: k multiply-adds."""
    return 2 * a_shape[0]


_EXTRA = {torch.ops.aten.mv: _mv_flop, torch.ops.aten.dot: _dot_flop,
          torch.ops.aten.vdot: _dot_flop}  # fmt: skip


def count_flops(call: Callable[[Any], Any], x: Any,
                limit_s: float | None = LIMIT_S) -> dict[str, Any] | None:  # fmt: skip
    """``call(x)`` run once under ``FlopCounterMode``: {"flops", "counter"}, or None
    where the call fails or the count runs past ``limit_s`` (the count is a side
    note: the call's own failure is reported where it is made, with the model's line).

    A call with no operation the counter knows has ``flops`` None and the counter
    ``NOT_COUNTED``: its zero would read as "free" beside XLA's counts.
    """
    try:
        by_op = flops_by_op(call, x, limit_s)
    except Exception:
        return None
    if not by_op:
        return {"flops": None, "counter": NOT_COUNTED}
    return {"flops": float(sum(by_op.values())), "counter": COUNTER}


def flops_by_op(call: Callable[[Any], Any], x: Any,
                limit_s: float | None = None) -> dict[str, float]:  # fmt: skip
    """``call(x)``'s flops per operation, named as ``torch.profiler`` names it
    (``aten::mm``); only the operations counted (see the module docstring).

    Raises:
        TimeoutError: the count ran past ``limit_s`` seconds (given up mid-call).
    """
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False, custom_mapping=_EXTRA) as counter:
        if limit_s is None:
            call(x)
        else:
            with _Deadline(limit_s):
                call(x)
    counts = counter.get_flop_counts().get("Global", {})
    return {str(op).replace(".", "::", 1): float(n) for op, n in counts.items()}


class _Deadline(TorchDispatchMode):
    """Raises ``TimeoutError`` at the first operation more than ``limit_s`` after the
    first one (entering the first dispatch mode of a process takes seconds of its own)."""

    def __init__(self, limit_s: float) -> None:
        super().__init__()
        self.limit_s = limit_s
        self.deadline: float | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        now = time.perf_counter()
        if self.deadline is None:
            self.deadline = now + self.limit_s
        elif now > self.deadline:
            raise TimeoutError("FlopCounterMode's count ran past its time limit")
        return func(*args, **(kwargs or {}))
