"""``checkpoint=`` on PyTorch: ``torch.utils.checkpoint``, non-reentrant, per step or segment.

Non-reentrant checkpointing (``use_reentrant=False``) keeps only a piece's inputs
and recomputes its inside while the backward pass crosses it, through saved-tensor
hooks, so gradients reach what the body closes over (x, the data) as they do
without it. ``torch.func``'s grad, vjp and jacrev turn saved-tensor hooks off:
a reverse-mode Jacobian, the second-order modes and the model's own ``grad(fn)``
run there, and are refused with the reason rather than left to PyTorch's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.utils.checkpoint import checkpoint

from ..checkpoint import NoCheckpointing

#: PyTorch's words when torch.func has turned saved-tensor hooks off
_HOOKS_OFF = "don't yet support saved tensor hooks"
WHY = ("PyTorch's checkpointing (torch.utils.checkpoint's saved-tensor hooks) cannot "
       "run inside torch.func's grad, vjp or jacrev, which a reverse-mode Jacobian, the "
       "second-order modes and the model's own grad(...) use: use backend='jax', or a "
       "scalar f's gradient (mode 'reverse') without grad(...) in the loop, or "
       "checkpoint=False")  # fmt: skip


#: checkpointed pieces run so far: the memory counter learns from it that what the
#: backward pass will read is partly held by checkpoint itself, out of its hooks' sight
runs = 0


def remat(fn: Callable, carry: Any) -> Any:
    """``fn(carry)``, recomputed in the backward pass (``_loops.python_loops``)."""
    global runs
    runs += 1
    try:
        return checkpoint(fn, carry, use_reentrant=False)
    except RuntimeError as exc:
        if _HOOKS_OFF in str(exc):
            raise NoCheckpointing(WHY) from exc
        raise
