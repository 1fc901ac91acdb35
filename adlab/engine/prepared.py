"""``Prepared``: a derivative compiled once, called as thinly as the framework's own call.

``prepare`` binds every argument after the first, converted once (cast to the
precision, placed on the device), so ``p(x)`` hands the framework one array,
as a user's ``jax.jit(jax.grad(f))`` (or ``torch.autograd.grad``) closed over
its data does. How the call is made is the backend's (``Backend.program``:
for JAX, the compiled program's own C++ call; ``adlab.engine.backends``).
An ``x`` that call refuses (another shape, a NumPy array where the framework
wants its own) goes on through the backend's fallback from then on.

``p(x, *args)`` with new arguments of the prepared shapes and dtypes hands them
as the caller has them to a second program that takes every argument (JAX: its
C++ call copies them to the device, as a user's jitted call does). They are
converted for later calls only when one needs them: a copy per call would cost
as much as the call's own transfer of large data. Anything else is converted in
Python first, and traced anew where the framework traces.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from operator import is_
from typing import Any, NoReturn

import numpy as np

from .model.args import backend_inputs, cast_args, wrt_indices
from .model.precision import dtype_of, precision_scope

#: what an x without a dtype has (not None: NumPy reads None as float64)
_NO_DTYPE = object()


class UntrustedWarning(UserWarning):
    """The derivative was computed but cannot be vouched for (see ``Prepared.note``).

    Example:
        >>> issubclass(adlab.UntrustedWarning, UserWarning)
        True
    """


@dataclass(frozen=True)
class DerivativeInfo:
    """What ``derivative(..., full_output=True)`` returns beside the value.

    Attributes:
        error_estimate: Richardson's own error estimate, else None.
        f_evals: evaluations of f (or AD passes) per derivative.
        compile_s: seconds to trace, lower and compile (0 when not jitted).
        step: the finite-difference or complex step used, if any (None: default,
            scaled to |x| per component for numeric).
        trusted: False when the result cannot be vouched for; see ``note``. Also False,
            without a warning, where the cross-check against JAX's float64 derivative was
            skipped (``check=False``): nothing vouched for it.
        note: the reason (``check=False``: "not checked (check=False): ..."), or None.
        colors, nnz: for ``sparse=True``, the passes the pattern's coloring needs and
            the pattern's nonzeros; None otherwise.
        via: for ``sparse=True``, how the passes were found where not from the
            pattern's own coloring (reverse mode through the selection front); else None.
        peak_bytes, residual_bytes, memory_counter: the call's memory, as
            ``Prepared.memory`` measures it (the same figures).

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> g, info = adlab.derivative(model, *model.setup(3), full_output=True)
        >>> info.trusted, info.f_evals
        (True, 1)
    """

    error_estimate: Any
    f_evals: int
    compile_s: float
    step: Any
    trusted: bool
    note: str | None
    colors: int | None = None
    nnz: int | None = None
    via: str | None = None
    peak_bytes: float | None = None
    residual_bytes: float | None = None
    memory_counter: str | None = None


def measured_memory(p: Any) -> dict[str, Any]:
    """``p.memory()``; where a counter failed, no figures and ``memory_counter`` saying why
    ("not measured: ..."): a derivative's ``full_output`` must not fail for its memory."""
    try:
        return p.memory()
    except Exception as exc:  # a counter's own failure: the derivative stands
        return {"peak_bytes": None, "residual_bytes": None,
                "memory_counter": f"not measured: {type(exc).__name__}: {exc}"}  # fmt: skip


