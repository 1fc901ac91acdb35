"""The loops a model gets beside ``np``: ``fori_loop`` and ``scan``, as in ``jax.lax``.

``fori_loop(lower, upper, body, init)`` runs ``carry = body(i, carry)`` for i
in ``range(lower, upper)``; ``scan(body, init, xs)`` runs ``carry, y =
body(carry, x)`` over the leading axis of ``xs`` (or ``length`` times when
``xs`` is None) and returns ``(carry, ys)``, the ys stacked. On JAX they are
``lax.fori_loop`` and ``lax.scan``: the body is traced once, so compile time
does not grow with the number of steps, as it does when ``jit`` unrolls a
Python loop. Every other framework runs them as the plain Python loop they
mean, stacking with its own ``stack``.

Both take ``checkpoint=`` (keyword only), memory for time in reverse mode:

- ``False`` (the default): the backward pass reads what every step stored;
- ``True``: each step keeps only its carry (and x); its body is recomputed in the
  backward pass. It saves memory only where a step keeps more than its carry;
- ``"sqrt"``: Griewank's two levels: the T steps in about sqrt(T) segments of
  about sqrt(T) steps; only each segment's first carry is kept, and a segment's
  steps are recomputed, storing theirs, while the backward pass crosses it: about
  2 sqrt(T) carries held instead of T, for one more forward pass.

Each framework's own mechanism does it: ``jax.checkpoint`` on the body (``"sqrt"``:
an outer scan over the segments whose checkpointed body is an inner scan of a
segment, the remainder a segment of its own), on PyTorch the reentrant form
(``torch/remat.py``) per step or segment, ``tf.recompute_grad`` per step or segment. The
frameworks without one (autograd, NumPy, and JavaScript, whose programs adlab emits)
refuse ``True`` and ``"sqrt"`` at the model's line (``facts.checkpoint_refusal``).
``prepare(..., checkpoint=)`` sets the default of every loop that does not say
(``checkpoint.defaulting``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .base import tree_map
from .checkpoint import check_checkpoint, refuse, segment_size


def _leaves(tree: Any) -> list:
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [] if tree is None else [tree]


def _length(xs: Any, length: int | None) -> int:
    leaves = _leaves(xs)
    if not leaves:
        if length is None:
            raise ValueError("scan needs xs or length=: how many steps to take")
        return int(length)
    n = int(leaves[0].shape[0])
    if length is not None and int(length) != n:
        raise ValueError(f"scan got length={length} but xs has {n} rows")
    return n


def _stack_tree(items: list, stack: Callable) -> Any:
    """The list of per-step trees as one tree of stacked arrays."""
    first = items[0]
    if first is None:
        return None
    if isinstance(first, dict):
        return {k: _stack_tree([it[k] for it in items], stack) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_stack_tree([it[j] for it in items], stack) for j in range(len(first)))
    return stack(items)


def _chunks(steps: list, how: bool | str) -> Iterable[list]:
    """The steps in the pieces one recomputation covers: one step (True), ~sqrt(T) ("sqrt")."""
    size = 1 if how is True else segment_size(len(steps))
    return (steps[k : k + size] for k in range(0, len(steps), size))


def python_loops(stack: Callable, remat: Callable | None = None,
                 name: str = "numpy") -> dict[str, Callable]:  # fmt: skip
    """``fori_loop`` and ``scan`` as plain Python loops, ys stacked with ``stack``;
    ``remat(fn, carry)``: ``fn(carry)``, its inside recomputed in the backward pass
    (the framework's checkpoint); None: ``checkpoint=`` is refused, in ``name``'s words."""

    def looped(run: Callable, init: Any, steps: list, checkpoint: Any) -> tuple[Any, list]:
        """``run(carry, steps)`` -> (carry, ys), checkpointed as asked."""
        how = check_checkpoint(checkpoint)
        if not how:
            return run(init, steps)
        if remat is None:
            refuse(name, how)
        carry, ys = init, []
        for piece in _chunks(steps, how):
            carry, got = remat(lambda c, piece=piece: run(c, piece), carry)
            ys.extend(got)
        return carry, ys

    def fori_loop(lower: int, upper: int, body: Callable, init: Any, *,
                  checkpoint: bool | str = False) -> Any:  # fmt: skip
        def run(carry: Any, steps: list) -> tuple[Any, list]:
            for i in steps:
                carry = body(i, carry)
            return carry, []

        return looped(run, init, list(range(int(lower), int(upper))), checkpoint)[0]

    def scan(body: Callable, init: Any, xs: Any = None, length: int | None = None,
             reverse: bool = False, unroll: int = 1, *,
             checkpoint: bool | str = False) -> tuple[Any, Any]:  # fmt: skip
        # unroll: how many steps one compiled iteration does (JAX's); a Python loop runs
        # every step as written, so it has nothing to unroll
        n = _length(xs, length)

        def run(carry: Any, steps: list) -> tuple[Any, list]:
            ys = []
            for t in steps:
                carry, y = body(carry, None if xs is None else tree_map(lambda a: a[t], xs))  # noqa: B023
                ys.append(y)
            return carry, ys

        steps = list(range(n - 1, -1, -1) if reverse else range(n))
        carry, ys = looped(run, init, steps, checkpoint)
        if reverse:
            ys.reverse()
        return carry, (_stack_tree(ys, stack) if ys else None)

    return {"fori_loop": fori_loop, "scan": scan}


def jax_loops(name: str = "jax") -> dict[str, Callable]:
    """``fori_loop`` and ``scan`` as ``lax``'s, the initial carry promoted to the type
    the body returns: complex step makes a carry that starts as real data complex, and
    ``np.zeros(n)`` summing floats into an int ``0`` is the Python loop's meaning.
    ``name``: the backend they trace for (JavaScript's refuse ``checkpoint=``)."""
    import jax
    import jax.numpy as jnp

    from .jax.remat import checkpointed_scan

    def promoted(init: Any, out: Any) -> Any:
        def one(a, o):
            want = jnp.result_type(a, o.dtype)
            return a if getattr(a, "dtype", None) == want else jnp.asarray(a, dtype=want)

        return jax.tree_util.tree_map(one, init, out)

    def fori_loop(lower: int, upper: int, body: Callable, init: Any, *,
                  checkpoint: bool | str = False) -> Any:  # fmt: skip
        how = check_checkpoint(checkpoint)
        refuse(name, how)
        out = jax.eval_shape(lambda c: body(lower, c), init)
        init = promoted(init, out)
        if how == "sqrt":  # a scan over the counter, in segments: needs known bounds
            steps = jnp.arange(int(lower), int(upper))
            return scan(lambda c, i: (body(i, c), None), init, steps, checkpoint=how)[0]
        body = jax.checkpoint(body, prevent_cse=False) if how else body
        return jax.lax.fori_loop(lower, upper, body, init)

    def scan(body: Callable, init: Any, xs: Any = None, length: int | None = None,
             reverse: bool = False, unroll: int = 1, *,
             checkpoint: bool | str = False) -> tuple[Any, Any]:  # fmt: skip
        how = check_checkpoint(checkpoint)
        refuse(name, how)
        x0 = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype), xs)
        out = jax.eval_shape(lambda c, x: body(c, x)[0], init, x0)
        init = promoted(init, out)
        if how == "sqrt":
            return checkpointed_scan(body, init, xs, _length(xs, length), reverse, unroll)
        # inside a scan, CSE cannot merge the recomputation away: prevent_cse=False
        body = jax.checkpoint(body, prevent_cse=False) if how else body
        return jax.lax.scan(body, init, xs, length=length, reverse=reverse,
                            unroll=unroll)  # fmt: skip

    return {"fori_loop": fori_loop, "scan": scan}
