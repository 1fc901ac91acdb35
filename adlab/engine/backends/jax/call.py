"""JAX's call path: a derivative compiled once, called as thinly as JAX's own jitted call.

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

import contextlib
import functools
import math
from collections.abc import Callable
from typing import Any

import jax

from ...model.precision import precision_scope, restore_x64, swap_x64
from ...model.userline import TRACER_ERRORS
from ...programs import memory as _memory
from ...programs import store as _programs
from ..base import Program
from .compile_clock import CompileClock
from .disk_cache import use_cache

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
    held = {i: inputs[i] for i in _held(inputs)}
    passed = tuple(a for i, a in enumerate(rest, 1) if i not in held)

    def run(*given: Any) -> Any:  # given: the passed ones, then x
        kept = jax.tree_util.tree_map(_barrier, held)
        more = iter(given[:-1])
        return fn(given[-1], *(kept[i] if i in kept else next(more)
                               for i in range(1, len(inputs))))  # fmt: skip

    if _programs.kept():
        # named apart from programs JAX's cache may hold (written by earlier adlabs, or
        # as a wrapped function's): one loaded from there cannot be kept in adlab's own
        run.__name__ = run.__qualname__ = "adlab_program"
    program = jax.jit(run)
    call = functools.partial(program, *passed) if passed else program
    return call, program, (*passed, inputs[0])


def direct(compiled: Any) -> Callable:
    """The compiled program's own C++ call, built without running the program.

    ``Compiled.__call__`` is a Python frame (~0.3 us) around the C++ call it builds on
    its first call. It is built here as ``__call__`` builds it, from private attributes
    read guarded: a JAX that moved them gets ``Compiled.__call__`` itself. Built, not
    called: a call here ran the whole derivative (asynchronously) before a sweep's
    budget could skip it, and the next program's first call waited behind it on JAX's
    CPU stream: forward mode on mlp_batched at n = 300, predicted at 47 s and skipped,
    made reverse's first call take 35 s (issue 38).
    """
    call = getattr(compiled, "_call", None)  # built already, where it was called before
    if call is None:
        with contextlib.suppress(Exception):  # None where JAX has none (host callbacks)
            call = compiled._executable.create_cpp_call(compiled._params)
    return call if callable(call) else compiled


def in_precision(call: Callable, x64: bool) -> Callable:
    """``call`` with JAX's x64 state set for this thread around each call."""

    def run(x: Any) -> Any:
        token = swap_x64(x64)
        try:
            return call(x)
        finally:
            restore_x64(token)

    return run


def all_passed(fn: Callable, jit: bool) -> Callable:
    """``fn`` taking x last, as ``bind``'s partial passes it; jitted if ``jit``."""

    def run(*given: Any) -> Any:
        return fn(given[-1], *given[:-1])

    return jax.jit(run) if jit else run


def rebinding(general: Any, inputs: tuple, precision: str) -> Callable:
    """``call(*args, x)``: ``general`` (``all_passed``'s, jitted) compiled for the types of
    ``inputs``, called through its own C++ call with the arguments as the caller has them.

    That call does what a user's jitted call does with host arrays, in C++: it copies
    them to the device, casting float64 to float32 where x64 is off (set here for the
    precision). Converting them in Python first (``backend_inputs``: a ``device_put``
    per array) cost 20-50 times the call. Other shapes, dtypes or structures it refuses
    (TypeError): the caller converts those and traces anew.
    """
    example = (*inputs[1:], inputs[0])
    with precision_scope(precision):
        compiled = general.trace(*example).lower().compile()
    call = direct(compiled)
    x64 = precision == "float64"

    def run(*given: Any) -> Any:
        token = swap_x64(x64)
        try:
            return call(*given)
        finally:
            restore_x64(token)

    return run


def _trace(jitted: Any, args: tuple, eager: bool) -> Any:
    """``jitted.trace(*args)``; None when running eagerly and the function holds
    Python control flow on traced values (it can run, but not be traced)."""
    try:
        return jitted.trace(*args)
    except TRACER_ERRORS:
        if eager:
            return None
        raise


