"""How a sparse derivative's passes run: one per color, batched, in turn or written out.

``adlab.engine.sparse`` builds the passes (JVPs, VJPs or HVPs, one per color) and
the read of the nonzeros from their results; here they are run all at once
(``jax.vmap``), in chunks one after another (``lax.map``), or written out one by
one in the program, whichever a few timed calls find faster (``faster``), and
compiled as two programs, the passes and the read (``Program``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..backends.jax.forward import column_bytes
from ..model.precision import precision_scope
from ..programs import memory
from ..programs.jaxpr import equations


def seeds(colors: np.ndarray, start: Any, width: int, dtype: Any) -> jax.Array:
    """(width, len(colors)): row k sums the unit vectors of color start + k (past the
    last color: zeros)."""
    return (jnp.asarray(colors)[None, :] == start + jnp.arange(width)[:, None]).astype(dtype)


def pass_bytes(fx: Any, xf: Any) -> float:
    """Bytes one pass (one color) holds: a tangent or cotangent of each of f's values, at
    most (their sum; XLA frees some early). f's largest value alone undercounts a VJP:
    ba's 1,300 colors in chunks sized so took 9 GB, not the 2.5 GB budgeted."""
    jaxpr = jax.make_jaxpr(fx)(jax.ShapeDtypeStruct(xf.shape, xf.dtype)).jaxpr
    held = sum(math.prod(v.aval.shape) * np.dtype(v.aval.dtype).itemsize
               for eqn in equations(jaxpr) for v in eqn.outvars
               if hasattr(v.aval, "shape") and np.issubdtype(v.aval.dtype, np.inexact))  # fmt: skip
    return max(held, column_bytes(fx, xf))


#: ``width`` of the passes written out one by one in the program, each result returned
#: as it is (a tuple) and read by a second program (``Program``)
WRITTEN_OUT = 0
#: the most colors written out so: each is its own copy of the pass in the program
WRITTEN_OUT_MAX = 8


def by_color(one: Any, colors: np.ndarray, count: int, dtype: Any, bytes_per: float,
              width: int | None) -> Any:  # fmt: skip
    """(count, ...): ``one(seed)`` for each color's seed, batched by ``jax.vmap``; in
    chunks of ``width`` colors (None: all), one chunk after another (``lax.map``), and
    smaller where all at once would not fit (a row coloring of ba takes ~1,300 colors,
    each pass holding f's intermediates). ``WRITTEN_OUT``: a tuple, each color's
    result as ``one`` returns it, its pass written out in the program."""
    if width == WRITTEN_OUT:
        return tuple(one(seeds(colors, k, 1, dtype)[0]) for k in range(count))
    width = min(memory.chunk_columns(count, bytes_per), width or count)
    if width >= count:
        return jax.vmap(one)(seeds(colors, 0, count, dtype))
    trips = math.ceil(count / width)
    out = jax.lax.map(lambda start: jax.vmap(one)(seeds(colors, start, width, dtype)),
                      jnp.arange(trips) * width)  # fmt: skip
    return out.reshape((trips * width, *out.shape[2:]))[:count]


def _index(positions: np.ndarray) -> np.ndarray:
    """Constant gather indices, int32 where they fit (JAX at float32 has no int64)."""
    return positions.astype(np.int32 if positions.max(initial=0) < 2**31 else np.int64)


def _flat(out: Any) -> Any:
    """The passes' results as one vector: stacked colors, or a written-out tuple."""
    if isinstance(out, tuple):
        return jnp.concatenate([jnp.ravel(leaf) for leaf in jax.tree_util.tree_leaves(out)])
    return out.ravel()


def reader(a: np.ndarray, b: np.ndarray, to: Any = None, nnz: int = 0) -> Any:
    """The read of the passes' results: each nonzero is entry (a, b) (color, position in
    a color's result), as one flat gather (the indices are in range by construction,
    so no bounds mask); each then added into its J_f nonzero ``to`` where several go
    to one."""

    def read(out: Any) -> Any:
        if isinstance(out, tuple):
            per = sum(leaf.size for leaf in jax.tree_util.tree_leaves(out[0]))
        else:
            per = out.shape[1]
        values = jnp.take(_flat(out), _index(a.astype(np.int64) * per + b), mode="clip")
        if to is None:
            return values
        return jax.ops.segment_sum(values, to, num_segments=nnz, indices_are_sorted=True)

    return read


