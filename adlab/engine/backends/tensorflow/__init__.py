"""TensorFlow: ``tf.GradientTape``, eager by default (the analogue of ``tf.grads``),
or in ``tf.function(jit_compile=True)`` through XLA.

``np`` is ``tf.experimental.numpy``, TensorFlow's own NumPy API, with
``np.linalg`` filled in from ``tf.linalg``. A model needs TensorFlow's NumPy
behaviour (``tnp.experimental_enable_numpy_behavior()``): without it a tensor
has no ``.reshape`` or ``.T`` and its operators do not promote types as
NumPy's do, so ``d - g`` fails when one is float64 and the other float32, and
every operator of complex step fails (complex x, real data). TensorFlow makes
it a switch for the whole process, with no way back, and it changes the
user's own TensorFlow code in the same kernel (``float32 + float64`` promotes
instead of failing; slicing follows NumPy's rules). So adlab keeps its two
parts that change what code means, the type promotion and the slicing, on
only inside its own calls (``numpy_behaviour``: two of TensorFlow's module
globals, set and restored around each call; about 0.1 us), and only for a
model that does not run under TensorFlow's own rules (``_bind``: NumPy's
promotion costs each operator a Python call). What cannot be
contained: the NumPy methods it adds to ``tf.Tensor`` (``.T``, ``.reshape``,
``.ravel``, ``.astype`` ...) stay for the process, from the first use of this
backend; they only add names. Neither is thread-safe: TensorFlow code in
another thread, during one of adlab's calls, sees NumPy's promotion.

Reverse mode is ``GradientTape.gradient`` / ``.jacobian``; forward mode
``tf.autodiff.ForwardAccumulator``, one tangent per input; perturbed points
are evaluated by ``tf.vectorized_map``, which traces its function (eager
TensorFlow would trace it anew on every call, so each is traced once, in a
``tf.function``). ``jit`` is ``tf.function(jit_compile=True)``, whose first
call is the compile. ``tape.jacobian`` runs a loop over the outputs when
eager (its vectorized form traces anew on every eager call) and is vectorized
(``pfor``) when compiled.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import _startup

_startup.before_tensorflow()  # Triton first (a crash otherwise), C++ log level: see there
import tensorflow as tf  # noqa: E402
import tensorflow.experimental.numpy as tnp  # noqa: E402
from tensorflow.python import pywrap_tfe  # noqa: E402 - _carries
from tensorflow.python.framework import ops as _ops  # noqa: E402 - numpy_behaviour's globals

from ...model.args import wrt_indices  # noqa: E402
from .. import _detach, _namespace, _numpy_meaning  # noqa: E402
from .._loops import python_loops  # noqa: E402
from ..base import Backend, batch_or_loop, hit_mask, tree_map, with_arg  # noqa: E402
from ..special import special_functions  # noqa: E402
from . import memory as _tf_memory  # noqa: E402
from .remat import remat  # noqa: E402

_BEFORE = (_ops.get_dtype_conversion_mode(), _ops._numpy_style_slicing)
tnp.experimental_enable_numpy_behavior()  # Tensor's NumPy methods, for the process
_NUMPY = (_ops.get_dtype_conversion_mode(), _ops._numpy_style_slicing)
_ops._dtype_conversion_mode, _ops._numpy_style_slicing = _BEFORE  # the rest: in our calls


def _numpy_on() -> tuple:
    saved = (_ops._dtype_conversion_mode, _ops._numpy_style_slicing)
    _ops._dtype_conversion_mode, _ops._numpy_style_slicing = _NUMPY
    return saved


def _own_on() -> tuple:
    saved = (_ops._dtype_conversion_mode, _ops._numpy_style_slicing)
    _ops._dtype_conversion_mode, _ops._numpy_style_slicing = _BEFORE
    return saved


def _restore(saved: tuple) -> None:
    _ops._dtype_conversion_mode, _ops._numpy_style_slicing = saved


@contextlib.contextmanager
def own_rules() -> Iterator[None]:
    """TensorFlow's own promotion and slicing inside the block (as before adlab turned NumPy's
    on), for a backward pass: its operations meet one dtype, and NumPy's promotion costs a
    Python result_type per operator (``normal_logpdf``'s eager gradient at n = 10: 1.33x the
    one in TensorFlow's rules with NumPy's on throughout, 1.20x with the backward pass in
    TensorFlow's rules; the rest is the forward pass's promotion)."""
    saved = _own_on()
    try:
        yield
    finally:
        _restore(saved)


@contextlib.contextmanager
def numpy_behaviour() -> Iterator[None]:
    """TensorFlow's NumPy promotion and slicing on inside the block, as they were after."""
    saved = _numpy_on()
    try:
        yield
    finally:
        _restore(saved)


