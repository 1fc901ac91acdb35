"""PyTorch's memory counters: the saved tensors of its tape, and its profiler's memory.

The residuals are what autograd's graph saves for the backward pass, seen through
``torch.autograd.graph.saved_tensors_hooks`` during an eager forward pass and
counted by storage (a view and its base are one buffer); where ``torch.func.grad``
inside the forward pass refuses those hooks (reverse-over-reverse), what the profiler
sees still held after it, less its output; the same where a loop was checkpointed
(``checkpoint=``), whose pieces' inputs checkpoint keeps through hooks of its own,
which the outer ones do not see. The peak is the running
total of the allocations and frees ``torch.profiler`` records over one call (its
memory profile); on CUDA, the allocator's own ``max_memory_allocated``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .._startup import kineto_quiet
from . import remat

PROFILER_COUNTER = "torch.profiler's memory profile (allocations less frees)"
CUDA_COUNTER = "torch.cuda.max_memory_allocated"
SAVED_COUNTER = "saved_tensors_hooks, by storage (an eager forward pass)"
PROFILER_HELD = "torch.profiler's memory profile: held after the forward pass, less its output"


def _leaves(tree: Any) -> list:
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [tree]


def _storage(t: Any) -> tuple[int, int] | None:
    if not isinstance(t, torch.Tensor):
        return None
    try:
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()
    except RuntimeError:  # torch.func's wrapped tensors (a jvp's dual) have no storage of
        return id(t), t.numel() * t.element_size()  # their own: counted as themselves


def _profiled(run: Callable[[], Any]) -> tuple[Any, list[tuple[int, int]]]:
    """``run()``'s result and the (time, bytes) of its allocations (+) and frees (-)."""
    from torch.profiler import ProfilerActivity, profile

    with kineto_quiet(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = run()
    # the profiler's raw events: its summary (prof.events()) drops some allocations
    raw = getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if raw is not None:
        steps = sorted((e.start_ns(), e.nbytes()) for e in raw.events() if e.name() == "[memory]")
    else:  # pragma: no cover - another torch
        steps = sorted((e.time_range.start, e.cpu_memory_usage) for e in prof.events()
                       if e.name == "[memory]")  # fmt: skip
    return out, steps


def _profiled_peak(run: Callable[[], Any]) -> float:
    out, steps = _profiled(run)
    del out
    held = peak = 0
    for _, nbytes in steps:
        held += nbytes
        peak = max(peak, held)
    return float(peak)


def _profiled_held(run: Callable[[], Any]) -> float:
    """The bytes ``run()`` allocated and still holds while its result lives, less the
    result's own: where saved-tensor hooks cannot run (inside ``torch.func.grad``)."""
    out, steps = _profiled(run)
    own = sum(t.numel() * t.element_size() for t in _leaves(out) if isinstance(t, torch.Tensor))
    held = sum(nbytes for _, nbytes in steps) - own
    del out
    return float(max(held, 0))


def peak(call: Callable[[Any], Any], x: Any, device: Any) -> tuple[float, str]:
    if device is not None and getattr(device, "type", device) == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out = call(x)
        torch.cuda.synchronize()
        del out
        return float(torch.cuda.max_memory_allocated() - before), CUDA_COUNTER
    return _profiled_peak(lambda: call(x)), PROFILER_COUNTER


def residuals(f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> tuple[float, str]:
    args = list(inputs)
    for i in wrt:
        args[i] = args[i].detach().requires_grad_()
    own = {_storage(a) for a in _leaves(inputs)} - {None}
    saved: dict[int, int] = {}

    def pack(t: Any) -> Any:
        key = _storage(t)
        if key is not None and key not in own:
            saved[key[0]] = key[1]
        return t

    pieces = remat.runs
    try:
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = f(*args)
    except RuntimeError as exc:
        if "saved tensor hooks" not in str(exc):
            raise
        # torch.func.grad inside f refuses hooks: the graph's allocations still held
        with torch.enable_grad():
            return _profiled_held(lambda: f(*args)), PROFILER_HELD
    del out
    if remat.runs != pieces:  # checkpointed: its own hooks keep the pieces' inputs, unseen
        with torch.enable_grad():
            return _profiled_held(lambda: f(*args)), PROFILER_HELD
    return float(sum(saved.values())), SAVED_COUNTER
