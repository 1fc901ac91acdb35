"""``prepare`` and ``derivative``: one entry point for every mode and backend.

``prepare`` does all one-off work (casting, checks, tracing, compiling) and
returns a ``Prepared`` (``adlab.engine.prepared``) whose call is as thin as
the framework's own call. What differs by framework is the backend's
(``adlab.engine.backends``); what differs by mode is the mode's
(``adlab.engine.modes``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._vocab import (
    SCHEMES,
    WHERES,
    AnyMode,
    Backend,
    Composition,
    Device,
    Inner,
    ModelError,
    Precision,
    Scheme,
    Where,
)
from . import crosscheck as checking
from .backends import DEFAULT, REFERENCE, facts_of, get_backend
from .backends.base import NotAnArray
from .backends.checkpoint import check_checkpoint, checkpoint_matters
from .backends.facts import checkpoint_refusal
from .backends.inner_grad import check_inner
from .model.args import backend_inputs, cast_args, wrt_indices
from .model.precision import dtype_of, precision_scope
from .model.source import Model, normalize_wrt
from .model.userline import running_on
from .modes import Spec, get_rule
from .prepared import DerivativeInfo, Prepared, UntrustedWarning, measured_memory
from .programs import memory as _memory
from .programs import store as program_cache
from .programs.admission import admit
from .sparse import prepare_sparse


def _check_out(model: Model, out: Any, where: str) -> tuple[int, ...]:
    shape, dtype = getattr(out, "shape", None), getattr(out, "dtype", None)
    if model.any_output:  # adlab's own program (a tuple, a 2-D array), read apart
        return () if shape is None else tuple(int(s) for s in shape)
    if shape is None and isinstance(out, (float, int)) and not isinstance(out, bool):
        return ()
    if shape is None or dtype is None:
        name = out.type_name if isinstance(out, NotAnArray) else type(out).__name__
        raise model.return_error(name, where)
    if len(shape) > 1:
        raise model.return_error(f"an array of shape {tuple(shape)}", where)
    if not np.issubdtype(np.dtype(dtype), np.floating):
        raise model.return_error(f"dtype {np.dtype(dtype)}", where)
    return tuple(int(s) for s in shape)


def _guarded(model: Model, where: str, jit: bool, call: Callable[[], Any]) -> Any:
    with model.errors(where, jit=jit):
        return call()


def prepare(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    mode: AnyMode = "reverse",
    wrt: int | tuple[int, ...] | None = None,
    jit: bool | None = None,
    precision: Precision | None = None,
    scheme: Scheme | Composition = "central",
    step: Any = None,
    backend: Backend = DEFAULT,
    sparse: bool = False,
    inner: Inner = "reverse",
    device: Device | None = None,
    where: Where | None = None,
    checkpoint: bool | str | None = None,
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

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> p = adlab.prepare(model, x, *data, mode="numeric", scheme="richardson")
        >>> p(x).shape, p.f_evals
        ((3,), 12)
    """
    model = f_or_model if isinstance(f_or_model, Model) else Model.from_function(f_or_model)
    check_inner(inner)
    if check_checkpoint(checkpoint) and checkpoint_refusal(backend):  # before it is loaded
        raise ValueError(checkpoint_refusal(backend))
    impl = get_backend(backend)  # an unknown or missing framework says so
    precision = precision or facts_of(backend).precisions[0]  # TF.js: float32
    if where is not None and where not in WHERES:
        raise ValueError(f"where must be one of {list(WHERES)} or None, got {where!r}")
    impl = impl.on_device(device)  # a device the framework cannot choose is refused
    runs_in = impl.placed(where)  # JavaScript: "node" or "browser"; None: Python
    jit = impl.resolve_jit(jit)  # None: as the framework's users run it
    if sparse:  # the pattern read from the program, colored: adlab.engine.sparse
        if model.inner_matters(inner) or checkpoint_matters(model.source, checkpoint):
            raise ValueError(
                "sparse=True reads the model's program with its grad(...) in "
                "reverse mode and its loops as written; leave inner and checkpoint unset "
                "(the values are the same)"
            )
        return prepare_sparse(model, x, *args, mode=mode, wrt=wrt, jit=jit,
                              precision=precision, backend=backend, prepare=prepare)  # fmt: skip
    rule = get_rule(mode)
    refusal = rule.refusal(impl)
    if refusal:
        raise ValueError(refusal)
    schemes = rule.schemes or SCHEMES  # a second-order mode's bracket names its composition
    if scheme not in schemes:  # checked for every mode: a typo must not pass silently
        raise ValueError(f"scheme must be one of {sorted(schemes)}, got {scheme!r}")
    dtype = dtype_of(precision)
    wrt = model.wrt if wrt is None else normalize_wrt(wrt)
    all_args = (x, *args)
    for i in wrt_indices(wrt):
        if not -len(all_args) <= i < len(all_args):
            raise ValueError(f"wrt={wrt!r} is out of range: f gets {len(all_args)} argument(s)")
    indices = tuple(i % len(all_args) for i in wrt_indices(wrt))
    wrt = indices if isinstance(wrt, tuple) else indices[0]
    all_args = cast_args(all_args, dtype, indices)
    size = sum(int(np.size(all_args[i])) for i in indices)
    location = f"f, mode {mode!r}, n={size}"  # where errors say they happened
    f = model.function(backend, precision, inner, checkpoint)
    # Which hint a tracer error gets: whether jit=False would cure it (see Rule).
    eager_cures = jit and rule.eager_cures
    options = dict(mode=mode, scheme=scheme, precision=precision, backend=backend,
                   jit=jit, wrt=wrt, where=location, eager_cures=eager_cures,
                   inner=inner, checkpoint=checkpoint)  # fmt: skip

    def guard(thunk: Callable[[], Any], traced: bool) -> Any:
        """Run a step that may fail in the model's code; ``traced``: under the compiler."""
        return _guarded(model, location, eager_cures if traced else False, thunk)

    # errors in the terms of this backend, even where adlab traces f with JAX to check it
    with precision_scope(precision), running_on(backend, mode, rule.order):
        inputs = backend_inputs(all_args, precision, backend, indices)
        out = impl.probe(f, all_args, inputs, jit, guard)
        out_shape = _check_out(model, out, location)
        if rule.is_derivative:
            itemsize = np.dtype(dtype).itemsize
            for i in indices:
                dense = math.prod(out_shape) * np.size(all_args[i]) * itemsize
                _memory.check(dense, f"the derivative ({out_shape} x {np.shape(all_args[i])})")
        # A JAX twin to analyse f with: source models and JAX runs have one; a
        # wrapped callable of another framework has one only if the user gave both.
        f_jax = model.function(REFERENCE)
        has_twin = model.source is not None or backend == REFERENCE or f_jax is not f
        spec = Spec(
            f=f, args=all_args, wrt=wrt, out_shape=out_shape, scheme=scheme, step=step,
            dtype=dtype, backend=backend, f_jax=f_jax if has_twin else None,
            files=model.files, jit=jit, device=impl.device,
        )  # fmt: skip
        built = _guarded(model, location, eager_cures, lambda: rule.build(spec))
        if rule.is_derivative:
            # The batch of f_evals perturbed copies of x (tangents, for forward
            # mode), as if held at once. A mode that evaluates it in chunks
            # (Built.chunked) never holds it all: refused only as a size whose
            # evaluation would not end in a session.
            batch = built.f_evals * size * np.dtype(dtype).itemsize
            what = f"a batch of {built.f_evals} copies of x (n={size})"
            if built.chunked:
                _memory.check_work(built.f_evals * size, batch, what)
            else:
                _memory.check(batch, what)
    admit(built.f_evals)  # the caller's word (a sweep's budget) before anything compiles
    # what keys the program in adlab's cache of compiled programs (program_cache)
    # (``inner`` only where it changes the program: the default's keys stay as they were)
    inner_key = {"inner": inner} if model.inner_matters(inner) else {}
    if checkpoint_matters(model.source, checkpoint):  # so is the loops' checkpoint
        inner_key["checkpoint"] = checkpoint
    with program_cache.identity(
        model,
        mode=mode,
        scheme=scheme,
        wrt=wrt,
        step=step,
        jit=jit,
        precision=precision,
        backend=backend,
        out_shape=out_shape,
        **inner_key,
    ):
        program = impl.program(built, inputs, all_args, jit=jit, precision=precision,
                               guard=guard)  # fmt: skip
    if not built.trusted:
        warnings.warn(f"{mode}: {built.note}", UntrustedWarning, stacklevel=2)
    p = Prepared(built=built, program=program, impl=impl, inputs=inputs, model=model,
                 options=options, out_shape=out_shape)  # fmt: skip
    p.device, p.where = impl.device, runs_in
    return p


