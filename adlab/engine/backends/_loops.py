"""The loops a model gets beside ``np``: ``fori_loop`` and ``scan``, as in ``jax.lax``.

``fori_loop(lower, upper, body, init)`` runs ``carry = body(i, carry)`` for i
in ``range(lower, upper)``; ``scan(body, init, xs)`` runs ``carry, y =
body(carry, x)`` over the leading axis of ``xs`` (or ``length`` times when
``xs`` is None) and returns ``(carry, ys)``, the ys stacked. On JAX they are
``lax.fori_loop`` and ``lax.scan``: the body is traced once, so compile time
does not grow with the number of steps, as it does when ``jit`` unrolls a
Python loop. Every other framework runs them as the plain Python loop they
mean, stacking with its own ``stack``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import tree_map


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


def python_loops(stack: Callable) -> dict[str, Callable]:
    """``fori_loop`` and ``scan`` as plain Python loops, ys stacked with ``stack``."""

    def fori_loop(lower: int, upper: int, body: Callable, init: Any) -> Any:
        carry = init
        for i in range(int(lower), int(upper)):
            carry = body(i, carry)
        return carry

    def scan(body: Callable, init: Any, xs: Any = None, length: int | None = None,
             reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:  # fmt: skip
        # unroll: how many steps one compiled iteration does (JAX's); a Python loop runs
        # every step as written, so it has nothing to unroll
        n = _length(xs, length)
        carry, ys = init, []
        for t in range(n - 1, -1, -1) if reverse else range(n):
            carry, y = body(carry, None if xs is None else tree_map(lambda a: a[t], xs))  # noqa: B023
            ys.append(y)
        if reverse:
            ys.reverse()
        return carry, (_stack_tree(ys, stack) if ys else None)

    return {"fori_loop": fori_loop, "scan": scan}


def jax_loops() -> dict[str, Callable]:
    """``fori_loop`` and ``scan`` as ``lax``'s, the initial carry promoted to the type
    the body returns: complex step makes a carry that starts as real data complex, and
    ``np.zeros(n)`` summing floats into an int ``0`` is the Python loop's meaning."""
    import jax
    import jax.numpy as jnp

    def promoted(init: Any, out: Any) -> Any:
        def one(a, o):
            want = jnp.result_type(a, o.dtype)
            return a if getattr(a, "dtype", None) == want else jnp.asarray(a, dtype=want)

        return jax.tree_util.tree_map(one, init, out)

    def fori_loop(lower: int, upper: int, body: Callable, init: Any) -> Any:
        out = jax.eval_shape(lambda c: body(lower, c), init)
        return jax.lax.fori_loop(lower, upper, body, promoted(init, out))

    def scan(body: Callable, init: Any, xs: Any = None, length: int | None = None,
             reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:  # fmt: skip
        x0 = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype), xs)
        out = jax.eval_shape(lambda c, x: body(c, x)[0], init, x0)
        return jax.lax.scan(body, promoted(init, out), xs, length=length, reverse=reverse,
                            unroll=unroll)  # fmt: skip

    return {"fori_loop": fori_loop, "scan": scan}
