"""``prepare`` and ``derivative``: one entry point for every mode and backend.

``prepare`` does all one-off work (casting, checks, tracing, compiling) and
returns a ``Prepared`` (``adlab.engine.prepared``) whose call is as thin as
JAX's own jitted call.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .._vocab import MODES, SCHEMES, ModelError
from . import memory as _memory
from .args import _cast_args, backend_inputs, wrt_indices
from .cache import use_cache
from .model import Model, _normalize_wrt
from .modes import Spec, get_rule, mode_names
from .precision import dtype_of, precision_scope
from .prepared import Prepared, bind, direct, in_precision, xla_cost
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


def _trace(jitted: Any, args: tuple, eager: bool) -> Any:
    """``jitted.trace(*args)``; None when running eagerly and the function holds
    Python control flow on traced values (it can run, but not be traced)."""
    try:
        return jitted.trace(*args)
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
        A ``Prepared``: ``p(x)`` returns the derivative at a new ``x`` with the
        other arguments as bound here (cast, on the device: ``p.inputs``);
        ``p(x, *args)`` at new arguments of the same shapes and dtypes, which
        it binds for later calls. ``p.compile_s``, ``p.f_evals``, ``p.cost()``.

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
        runs = [repr(name) for name in dict.fromkeys((*MODES, *mode_names()))
                if backend in get_rule(name).backends]  # fmt: skip
        raise ValueError(
            f"mode {mode!r} needs JAX (backend='jax'); backend={backend!r} runs only "
            f"{', '.join(runs[:-1])} and {runs[-1]}"
        )
    if scheme not in SCHEMES:  # checked for every mode: a typo must not pass silently
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    dtype = dtype_of(precision)
    wrt = model.wrt if wrt is None else _normalize_wrt(wrt)
    all_args = (x, *args)
    for i in wrt_indices(wrt):
        if not -len(all_args) <= i < len(all_args):
            raise ValueError(f"wrt={wrt!r} is out of range: f gets {len(all_args)} argument(s)")
    indices = tuple(i % len(all_args) for i in wrt_indices(wrt))
    wrt = indices if isinstance(wrt, tuple) else indices[0]
    all_args = _cast_args(all_args, dtype, indices)
    size = sum(int(np.size(all_args[i])) for i in indices)
    where = f"f, mode {mode!r}, n={size}"
    f = model.function(backend)
    # Which hint a tracer error gets: whether jit=False would cure it (see Rule).
    eager_cures = jit and rule.eager_cures
    jitted = backend == "jax" and jit
    options = dict(mode=mode, scheme=scheme, precision=precision, backend=backend,
                   jit=jit, wrt=wrt, where=where, eager_cures=eager_cures)  # fmt: skip

    with precision_scope(precision):
        if jitted:
            out = _guarded(model, where, eager_cures, lambda: _eval_shape(f, all_args))
        else:  # eagerly: f may hold Python control flow that cannot be traced
            out = _guarded(model, where, False, lambda: f(*all_args))
        out_shape = _check_out(model, out, where)
        if rule.is_derivative:
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
        if rule.is_derivative:
            # The batch of f_evals perturbed copies of x (tangents, for forward
            # mode), as if held at once. Numeric modes evaluate theirs in
            # chunks and never hold it all; a batch too large to hold is still
            # refused, as a size whose evaluation would not end in a session.
            batch = built.f_evals * size * np.dtype(dtype).itemsize
            _memory.check(batch, f"a batch of {built.f_evals} copies of x (n={size})")
        inputs = backend_inputs(all_args, precision, backend, indices)
        call, program, example = bind(built.fn, inputs, jit=jitted)
        through_jit = fast = in_precision(call, precision == "float64")
        compiled, compile_s, first = None, 0.0, None
        if backend == "jax":
            use_cache()  # JAX's compilation cache on disk, once per process
            start = time.perf_counter()
            # what is compiled is what p(x) runs; run eagerly, the general function
            # is traced only to find its largest array
            if not jit:
                program, example = jax.jit(built.fn), all_args
            traced = _guarded(
                model, where, eager_cures, lambda: _trace(program, example, eager=not jit)
            )
            if traced is not None:
                biggest, aval = _memory.largest_array(traced.jaxpr.jaxpr)
                _memory.check(biggest, f"an intermediate array {aval.str_short() if aval else ''}")
            if jit:
                compiled = traced.lower().compile()
                compile_s = time.perf_counter() - start
                mem = xla_cost(compiled)
                _memory.check(mem["temp_bytes"] + mem["output_bytes"], "XLA's compiled program")
    if compiled is not None:
        # The first call, outside the precision scope: JAX keys its fast path on the
        # caller's x64 state, so later calls from the same place take it at once.
        fast, first = direct(compiled, example)
        if len(example) > 1:  # the passed arguments, before x
            fast = functools.partial(fast, *example[:-1])
    if not built.trusted:
        warnings.warn(f"{mode}: {built.note}", UntrustedWarning, stacklevel=2)
    p = Prepared(
        built=built, call=fast, traced=through_jit, inputs=inputs, model=model, options=options,
        compiled=compiled, compile_s=compile_s, out_shape=out_shape, args=all_args,
        example=example,
    )  # fmt: skip
    p._first = first
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
        value, err = p.with_error(*p.inputs)
    # NumPy arrays, not jax.Arrays: a float64 jax.Array used outside adlab's
    # precision scope is silently truncated to float32 by later jnp calls.
    value, err = jax.tree_util.tree_map(np.asarray, (value, err))
    if not full_output:
        return value
    return value, DerivativeInfo(err, p.f_evals, p.compile_s, p.step, p.trusted, p.note)


__all__ = [
    "DerivativeInfo", "ModelError", "Prepared", "UntrustedWarning", "_cast_args", "derivative",
    "prepare", "xla_cost",
]  # fmt: skip
