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

from collections.abc import Callable
from typing import Any

import torch

#: what a record's ``flops_counter`` says for a PyTorch count
COUNTER = "torch FlopCounterMode: matrix products, convolutions and attention only"


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


def count_flops(call: Callable[[Any], Any], x: Any) -> dict[str, Any] | None:
    """``call(x)`` run once under ``FlopCounterMode``: {"flops", "counter"}, or None
    where the call fails (the count is a side note: the call's own failure is
    reported where it is made, with the model's line)."""
    try:
        by_op = flops_by_op(call, x)
    except Exception:
        return None
    return {"flops": float(sum(by_op.values())), "counter": COUNTER}


def flops_by_op(call: Callable[[Any], Any], x: Any) -> dict[str, float]:
    """``call(x)``'s flops per operation, named as ``torch.profiler`` names it
    (``aten::mm``); only the operations counted (see the module docstring)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False, custom_mapping=_EXTRA) as counter:
        call(x)
    counts = counter.get_flop_counts().get("Global", {})
    return {str(op).replace(".", "::", 1): float(n) for op, n in counts.items()}
