"""Sparse Jacobians and Hessians: the program's pattern, colored, in one pass per color.

``prepare(..., sparse=True)`` and ``prepare_hessian(..., sparse=True)`` come
here. The pattern is read from f's program (``adlab.engine.sparsity``), never
from sampled points; its columns (forward mode), rows (reverse mode) or
vertices (a Hessian, star coloring) are colored (``adlab.engine.coloring``);
the compressed derivative takes one pass per color, a JVP along the sum of a
color's seed vectors (a VJP, an HVP), batched by ``jax.vmap`` (in chunks of
colors where all would not fit in memory); each nonzero is then read from it.
What is compiled is that whole computation, so ``p.compile_s`` and
``p.cost()`` are its own, and ``p(x)`` returns a ``scipy.sparse.csr_array``.

Reverse mode colors the rows of f after its data movement where that takes fewer
passes (``adlab.engine.front``; ``p.via`` says so): ba's rows, which share a
camera's columns 1,300 at a time, share none of their own copies of them.
"""

from __future__ import annotations

import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from . import memory
from .args import _cast_args
from .backends._jax_forward import _column_bytes
from .coloring import Coloring, color_columns, color_rows, recovery, star_color
from .derivative import DerivativeInfo, prepare
from .front import FrontRows, front_rows
from .index_sets import PatternTooLarge
from .jaxpr import equations
from .memory import SizeError
from .model import Model
from .modes.second_order import COMPOSITIONS, HVP_NAMES, NotScalar
from .precision import dtype_of, precision_scope
from .second import derived
from .sparsity import Detected, hessian_pattern, jacobian_pattern, refusal

KINDS = ("forward", "reverse", "hessian")


def _seeds(colors: np.ndarray, start: Any, width: int, dtype: Any) -> jax.Array:
    """(width, len(colors)): row k sums the unit vectors of color start + k (past the
    last color: zeros)."""
    return (jnp.asarray(colors)[None, :] == start + jnp.arange(width)[:, None]).astype(dtype)


def _pass_bytes(fx: Any, xf: Any) -> float:
    """Bytes one pass (one color) holds: a tangent or cotangent of each of f's values, at
    most (their sum; XLA frees some early). f's largest value alone undercounts a VJP:
    ba's 1,300 colors in chunks sized so took 9 GB, not the 2.5 GB budgeted."""
    jaxpr = jax.make_jaxpr(fx)(jax.ShapeDtypeStruct(xf.shape, xf.dtype)).jaxpr
    held = sum(math.prod(v.aval.shape) * np.dtype(v.aval.dtype).itemsize
               for eqn in equations(jaxpr) for v in eqn.outvars
               if hasattr(v.aval, "shape") and np.issubdtype(v.aval.dtype, np.inexact))  # fmt: skip
    return max(held, _column_bytes(fx, xf))


def _by_color(one: Any, colors: np.ndarray, count: int, dtype: Any, bytes_per: float,
              width: int | None) -> Any:  # fmt: skip
    """(count, ...): ``one(seed)`` for each color's seed, batched by ``jax.vmap``; in
    chunks of ``width`` colors (None: all), one chunk after another (``lax.map``), and
    smaller where all at once would not fit (a row coloring of ba takes ~1,300 colors,
    each pass holding f's intermediates)."""
    width = min(memory.chunk_columns(count, bytes_per), width or count)
    if width >= count:
        return jax.vmap(one)(_seeds(colors, 0, count, dtype))
    trips = math.ceil(count / width)
    out = jax.lax.map(lambda start: jax.vmap(one)(_seeds(colors, start, width, dtype)),
                      jnp.arange(trips) * width)  # fmt: skip
    return out.reshape((trips * width, *out.shape[2:]))[:count]