def program(built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
            guard: Callable) -> Program:  # fmt: skip
    """Bind, trace and (if ``jit``) compile ``built.fn``, or load it from adlab's cache of
    compiled programs; refuse what would not fit in memory.

    ``guard(thunk, cures)`` runs a step that may fail in the model's code.
    """
    with precision_scope(precision):
        call, jitted, example = bind(built.fn, inputs, jit=jit)
        through_jit = fast = in_precision(call, precision == "float64")
        use_cache()  # JAX's compilation cache on disk, once per process
        # what is compiled is what p(x) runs; run eagerly, the general function
        # is traced only to find its largest array
        if not jit:
            jitted, example = jax.jit(built.fn), args
        # adlab's own cache: a hit skips tracing and lowering (program_cache)
        key = _programs.key(inputs, _held(inputs)) if jit else None
        hit = _programs.load(key) if key else None
        if hit is None:
            compiled, compile_s = _compile(jitted, example, jit, guard, key)
        else:
            _memory.check(*hit.biggest)
            _memory.check(hit.xla["temp_bytes"] + hit.xla["output_bytes"],
                          "XLA's compiled program")  # fmt: skip
            compiled, compile_s = hit.compiled, hit.load_s
    broken: Callable[[], None] | None = None
    if compiled is not None:
        fast = direct(compiled)  # nothing runs until p is called (direct's docstring)
        if len(example) > 1:  # the passed arguments, before x
            fast = functools.partial(fast, *example[:-1])
        if hit is not None:  # an entry that loads but does not run: dropped when it fails
            broken = functools.partial(_programs.drop, key)
    cost = functools.cache(lambda: _cached_cost(key, hit, compiled, inputs, example,
                                                built.cost_fn, args, precision))  # fmt: skip
    return Program(call=fast, fallback=through_jit, compile_s=compile_s, cost=cost,
                   compiled=compiled, loaded=hit is not None,
                   cold_compile_s=hit.compile_s if hit is not None else compile_s,
                   typed=compiled is not None, broken=broken)  # fmt: skip


def _compile(jitted: Any, example: tuple, jit: bool, guard: Callable,
             key: str | None) -> tuple[Any, float]:  # fmt: skip
    """(compiled or None, seconds): trace (and if ``jit``, lower and compile) ``jitted`` at
    ``example``, checking its memory; kept in adlab's cache under ``key``, if any.

    The seconds returned are the wall seconds waited; the cache keeps the CPU seconds
    (``compile_clock``): a later run predicts its compiles by them, and a busy machine
    stretches the wall seconds several times over.
    """
    with CompileClock() as clock:
        traced = guard(lambda: _trace(jitted, example, eager=not jit), True)
        biggest: tuple[int, str] = (0, "")
        if traced is not None:
            size, aval = _memory.largest_array(traced.jaxpr.jaxpr)
            biggest = (size, f"an intermediate array {aval.str_short() if aval else ''}")
            _memory.check(*biggest)
        if not jit:
            return None, 0.0
        with _programs.fresh(key) as storable:
            compiled = traced.lower().compile()
        clock.stop()
    mem = xla_cost(compiled)
    _memory.check(mem["temp_bytes"] + mem["output_bytes"], "XLA's compiled program")
    if storable():
        _programs.store(key, compiled, compile_s=clock.kept_s, biggest=biggest, xla=mem)
    return compiled, clock.wall_s


def _held(inputs: tuple) -> set[int]:
    """The indices of the bound arguments ``bind`` holds in the program as constants."""
    return {i for i, a in enumerate(inputs) if i > 0 and _nbytes(a) <= HOLD_MAX_BYTES}


def _cached_cost(key, hit, compiled, *rest) -> dict[str, float] | None:
    """``_cost``, read from adlab's cache where it was stored, and stored where it was not."""
    if hit is not None and hit.cost is not None:
        return dict(hit.cost)
    cost = _cost(compiled, *rest)
    if key and cost is not None:
        _programs.remember_cost(key, cost)
    return cost


def _cost(compiled, inputs, example, cost_fn, args, precision) -> dict[str, float] | None:
    if compiled is None:
        return None
    cost = xla_cost(compiled)
    # the bound arguments held in the program are its inputs all the same
    cost["argument_bytes"] += _nbytes(inputs) - _nbytes(example)
    if cost_fn is not None:
        with precision_scope(precision):
            flat = jax.jit(cost_fn).lower(*args).cost_analysis()
        cost.update(_counts(flat))
    return cost


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