def _carries(t: Any) -> bool:
    """Whether a tape records ``t`` or a forward accumulator holds a tangent for it."""
    return bool(pywrap_tfe.TFE_Py_TapeSetPossibleGradientTypes([t]))


#: float(v) of a value that carries a derivative: refused while adlab runs f (_detach)
_GUARD = _detach.Guard(_ops._EagerTensorBase, "TensorFlow", _carries,
                       ("__float__", "__int__", "__index__", "numpy", "item",
                        "tolist"))  # fmt: skip
ZERO = tf.UnconnectedGradients.ZERO  # an input f does not use has a zero derivative
_LINALG = types.SimpleNamespace(norm=tf.norm, inv=tf.linalg.inv, det=tf.linalg.det)
#: evaluate a batch of perturbed points in chunks of about this many elements
CHUNK = 1 << 17


def _linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:  # fmt: skip
    """``tnp.linspace`` with its ``dtype`` honoured: under NumPy 2, TensorFlow's takes
    the type of start and stop (float64 for Python numbers) and ignores ``dtype``.
    Computed in float64 and cast, as NumPy's is."""
    out = tnp.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, axis=axis)
    if dtype is None:
        return out
    if retstep:
        return tf.cast(out[0], dtype), tf.cast(out[1], dtype)
    return tf.cast(out, dtype)


def _svdvals(a: Any) -> Any:
    return tf.linalg.svd(a, compute_uv=False)


def _map(fn: Callable, xs: Any) -> Any:
    # over a static range: a traced tensor (in vectorized_map, tf.function) cannot be iterated
    return tnp.stack([fn(xs[j]) for j in range(int(xs.shape[0]))])


def _vmap(fn: Callable, xs: Any) -> Any:
    return tf.vectorized_map(fn, xs)


def _tensor(a: Any) -> Any:
    return tf.constant(a) if isinstance(a, (np.ndarray, np.generic)) else a


