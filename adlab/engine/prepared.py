"""``Prepared``: a derivative compiled once, called as thinly as JAX's own jitted call.

``prepare`` binds every argument after the first, converted once (cast to the
precision, placed on the device), so ``p(x)`` hands JAX one array, as a user's
``jax.jit(jax.grad(f))`` closed over its data does.

``p(x)`` calls the compiled program itself, through the C++ call JAX builds
for it. Its types are fixed, so JAX's x64 state does not matter to it: a
``jax.jit`` function would need that state set on each call (jit caches per
x64 state, and called outside ``jax.enable_x64`` a float64 derivative would be
traced again in float32). An ``x`` the program was not compiled for (another
shape, a NumPy float64 array outside x64) is refused by it; from then on ``p``
calls the jitted function with the precision set, which traces such inputs anew.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from operator import is_
from typing import Any

import jax

from .args import backend_inputs, wrt_indices
from .precision import precision_scope, restore_x64, swap_x64

#: Bound arguments up to this size are held in the compiled program as constants:
#: each argument passed per call costs JAX ~0.5 us of checks. Larger ones are
#: passed: there the call is dominated by arithmetic, and a program holding
#: them compiles slower and keeps a second copy of them.
HOLD_MAX_BYTES = 1 << 16


def _nbytes(tree: Any) -> int:
    return sum(int(getattr(a, "nbytes", 0)) for a in jax.tree_util.tree_leaves(tree))


def _barrier(a: Any) -> Any:
    return jax.lax.optimization_barrier(a) if isinstance(a, jax.Array) else a


def bind(fn: Callable, inputs: tuple, jit: bool) -> tuple[Callable, Any, tuple]:
    """(call, program, example): ``call(x)`` is ``fn(x, *inputs[1:])``; ``program`` is
    the jitted function it runs (None when not jitted), ``example`` its arguments.

    Jitted, the small bound arguments sit in the program behind an
    optimization barrier: XLA does not fold arithmetic on them alone, so the
    program (its flops, its time) is the one new data of the same shapes runs.
    The larger ones are passed before x (``functools.partial``, a C call: no
    Python frame per call).
    """
    rest = inputs[1:]
    if not jit:
        return (lambda x: fn(x, *rest)), None, ()
    held = {i: a for i, a in enumerate(rest, 1) if _nbytes(a) <= HOLD_MAX_BYTES}
    passed = tuple(a for i, a in enumerate(rest, 1) if i not in held)

    def run(*given: Any) -> Any:  # given: the passed ones, then x
        kept = jax.tree_util.tree_map(_barrier, held)
        more = iter(given[:-1])
        return fn(given[-1], *(kept[i] if i in kept else next(more)
                               for i in range(1, len(inputs))))  # fmt: skip

    program = jax.jit(run)
    call = functools.partial(program, *passed) if passed else program
    return call, program, (*passed, inputs[0])


def direct(compiled: Any, example: tuple) -> tuple[Callable, Any]:
    """(call, out): the compiled program's own C++ call, and its first result.

    ``Compiled.__call__`` is a Python frame (~0.3 us) around the C++ call it
    builds on the first call; that attribute is private, so it is read
    guarded: a JAX that moved it gets ``Compiled.__call__`` itself.
    """
    out = compiled(*example)
    call = getattr(compiled, "_call", None)
    return (call if callable(call) else compiled), out


def in_precision(call: Callable, x64: bool) -> Callable:
    """``call`` with JAX's x64 state set for this thread around each call."""

    def run(x: Any) -> Any:
        token = swap_x64(x64)
        try:
            return call(x)
        finally:
            restore_x64(token)

    return run


def _all_passed(fn: Callable, jit: bool) -> Callable:
    """``fn`` taking x last, as ``bind``'s partial passes it; jitted if ``jit``."""

    def run(*given: Any) -> Any:
        return fn(given[-1], *given[:-1])

    return jax.jit(run) if jit else run


