"""``prepare`` and ``derivative``: one entry point for every mode and backend.

``prepare`` does all one-off work (casting, checks, tracing, compiling) and
returns a ``Prepared`` whose call is as thin as JAX's own jitted call: the only
extra work per call is setting the precision for this thread.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .._vocab import SCHEMES, ModelError
from . import memory as _memory
from .model import Model, _normalize_wrt
from .modes import Spec, get_rule
from .precision import dtype_of, precision_scope, restore_x64, swap_x64
from .userline import _TRACER_ERRORS


class UntrustedWarning(UserWarning):
    """The derivative was computed but cannot be vouched for (see ``Prepared.note``)."""


@dataclass(frozen=True)
class DerivativeInfo:
    """What ``derivative(..., full_output=True)`` returns beside the value.

    Attributes:
        error_estimate: Richardson's own error estimate, else None.
        f_evals: evaluations of f (or AD passes) per derivative.
        compile_s: seconds to trace, lower and compile (0 when not jitted).
        step: the finite-difference or complex step used, if any (None: default,
            scaled to |x| per component for numeric).
        trusted: False when the result cannot be vouched for; see ``note``.
        note: the reason, or None.
    """

    error_estimate: Any
    f_evals: int
    compile_s: float
    step: Any
    trusted: bool
    note: str | None


class Prepared:
    """A derivative compiled for one set of shapes; call it as ``p(x, *args)``.

    Attributes:
        mode, scheme, precision, backend, jit, wrt: the options it was built with.
        compile_s: trace + lower + compile seconds (0.0 when ``jit=False``).
        f_evals: evaluations of f per derivative (AD: passes, one per input for
            forward and one per output for reverse).
        out_shape: shape of f's output.
        trusted, note, step: see ``DerivativeInfo``.
    """

    def __init__(self, *, fn, model, options, compile_s, f_evals, out_shape, built, compiled, args):
        self._fn = fn
        self._model = model
        self._compiled = compiled
        self._cost_fn = built.cost_fn
        self._args = args if built.cost_fn is not None else None
        self._cost = None
        self._with_error = built.with_error
        self._x64 = options["precision"] == "float64"
        self._jax = options["backend"] == "jax"
        self._where = options["where"]
        self._eager_cures = options["eager_cures"]
        self.mode = options["mode"]
        self.scheme = options["scheme"]
        self.precision = options["precision"]
        self.backend = options["backend"]
        self.jit = options["jit"]
        self.wrt = options["wrt"]
        self.compile_s = compile_s
        self.f_evals = f_evals
        self.out_shape = out_shape
        self.trusted = built.trusted
        self.note = built.note
        self.step = built.step
        self._first = None

    def _raw(self, args):
        token = swap_x64(self._x64) if self._jax else None
        try:
            return self._fn(*args)
        except Exception as exc:
            err = self._model.translate(exc, self._where, jit=self._eager_cures)
            if err is None:
                raise
            raise err from exc
        finally:
            if self._jax:
                restore_x64(token)

    def __call__(self, *args: Any) -> Any:
        out = self._raw(args)
        return out[0] if self._with_error else out

    def with_error(self, *args: Any) -> tuple[Any, Any]:
        """(derivative, Richardson error estimate or None)."""
        out = self._raw(args)
        return out if self._with_error else (out, None)

    def cost(self) -> dict[str, float] | None:
        """XLA's analysis of the compiled derivative, or None when not jitted.

        Keys: ``flops``, ``transcendentals``, ``bytes_accessed`` and, from the
        memory analysis, ``temp_bytes``, ``argument_bytes``, ``output_bytes``.

        XLA counts a loop body once. Where the mode evaluates f in chunks
        (large numeric and complex-step batches), the first three come from
        the same computation written without the loop, lowered but not
        compiled; the memory is the compiled program's own.
        """
        if self._compiled is None:
            return None
        if self._cost is None:
            cost = xla_cost(self._compiled)
            if self._cost_fn is not None:
                with precision_scope(self.precision):
                    flat = jax.jit(self._cost_fn).lower(*self._args).cost_analysis()
                cost.update(_counts(flat))
            self._cost = cost
        return dict(self._cost)

    def __repr__(self) -> str:
        return (
            f"Prepared({self._model.name!r}, mode={self.mode!r}, wrt={self.wrt!r}, "
            f"precision={self.precision!r}, backend={self.backend!r}, jit={self.jit}, "
            f"compile_s={self.compile_s:.3g}, f_evals={self.f_evals})"
        )


def xla_cost(compiled: Any) -> dict[str, float]:
    """flops, bytes and temporary memory from a ``jax.stages.Compiled``."""
    out = _counts(compiled.cost_analysis())
    mem = compiled.memory_analysis()
    for key, attr in (
        ("temp_bytes", "temp_size_in_bytes"),
        ("argument_bytes", "argument_size_in_bytes"),
        ("output_bytes", "output_size_in_bytes"),
    ):
        out[key] = float(getattr(mem, attr, math.nan)) if mem is not None else math.nan
    return out


def _counts(ca: Any) -> dict[str, float]:
    """flops, transcendentals and bytes from an XLA cost analysis."""
    if isinstance(ca, (list, tuple)):  # older JAX: one dict per device
        ca = ca[0] if ca else {}
    ca = ca or {}
    return {
        "flops": float(ca.get("flops", math.nan)),
        "transcendentals": float(ca.get("transcendentals", math.nan)),
        "bytes_accessed": float(ca.get("bytes accessed", math.nan)),
    }


def _cast_leaf(a: Any, dtype) -> Any:
    if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating):
        return a.astype(dtype, copy=False)
    if isinstance(a, np.floating):
        return dtype(a)
    if isinstance(a, jax.Array) and jax.numpy.issubdtype(a.dtype, jax.numpy.floating):
        return np.asarray(a).astype(dtype, copy=False)
    return a


def _cast_args(args: tuple, dtype, wrt: tuple[int, ...]) -> tuple:
    out = list(jax.tree_util.tree_map(lambda a: _cast_leaf(a, dtype), list(args)))
    for i in wrt:
        try:
            x = np.asarray(out[i])
        except Exception as exc:  # ragged lists, objects
            raise TypeError(f"argument {i} cannot be differentiated: {exc}") from None
        if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
            raise TypeError(
                f"argument {i} has dtype {x.dtype}; derivatives need a float array "
                f"(wrt={i} picks it: choose another argument with wrt=...)"
            )
        out[i] = x.astype(dtype)
    return tuple(out)


def _check_out(model: Model, out: Any, where: str) -> tuple[int, ...]:
    shape, dtype = getattr(out, "shape", None), getattr(out, "dtype", None)
    if shape is None and isinstance(out, (float, int)) and not isinstance(out, bool):
        return ()
    if shape is None or dtype is None:
        name = out.type_name if isinstance(out, _NotAnArray) else type(out).__name__
        raise model.return_error(name, where)
    if len(shape) > 1:
        raise model.return_error(f"an array of shape {tuple(shape)}", where)
    if not np.issubdtype(np.dtype(dtype), np.floating):
        raise model.return_error(f"dtype {np.dtype(dtype)}", where)
    return tuple(int(s) for s in shape)


class _NotAnArray:
    """What ``_eval_shape`` reports for a return value JAX cannot hold (e.g. a str)."""

    def __init__(self, value: Any) -> None:
        self.type_name = type(value).__name__


def _eval_shape(f: Callable, args: tuple) -> Any:
    """``jax.eval_shape(f, *args)``; a return value that is not an array or a
    pytree of them comes back as ``_NotAnArray``, so it gets the model's error."""
    bad: list[_NotAnArray] = []

    def probe(*a):
        out = f(*a)
        leaves = jax.tree_util.tree_leaves(out)
        if not leaves or not all(hasattr(v, "dtype") or isinstance(v, (int, float))
                                 for v in leaves):  # fmt: skip
            bad.append(_NotAnArray(out))
            return None
        return out

    out = jax.eval_shape(probe, *args)
    return bad[0] if bad else out


