"""``adlab.profile`` on PyTorch: ``torch.profiler``'s CPU time per operation, eagerly.

Each operation the calls run (``aten::mm``, ``aten::tanh``, the autograd
engine's nodes such as ``MmBackward0``) gets its self CPU time, the time in it
and not in the operations it calls, so the times add up to the calls' time in
PyTorch with nothing counted twice. An operation that ``FlopCounterMode``
counts keeps the time of the operations it calls (``aten::mv`` runs as
``aten::addmv_``), so its flops and its time are of the same work.

Flops are ``FlopCounterMode``'s (``engine.backends.torch.flops``): matrix
products only. Every other operation's flops are NaN, not counted (a tanh
does arithmetic that no counter here sees), so it never reads as "slow" for
want of flops. PyTorch does not count the bytes an operation reads and
writes: ``bytes`` is NaN.

Times are per call, summed over the profiled calls and divided by their
number (the profiler's calls run a little slower than unprofiled ones: the
derivative of ``mlp_batched`` at 1000 inputs, 10 calls, operations summed to
0.94-1.2x the call measured outside the profiler on a loaded machine).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from .profile import OpCost


def torch_ops(fn: Callable, args: tuple, calls: int) -> list[OpCost]:
    """Each operation's CPU time per call over ``calls`` calls of ``fn(*args)``, longest first."""
    from torch.profiler import ProfilerActivity, profile

    from ..engine.backends.torch.flops import flops_by_op

    flops = flops_by_op(lambda x: fn(x, *args[1:]), args[0])
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            fn(*args)
    times: dict[str, float] = defaultdict(float)
    for event in prof.events():
        if _inside_counted(event, flops):  # its time is its counted ancestor's
            continue
        us = event.cpu_time_total if event.name in flops else event.self_cpu_time_total
        times[event.name] += us * 1e-6 / calls
    if not times:
        raise RuntimeError("torch.profiler recorded no operation of the calls")
    out = [OpCost(name, t, flops.get(name, math.nan), math.nan) for name, t in times.items()]
    return sorted(out, key=lambda op: op.time_s, reverse=True)


def _inside_counted(event, flops: dict[str, float]) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in flops:
            return True
        parent = parent.cpu_parent
    return False
