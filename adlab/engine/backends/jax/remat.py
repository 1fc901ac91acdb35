"""``scan(..., checkpoint="sqrt")`` on JAX: Griewank's two levels as nested scans.

The T steps are split into m = T // k segments of k = ceil(sqrt(T)) steps and a
remainder of r = T - m k < k. An outer ``lax.scan`` runs over the m segments; its
body, under ``jax.checkpoint``, is an inner ``lax.scan`` of k steps, so reverse mode
keeps only the m carries that enter a segment (and the segment's xs, f's own), and
recomputes a segment's steps, storing theirs, while its backward pass crosses it.
The remainder is one more checkpointed segment. The ys are stacked as the plain scan
stacks them; ``reverse`` runs the segments, and the steps in each, from the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from ..checkpoint import segment_size


def checkpointed_scan(body: Callable, init: Any, xs: Any, n: int, reverse: bool,
                      unroll: int) -> tuple[Any, Any]:  # fmt: skip
    """``lax.scan(body, init, xs, length=n, reverse=reverse, unroll=unroll)``, its
    steps recomputed a segment at a time in the backward pass (see the module)."""
    k = segment_size(n)
    m, r = divmod(n, k)
    tree = jax.tree_util.tree_map

    def inner(steps: int, remat_in_scan: bool) -> Callable:
        def segment(carry: Any, xseg: Any) -> tuple[Any, Any]:
            return jax.lax.scan(body, carry, xseg, length=steps, reverse=reverse,
                                unroll=unroll)  # fmt: skip

        # inside the outer scan CSE cannot merge the recomputation away (prevent_cse
        # only costs there); the remainder, outside any loop, keeps JAX's default
        return jax.checkpoint(segment, prevent_cse=not remat_in_scan)

    def main(carry: Any) -> tuple[Any, Any]:
        xmain = tree(lambda a: a[: m * k].reshape((m, k, *a.shape[1:])), xs)
        carry, ys = jax.lax.scan(inner(k, True), carry, xmain, length=m, reverse=reverse)
        return carry, tree(lambda y: y.reshape((m * k, *y.shape[2:])), ys)

    def rest(carry: Any) -> tuple[Any, Any]:
        return inner(r, False)(carry, tree(lambda a: a[m * k :], xs))

    if r == 0:
        return main(init)
    if reverse:  # the last steps first: the remainder, then the segments
        carry, ys_rest = rest(init)
        carry, ys_main = main(carry)
    else:
        carry, ys_main = main(init)
        carry, ys_rest = rest(carry)
    return carry, tree(lambda a, b: jnp.concatenate([a, b]), ys_main, ys_rest)
