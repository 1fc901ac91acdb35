"""JAX: tracing plus XLA. Jitted by default, as its users run it.

``np`` is ``jax.numpy`` itself. Reverse mode is ``jax.grad`` / ``jax.jacrev``,
forward mode ``jax.jacfwd``; perturbed points are evaluated by ``jax.vmap``
(``batch``); ``jit`` is ``jax.jit``, and the call path (``call``)
calls the compiled program's own C++ call. Precision is JAX's x64 state, set
per call (``adlab.engine.model.precision``), never globally.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...model.precision import precision_scope
from .. import _loops, _namespace, _numpy_meaning, special
from ..base import Backend, NotAnArray, Program
from . import batch as _jax_batch
from . import call as _jax_call
from . import forward as jax_forward
from . import memory as _jax_memory


def _map(fn: Callable, xs: Any) -> Any:
    return jax.lax.map(fn, xs)


def _vmap(fn: Callable, xs: Any) -> Any:
    return jax.vmap(fn)(xs)


def _eval_shape(f: Callable, args: tuple) -> Any:
    """``jax.eval_shape(f, *args)``; a return value that is not an array or a
    pytree of them comes back as ``NotAnArray``, so it gets the model's error."""
    bad: list[NotAnArray] = []

    def probe(*a):
        out = f(*a)
        leaves = jax.tree_util.tree_leaves(out)
        if not leaves or not all(hasattr(v, "dtype") or isinstance(v, (int, float))
                                 for v in leaves):  # fmt: skip
            bad.append(NotAnArray(out))
            return None
        return out

    out = jax.eval_shape(probe, *args)
    return bad[0] if bad else out


@functools.cache
def _np() -> Any:
    """``jax.numpy``, but ``std`` (jnp's forward mode pushes 0 * (1 / 0) = NaN through
    its square root where the values are all equal) and ``take`` (jnp's refuses a list
    of indices): ``_numpy_meaning``."""
    return _numpy_meaning.install(_namespace.build("jax", jnp), ("std", "take"))


class JaxBackend(Backend):
    name = "jax"
    xla_costs = True
    chunked_forward = True  # forward mode's tangents in chunks that fit (forward.py)
    xp = jnp

    def environment(self) -> dict[str, Any]:
        dev = jax.devices()[0]
        return {"version": jax.__version__, "device": dev.platform}

    # map_samples: one sample at a time (a compiled loop); vmap_samples: jax.vmap;
    # fori_loop and scan: lax's
    def namespace(self, precision: str) -> dict[str, Any]:
        np = _np()
        return {"np": np, "map_samples": _map, "vmap_samples": _vmap, **_LOOPS,
                **special.special_functions("jax", np)}  # fmt: skip

    def convert(self, args: tuple, precision: str) -> tuple:
        """On the device, as a training loop holds them: calls copy nothing from the host."""
        with precision_scope(precision):  # float64 stays float64 on the device
            put = jax.tree_util.tree_map(
                lambda a: jax.device_put(a) if isinstance(a, (np.ndarray, np.generic)) else a,
                args,
            )
        return tuple(put)

    def to_numpy(self, tree: Any) -> Any:
        # NumPy arrays, not jax.Arrays: a float64 jax.Array used outside adlab's
        # precision scope is silently truncated to float32 by later jnp calls.
        return jax.tree_util.tree_map(np.asarray, tree)

    def complex(self, x: Any, dtype: Any) -> Any:
        return x.astype(dtype)

    def probe(self, f: Callable, args: tuple, inputs: tuple, jit: bool, guard: Callable) -> Any:
        """Jitted: f's abstract output (nothing runs); eagerly: f itself, which may
        hold Python control flow that cannot be traced."""
        if jit:
            return guard(lambda: _eval_shape(f, args), True)
        return guard(lambda: f(*args), False)

    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        return jax.grad(f, argnums=wrt)

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        return jax_forward.jacfwd(f, wrt) if forward else jax.jacrev(f, argnums=wrt)

    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        return jax.jvp(f, (x,), (v,))

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        y, pull = jax.vjp(f, x)
        return y, pull(w)[0]

    def n_chunks(self, k: int, n: int) -> int:
        return _jax_batch.n_chunks(k, n)

    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        """One vmapped batch (``_jax_batch.jax_batch``); in chunks unless ``flat``."""
        n = blocks[0].shape[0]
        cols = np.tile(np.arange(n), len(blocks))  # row r perturbs coordinate r mod n
        chunk = None if flat else _jax_batch.CHUNK
        coords = blocks[0] if len(blocks) == 1 else jnp.concatenate(blocks)
        return _jax_batch.jax_batch(f, args, i, cols, coords, chunk=chunk)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        return _jax_call.program(built, inputs, args, jit=jit, precision=precision, guard=guard)

    def peak(self, call: Callable, x: Any, compiled: Any) -> tuple[float | None, str]:
        return _jax_memory.peak(call, x, compiled)

    def residuals(self, f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> tuple[float, str]:
        return _jax_memory.residuals(f, inputs, wrt)

    def general(self, fn: Callable, jit: bool) -> Callable:
        """A program that takes every argument (compiled once, on its first call)."""
        return _jax_call.all_passed(fn, jit=jit)

    def rebinding(self, general: Callable, inputs: tuple, precision: str,
                  jit: bool) -> Callable | None:  # fmt: skip
        return _jax_call.rebinding(general, inputs, precision) if jit else None

    def rebind(self, general: Callable, inputs: tuple, precision: str) -> Callable:
        return _jax_call.in_precision(functools.partial(general, *inputs[1:]),
                                      precision == "float64")  # fmt: skip


_LOOPS = _loops.jax_loops()
BACKEND = JaxBackend()
