"""JAX's float64 reference for a derivative compared whole, and its check, as one program.

``crosscheck`` holds a derivative of at most ``CHECK_MAX`` entries to JAX's float64 one
(reverse mode; for a Hessian, forward-over-reverse), itself checked against central
differences or, where those disagree (a kink), against the other route through the same
rules (forward mode; reverse-over-reverse). Each of those used to be a ``prepare``d
program of its own, and their two compiles were most of what the first ``derivative()``
on PyTorch, TensorFlow or autograd paid for its check (issue 31). Here the reference and
its differences are one jitted program (``whole(..., "first")``); the other route, needed
only at a kink, is a second (``"other"``). The checks are the same, so ``trusted`` means
what it meant.

A check program runs once per model and shapes, so XLA compiles it at its lowest
optimization level (``FAST_COMPILE``): the large-derivative projections' program of
``mlp_batched`` (22,041 parameters) compiled in 0.5-0.9 s instead of 1.2-1.7 s (load 7 on
2 cores), to the same values within rounding: no level allows fast math, so the float64
arithmetic is IEEE's either way.

The differences are ``mode="numeric"``'s central ones: per entry, the default step
rounded to a distance x can move, divided by the distance as evaluated; a Hessian's are
differences of the gradient, symmetrized, as ``hessian(scheme="numeric")``'s.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .backends.jax.disk_cache import use_cache
from .model.precision import precision_scope
from .modes.numeric import default_step
from .programs import store as program_cache

#: XLA's options for a program that runs once: its compile is the cost (see above)
FAST_COMPILE = {"xla_backend_optimization_level": 0}
#: differences are taken this many points x entries at a time at most (as JAX's numeric
#: batches are), so that a long x does not hold 2n copies of f's work at once
CHUNK = 1 << 17
#: what a check program may hold as a constant, and be kept by
_PLAIN = (bool, int, float, complex, str, np.generic, type(None))


def whole(f: Callable, args: tuple, indices: tuple[int, ...], order: int, route: str,
          model: Any = None) -> tuple[np.ndarray, ...]:  # fmt: skip
    """JAX's float64 derivative of f (``args`` cast to float64 at ``indices``) as (m, n)
    arrays, J's columns the entries of the arguments at ``indices`` in turn (each raveled;
    ``order`` 2: f's Hessian, J of its gradient). ``route`` "first": (J by reverse mode
    (order 2: forward-over-reverse), J by central differences); "other": (J by forward
    mode (order 2: reverse-over-reverse),). ``model``: f's, to keep the compiled program
    in adlab's cache (``_run``)."""
    xs = tuple(args[i] for i in indices)
    others = [None if i in indices else a for i, a in enumerate(args)]
    leaves, tree = jax.tree_util.tree_flatten(others)
    taken = tuple(i for i, a in enumerate(leaves) if np.ndim(a) > 0)
    # scalars (a Python number, a 0-d array) are constants, as ``prepare`` holds small
    # ones: a model may read them as Python numbers
    held = tuple((i, type(a).__name__, a[()] if isinstance(a, np.ndarray) else a)
                 for i, a in enumerate(leaves) if np.ndim(a) == 0)  # fmt: skip
    shapes = tuple(np.shape(x) for x in xs)
    build = _kept_program if all(isinstance(a, _PLAIN) for _, _, a in held) else _new_program
    program = build(f, indices, shapes, route, order, tree, taken, held)
    use_cache()  # JAX's compilation cache on disk, as ``prepare`` turns it on
    inputs = (xs, [leaves[i] for i in taken])
    with precision_scope("float64"):
        if model is None:
            out = program(*inputs)
        else:
            options = dict(check=route, order=order, wrt=indices, held=held)
            with program_cache.identity(model, **options):
                out = _run(program, inputs)
    return tuple(np.asarray(o, dtype=np.float64) for o in out)


def _run(program: Callable, inputs: tuple) -> Any:
    """``program(*inputs)``, its compiled program loaded from adlab's cache of compiled
    programs where a run before kept it (``programs.store``: no tracing, no lowering; the
    check's whole cost on a warm cache was those, where ``prepare``'s programs were
    loaded), else compiled and kept there."""
    key = program_cache.key(inputs, set())
    hit = program_cache.load(key) if key else None
    if hit is not None:
        try:
            return hit.compiled(*inputs)
        except Exception:  # an entry that loads but does not run: compiled afresh instead
            program_cache.drop(key)
    if key is None:  # not kept (no source, or the cache off): JAX's own caches
        return program(*inputs)
    start = time.process_time()
    with program_cache.fresh(key) as storable:
        compiled = program.lower(*inputs).compile()
    if storable():
        program_cache.store(key, compiled, compile_s=time.process_time() - start,
                            biggest=(0, ""), xla={})  # fmt: skip
    return compiled(*inputs)