def _trace(fn: Callable, args: tuple, eager: bool) -> Any:
    """``jax.jit(fn).trace(*args)``; None when running eagerly and ``fn`` holds
    Python control flow on traced values (it can run, but not be traced)."""
    try:
        return jax.jit(fn).trace(*args)
    except _TRACER_ERRORS:
        if eager:
            return None
        raise


def _guarded(model: Model, where: str, jit: bool, call: Callable[[], Any]) -> Any:
    with model.errors(where, jit=jit):
        return call()


def prepare(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    mode: str = "reverse",
    wrt: int | tuple[int, ...] | None = None,
    jit: bool = True,
    precision: str = "float64",
    scheme: str = "central",
    step: Any = None,
    backend: str = "jax",
) -> Prepared:
    """Compile the derivative of ``f(x, *args)`` for these shapes; see ``derivative``.

    Returns:
        A ``Prepared``: ``p(x, *args)`` returns the derivative at new inputs of
        the same shapes and dtypes; ``p.compile_s``, ``p.f_evals``, ``p.cost()``.

    Raises:
        ModelError: the model failed (the message names its line).
        SizeError: the computation would not fit in memory.
        ValueError, TypeError: bad options or arguments.
    """
    model = f_or_model if isinstance(f_or_model, Model) else Model.from_function(f_or_model)
    rule = get_rule(mode)
    if backend not in ("jax", "numpy"):
        raise ValueError(f"backend must be 'jax' or 'numpy', got {backend!r}")
    if backend not in rule.backends:
        raise ValueError(
            f"mode {mode!r} needs JAX (backend='jax'); backend='numpy' runs only "
            "'numeric', 'complex-step' and 'primal'"
        )
    if scheme not in SCHEMES:  # checked for every mode: a typo must not pass silently
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    dtype = dtype_of(precision)
    wrt = model.wrt if wrt is None else _normalize_wrt(wrt)
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    all_args = (x, *args)
    for i in indices:
        if not -len(all_args) <= i < len(all_args):
            raise ValueError(f"wrt={wrt!r} is out of range: f gets {len(all_args)} argument(s)")
    indices = tuple(i % len(all_args) for i in indices)
    wrt = indices if isinstance(wrt, tuple) else indices[0]
    all_args = _cast_args(all_args, dtype, indices)
    size = sum(int(np.size(all_args[i])) for i in indices)
    where = f"f, mode {mode!r}, n={size}"
    f = model.function(backend)
    # Which hint a tracer error gets: jit=False cures Python control flow for
    # forward/reverse (their primal runs on concrete values), never for modes
    # that batch f's evaluations with vmap.
    eager_cures = jit and mode in ("forward", "reverse", "primal")
    options = dict(mode=mode, scheme=scheme, precision=precision, backend=backend,
                   jit=jit, wrt=wrt, where=where, eager_cures=eager_cures)  # fmt: skip

    with precision_scope(precision):
        if backend == "jax" and jit:
            out = _guarded(model, where, eager_cures, lambda: _eval_shape(f, all_args))
        else:  # eagerly: f may hold Python control flow that cannot be traced
            out = _guarded(model, where, False, lambda: f(*all_args))
        out_shape = _check_out(model, out, where)
        if mode != "primal":
            itemsize = np.dtype(dtype).itemsize
            for i in indices:
                dense = math.prod(out_shape) * np.size(all_args[i]) * itemsize
                _memory.check(dense, f"the derivative ({out_shape} x {np.shape(all_args[i])})")
        # A JAX twin to analyse f with: source models and JAX runs have one; a
        # wrapped NumPy callable has one only if the user gave both versions.
        f_jax = model.function("jax")
        has_twin = model.source is not None or backend == "jax" or f_jax is not f
        spec = Spec(
            f=f, args=all_args, wrt=wrt, out_shape=out_shape, scheme=scheme, step=step,
            dtype=dtype, backend=backend, f_jax=f_jax if has_twin else None,
            files=model._files,
        )  # fmt: skip
        built = _guarded(model, where, eager_cures, lambda: rule.build(spec))
        compiled, compile_s, fn = None, 0.0, built.fn
        if mode != "primal":
            # The batch of f_evals perturbed copies of x (tangents, for forward
            # mode), as if held at once. Numeric modes evaluate theirs in
            # chunks and never hold it all; a batch too large to hold is still
            # refused, as a size whose evaluation would not end in a session.
            batch = built.f_evals * size * np.dtype(dtype).itemsize
            _memory.check(batch, f"a batch of {built.f_evals} copies of x (n={size})")
        if backend == "jax":
            start = time.perf_counter()
            traced = _guarded(
                model, where, eager_cures, lambda: _trace(built.fn, all_args, eager=not jit)
            )
            if traced is not None:
                biggest, aval = _memory.largest_array(traced.jaxpr.jaxpr)
                _memory.check(biggest, f"an intermediate array {aval.str_short() if aval else ''}")
            if jit:
                compiled = traced.lower().compile()
                compile_s = time.perf_counter() - start
                mem = xla_cost(compiled)
                _memory.check(mem["temp_bytes"] + mem["output_bytes"], "XLA's compiled program")
                fn = jax.jit(built.fn)
    if not built.trusted:
        warnings.warn(f"{mode}: {built.note}", UntrustedWarning, stacklevel=2)
    p = Prepared(
        fn=fn, model=model, options=options, compile_s=compile_s,
        f_evals=built.f_evals, out_shape=out_shape, built=built, compiled=compiled,
        args=all_args,
    )  # fmt: skip
    if backend == "jax" and jit:
        # Fill jit's own dispatch cache now (XLA reuses the executable just
        # compiled), so the first timed call is already the fast path.
        p._first = p._raw(all_args)
    return p