def _compressed(kind: str, f: Any, i: int, shape: tuple, coloring: Coloring, at: tuple,
                composition: str | None, width: int | None) -> Any:  # fmt: skip
    """A function of f's arguments: the pattern's nonzeros, in CSR order."""
    a_idx, b_idx = at
    colors, count = coloring.colors, coloring.count

    def fn(*args: Any) -> Any:
        x = args[i]

        def fx(xf):
            return jnp.ravel(f(*args[:i], xf.reshape(shape), *args[i + 1 :]))

        xf = jnp.ravel(x)
        per = _pass_bytes(fx, xf)
        if kind == "forward":
            out = _by_color(lambda s: jax.jvp(fx, (xf,), (s,))[1], colors, count, xf.dtype, per,
                            width)  # fmt: skip
        elif kind == "reverse":
            y, pull = jax.vjp(fx, xf)
            out = _by_color(lambda w: pull(w)[0], colors, count, y.dtype, per, width)
        else:
            product = COMPOSITIONS[composition].hvp(f, i)
            out = _by_color(lambda s: jnp.ravel(product(*args, s.reshape(shape))), colors,
                            count, xf.dtype, per, width)  # fmt: skip
        # out is (colors, len): the compressed J S (H S) transposed, or W^T J as it is
        a, b = (a_idx, b_idx) if kind == "reverse" else (b_idx, a_idx)
        # one flat gather; the indices are in range by construction, so no bounds mask
        return jnp.take(out.ravel(), a * out.shape[1] + b, mode="clip")

    return fn


def _through_front(rows: FrontRows, i: int, nnz: int, width: int | None) -> Any:
    """A function of f's arguments: J_f's nonzeros in CSR order, from one VJP of g (f
    after its data movement) per color of J_g's rows, each nonzero of J_g added into
    the J_f nonzero its front entry's source makes (``adlab.engine.front``)."""
    (a, b), to, front = rows.at, rows.to, rows.front
    colors, count = rows.coloring.colors, rows.coloring.count

    def fn(*args: Any) -> Any:
        others = (*args[:i], *args[i + 1 :])
        # the VJP is taken with respect to the front values as they are: one vector u
        # split into them would cost a pad and an add of all of u per value in each pass
        y, pull = jax.vjp(lambda *u: front.g(u, *others), *front.lift(jnp.ravel(args[i]), *others))

        def back(w):
            return jnp.concatenate([jnp.ravel(c) for c in pull(w)])

        u = jax.ShapeDtypeStruct((front.size,), jnp.result_type(*front.dtypes))
        per = _pass_bytes(lambda v: front.g_flat(v, *others), u)
        out = _by_color(back, colors, count, y.dtype, per, width)
        values = jnp.take(out.ravel(), a * out.shape[1] + b, mode="clip")
        if to is None:
            return values
        return jax.ops.segment_sum(values, to, num_segments=nnz, indices_are_sorted=True)

    return fn


#: the compressed derivative is tuned only where a call takes from TUNE_MIN_S (below, the
#: other way's compile would cost more than it could save) to TUNE_MAX_S (above, timing
#: it again would: ba1's reverse Jacobian takes over a minute a call)
TUNE_MIN_S = 0.01
TUNE_MAX_S = 2.0
#: calls of each way timed, interleaved; the lower median wins
TUNE_RUNS = 3


def _seconds(p: Any) -> float:
    start = time.perf_counter()
    jax.block_until_ready(p(*p.inputs))
    return time.perf_counter() - start


def _faster(build: Any, count: int, jit: bool) -> tuple[Any, int]:
    """(prepared, colors a pass takes at once): all colors batched (``jax.vmap``) or one
    color after another (``lax.map``), whichever runs faster here, timed.

    Which is faster depends on f and the machine: on a CPU, ba's 14 JVPs take 17-37x
    its primal one after another and 50-110x batched (its (p, 3) values batched 14
    times leave the cache), while bvp_residual's 3 and ht's 24 run faster batched.
    """
    batched = build(None)
    if count < 2 or not jit or not TUNE_MIN_S <= _seconds(batched) <= TUNE_MAX_S:
        return batched, count
    single = build(1)
    _seconds(single)
    times: dict[int, list[float]] = {count: [], 1: []}
    for _ in range(TUNE_RUNS):
        times[count].append(_seconds(batched))
        times[1].append(_seconds(single))
    if np.median(times[1]) < np.median(times[count]):
        return single, 1
    return batched, count