class TensorflowBackend(Backend):
    name = "tensorflow"
    namespace_per_precision = True  # np.linspace and the other array makers
    xp = tnp

    def environment(self) -> dict[str, Any]:
        gpus = tf.config.list_logical_devices("GPU")
        return {"version": tf.__version__, "device": "gpu" if gpus else "cpu"}

    @functools.cache  # noqa: B019 - one namespace per precision, for the process
    def namespace(self, precision: str) -> dict[str, Any]:
        ns = _namespace.build("tensorflow", tnp, aliases={"linalg": _LINALG, "linspace": _linspace},
                              creators=_namespace.CREATORS,
                              creator_defaults=_namespace.float32_defaults(precision))  # fmt: skip
        # NumPy's meaning where TensorFlow's differs (norm), lacks it (median), or its
        # derivative is NaN where NumPy's function is smooth (sinc, std), or its second
        # derivative wrong where a factor is 0 (prod): _numpy_meaning
        _numpy_meaning.install(ns, ("median", "norm", "prod", "sinc", "std"), svdvals=_svdvals)
        return {"np": ns, "map_samples": _map, "vmap_samples": _vmap, **_LOOPS,
                **special_functions("tensorflow", ns)}  # fmt: skip

    # ---------------------------------------------------------------- data
    def convert(self, args: tuple, precision: str) -> tuple:
        return tree_map(_tensor, tuple(args))

    def to_numpy(self, tree: Any) -> Any:
        if isinstance(tree, (tuple, list)):
            return tuple(self.to_numpy(t) for t in tree)
        if isinstance(tree, tf.Tensor):
            return tree.numpy()
        return None if tree is None else np.asarray(tree)

    def constant(self, array: np.ndarray) -> Any:
        return tf.constant(array)

    def complex(self, x: Any, dtype: Any) -> Any:
        return tf.cast(x, tf.as_dtype(np.dtype(dtype)))

    def peak(self, call: Callable, x: Any, compiled: Any) -> tuple[float | None, str]:
        return _tf_memory.peak(call, x)

    def residuals(self, f: Callable, inputs: tuple,
                  wrt: tuple[int, ...]) -> tuple[float | None, str]:  # fmt: skip
        # f under the rules its calls run in (_bind: TensorFlow's, else NumPy's behaviour)
        return _tf_memory.residuals(lambda *a: self._bind(lambda _: f(*a), ())(None),
                                    inputs, wrt)  # fmt: skip

    # ------------------------------------------------------- AD operators
    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        idx = wrt_indices(wrt)

        def grad(*args: Any) -> Any:
            xs = [args[i] for i in idx]
            with tf.GradientTape() as tape:
                tape.watch(xs)
                y = f(*args)
            saved = _own_on()  # own_rules(), written out: the hot path of every gradient
            try:
                out = tape.gradient(y, xs, unconnected_gradients=ZERO)
            finally:
                _restore(saved)
            return tuple(out) if isinstance(wrt, tuple) else out[0]

        return grad

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        idx = wrt_indices(wrt)
        one = forward_jacobian if forward else reverse_jacobian

        def jac(*args: Any) -> Any:
            out = [one(f, args, i, vectorized=jit) for i in idx]
            return tuple(out) if isinstance(wrt, tuple) else out[0]

        return jac

    # An accumulator around a tape, a tape around an accumulator or a tape: each records
    # what runs inside it, the other's derivative included (TensorFlow's guide to advanced
    # autodiff composes them so)
    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = f(x)
        return y, acc.jvp(y, unconnected_gradients=ZERO)

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        with own_rules():  # the backward pass (see own_rules)
            return y, tape.gradient(y, x, output_gradients=w, unconnected_gradients=ZERO)

    # -------------------------------------------------- perturbed points
    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        """``tf.vectorized_map`` of f over the batch, built by one select per chunk."""
        x = args[i]
        coords = tf.concat(blocks, axis=0)
        xf = tf.cast(tf.reshape(x, [-1]), coords.dtype)
        k, n = int(coords.shape[0]), int(xf.shape[0])
        rows = k if flat else max(1, CHUNK // max(n, 1))
        one = with_arg(f, args, i, tuple(x.shape))

        def looped(X: Any) -> Any:
            return _stack_values([one(X[r]) for r in range(int(X.shape[0]))], X.dtype)

        out = []
        for start in range(0, k, rows):
            stop = min(k, start + rows)
            mask = tf.constant(hit_mask(k, n)[start:stop])
            batched = _batched(f, i, tuple(x.shape), stop - start, coords.dtype)
            X = tf.where(mask, coords[start:stop, None], xf[None, :])
            out.append(batch_or_loop(f, functools.partial(batched, args=args), looped, X))
        return (out[0] if len(out) == 1 else tf.concat(out, axis=0)), coords

    # --------------------------------------------------------- the call
    def probe(self, f: Callable, args: tuple, inputs: tuple, jit: bool, guard: Callable) -> Any:
        with numpy_behaviour(), _GUARD:
            return super().probe(f, args, inputs, jit, guard)

    def _bind(self, fn: Callable, rest: tuple) -> Callable:
        """The call in TensorFlow's own rules while the model runs under them, else (from
        its first failure on, retried at once) with NumPy's behaviour on inside it.

        NumPy's promotion costs a Python ``result_type`` per operator (``normal_logpdf``'s
        eager gradient: 1.2-1.3x the same one in TensorFlow's rules). A model that runs
        under TensorFlow's rules computes the same there: they refuse (int tensor times
        0.5, float32 minus float64, a boolean mask, complex step's complex x meeting real
        data) rather than promote; a NumPy scalar meeting a tensor takes the tensor's
        dtype. The one failed try falls in the first call (the compile's, under jit).
        """
        call = super()._bind(fn, rest)
        numpy = [False]  # this program needs NumPy's behaviour: learned once, kept
        guard = _GUARD.on  # no silent constant from float(v): on while f runs (_GUARD.around)

        def run(x: Any) -> Any:
            if not numpy[0]:
                saved = _own_on()
                guard[0] += 1
                try:
                    return call(x)
                except Exception:
                    numpy[0] = True
                finally:
                    guard[0] -= 1
                    _restore(saved)
            saved = _numpy_on()
            guard[0] += 1
            try:
                return call(x)
            finally:
                guard[0] -= 1
                _restore(saved)

        return run

    def compile(self, fn: Callable) -> Callable:
        return tf.function(fn, jit_compile=True)

    def needs_wait(self) -> bool:
        return bool(tf.config.list_logical_devices("GPU"))

    def wait(self, out: Any) -> Any:
        tf.test.experimental.sync_devices()
        return out


def reverse_jacobian(f: Callable, args: tuple, i: int, vectorized: bool) -> Any:
    """Rows: one pullback per output, vectorized by ``pfor`` when compiled; eagerly a
    loop over the outputs (what ``tape.jacobian`` does eagerly, written out: its
    loop stores every row in f's dtype, and fails where x's differs)."""
    x = args[i]
    with tf.GradientTape(persistent=not vectorized) as tape:
        tape.watch(x)
        y = f(*args)
        rows = None if vectorized else [y[j] for j in range(int(y.shape[0]))]
    with own_rules():  # the backward passes (see own_rules)
        if vectorized:
            return tape.jacobian(y, x, unconnected_gradients=ZERO)
        return tf.stack([tape.gradient(r, x, unconnected_gradients=ZERO) for r in rows])


def forward_jacobian(f: Callable, args: tuple, i: int, vectorized: bool) -> Any:
    """Columns: one ``ForwardAccumulator`` pass per input (vectorized when compiled)."""
    x = args[i]
    n = int(np.prod(x.shape))
    basis = tf.reshape(tf.eye(n, dtype=x.dtype), (n, *x.shape))

    def column(tangent: Any) -> Any:
        with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
            y = f(*args)
        return acc.jvp(y, unconnected_gradients=ZERO)

    cols = tf.vectorized_map(column, basis) if vectorized else tf.stack(
        [column(basis[j]) for j in range(n)])  # fmt: skip
    out = tnp.moveaxis(cols, 0, -1)  # (*out, n)
    return tf.reshape(out, (*out.shape[:-1], *x.shape))


def _stack_values(values: list, dtype: Any) -> Any:
    """f's values at the points, stacked; a Python number (``return float(...)``) in the
    points' dtype (``tf.stack`` would make it float32)."""
    return tf.stack([v if isinstance(v, tf.Tensor) else tf.constant(v, dtype=dtype)
                     for v in values])  # fmt: skip


@functools.lru_cache(maxsize=64)
def _batched(f: Callable, i: int, shape: tuple[int, ...], rows: int, dtype: Any) -> Callable:
    """f vectorized over ``rows`` rows of ``dtype`` (the perturbed argument i): one
    function per batch shape, traced once (new data of the same shapes reuses it)."""

    def run(X: Any, args: tuple) -> Any:
        return tf.vectorized_map(with_arg(f, args, i, shape), X)

    return tf.function(run, autograph=False, reduce_retracing=True)


_LOOPS = python_loops(tnp.stack, remat, "tensorflow")
BACKEND = TensorflowBackend()