class Prepared:
    """A derivative compiled for one set of shapes: ``p(x)``, or ``p(x, *args)``.

    ``p(x)`` takes the derivative at ``x`` with the other arguments bound at
    prepare time; ``p(x, *args)`` binds new ones and keeps them for later calls.
    Where the backend takes them as they are (JAX, jitted, of the prepared types)
    kept are the arguments themselves, converted (as at prepare time) when a
    later ``p(x)`` or ``p.inputs`` first needs them: an array changed in place
    before then is seen changed. ``p(*p.inputs)`` is the call a sweep times.
    Rebinding is not meant to race with calls from another thread.

    Attributes:
        mode, scheme, precision, backend, jit, wrt: the options it was built with.
        inputs: f's arguments as the backend holds them (JAX, PyTorch: arrays of the
            precision on the device; TensorFlow: tensors; NumPy, autograd: arrays).
        compile_s: trace + lower + compile seconds (JAX), or the first call of the
            compiled function (``torch.compile``, ``tf.function``); 0.0 when eager.
            Where ``compile_loaded``, the seconds to load it from adlab's cache instead
            (``adlab.engine.programs.store``); ``cold_compile_s`` is then what compiling
            it took (else it is ``compile_s``).
        f_evals: evaluations of f per derivative (AD: passes, one per input for
            forward and one per output for reverse).
        out_shape: shape of f's output.
        trusted, note, step: see ``DerivativeInfo``.
        timer: None, or for a program that runs outside Python (JavaScript), what times
            its calls where it runs (``adlab.measure`` uses it instead of timing ``p``).
        device: what it runs on where adlab chose it ("cpu", "wasm", "webgl"), else None.
        where: JavaScript: "node" or "browser" (where it runs); None: in Python.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> p = adlab.prepare(model, x, *data, mode="forward")
        >>> p(x).shape
        (3,)
        >>> p.f_evals, p.compile_s >= 0
        (3, True)
    """

    def __init__(self, *, built, program, impl, inputs, model, options, out_shape):
        self._fn = built.fn
        self._call = program.call  # x -> derivative (JAX: whatever its x64 state)
        self._traced = program.fallback  # the same for any x: traced anew, or converted
        self._cost_of = program.cost
        self._cost_fn = built.cost_fn  # the loop-free program XLA's cost analysis reads
        self._compiled = program.compiled  # JAX's compiled program (adlab.profile), or None
        self._impl = impl
        self._general: Callable | None = None
        self._rebinding: Callable | None | bool = None  # the backend's; False: none
        self._pending: tuple | None = None  # (x, *args) rebound, not yet converted
        self._model = model
        self._with_error = built.with_error
        self._where = options["where"]
        self._eager_cures = options["eager_cures"]
        self._inputs = inputs
        self._rest = inputs[1:]
        self._dtype = getattr(inputs[0], "dtype", _NO_DTYPE)  # the x the hot path is for
        # the call refuses an x of another dtype itself (JAX's compiled program): x's dtype
        # is read only after a refusal. A dtype read and compared on every call cost JAX's
        # smallest calls 2-4% (a Python property, then NumPy's comparison)
        self._typed = program.typed
        self.mode = options["mode"]
        self.scheme = options["scheme"]
        self.precision = options["precision"]
        self.backend = options["backend"]
        self.jit = options["jit"]
        self.wrt = options["wrt"]
        self.compile_s = program.compile_s
        self.compile_loaded = program.loaded
        cold = program.cold_compile_s
        self.cold_compile_s = program.compile_s if cold is None else cold
        self.f_evals = built.f_evals
        self.out_shape = out_shape
        self.trusted = built.trusted
        self.note = built.note
        self.step = built.step
        self._first = program.first
        self._memory_of = program.memory  # measured where it runs (JavaScript), or None
        self._broken = program.broken
        self._reverse_of = built.reverse_of  # whose forward pass keeps the residuals
        self._memory: dict[str, Any] | None = None
        # a program that runs outside Python is timed where it runs (JavaScript's timing.js)
        self.timer = program.timer
        self.device: str | None = None  # set by prepare
        self.where: str | None = None  # set by prepare

    @property
    def inputs(self) -> tuple:
        if self._pending is not None:
            self._bind_pending()
        return self._inputs

    @property
    def model(self) -> Any:
        """The ``Model`` it was prepared from."""
        return self._model

    @property
    def compiled(self) -> Any:
        """JAX's compiled program (for ``adlab.profile``), or None."""
        return self._compiled

    def first_result(self) -> tuple[Any, Any]:
        """(derivative, error estimate or None) at ``p.inputs``, as NumPy arrays: the
        result of the call that compiling made, where the backend kept it, else a call."""
        if self._first is not None:
            value, err = self._first if self._with_error else (self._first, None)
        else:
            value, err = self.with_error(*self.inputs)
        return self._impl.to_numpy(value), self._impl.to_numpy(err)

    def __call__(self, x: Any, *args: Any) -> Any:
        # The hot path, written out: a Python frame is ~2% of a small call. The
        # bound arguments themselves (``p(*p.inputs)``) are recognised in C (map).
        if args and not (len(args) == len(self._rest) and all(map(is_, args, self._rest))):
            out = self._rebind(x, args)
        elif x is not self._inputs[0] and not self._typed and self._foreign(x):
            out = self._converted(x)
        else:
            try:
                out = self._call(x)
            except Exception as exc:
                out = self._refused(x, exc)
        return out[0] if self._with_error else out

    def with_error(self, x: Any, *args: Any) -> tuple[Any, Any]:
        """(derivative, Richardson error estimate or None)."""
        if args and not (len(args) == len(self._rest) and all(map(is_, args, self._rest))):
            out = self._rebind(x, args)
        elif x is not self._inputs[0] and not self._typed and self._foreign(x):
            out = self._converted(x)
        else:
            try:
                out = self._call(x)
            except Exception as exc:
                out = self._refused(x, exc)
        return out if self._with_error else (out, None)

    def _foreign(self, x: Any) -> bool:
        """Whether ``x`` is not an array of the program's dtype (another dtype, a list)."""
        return getattr(x, "dtype", _NO_DTYPE) != self._dtype

    def _refused(self, x: Any, exc: Exception) -> Any:
        """After a failed call: an ``x`` of another dtype is converted (this call only);
        if the program refused ``x`` otherwise (another shape; or the prepared x itself:
        the program does not run, ``Program.broken``), go on (now and later) through the
        backend's fallback; a failure of the model names its line."""
        if x is not self._inputs[0] and self._foreign(x):
            return self._converted(x)
        if self._call is not self._traced:
            if x is self._inputs[0] and self._broken is not None:
                self._broken()  # refused the very x it was made for: the program is at fault
            self._call = self._traced
            self._typed = False  # the fallback traces an x of another dtype: checked first
            try:
                return self._traced(x)
            except Exception as again:
                exc = again
        self._raise_said(exc)

    def _converted(self, x: Any) -> Any:
        """The derivative at an ``x`` of another dtype than the program's (or no array):
        converted to its precision first. Frameworks that take a NumPy array as it is
        (NumPy, autograd, TensorFlow) would compute in x's dtype, not the precision the
        record states; JAX's would trace it anew in x's dtype."""
        if self._pending is not None:  # the data last given, bound first (as _bound_later)
            self._bind_pending()
        if self._dtype is not _NO_DTYPE:  # x is an array: as prepare casts it (a list too)
            wrt = (0,) if 0 in wrt_indices(self.wrt) else ()
            x = np.asarray(self._impl.to_numpy(x))
            x = cast_args((x,), dtype_of(self.precision), wrt)[0]
        try:
            return self._traced(x)
        except Exception as exc:
            self._raise_said(exc)

    def _raise_said(self, exc: Exception) -> NoReturn:
        """Raise the model's failure at its line, where ``exc`` is one; else ``exc``."""
        err = self._model.translate(exc, self._where, jit=self._eager_cures)
        if err is None:
            raise exc
        raise err from exc

    def _rebind(self, x: Any, args: tuple) -> Any:
        """The derivative at new arguments, bound for later calls.

        Those of the prepared types go as they are to the backend's program that
        takes every argument (built on the first such call), and are converted
        only when a later call needs them (``_bind_pending``). Others, or where the
        backend has no such program, are converted here first."""
        fast = self._rebinding
        if fast is None:
            fast = self._rebinding = self._fast_rebinding()
        if fast:
            try:
                out = fast(*args, x)
            except Exception:  # not the types it was built for: converted, as below
                pass
            else:
                self._pending = (x, *args)
                self._rest = ()  # the caller's own arrays are never taken for the bound ones
                self._call = self._bound_later
                return out
        self._pending = None
        x = self._bind((x, *args))
        try:
            return self._call(x)
        except Exception as exc:
            return self._refused(x, exc)

    def _fast_rebinding(self) -> Callable | bool:
        """The backend's call that takes every argument as given, or False (none; or
        it could not be built, say f cannot be traced with its data as arguments:
        the converting path then reports what the user can act on)."""
        try:
            return self._impl.rebinding(self._general_fn(), self._inputs, self.precision,
                                        self.jit) or False  # fmt: skip
        except Exception:
            return False

    def _general_fn(self) -> Callable:
        if self._general is None:
            self._general = self._impl.general(self._fn, jit=self.jit)
        return self._general

    def _bind(self, args: tuple, typed: bool = False) -> Any:
        """Convert and bind ``args`` (x first); later calls pass them to the program
        that takes every argument (compiled once, on the first such call). Returns x.
        ``typed``: they are of the types the backend's fast call was built for."""
        wrt = wrt_indices(self.wrt)
        self._inputs = backend_inputs(args, self.precision, self.backend, wrt)
        self._rest = self._inputs[1:]
        self._dtype = getattr(self._inputs[0], "dtype", _NO_DTYPE)
        general = self._general_fn()
        self._call = self._traced = self._impl.rebind(general, self._inputs, self.precision)
        # the fast call's compiled program refuses other dtypes; the general one traces them
        self._typed = typed
        if typed:  # the fast call's compiled program: nothing traced or compiled anew
            self._call = functools.partial(self._rebinding, *self._rest)
        return self._inputs[0]

    def _bind_pending(self) -> None:
        """Convert and bind the arguments the last fast rebinding kept."""
        pending, self._pending = self._pending, None
        self._bind(pending, typed=True)

    def _bound_later(self, x: Any) -> Any:
        """``p(x)`` after a fast rebinding: its arguments bound now, then called."""
        self._bind_pending()
        return self._call(x)

    def cost(self) -> dict[str, float] | None:
        """XLA's analysis of the compiled derivative, PyTorch's count of its matrix
        products, or None (JAX not jitted, or a framework with neither).

        PyTorch (``backends/torch/flops``): ``flops`` from ``FlopCounterMode``, which
        counts matrix products, convolutions and attention only, and ``counter``
        saying so; the derivative is run once more, eagerly, to count it.

        Keys: ``flops``, ``transcendentals``, ``bytes_accessed`` and, from the
        memory analysis, ``temp_bytes``, ``argument_bytes`` (every argument,
        the bound ones held in the program included), ``output_bytes``.

        XLA counts a loop body once. Where the mode evaluates f in chunks
        (large numeric and complex-step batches), the first three come from
        the same computation written without the loop, lowered but not
        compiled; the memory is the compiled program's own.
        """
        cost = self._cost_of()
        return None if cost is None else dict(cost)

    def memory(self) -> dict[str, Any]:
        """What one call holds in memory, measured once (at ``p.inputs``) by the
        framework's own counter, outside any timed loop; the record's fields.

        Keys: ``peak_bytes``, the most one call holds at once above its inputs (JAX
        jitted: XLA's buffer assignment, temporaries and outputs); ``residual_bytes``,
        for a derivative with a reverse part, what its forward pass keeps for the
        backward pass, each buffer once, f's arguments not counted (None without one);
        ``memory_counter``, how both were counted (the backend's ``peak`` and ``residuals``).
        """
        if self._memory is None:
            self._memory = self._measure_memory()
        return dict(self._memory)

    def _measure_memory(self) -> dict[str, Any]:
        if self._memory_of is not None:
            return dict(self._memory_of())
        impl, inputs = self._impl, self.inputs
        with precision_scope(self.precision):
            peak, counter = impl.peak(self._call, inputs[0], self._compiled)
            residual = None
            if self._reverse_of is not None:
                residual, how = impl.residuals(self._reverse_of, inputs, wrt_indices(self.wrt))
                counter = f"peak: {counter}; residuals: {how}"
        return {"peak_bytes": peak, "residual_bytes": residual, "memory_counter": counter}

    def __repr__(self) -> str:
        return (
            f"Prepared({self._model.name!r}, mode={self.mode!r}, wrt={self.wrt!r}, "
            f"precision={self.precision!r}, backend={self.backend!r}, jit={self.jit}, "
            f"compile_s={self.compile_s:.3g}, f_evals={self.f_evals})"
        )
