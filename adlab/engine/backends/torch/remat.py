"""``checkpoint=`` on PyTorch: a piece's first pass without a graph, recomputed with one.

A checkpointed piece (a step or a segment of ``_loops.python_loops``) runs under
``torch.no_grad``, keeping only its inputs, and is recomputed with a graph while the
backward pass crosses it (``_Piece``): the reentrant form of checkpointing. PyTorch's
own reentrant form (``checkpoint(use_reentrant=True)``) cannot serve: it returns
gradients only to ``.backward()``, not to ``torch.autograd.grad``, which reverse mode
uses, and only to the piece's arguments, not to what the body closes over (x, the
gates made from it). So the first pass also notes the tensors it reads that require
grad (``_Outside``): under ``no_grad`` nothing the piece makes does, so those come from
outside it, and they become the piece's inputs, whose gradients its backward returns.
The model's own ``grad(fn)`` inside the loop runs in both passes as it would without.

Why not the non-reentrant form (``use_reentrant=False``), which handles both: it
records the graph in the first pass too, and runs a hook per saved tensor in both
passes. On GradBench's lstm (4 layers, 1,024 characters; steps of tiny tensors, bound
by PyTorch's per-operation cost) it took 2.0-3.2x the time of no checkpointing (medians of
paired calls) against a goal of 2x; this form 0.9-1.3x (``benchmarks/README.md``, M3).

Inside ``torch.func``'s transforms and ``torch.compile`` the non-reentrant form still
runs (an ``autograd.Function`` of this kind is neither's): ``torch.func``'s grad, vjp
and jacrev turn its hooks off, so a reverse-mode Jacobian, the second-order modes and
the model's own ``grad(fn)`` around the loop or in forward mode are refused with the
reason rather than left to PyTorch's message. The models draw no random numbers, so
no RNG state is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.autograd.function import once_differentiable
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils.checkpoint import checkpoint

from ..checkpoint import NoCheckpointing

#: PyTorch's words when torch.func has turned saved-tensor hooks off
_HOOKS_OFF = "don't yet support saved tensor hooks"
WHY = ("PyTorch's checkpointing cannot run inside torch.func's grad, vjp or jacrev, which "
       "turn off its saved-tensor hooks and which a reverse-mode Jacobian, the second-order "
       "modes and, in forward mode or around the loop, the model's own grad(...) use: use "
       "backend='jax', or a scalar f's gradient (mode 'reverse') with no grad(...) around "
       "the loop, or checkpoint=False")  # fmt: skip


#: checkpointed pieces run so far: the memory counter learns from it that a loop was
#: checkpointed, and reads the profiler instead of its hooks (the non-reentrant form
#: holds the pieces' inputs out of their sight)
runs = 0


def remat(fn: Callable, carry: Any) -> Any:
    """``fn(carry)``, recomputed in the backward pass (``_loops.python_loops``)."""
    global runs
    runs += 1
    if not torch.is_grad_enabled():  # no backward pass will come
        return fn(carry)
    if _transformed() or torch.compiler.is_compiling():
        return _hooked(fn, carry)
    return _reentrant(fn, carry)


def _transformed() -> bool:
    """Whether a ``torch.func`` transform (grad, vjp, jvp, vmap...) is running."""
    peek = getattr(torch._C._functorch, "peek_interpreter_stack", None)  # private: may move
    return peek is not None and peek() is not None


def _hooked(fn: Callable, carry: Any) -> Any:
    try:
        return checkpoint(fn, carry, use_reentrant=False)
    except RuntimeError as exc:
        if _HOOKS_OFF in str(exc):
            raise NoCheckpointing(WHY) from exc
        raise


class _Outside(TorchFunctionMode):
    """Notes the tensors that operations read which require grad (run under no_grad:
    they come from outside the piece)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[int, torch.Tensor] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        for a in (*args, *kwargs.values()):
            for t in a if isinstance(a, (list, tuple)) else (a,):  # np.stack([...]) too
                if isinstance(t, torch.Tensor) and t.requires_grad:
                    self.found[id(t)] = t
        return func(*args, **kwargs)


def _reentrant(fn: Callable, carry: Any) -> Any:
    leaves, spec = tree_flatten(carry)
    held = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    with torch.no_grad(), _Outside() as seen:
        out = fn(carry)
    # a carry's tensor is found too when the body also closes over it (x, the first
    # carry, read again as x): the recomputation reads a detached copy as the carry
    outside = list(seen.found.values())
    inputs = [leaves[i] for i in held]
    if not outside and not any(t.requires_grad for t in inputs):
        return out  # nothing it reads has a gradient to take
    results, out_spec = tree_flatten(out)
    where = [i for i, r in enumerate(results) if isinstance(r, torch.Tensor)]
    piece = (fn, leaves, spec, held, len(inputs), [results[i] for i in where])
    graphed = _Piece.apply(piece, *inputs, *outside)
    for i, r in zip(where, graphed, strict=True):
        results[i] = r
    return tree_unflatten(results, out_spec)


class _Piece(torch.autograd.Function):
    """A piece's outputs, computed already without a graph, tied to its inputs (its
    carry's tensors, then what it read from outside); its backward recomputes it."""

    @staticmethod
    def forward(ctx, piece: tuple, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:  # noqa: ANN001
        fn, leaves, spec, held, k, outs = piece
        ctx.recompute = fn, leaves, spec, held, k
        ctx.save_for_backward(*inputs)
        # new tensor objects on the same storage: autograd marks its outputs as its own
        outs = tuple(o.detach() for o in outs)
        ctx.mark_non_differentiable(*(o for o in outs if not o.is_floating_point()))
        return outs

    @staticmethod
    @once_differentiable
    def backward(ctx, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: ANN001
        fn, leaves, spec, held, k = ctx.recompute
        inputs = ctx.saved_tensors
        carried = [t.detach().requires_grad_(t.requires_grad) for t in inputs[:k]]
        leaves = list(leaves)
        for i, t in zip(held, carried, strict=True):
            leaves[i] = t
        with torch.enable_grad():
            out = fn(tree_unflatten(leaves, spec))
        outs = [r for r in tree_flatten(out)[0] if isinstance(r, torch.Tensor)]
        pairs = [(o, g) for o, g in zip(outs, grads, strict=True)
                 if o.requires_grad and g is not None]  # fmt: skip
        wrt = [*carried, *inputs[k:]]
        wanted = [j for j, t in enumerate(wrt) if t.requires_grad]
        got = [None] * len(wrt)
        if pairs and wanted:
            found = torch.autograd.grad([o for o, _ in pairs], [wrt[j] for j in wanted],
                                        [g for _, g in pairs], allow_unused=True)  # fmt: skip
            for j, g in zip(wanted, found, strict=True):
                got[j] = g
        return (None, *got)
