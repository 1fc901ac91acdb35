"""Sparse Jacobians and Hessians: the program's pattern, colored, in one pass per color.

``prepare(..., sparse=True)`` and ``prepare_hessian(..., sparse=True)`` come
here. The pattern is read from f's program (``adlab.engine.sparsity.pattern``), never
from sampled points; its columns (forward mode), rows (reverse mode) or
vertices (a Hessian, star coloring) are colored (``adlab.engine.sparsity.coloring``);
the compressed derivative takes one pass per color, a JVP along the sum of a
color's seed vectors (a VJP, an HVP), batched by ``jax.vmap``, in turn, or
written out, whichever is timed faster (``adlab.engine.sparsity.passes``); each
nonzero is then read from it (by a second program where the passes run one
after another: ``sparse_passes.Program``). What is compiled is that
whole computation, so ``p.compile_s`` is its own and ``p.cost()`` the passes';
``p(x)`` returns a ``scipy.sparse.csr_array``, ``p.values(x)`` its nonzeros.

Reverse mode colors the rows of f after its data movement where that takes fewer
passes (``adlab.engine.sparsity.front``; ``p.via`` says so): ba's rows, which share a
camera's columns 1,300 at a time, share none of their own copies of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from .._vocab import AnyMode, Backend, Composition, Precision
from .backends import DEFAULT, KNOWN, REFERENCE, with_fact
from .model.args import cast_args
from .model.precision import dtype_of, precision_scope
from .model.source import Model
from .modes.hessian import COMPOSITIONS, HVP_NAMES, NotScalar
from .prepared import DerivativeInfo, Prepared, measured_memory
from .programs.memory import SizeError
from .sparsity.coloring import Coloring, color_columns, color_rows, recovery, star_color
from .sparsity.front import FrontRows, front_rows
from .sparsity.index_sets import PatternTooLarge
from .sparsity.passes import WRITTEN_OUT, Program, by_color, faster, pass_bytes, reader
from .sparsity.pattern import Detected, hessian_pattern, jacobian_pattern, refusal

#: the modes a sparse derivative takes: a Jacobian's, or a Hessian (in HVPs)
SPARSE_MODES = ("forward", "reverse", "hessian")


def _compressed(mode: str, f: Any, i: int, shape: tuple, coloring: Coloring, at: tuple,
                scheme: str | None, width: int | None) -> tuple[Any, Any]:  # fmt: skip
    """(passes, read): a function of f's arguments computing the compressed derivative,
    and one of its result giving the pattern's nonzeros, in CSR order."""
    a_idx, b_idx = at
    colors, count = coloring.colors, coloring.count

    def passes(*args: Any) -> Any:
        x = args[i]

        def fx(xf):
            return jnp.ravel(f(*args[:i], xf.reshape(shape), *args[i + 1 :]))

        xf = jnp.ravel(x)
        per = pass_bytes(fx, xf)
        if mode == "forward":
            return by_color(lambda s: jax.jvp(fx, (xf,), (s,))[1], colors, count, xf.dtype,
                             per, width)  # fmt: skip
        if mode == "reverse":
            y, pull = jax.vjp(fx, xf)
            return by_color(lambda w: pull(w)[0], colors, count, y.dtype, per, width)
        product = COMPOSITIONS[scheme].hvp(f, i)
        return by_color(lambda s: jnp.ravel(product(*args, s.reshape(shape))), colors,
                         count, xf.dtype, per, width)  # fmt: skip

    # the passes' results are (colors, len): the compressed J S (H S) transposed, or
    # W^T J as it is
    a, b = (a_idx, b_idx) if mode == "reverse" else (b_idx, a_idx)
    return passes, reader(a, b)