class SparsePrepared:
    """A sparse derivative compiled for one set of shapes: ``p(x)`` -> ``csr_array``;
    ``p.values(x)``: its nonzeros as the device array, ``p.to_csr`` packs them later.

    ``p(x, *args)`` binds new data, as ``Prepared`` does; the pattern holds for
    any data of the same shapes (it is read with the data as unknowns).

    Attributes:
        pattern: the boolean pattern (outputs x inputs; a Hessian's is n x n).
        coloring: the ``Coloring``: ``colors`` per column/row/vertex, ``count``.
        colors: the number of colors, i.e. of passes (JVPs, VJPs or HVPs).
        at_once: how many of the passes run batched at once (all of them, or one after
            another: whichever was timed faster when prepared); fewer where all would
            not fit in memory (then in chunks, one after another).
        via: how the passes were found where not from the pattern's own coloring, e.g.
            "2 row colors through the selection front (was 1,300)"; else None.
        nnz: the pattern's nonzeros.
        notes: primitives the detection took as dense (a valid, larger pattern).
        mode, scheme: "forward" / "reverse" (scheme None), or "hessian" and its composition.
        f_evals: passes per derivative: colors, times each HVP's own passes.
        compile_s, inputs, precision, backend, jit, wrt, trusted, note, step: as ``Prepared``.
    """

    def __init__(self, inner: Any, detected: Detected, coloring: Coloring, mode: str,
                 scheme: str | None, passes: int, at_once: int, via: str | None = None
                 ) -> None:  # fmt: skip
        self._inner = inner
        self.via = via
        self.at_once = at_once
        self.pattern = detected.pattern
        self.coloring = coloring
        self.colors = coloring.count
        self.nnz = detected.nnz
        self.notes = detected.notes
        self.mode, self.scheme = mode, scheme
        self.f_evals = coloring.count * passes
        self.note = "; ".join(detected.notes) or None
        self.trusted, self.step = True, None
        for name in ("compile_s", "precision", "backend", "jit", "wrt"):
            setattr(self, name, getattr(inner, name))
        self.out_shape = self.pattern.shape

    @property
    def inputs(self) -> tuple:
        return self._inner.inputs

    def __call__(self, x: Any, *args: Any) -> sp.csr_array:
        return self.to_csr(self.values(x, *args))

    def values(self, x: Any, *args: Any) -> jax.Array:
        """The nonzeros, in the pattern's CSR order, as the device array the program
        returns: the derivative without the host's packaging (``to_csr``), which costs
        ~5 ms of ba1's ~30 ms (a copy of its 923,447 values and the index arrays)."""
        return self._inner(x, *args)

    def to_csr(self, values: Any) -> sp.csr_array:
        """``values``' (from ``values``) SciPy array, on the host."""
        data = np.array(values)  # a copy: a jax.Array's view is read-only
        # fresh index arrays: scipy's in-place methods (eliminate_zeros) would edit them
        return sp.csr_array((data, self.pattern.indices.copy(), self.pattern.indptr.copy()),
                            shape=self.pattern.shape)  # fmt: skip

    def with_error(self, x: Any, *args: Any) -> tuple[sp.csr_array, None]:
        return self(x, *args), None

    def cost(self) -> dict[str, float] | None:
        """XLA's analysis of the compressed computation (see ``Prepared.cost``)."""
        return self._inner.cost()

    def info(self) -> DerivativeInfo:
        return DerivativeInfo(None, self.f_evals, self.compile_s, None, True, self.note,
                              colors=self.colors, nnz=self.nnz, via=self.via)  # fmt: skip

    def __repr__(self) -> str:
        scheme = f"[{self.scheme}]" if self.scheme else ""
        return (f"SparsePrepared({self.mode}{scheme}, shape={self.pattern.shape}, nnz={self.nnz}, "
                f"colors={self.colors}, at_once={self.at_once}, "
                + (f"via={self.via!r}, " if self.via else "")
                + f"compile_s={self.compile_s:.3g})")  # fmt: skip