def derivative(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    mode: AnyMode = "reverse",
    wrt: int | tuple[int, ...] | None = None,
    jit: bool | None = None,
    precision: Precision | None = None,
    scheme: Scheme | Composition = "central",
    step: Any = None,
    backend: Backend = DEFAULT,
    full_output: bool = False,
    sparse: bool = False,
    inner: Inner = "reverse",
    device: Device | None = None,
    where: Where | None = None,
    check: bool = True,
    checkpoint: bool | str | None = None,
) -> Any:
    """The derivative of ``f(x, *args)`` with respect to argument(s) ``wrt``.

    Returns NumPy arrays: the gradient when f returns a scalar, the Jacobian
    (``out.shape + x.shape``, i.e. (m, n)) when it returns a vector; a tuple of
    these when ``wrt`` is a tuple, as with ``jax.grad(argnums=...)``.

    Args:
        f_or_model: a ``Model`` or a function written with ``jax.numpy`` (or with
            the framework of ``backend``).
        x, *args: f's arguments (NumPy arrays, scalars, dicts of arrays).
        mode: "forward", "reverse", "numeric" or "complex-step" (``adlab.MODES``); also
            any other registered mode (``adlab.ALL_MODES``: "primal" gives f itself).
        wrt: argument index or tuple of indices; default 0 (or the model's ``wrt``).
        jit: compile with the framework's compiler (``jax.jit``, ``torch.compile``,
            ``tf.function(jit_compile=True)``); False runs eagerly; None (default) as
            the framework's users do: JAX jitted, the others eagerly. autograd and
            NumPy have no compiler: jit=True is refused there.
        precision: "float32" or "float64", for this call only; None: what the framework
            computes in by default (float64; TF.js, which has no float64: float32).
        scheme: for "numeric": "forward", "central", "richardson" or "g9"; for a
            second-order mode, its composition (see ``hessian``).
        step: finite-difference step (absolute) or complex step; None picks the
            default: eps**(1/2, 1/3, 1/5) * max(|x|, 1) per component for
            forward/central/Richardson, and 1e-20 for complex step.
        backend: the framework: "jax", "torch", "tensorflow", "autograd", or "numpy"
            (framework-free numeric and complex step only). Each runs the model's
            source with ``np`` bound to its NumPy-like namespace.
        full_output: also return a ``DerivativeInfo`` (error estimate, f_evals, memory
            as ``Prepared.memory`` measures it, ...).
        sparse: the Jacobian as a ``scipy.sparse.csr_array``, computed in one pass per
            color of its sparsity pattern, read from the program (mode "forward" or
            "reverse"; see ``adlab.engine.sparse``).
        inner: the mode of the derivatives the model takes inside f with the provided
            ``grad(fn)``: "reverse" (``jax.grad``, ``torch.func.grad``, a nested
            ``tf.GradientTape``, ``autograd.grad``) or "forward" (``jax.jacfwd``,
            ``torch.func.jacfwd``, ``tf.autodiff.ForwardAccumulator``, autograd's
            ``make_jvp``). On numpy both are central differences.
        device: for TF.js (``backend="tfjs"``), its backend: "cpu" (default), "wasm" or
            "webgl"; plain JavaScript runs on "cpu". None: the backend's default. The
            Python frameworks run where they put themselves: leave it unset there.
        where: for the JavaScript backends, "node" or "browser": the Lab's page, while
            one is attached (else they run in Node, and ``Prepared.where`` says so).
            None: wherever this thread's JavaScript runs (Node outside the Lab).
        check: hold a first derivative to JAX's checked float64 one (``crosscheck``: a
            result that disagrees warns, ``UntrustedWarning``). False skips that (on
            PyTorch, TensorFlow and autograd, the JAX program the check compiles): the
            result is then only tested to be finite, and its ``DerivativeInfo`` says
            ``trusted=False`` with the note ``UNCHECKED``, without a warning.
        checkpoint: the default ``checkpoint=`` of the model's loops (``fori_loop``,
            ``scan``) that do not say: False stores every step, True recomputes each
            step's body in the backward pass, "sqrt" keeps every ~sqrt(T)-th carry and
            recomputes in between; memory for time in reverse mode. None (default): as
            the model's source says. autograd, NumPy and JavaScript refuse True/"sqrt".

    References:
        Richardson extrapolation and step sizes: see ``adlab.engine.modes.numeric``;
        complex step: Squire & Trapp, SIAM Review 40(1), 1998.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> g = adlab.derivative(model, x, *data, mode="reverse")
        >>> g.shape
        (3,)
        >>> bool(np.allclose(g, adlab.derivative(model, x, *data, mode="complex-step")))
        True
    """
    p = prepare(f_or_model, x, *args, mode=mode, wrt=wrt, jit=jit, precision=precision,
                scheme=scheme, step=step, backend=backend, sparse=sparse,
                inner=inner, device=device, where=where, checkpoint=checkpoint)  # fmt: skip
    if sparse:
        value = p(*p.inputs)
        return (value, p.info()) if full_output else value
    value, err = p.first_result()
    trusted, note = p.trusted, p.note
    rule = get_rule(mode)  # a first derivative (derivative(mode="primal") gives f)
    if rule.is_derivative and rule.order == 1:
        # check=False: only the free test that the value is finite (reference=True)
        wrong = crosscheck(p.model, (x, *args), value, wrt=p.wrt, mode=mode, scheme=scheme,
                           precision=p.precision, backend=backend, step=p.step,
                           reference=not check or backend == REFERENCE and mode == "reverse"
                           and p.precision == "float64")  # fmt: skip
        if wrong:
            trusted, note = False, wrong
            warnings.warn(f"{mode} on {backend}: {wrong}", UntrustedWarning, stacklevel=2)
        elif not check:
            trusted, note = unchecked(trusted, note)
    if not full_output:
        return value
    return value, DerivativeInfo(err, p.f_evals, p.compile_s, p.step, trusted, note,
                                 **measured_memory(p))  # fmt: skip


#: the note of a result that was not held to JAX's checked float64 derivative
UNCHECKED = "not checked (check=False): not held to JAX's checked float64 derivative"


def unchecked(trusted: bool, note: str | None) -> tuple[bool, str | None]:
    """(trusted, note) of a result whose cross-check was skipped: never trusted (nothing
    vouched for it), and the note says so after any the mode gave."""
    return False, UNCHECKED if note is None else f"{note}; {UNCHECKED}"


def crosscheck(model: Any, args: tuple, value: Any, **options: Any) -> str | None:
    """Why ``value`` cannot be trusted, or None: ``adlab.engine.crosscheck.crosscheck``
    (its keyword options), its reference computed with ``prepare``."""
    return checking.crosscheck(model, args, value, prepare=prepare, **options)


__all__ = [
    "UNCHECKED", "DerivativeInfo", "ModelError", "Prepared", "UntrustedWarning", "cast_args",
    "crosscheck", "derivative", "prepare", "unchecked",
]  # fmt: skip