def _through_front(rows: FrontRows, i: int, nnz: int, width: int | None) -> tuple[Any, Any]:
    """(passes, read), as ``_compressed``'s: one VJP of g (f after its data movement) per
    color of J_g's rows; each nonzero of J_g is added into the J_f nonzero its front
    entry's source makes (``adlab.engine.sparsity.front``)."""
    front = rows.front
    colors, count = rows.coloring.colors, rows.coloring.count

    def passes(*args: Any) -> Any:
        others = (*args[:i], *args[i + 1 :])
        # the VJP is taken with respect to the front values as they are: one vector u
        # split into them would cost a pad and an add of all of u per value in each pass
        y, pull = jax.vjp(lambda *u: front.g(u, *others), *front.lift(jnp.ravel(args[i]), *others))

        def back(w):
            return jnp.concatenate([jnp.ravel(c) for c in pull(w)])

        u = jax.ShapeDtypeStruct((front.size,), jnp.result_type(*front.dtypes))
        per = pass_bytes(lambda v: front.g_flat(v, *others), u)
        # written out, each pass's cotangents are returned as they are: concatenated in
        # the same program they cost ba1 ~6 ms a pass (~14 ms), in the next one ~1 ms
        one = (lambda w: tuple(pull(w))) if width == WRITTEN_OUT else back
        return by_color(one, colors, count, y.dtype, per, width)

    return passes, reader(*rows.at, rows.to, nnz)


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
        written_out: whether the passes, one after another, are each written out in the
            program (few colors, in reverse mode: whichever was timed faster).
        via: how the passes were found where not from the pattern's own coloring, e.g.
            "2 row colors through the selection front (was 1,300)"; else None.
        nnz: the pattern's nonzeros.
        notes: primitives the detection took as dense (a valid, larger pattern).
        mode, scheme: "forward" / "reverse" (scheme None), or "hessian" and its composition.
        f_evals: passes per derivative: colors, times each HVP's own passes.
        compile_s, inputs, precision, backend, jit, wrt, trusted, note, step: as ``Prepared``.

    Example:
        >>> model = adlab.load_model("bvp_residual")
        >>> x, *data = model.setup(20)
        >>> J = adlab.derivative(model, x, *data, mode="forward", sparse=True)
        >>> J.shape, J.nnz < 20 * 20
        ((20, 20), True)
    """

    def __init__(self, inner: Any, detected: Detected, coloring: Coloring, mode: str,
                 scheme: str | None, passes: int, at_once: int, via: str | None = None
                 ) -> None:  # fmt: skip
        self._inner = inner
        self.via = via
        self.at_once = at_once
        self.written_out = inner.written_out
        self.pattern = detected.pattern
        self.coloring = coloring
        self.colors = coloring.count
        self.nnz = detected.nnz
        self.notes = detected.notes
        self.mode, self.scheme = mode, scheme
        self.f_evals = coloring.count * passes
        self.note = "; ".join(detected.notes) or None
        self.trusted, self.step = True, None
        self.compile_s = inner.compile_s  # the passes' and the read's
        for name in ("precision", "backend", "jit", "wrt"):
            setattr(self, name, getattr(inner.passes, name))
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
        """XLA's analysis of the compressed computation, the passes (see ``Prepared.cost``;
        the read of the nonzeros from them, one gather, is not in it)."""
        return self._inner.passes.cost()

    def memory(self) -> dict[str, Any]:
        """The memory of the compressed passes' program (``Prepared.memory``; the read of
        the nonzeros from them, one gather, is not in it)."""
        return self._inner.passes.memory()

    def info(self) -> DerivativeInfo:
        return DerivativeInfo(None, self.f_evals, self.compile_s, None, True, self.note,
                              colors=self.colors, nnz=self.nnz, via=self.via,
                              **measured_memory(self))  # fmt: skip

    def __repr__(self) -> str:
        scheme = f"[{self.scheme}]" if self.scheme else ""
        return (f"SparsePrepared({self.mode}{scheme}, shape={self.pattern.shape}, nnz={self.nnz}, "
                f"colors={self.colors}, at_once={self.at_once}, "
                + ("written_out=True, " if self.written_out else "")
                + (f"via={self.via!r}, " if self.via else "")
                + f"compile_s={self.compile_s:.3g})")  # fmt: skip


#: the frameworks a sparse derivative runs on (their entry's ``sparse``): its pattern is
#: read from a JAX program
SPARSE_BACKENDS: tuple[str, ...] = with_fact("sparse")


def sparse_refusal(mode: str, scheme: str | None, backend: str) -> str | None:
    """Why a sparse ``mode`` ("forward", "reverse", or "hessian" and its ``scheme``) cannot
    run on ``backend``; None if it can. A sweep refuses such a variant with this."""
    if mode not in SPARSE_MODES:
        return (f"sparse=True takes mode 'forward' or 'reverse' (a Jacobian), or "
                f"a Hessian (adlab.hessian(..., sparse=True)); got {mode!r}")  # fmt: skip
    if mode == "hessian" and scheme not in HVP_NAMES:
        return (f"a sparse Hessian is taken in HVPs, one per color; scheme "
                f"{scheme!r} has none: choose one of {list(HVP_NAMES)}")  # fmt: skip
    if backend not in SPARSE_BACKENDS:
        why = KNOWN[backend].sparse_refusal if backend in KNOWN else None
        return f"sparse=True is not available on backend {backend!r} yet: " + (
            why or f"its pattern is read from a JAX program (use backend={REFERENCE!r})"
        )
    return None


def _refuse(mode: str, scheme: str | None, backend: str, wrt: Any) -> None:
    why = sparse_refusal(mode, scheme, backend)
    if why:
        raise ValueError(why)
    if isinstance(wrt, tuple) and len(wrt) != 1:
        raise ValueError(f"sparse=True differentiates one argument; got wrt={wrt!r}")


def prepare_sparse(
    model: Model,
    x: Any,
    *args: Any,
    mode: AnyMode,
    scheme: Composition | None = None,
    wrt: Any = None,
    jit: bool = True,
    precision: Precision = "float64",
    backend: Backend = DEFAULT,
    prepare: Callable[..., Prepared],
) -> SparsePrepared:
    """Detect, color, and compile a sparse Jacobian ("forward", "reverse") or Hessian.

    ``prepare`` compiles the passes (as mode "primal"): the entry points that call this
    one hand theirs over (they sit above it: this module never imports them).
    """
    _refuse(mode, scheme, backend, wrt)
    wrt = model.wrt if wrt is None else wrt
    i = wrt[0] if isinstance(wrt, tuple) else int(wrt)
    given = (x, *args)
    if not -len(given) <= i < len(given):
        raise ValueError(f"wrt={wrt!r} is out of range: f gets {len(given)} argument(s)")
    i %= len(given)
    cast = cast_args(given, dtype_of(precision), (i,))
    shape = np.shape(cast[i])
    f = model.function(REFERENCE)
    where = f"f, sparse {mode}, n={int(np.prod(shape, dtype=int))}"
    with precision_scope(precision), model.errors(where, jit=False):
        if mode == "hessian":
            out = np.shape(jax.eval_shape(f, *cast))
            if out != ():
                raise NotScalar(f"a Hessian needs f to return a scalar; f returns shape {out}")
        detect = hessian_pattern if mode == "hessian" else jacobian_pattern
        try:
            detected = detect(f, cast, i)
        except PatternTooLarge as too_large:
            raise SizeError(refusal(too_large, model.files, mode)) from None
        pattern = detected.pattern
        rows = None
        if mode == "reverse":
            # J_f's rows that share x's entries share a color's pass; through the front
            # (f after its data movement) they may not (ba: 2 colors, not 1,300)
            rows, own = front_rows(f, cast, i, pattern)
            coloring = rows.coloring if rows else own or color_rows(pattern)
        else:
            coloring = (color_columns if mode == "forward" else star_color)(pattern)
    at = recovery(pattern, coloring) if rows is None else rows.at

    def build(width: int | None) -> Program:
        if rows is not None:
            compute, read = _through_front(rows, i, detected.nnz, width)
        else:
            compute, read = _compressed(mode, f, i, shape, coloring, at, scheme, width)
        apart = width is not None  # one pass after another: the read apart (Program)
        whole = compute if apart else (lambda *a: read(compute(*a)))
        passes = prepare(model.derived(whole, any_output=apart), *given, mode="primal",
                         wrt=i, jit=jit, precision=precision, backend=REFERENCE)  # fmt: skip
        return Program(passes, compute, read if apart else None, precision, width)

    inner, at_once = faster(build, coloring.count, jit, mode)
    n = int(np.prod(shape, dtype=int))
    passes = COMPOSITIONS[scheme].passes(n, True) if mode == "hessian" else 1
    scheme = scheme if mode == "hessian" else None
    via = rows.describe() if rows is not None else None
    return SparsePrepared(inner, detected, coloring, mode, scheme, passes, at_once, via)