def as_value(jac: np.ndarray, args: tuple, indices: tuple[int, ...]) -> np.ndarray:
    """``jac`` (m, n) flat, in the order ``compare.flat`` reads a derivative: each argument's
    block (m, n_i), row by row, in turn."""
    sizes = np.cumsum([0] + [int(np.size(args[i])) for i in indices])
    bounds = zip(sizes[:-1], sizes[1:], strict=True)
    return np.concatenate([np.ravel(jac[:, a:b]) for a, b in bounds])


def _new_program(f: Callable, indices: tuple[int, ...], shapes: tuple, route: str, order: int,
                 tree: Any, taken: tuple[int, ...], held: tuple) -> Callable:  # fmt: skip
    """The program ``whole`` runs, jitted to compile fast."""
    return jax.jit(_program(f, indices, shapes, route, order, tree, taken, held),
                   compiler_options=FAST_COMPILE)  # fmt: skip


#: the last few programs, each holding its model's f (not its data): a derivative taken
#: in a loop is checked by the same program, not another compile
_kept_program = functools.lru_cache(maxsize=8)(_new_program)


def _program(f: Callable, indices: tuple[int, ...], shapes: tuple, route: str, order: int,
             tree: Any, taken: tuple[int, ...], held: tuple) -> Callable:  # fmt: skip
    """``program(xs, arrays)``: see ``whole``. arrays and held: the leaves of f's other
    arguments (arrays and constants)."""
    sizes = [int(np.prod(s, dtype=int)) for s in shapes]
    starts = np.cumsum([0, *sizes])

    def program(xs: tuple, arrays: list) -> tuple:
        leaves = dict(zip(taken, arrays, strict=True))
        leaves.update((i, a) for i, _, a in held)
        args = jax.tree_util.tree_unflatten(tree, [leaves[i] for i in range(len(leaves))])

        def of(*moved: Any) -> Any:  # f of the differentiated arguments
            full = list(args)
            for i, x in zip(indices, moved, strict=True):
                full[i] = x
            return f(*full)

        def along(z: Any) -> Any:  # f's output, flat (order 2: its gradient), of flat x
            bounds = zip(starts[:-1], starts[1:], shapes, strict=True)
            moved = [jnp.reshape(z[a:b], s) for a, b, s in bounds]
            if order == 1:
                return jnp.ravel(of(*moved))
            scalar = lambda *m: jnp.reshape(of(*m), ())  # noqa: E731
            grads = jax.grad(scalar, argnums=tuple(range(len(moved))))(*moved)
            return jnp.concatenate([jnp.ravel(g) for g in grads])

        z = jnp.concatenate([jnp.ravel(x) for x in xs])
        if route == "other":
            return ((jax.jacfwd if order == 1 else jax.jacrev)(along)(z),)
        ref = (jax.jacrev if order == 1 else jax.jacfwd)(along)(z)
        return ref, _differences(along, z, symmetric=order == 2)

    return program


def _differences(along: Callable, z: Any, symmetric: bool) -> Any:
    """``along``'s Jacobian (m, n) at z by central differences, column by column (see the
    module's docstring)."""
    n = z.size
    ahead = z + default_step(z, "central", np.float64, jnp)
    behind = z - (ahead - z)  # the step as x can take it: symmetric points
    apart = ahead - behind

    def column(j: Any) -> Any:
        moved = jnp.arange(n) == j
        return (along(jnp.where(moved, ahead, z)) - along(jnp.where(moved, behind, z))) / apart[j]

    batch = max(1, CHUNK // (2 * n))
    if batch >= n:  # at once (a loop of one trip would compile for nothing)
        cols = jax.vmap(column)(jnp.arange(n))
    else:
        cols = jax.lax.map(column, jnp.arange(n), batch_size=batch)
    jac = cols.T  # (m, n)
    return (jac + jac.T) / 2 if symmetric else jac


__all__ = ["FAST_COMPILE", "as_value", "whole"]