class Prepared:
    """A derivative compiled for one set of shapes: ``p(x)``, or ``p(x, *args)``.

    ``p(x)`` takes the derivative at ``x`` with the other arguments bound at
    prepare time; ``p(x, *args)`` binds new ones (converted as at prepare time)
    and keeps them for later calls. ``p(*p.inputs)`` is the call a sweep times.
    Rebinding is not meant to race with calls from another thread.

    Attributes:
        mode, scheme, precision, backend, jit, wrt: the options it was built with.
        inputs: f's arguments as the backend holds them (JAX: device arrays of
            the precision; NumPy: arrays of the precision).
        compile_s: trace + lower + compile seconds (0.0 when ``jit=False``).
        f_evals: evaluations of f per derivative (AD: passes, one per input for
            forward and one per output for reverse).
        out_shape: shape of f's output.
        trusted, note, step: see ``DerivativeInfo``.
    """

    def __init__(self, *, built, call, traced, example, inputs, model, options, compiled,
                 compile_s, out_shape, args):  # fmt: skip
        self._fn = built.fn
        self._call = call  # x -> derivative, whatever JAX's x64 state
        self._traced = traced  # the same through the jitted function: any shape, traced anew
        self._example = example
        self._general: Callable | None = None
        self._model = model
        self._compiled = compiled
        self._cost_fn = built.cost_fn
        self._args = args if built.cost_fn is not None else None
        self._cost: dict[str, float] | None = None
        self._with_error = built.with_error
        self._x64 = options["precision"] == "float64"
        self._where = options["where"]
        self._eager_cures = options["eager_cures"]
        self.inputs = inputs
        self._rest = inputs[1:]
        self.mode = options["mode"]
        self.scheme = options["scheme"]
        self.precision = options["precision"]
        self.backend = options["backend"]
        self.jit = options["jit"]
        self.wrt = options["wrt"]
        self.compile_s = compile_s
        self.f_evals = built.f_evals
        self.out_shape = out_shape
        self.trusted = built.trusted
        self.note = built.note
        self.step = built.step
        self._first = None

    def __call__(self, x: Any, *args: Any) -> Any:
        # The hot path, written out: a Python frame is ~2% of a small call. The
        # bound arguments themselves (``p(*p.inputs)``) are recognised in C (map).
        if args and not (len(args) == len(self._rest) and all(map(is_, args, self._rest))):
            x = self._rebind(x, args)
        try:
            out = self._call(x)
        except Exception as exc:
            out = self._refused(x, exc)
        return out[0] if self._with_error else out

    def with_error(self, x: Any, *args: Any) -> tuple[Any, Any]:
        """(derivative, Richardson error estimate or None)."""
        if args and not (len(args) == len(self._rest) and all(map(is_, args, self._rest))):
            x = self._rebind(x, args)
        try:
            out = self._call(x)
        except Exception as exc:
            out = self._refused(x, exc)
        return out if self._with_error else (out, None)

    def _refused(self, x: Any, exc: Exception) -> Any:
        """After a failed call: if the compiled program refused ``x``, go on (now and
        later) through the jitted function; a failure of the model names its line."""
        if self._call is not self._traced:
            self._call = self._traced
            try:
                return self._traced(x)
            except Exception as again:
                exc = again
        err = self._model.translate(exc, self._where, jit=self._eager_cures)
        if err is None:
            raise exc
        raise err from exc

    def _rebind(self, x: Any, args: tuple) -> Any:
        """Convert and bind new arguments; later calls pass them to a program that
        takes every argument (compiled once, on the first such call)."""
        wrt = wrt_indices(self.wrt)
        self.inputs = backend_inputs((x, *args), self.precision, self.backend, wrt)
        self._rest = self.inputs[1:]
        if self._general is None:
            self._general = _all_passed(self._fn, jit=self.backend == "jax" and self.jit)
        call = functools.partial(self._general, *self.inputs[1:])
        self._call = self._traced = in_precision(call, self._x64)
        return self.inputs[0]

    def cost(self) -> dict[str, float] | None:
        """XLA's analysis of the compiled derivative, or None when not jitted.

        Keys: ``flops``, ``transcendentals``, ``bytes_accessed`` and, from the
        memory analysis, ``temp_bytes``, ``argument_bytes`` (every argument,
        the bound ones held in the program included), ``output_bytes``.

        XLA counts a loop body once. Where the mode evaluates f in chunks
        (large numeric and complex-step batches), the first three come from
        the same computation written without the loop, lowered but not
        compiled; the memory is the compiled program's own.
        """
        if self._compiled is None:
            return None
        if self._cost is None:
            cost = xla_cost(self._compiled)
            # the bound arguments held in the program are its inputs all the same
            held = _nbytes(self.inputs) - _nbytes(self._example)
            cost["argument_bytes"] += held
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