class Program:
    """A prepared derivative's passes (a ``Prepared``), then, where given, the read of
    their results by a second jitted program: ``p(x)`` is ``read(passes(x))``.

    The ways that run the passes one after another read apart, because XLA on a CPU
    ran the read slower inside their program: ba1's reverse Jacobian (2 VJPs by
    ``lax.map``, 923,447 nonzeros) took 50 ms with its gather inside and 27 ms apart,
    the gather itself ~1 ms; its forward one (14 JVPs) 138 and 77 ms (pinned to one
    core, medians of 15-50 interleaved calls). Batched passes, the way small
    derivatives take (``faster`` tunes only calls over ``TUNE_MIN_S``), read inside: a
    second program cost them more than it saved (bvp_residual at n=12: 15 -> 27 us,
    ba at n=400: 0.5 -> 0.75 ms).
    """

    def __init__(self, passes: Any, compute: Any, read: Any, precision: str,
                 width: int | None) -> None:  # fmt: skip
        self.passes = passes
        self.written_out = width == WRITTEN_OUT
        self.compile_s = passes.compile_s
        self._read = None if read is None else jax.jit(read)
        self._precision = precision
        if read is None:
            return
        start = time.perf_counter()
        with precision_scope(precision):  # compiled for the passes' results (traced only)
            shapes = jax.eval_shape(compute, *passes.inputs)
            zeros = jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
            jax.block_until_ready(self._read(zeros))
        self.compile_s += time.perf_counter() - start

    @property
    def inputs(self) -> tuple:
        return self.passes.inputs

    def __call__(self, x: Any, *args: Any) -> Any:
        if self._read is None:
            return self.passes(x, *args)
        with precision_scope(self._precision):
            return self._read(self.passes(x, *args))


#: the compressed derivative is tuned only where a call takes from TUNE_MIN_S (below, the
#: other way's compile would cost more than it could save) to TUNE_MAX_S (above, timing
#: it again would: ba1's reverse Jacobian takes over a minute a call)
TUNE_MIN_S = 0.01
TUNE_MAX_S = 2.0
#: calls of each way timed, interleaved; the lower median wins
TUNE_RUNS = 3


def seconds(p: Any) -> float:
    start = time.perf_counter()
    jax.block_until_ready(p(*p.inputs))
    return time.perf_counter() - start


def faster(build: Any, count: int, jit: bool, mode: str) -> tuple[Any, int]:
    """(prepared, colors a pass takes at once): all colors batched (``jax.vmap``), one
    color after another (``lax.map``), or, in reverse mode with few colors, each pass
    written out (``WRITTEN_OUT``), whichever runs faster here, timed.

    Which is faster depends on f and the machine: on a CPU, ba's 14 JVPs take 17-37x
    its primal one after another and 50-110x batched (its (p, 3) values batched 14
    times leave the cache), while bvp_residual's 3 and ht's 24 run faster batched;
    ba1's 2 VJPs took 60 ms batched, 27 ms by ``lax.map``, 24 ms written out (its
    primal: 3 ms; one core, medians of 15 interleaved calls).
    """
    batched = build(None)
    if count < 2 or not jit or not TUNE_MIN_S <= seconds(batched) <= TUNE_MAX_S:
        return batched, count
    ways = {None: batched, 1: build(1)}
    if mode == "reverse" and count <= WRITTEN_OUT_MAX:
        ways[WRITTEN_OUT] = build(WRITTEN_OUT)
    times: dict[int | None, list[float]] = {way: [] for way in ways}
    for _ in range(TUNE_RUNS):
        for way, p in ways.items():
            times[way].append(seconds(p))
    best = min(times, key=lambda way: np.median(times[way]))
    return ways[best], count if best is None else 1