def derivative(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    mode: str = "reverse",
    wrt: int | tuple[int, ...] | None = None,
    jit: bool = True,
    precision: str = "float64",
    scheme: str = "central",
    step: Any = None,
    backend: str = "jax",
    full_output: bool = False,
) -> Any:
    """The derivative of ``f(x, *args)`` with respect to argument(s) ``wrt``.

    Returns NumPy arrays: the gradient when f returns a scalar, the Jacobian
    (``out.shape + x.shape``, i.e. (m, n)) when it returns a vector; a tuple of
    these when ``wrt`` is a tuple, as with ``jax.grad(argnums=...)``.

    Args:
        f_or_model: a ``Model`` or a function written with ``jax.numpy``.
        x, *args: f's arguments (NumPy arrays, scalars, dicts of arrays).
        mode: "forward", "reverse", "numeric" or "complex-step".
        wrt: argument index or tuple of indices; default 0 (or the model's ``wrt``).
        jit: compile with ``jax.jit``; False runs JAX eagerly (per-op overhead).
        precision: "float32" or "float64", for this call only.
        scheme: for "numeric": "forward", "central" or "richardson".
        step: finite-difference step (absolute) or complex step; None picks the
            default: eps**(1/2, 1/3, 1/5) * max(|x|, 1) per component for
            forward/central/Richardson, and 1e-20 for complex step.
        backend: "jax", or "numpy" for framework-free numeric and complex step.
        full_output: also return a ``DerivativeInfo`` (error estimate, f_evals, ...).

    References:
        Richardson extrapolation and step sizes: see ``adlab.engine.modes.numeric``;
        complex step: Squire & Trapp, SIAM Review 40(1), 1998.
    """
    p = prepare(f_or_model, x, *args, mode=mode, wrt=wrt, jit=jit, precision=precision,
                scheme=scheme, step=step, backend=backend)  # fmt: skip
    if p._first is not None:
        out = p._first
        value, err = out if p._with_error else (out, None)
    else:
        cast = _cast_args((x, *args), dtype_of(precision), _indices(p.wrt))
        value, err = p.with_error(*cast)
    # NumPy arrays, not jax.Arrays: a float64 jax.Array used outside adlab's
    # precision scope is silently truncated to float32 by later jnp calls.
    value, err = jax.tree_util.tree_map(np.asarray, (value, err))
    if not full_output:
        return value
    return value, DerivativeInfo(err, p.f_evals, p.compile_s, p.step, p.trusted, p.note)


def _indices(wrt: int | tuple[int, ...]) -> tuple[int, ...]:
    return wrt if isinstance(wrt, tuple) else (wrt,)


__all__ = ["DerivativeInfo", "ModelError", "Prepared", "UntrustedWarning", "derivative", "prepare"]