#: the frameworks a sparse derivative runs on: its pattern is read from a JAX program
BACKENDS: tuple[str, ...] = ("jax",)


def sparse_refusal(kind: str, composition: str | None, backend: str) -> str | None:
    """Why a sparse ``kind`` ("forward", "reverse", "hessian" and its composition) cannot
    run on ``backend``; None if it can. A sweep refuses such a variant with this."""
    if kind not in KINDS:
        return (f"sparse=True takes mode 'forward' or 'reverse' (a Jacobian), or "
                f"a Hessian (adlab.hessian(..., sparse=True)); got {kind!r}")  # fmt: skip
    if kind == "hessian" and composition not in HVP_NAMES:
        return (f"a sparse Hessian is taken in HVPs, one per color; mode "
                f"{composition!r} has none: choose one of {list(HVP_NAMES)}")  # fmt: skip
    if backend not in BACKENDS:
        return (f"sparse=True is not available on backend {backend!r} yet: its pattern is "
                "read from a JAX program (use backend='jax')")  # fmt: skip
    return None


def _refuse(kind: str, composition: str | None, backend: str, wrt: Any) -> None:
    why = sparse_refusal(kind, composition, backend)
    if why:
        raise ValueError(why)
    if isinstance(wrt, tuple) and len(wrt) != 1:
        raise ValueError(f"sparse=True differentiates one argument; got wrt={wrt!r}")


def prepare_sparse(
    model: Model,
    x: Any,
    *args: Any,
    kind: str,
    composition: str | None = None,
    wrt: Any = None,
    jit: bool = True,
    precision: str = "float64",
    backend: str = "jax",
) -> SparsePrepared:
    """Detect, color, and compile a sparse Jacobian ("forward", "reverse") or Hessian."""
    _refuse(kind, composition, backend, wrt)
    wrt = model.wrt if wrt is None else wrt
    i = wrt[0] if isinstance(wrt, tuple) else int(wrt)
    given = (x, *args)
    if not -len(given) <= i < len(given):
        raise ValueError(f"wrt={wrt!r} is out of range: f gets {len(given)} argument(s)")
    i %= len(given)
    cast = _cast_args(given, dtype_of(precision), (i,))
    shape = np.shape(cast[i])
    f = model.function("jax")
    where = f"f, sparse {kind}, n={int(np.prod(shape, dtype=int))}"
    with precision_scope(precision), model.errors(where, jit=False):
        if kind == "hessian":
            out = np.shape(jax.eval_shape(f, *cast))
            if out != ():
                raise NotScalar(f"a Hessian needs f to return a scalar; f returns shape {out}")
        detect = hessian_pattern if kind == "hessian" else jacobian_pattern
        try:
            detected = detect(f, cast, i)
        except PatternTooLarge as too_large:
            raise SizeError(refusal(too_large, model._files, kind)) from None
        pattern = detected.pattern
        rows = None
        if kind == "reverse":
            # J_f's rows that share x's entries share a color's pass; through the front
            # (f after its data movement) they may not (ba: 2 colors, not 1,300)
            rows, own = front_rows(f, cast, i, pattern)
            coloring = rows.coloring if rows else own or color_rows(pattern)
        else:
            coloring = (color_columns if kind == "forward" else star_color)(pattern)
    at = recovery(pattern, coloring) if rows is None else rows.at

    def build(width: int | None) -> Any:
        if rows is not None:
            compute = _through_front(rows, i, detected.nnz, width)
        else:
            compute = _compressed(kind, f, i, shape, coloring, at, composition, width)
        return prepare(derived(model, compute), *given, mode="primal", wrt=i, jit=jit,
                       precision=precision, backend="jax")  # fmt: skip

    inner, at_once = _faster(build, coloring.count, jit)
    n = int(np.prod(shape, dtype=int))
    passes = COMPOSITIONS[composition].passes(n, True) if kind == "hessian" else 1
    mode, scheme = ("hessian", composition) if kind == "hessian" else (kind, None)
    via = rows.describe() if rows is not None else None
    return SparsePrepared(inner, detected, coloring, mode, scheme, passes, at_once, via)
