"""NumPy's meaning for functions a framework has with another meaning, or with a
derivative rule that divides by zero where NumPy's function is smooth.

Each is written once, on the framework's own namespace ``np`` (its sort, sum,
where, ...), so the framework differentiates it with rules it already has, in
every mode and to every order. A framework takes only the ones it needs
(``numpy_meaning``, with the names it wants); the others keep their own, faster
function. Complex input (complex step) goes to the framework's own function
unchanged: what complex step may do with these is ``real_part``'s business.

Why each, per framework (measured against NumPy's f and JAX float64 reverse):

- ``median``: PyTorch's takes the lower of the two middle values of an even
  count (NumPy averages them); TensorFlow has none; autograd has no rule.
- ``linalg.norm``: TensorFlow's ``tf.norm`` treats a matrix as a vector unless
  told its axes (``ord=2`` of a matrix gives the Frobenius norm, not the
  spectral one; ``ord=1``/``inf`` the entrywise sums) and refuses -1, -2, -inf,
  0, 'fro', 'nuc'; autograd has no rule for ord 1, -1, 0, -inf, p, or any
  matrix ord but 'fro'/'nuc', and its rule for inf divides 0 by 0 (NaN).
- ``prod``: autograd's rule is ``g * prod / x``, 0/0 where an element is 0;
  TensorFlow's second derivatives are 0 where a factor is 0 (d2/dx0 dx1 of
  x0 x1 x2 at x0 = 0 gives 0, not x2).
- ``sinc``: autograd's rule is ``(cos(pi x) pi x - sin(pi x)) / (pi x**2)``,
  0/0 at x = 0; TensorFlow's is ``where(x == 0, 1, sin(pi x) / (pi x))``, whose
  untaken branch's NaN gradient at 0 survives ``where``'s (0 * NaN); PyTorch's
  second derivative at 0 is 0 or NaN, not -pi**2 / 3.
- ``take``: JAX and PyTorch refuse a list of indices, PyTorch's has no axis, and
  autograd has no rule; indexing has one everywhere.
- ``std``: ``sqrt`` of the variance; where the variance is 0 (all values equal)
  forward mode pushes 0 * (1 / 0) = NaN on JAX, TensorFlow and autograd.
  PyTorch's rule takes 0 there; so does ``safe_sqrt``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

from .real_part import is_complex

#: |pi x| below this, sinc is its Taylor series (the series' next term, t**8/9!, is
#: below float64's resolution there; sin(t)/t's derivatives cancel less above it)
SINC_SERIES = 1e-2


def safe_sqrt(np: Any, v: Any) -> Any:
    """``sqrt(v)`` for ``v >= 0`` whose derivative at ``v == 0`` is 0, not 0 * inf = NaN.

    For a variance or a sum of squares, which is 0 only at its minimum, where its own
    derivative is 0: the derivative there is 0 whenever it exists (PyTorch's rule for
    ``std`` and ``norm``). Both ``where``s are needed: the inner one keeps ``sqrt``'s
    own derivative finite in the branch that is not taken."""
    pos = v > 0
    return np.where(pos, np.sqrt(np.where(pos, v, np.ones_like(v))), v * 0)


def _length(a: Any, axis: int) -> int | None:
    """``a.shape[axis]`` as an int, or None where the framework does not know it yet."""
    n = a.shape[axis]
    return None if n is None else int(n)


def _axis(axis: Any, ndim: int) -> int:
    k = operator.index(axis)
    if not -ndim <= k < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return k % ndim


def _kept(np: Any, out: Any, ndim: int, axes: Iterable[int] | None) -> Any:
    """``out`` with the reduced ``axes`` (all for None) put back as length 1."""
    if axes is None:
        return np.reshape(out, (1,) * ndim)
    for k in sorted(axes):
        out = np.expand_dims(out, k)
    return out


def numpy_meaning(np: Any, names: Iterable[str], *, svdvals: Callable[[Any], Any] | None = None,
                  sort_rows: bool = False) -> dict[str, Callable]:  # fmt: skip
    """NumPy's ``names`` (of ``median``, ``norm``, ``prod``, ``sinc``, ``std``, ``take``) on the
    framework whose namespace is ``np``. ``svdvals(a)``: the singular values of a stack
    of matrices (last two axes), for ``norm``'s ord 2, -2 and 'nuc'. ``sort_rows``: the
    framework differentiates ``sort`` of a vector only (autograd): ``median`` sorts each."""
    own = {name: getattr(np.linalg if name == "norm" else np, name, None) for name in names}

    def sort_last(s: Any) -> Any:
        if not sort_rows or s.ndim == 1:
            return np.sort(s, axis=-1)
        rows = np.reshape(s, (-1, s.shape[-1]))
        return np.reshape(np.stack([np.sort(rows[r]) for r in range(rows.shape[0])]), s.shape)

    def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               keepdims: bool = False) -> Any:  # fmt: skip
        """NumPy's: the mean of the two middle values of an even count."""
        if out is not None or is_complex(a) or isinstance(axis, (tuple, list)):
            return own["median"](a, axis=axis, keepdims=keepdims)
        ndim = a.ndim
        k = None if axis is None else _axis(axis, ndim)
        s = np.reshape(a, (-1,)) if k is None else np.moveaxis(a, k, -1)
        n = _length(s, -1)
        if not n:  # unknown, or empty: NumPy's NaN and warning
            return own["median"](a, axis=axis, keepdims=keepdims)
        s = sort_last(s)
        m = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) / 2
        return _kept(np, m, ndim, None if k is None else (k,)) if keepdims else m

    def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
        """NumPy's ``np.linalg.norm``: every ord, vectors and matrices, axis and keepdims."""
        if is_complex(x):
            return own["norm"](x, ord, axis, keepdims)
        nd = x.ndim
        if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2)
                             or (ord == 2 and nd == 1)):  # fmt: skip
            out = safe_sqrt(np, np.sum(x * x))
            return np.reshape(out, (1,) * nd) if keepdims else out
        axes = tuple(range(nd)) if axis is None else (
            tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))  # fmt: skip
        axes = tuple(_axis(k, nd) for k in axes)
        if len(axes) == 1:
            out = _vector_norm(x, ord, axes[0])
        elif len(axes) == 2:
            out = _matrix_norm(x, ord, *axes)
        else:
            raise ValueError("Improper number of dimensions to norm.")
        return _kept(np, out, nd, axes) if keepdims else out

    def _vector_norm(x: Any, ord: Any, k: int) -> Any:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        if ord is None or ord == 2:
            return safe_sqrt(np, np.sum(x * x, axis=k))
        if ord == math.inf:
            return np.max(np.abs(x), axis=k)
        if ord == -math.inf:
            return np.min(np.abs(x), axis=k)
        if ord == 0:
            return np.sum(np.where(x != 0, np.ones_like(x), np.zeros_like(x)), axis=k)
        if ord == 1:
            return np.sum(np.abs(x), axis=k)
        return np.sum(np.abs(x) ** ord, axis=k) ** (1.0 / ord)

    def _matrix_norm(x: Any, ord: Any, row: int, col: int) -> Any:
        if row == col:
            raise ValueError("Duplicate axes given.")
        if ord in (None, "f", "fro"):
            return safe_sqrt(np, np.sum(x * x, axis=(row, col)))
        if ord in (2, -2, "nuc"):
            if svdvals is None:  # pragma: no cover - every framework that uses norm gives it
                raise ValueError(f"norm ord={ord!r} of a matrix needs singular values")
            s = svdvals(np.moveaxis(x, (row, col), (-2, -1)))
            pick = {2: np.max, -2: np.min, "nuc": np.sum}[ord]
            return pick(s, axis=-1)
        if ord in (1, -1):  # the largest (smallest) column sum
            pick, over, then = (np.max if ord == 1 else np.min), row, col - (col > row)
        elif ord in (math.inf, -math.inf):  # the largest (smallest) row sum
            pick, over, then = (np.max if ord > 0 else np.min), col, row - (row > col)
        else:
            raise ValueError("Invalid norm order for matrices.")
        return pick(np.sum(np.abs(x), axis=over), axis=then)

    def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, **kwargs: Any) -> Any:  # fmt: skip
        """NumPy's product, as a tree of pairwise products: no division, so an element
        that is 0 has the derivative of the others' product."""
        if (dtype is not None or out is not None or kwargs or is_complex(a)
                or isinstance(axis, (tuple, list))):  # fmt: skip
            return own["prod"](a, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
        ndim = a.ndim
        k = None if axis is None else _axis(axis, ndim)
        p = np.reshape(a, (-1,)) if k is None else np.moveaxis(a, k, 0)
        n = _length(p, 0)
        if n is None or n == 0:
            return own["prod"](a, axis=axis, keepdims=keepdims)
        while n > 1:
            pairs = p[0 : n - 1 : 2] * p[1:n:2]
            p = np.concatenate([pairs, p[n - 1 :]], axis=0) if n % 2 else pairs
            n = (n + 1) // 2
        p = p[0]
        return _kept(np, p, ndim, None if k is None else (k,)) if keepdims else p

    def sinc(x: Any) -> Any:
        """``sin(pi x) / (pi x)``, 1 at 0; near 0 its Taylor series, whose derivatives of
        every order are sinc's (JAX's has a rule of its own for the same reason)."""
        if is_complex(x):
            return own["sinc"](x)
        t = math.pi * x
        small = np.abs(t) < SINC_SERIES
        safe = np.where(small, np.ones_like(t), t)
        t2 = t * t
        series = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42))
        return np.where(small, series, np.sin(safe) / safe)

    def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: bool = False, **kwargs: Any) -> Any:  # fmt: skip
        """``sqrt(var)``, its derivative 0 where the values are all equal (``safe_sqrt``)."""
        if out is not None or kwargs or is_complex(a):
            return own["std"](a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                              **kwargs)  # fmt: skip
        return safe_sqrt(np, np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))

    def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = None) -> Any:
        """NumPy's ``np.take``, as indexing: a list of indices too (JAX and PyTorch refuse
        one; autograd has no rule for ``take``)."""
        if out is not None or mode is not None:
            return own["take"](a, indices, axis=axis, out=out, mode=mode)
        idx = np.asarray(indices) if isinstance(indices, (list, tuple)) else indices
        if axis is None:
            return np.reshape(a, (-1,))[idx]
        return a[(slice(None),) * _axis(axis, a.ndim) + (idx,)]

    table = {"median": median, "norm": norm, "prod": prod, "sinc": sinc, "std": std,
             "take": take}  # fmt: skip
    return {name: table[name] for name in names}


def install(ns: Any, names: Iterable[str], **options: Any) -> Any:
    """``ns`` (a built ``_namespace.Namespace``) with NumPy's ``names`` in place of its own;
    ``norm`` goes into a ``np.linalg`` of its own, the framework's for every other name;
    ``options``: ``numpy_meaning``'s."""
    from ._namespace import Namespace

    fns = numpy_meaning(ns, names, **options)
    norm = fns.pop("norm", None)
    ns.__dict__.update(fns)
    if norm is not None:
        ns.__dict__["linalg"] = Namespace(ns.__adlab_framework__, ns.linalg, {"norm": norm})
    return ns
