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

Calls are told apart by a ``record_function`` range around each
(``MARK``): every operation is charged to the call whose range holds it, one
more call than asked for runs first and is left out (the first call of a trace
ran 2-3x slower), and an operation's time is its mean over the typical calls,
as on JAX (``profile.typical_shares``: one call caught by a load spike does not move
the figure). The calls' ranges give the typical call's wall time in the trace
(``Profile.*_traced_s``): the operations add up to at most it, the rest being
Python between them. torch.profiler records the thread that started it only;
an operation the calls run on another thread would not be seen, and one not
inside a range cannot be charged to a call: the profile refuses rather than
guess.

The calls measured outside the profiler (``Profile.primal_s``) can differ from
the profiled ones by far more than the profiler's overhead where the machine
is busy: PyTorch's intra-op threads (one per core) wait on each other at every
operation, so a call of ``mlp_batched``'s derivative at 200 inputs took 3 ms
with the other core idle and 80-90 ms with it busy, within one second.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from .profile import OpCost, typical_mean, typical_shares

#: the range each profiled call runs in
MARK = "adlab::profiled_call"


def torch_ops(fn: Callable, args: tuple, calls: int) -> tuple[list[OpCost], float]:
    """Each operation's CPU time per call over ``calls`` calls of ``fn(*args)``, longest first,
    and a typical call's wall seconds in the trace."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from ..engine.backends.torch.flops import flops_by_op

    flops = flops_by_op(lambda x: fn(x, *args[1:]), args[0])
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(calls + 1):
            with record_function(MARK):
                fn(*args)
    per_call, walls = _per_call(prof.events(), flops, calls + 1)
    per_call, walls = per_call[1:], walls[1:]  # the first call of a trace starts it up
    if not any(per_call):
        raise RuntimeError("torch.profiler recorded no operation of the calls")
    totals = [sum(times.values()) for times in per_call]
    out = [OpCost(name, us * 1e-6, flops.get(name, math.nan), math.nan)
           for name, us in typical_shares(per_call).items()]  # fmt: skip
    traced = typical_mean(walls, totals) * 1e-6
    return sorted(out, key=lambda op: op.time_s, reverse=True), traced


def _per_call(events, flops: dict[str, float],
              calls: int) -> tuple[list[dict[str, float]], list[float]]:  # fmt: skip
    """Microseconds per operation in each call, and each call's wall microseconds, in order."""
    marks = sorted((e for e in events if e.name == MARK), key=lambda e: e.time_range.start)
    if len(marks) != calls:
        raise RuntimeError(
            f"torch.profiler recorded {len(marks)} calls' ranges for {calls} calls: "
            "the calls cannot be told apart, so no time per call is given"
        )
    index = {id(mark): i for i, mark in enumerate(marks)}
    per_call: list[dict[str, float]] = [defaultdict(float) for _ in marks]
    for event in events:
        if event.name == MARK:
            continue
        call, counted = _ancestry(event, flops)
        if call is None or call not in index:
            raise RuntimeError(
                f"torch.profiler recorded {event.name} outside the calls' ranges; it cannot "
                "be charged to a call, so no time per call is given"
            )
        if counted:  # its time is its counted ancestor's
            continue
        us = event.cpu_time_total if event.name in flops else event.self_cpu_time_total
        per_call[index[call]][event.name] += us
    return per_call, [mark.cpu_time_total for mark in marks]


def _ancestry(event, flops: dict[str, float]) -> tuple[int | None, bool]:
    """The id of the call's range that holds ``event`` (None: none does), and whether an
    operation that ``flops`` counts holds it."""
    counted = False
    parent = event.cpu_parent
    while parent is not None:
        if parent.name == MARK:
            return id(parent), counted
        counted = counted or parent.name in flops
        parent = parent.cpu_parent
    return None, counted
