"""How far a float32 finite difference may be from the derivative at the step it took.

A float64 difference is held to one fixed tolerance (``compare.tolerance``): its error,
truncation ~h^k |f^(k+1)| plus rounding ~eps |f| / h, is below 1e-4 wherever f is smooth.
In float32 the same two terms are 1e-4 to 1e-1 of the derivative depending on f, so no
fixed number tells an inexact answer from a wrong one. ``step_error`` computes them for
the step actually taken, per entry, with JAX in float64 beside float32:

- truncation: c h^k |d^(k+1) f / dx_j^(k+1)| for the scheme's order k (forward 1,
  central 2, Richardson 4: Taylor's leading term), the derivative taken by nested forward
  mode at x and at each point of the stencil (the remainder's f^(k+1) is somewhere on the
  step: the largest of these stands for it);
- rounding: f's float32 rounding (measured: f in float32 against float64 at every point of
  the stencil, at least eps32 |f|) times the stencil's weights over the step.

Both are what f's smooth pieces allow: a kink within the step (``clip``, ``maximum``, ``abs``)
is a jump of f' that no f^(k+1) at a point sees, so a difference across one is beyond the
bound, wrong rather than inexact. The same scheme taken in float64 over the very same points
(``at_step``) says whether f's values along the step show one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..backends import FACTS, JAVASCRIPT, REFERENCE
from ..model.args import cast_args
from ..model.precision import precision_scope
from .numeric import combine, stencil_points

#: scheme -> (k, c): its leading truncation term c h^k f^(k+1) (Taylor): forward h/2 f'',
#: central h^2/6 f''', and Richardson's (4 D(h/2) - D(h)) / 3, whose h^2 terms cancel:
#: D(h)'s h^4/120 f^(5) less four times D(h/2)'s h^4/1920 f^(5), over 3: h^4/480 f^(5)
TRUNCATION = {"forward": (1, 1 / 2), "central": (2, 1 / 6), "richardson": (4, 1 / 480)}
#: scheme -> w: values of f each off by r make the difference off by at most w r / h
#: (forward: 2 r / h; central: 2 r / 2h; Richardson: (4 x 2 r / h + 2 r / 2h) / 3)
ROUNDING = {"forward": 2.0, "central": 1.0, "richardson": 3.0}
#: the float64 differences over the same points are off by more than this many times their
#: truncation and rounding where f is smooth: f's values along the step show a kink (a
#: smooth f gives about 1: the truncation estimate is Taylor's leading term itself)
ROOM64 = 10.0
#: the bound's programs run once: XLA's lowest optimization level compiles them faster (as
#: ``whole_reference``'s), and IEEE float64 is the same at every level
FAST_COMPILE = {"xla_backend_optimization_level": 0}
#: the float64 program holds 2 ** (k + 1) copies of f's intermediates per coordinate and
#: point, all at once: above this it is not run (no claim) rather than exhaust memory
MEMORY = 2 * 2**30
EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class StepError:
    """Per entry of the derivative (flat, in ``compare.flat``'s order: each differentiated
    argument's (outputs, inputs) block in turn), for the float32 step its input took.

    Attributes:
        bound: truncation + rounding a right float32 difference is within (see the module).
        at_step: the scheme in float64 over the same float32 points.
        smooth64: what ``at_step`` may be off where f is smooth there (its truncation and
            float64 rounding): more, and f has a kink within the step.
        exact: the derivative at the float32 x the points are about (float64 reverse or
            forward mode), which ``at_step`` is held to (x's rounding to float32 moves
            f' by more than float64's differences err: rosenbrock's by 1e-7).
        steps: the step h the entry's input took.
        inputs: the entry's input, as (argument index, flat coordinate).
        shapes: argument index -> its shape (to name a coordinate as the user indexes it).
        scheme, given: the scheme, and whether the step was the user's (else the default).
    """

    bound: np.ndarray
    at_step: np.ndarray
    smooth64: np.ndarray
    exact: np.ndarray
    steps: np.ndarray
    inputs: list[tuple[int, int]]
    shapes: dict[int, tuple[int, ...]]
    scheme: str
    given: bool


def step_error(model: Any, args: tuple, indices: tuple[int, ...], scheme: str,
               step: Any = None) -> StepError | None:  # fmt: skip
    """The float32 difference's error at its step (``StepError``) for ``model``'s derivative
    at ``args`` with respect to ``indices``, by ``scheme`` ("forward", "central" or
    "richardson") with the user's absolute ``step`` (None: the default, eps32 ** power x
    max(|x|, 1), as ``numeric`` takes it). None where it cannot be said (another scheme, or
    f not finite along the step)."""
    if scheme not in TRUNCATION:
        return None
    args64 = cast_args(tuple(args), np.float64, indices)
    parts = [_one(model, args64, i, scheme, step) for i in indices]
    if any(p is None for p in parts):
        return None
    cat = [np.concatenate([np.ravel(p[k]) for p in parts]) for k in range(5)]  # type: ignore[index]
    inputs = [(i, j) for i, p in zip(indices, parts, strict=True)
              for j in np.ravel(p[5])]  # type: ignore[index]  # fmt: skip
    return StepError(*cat, inputs, {i: np.shape(args[i]) for i in indices}, scheme,
                     step is not None)  # fmt: skip


def _one(model: Any, args64: tuple, i: int, scheme: str, step: Any) -> tuple | None:
    """(bound, at_step, smooth64, exact, steps, coordinates), each (outputs, n), for
    argument i."""
    xf = np.ravel(np.asarray(args64[i])).astype(np.float32)
    n = xf.size
    if step is not None:
        step = np.broadcast_to(np.asarray(step, dtype=np.float32), (n,)).copy()
    blocks = stencil_points(xf, scheme, step, np.float32, np) if n else []
    if not n:
        return None
    h = (blocks[0] - xf).astype(np.float64)  # the step each coordinate took, as numeric's
    points = np.stack(blocks).astype(np.float64)  # (B, n): coordinate j's values
    k, c = TRUNCATION[scheme]
    with precision_scope("float64"):
        f0, F64, high, exact = _run64(model.function(REFERENCE, "float64"), args64, i, points,
                               xf.astype(np.float64), k + 1)  # fmt: skip
    args32 = cast_args(tuple(args64), np.float32, (i,))
    with precision_scope("float32"):
        g0, F32 = _run32(model.function(REFERENCE, "float32"), args32, i, np.stack(blocks))
    m = f0.size
    F64, F32 = F64.reshape(len(blocks), n, m), F32.reshape(len(blocks), n, m)
    if not (np.all(np.isfinite(F64)) and np.all(np.isfinite(high))):
        return None
    # f's float32 rounding per output: measured at every point, at least eps32 |f|
    off = np.abs(np.asarray(F32, np.float64) - F64)
    off = np.where(np.isfinite(off), off, 0.0)
    noise = np.maximum.reduce([np.max(off, axis=(0, 1)), np.abs(g0 - f0),
                               EPS32 * np.max(np.abs(F64), axis=(0, 1)),
                               EPS32 * np.abs(f0)])  # fmt: skip
    truncation = c * h[:, None] ** k * np.max(np.abs(high), axis=0).reshape(n, m)
    rounding = ROUNDING[scheme] * noise[None, :] / h[:, None]
    at_step, _ = combine(scheme, F64.reshape(-1, m), f0, points.reshape(-1), xf.astype(np.float64))
    rounding64 = rounding * (EPS64 / EPS32)
    T = np.transpose  # (n, m) -> the derivative's (m, n) block
    return (T(truncation + rounding), T(at_step), T(truncation + rounding64),
            exact.reshape(m, n), np.broadcast_to(h, (m, n)),
            np.broadcast_to(np.arange(n), (m, n)))  # fmt: skip


#: scheme -> the points a difference takes f's values at, in words
STENCIL = {"forward": "x and x + h", "central": "x - h and x + h",
           "richardson": "x - h, x - h/2, x + h/2 and x + h"}  # fmt: skip


def kink_note(err: StepError, ref: np.ndarray, value: np.ndarray, names: list[str],
              near: bool = False) -> str | None:  # fmt: skip
    """Where f has a kink within the step, in the user's terms (the input, the step, what
    the float64 differences over the same points give), or None where nothing shows one.
    ``ref``, ``value``: the derivative and the float32 difference, flat. ``near``: the
    reference's own float64 central differences disagreed with reverse mode."""
    # f's values show a kink where the float64 differences over the same points are off by
    # more than a smooth f allows them, and by more than a float32 one may be: the kink,
    # not rounding, is then what the float32 difference is off by (a quartic's Richardson
    # differences have no truncation, and float64's rounding alone may exceed ROOM64 x 0)
    off64 = np.abs(err.at_step - err.exact)
    floor = 1e-12 * float(np.max(np.abs(err.exact), initial=0.0))
    kinked = (off64 > ROOM64 * err.smooth64 + floor) & (off64 > err.bound)
    if not kinked.any():
        return None if not near else (
            "f has a kink near x: JAX's own float64 central differences disagreed with its "
            "reverse mode there, so differences whose step straddles it are wrong, not "
            "merely inexact.")  # fmt: skip
    k = int(np.argmax(np.where(kinked, np.abs(value - ref), -1.0)))
    i, j = err.inputs[k]
    name = names[i] if i < len(names) else f"argument {i}"
    shape = err.shapes[i]
    if shape:
        name += "[" + ", ".join(map(str, np.unravel_index(j, shape))) + "]"
    step = "the step given" if err.given else f"float32's default step for {err.scheme}"
    return (f"f has a kink within the step: along {name}, its values at {STENCIL[err.scheme]} "
            f"(h = {err.steps[k]:.2g}, {step}) are not a smooth function's (the same "
            f"differences taken in float64 over those points give {err.at_step[k]:.6g} where "
            f"the derivative is {ref[k]:.6g}): f's slope changes inside the step, as at a "
            "clip, maximum, minimum or abs, and a difference across it is wrong, not merely "
            "inexact.")  # fmt: skip


def what_to_do(backend: str) -> str:
    """What to do about a difference across a kink, on ``backend``."""
    facts = FACTS[backend]
    ad = "mode='reverse'" if facts.has_ad else "mode='complex-step'"
    wide = ("precision='float64'" if "float64" in facts.precisions
            else f"backend={JAVASCRIPT!r} (float64)")  # fmt: skip
    return (f" What to do: use an exact mode ({ad}), which takes no step; or {wide}, whose "
            "default step is far smaller; or a step= that keeps x - h and x + h on one side "
            "of the kink (in float32 the rounding error grows as eps |f| / h)")


def _with(args: tuple, i: int, flat: Any) -> list:
    """``args`` with argument i replaced by ``flat`` in its shape."""
    out = list(args)
    out[i] = jnp.reshape(flat, np.shape(args[i]))
    return out


def _run64(f: Callable, args: tuple, i: int, points: np.ndarray, xf: np.ndarray,
           order: int) -> tuple[np.ndarray, ...]:  # fmt: skip
    """(f(x), f at the stencil's points (B, n, m), d^order f / dx_j^order at x and at the
    stencil's ends (<= 3, n, m), f' at x (m, n)), in float64: one jitted program."""
    x = jnp.asarray(xf)
    n = xf.size

    def value(j: Any, v: Any) -> Any:  # f with coordinate j at v
        return jnp.ravel(f(*_with(args, i, x.at[j].set(v))))

    def derivative(j: Any, v: Any) -> Any:  # along coordinate j, ``order`` times, at v
        g = functools.partial(value, j)
        for _ in range(order):
            g = _tangent(g)
        return g(v)

    def program(points: Any) -> Any:
        js = jnp.arange(n)
        at = jax.vmap(jax.vmap(value), in_axes=(None, 0))(js, points)
        # at x and the stencil's ends (Richardson's inner points lie between them); every
        # coordinate batched (``jax.lax.map`` over batches of them compiled 10x slower)
        bases = jnp.concatenate([x[None], points[:2]])
        high = jax.vmap(jax.vmap(derivative), in_axes=(None, 0))(js, bases)
        whole = lambda v: jnp.ravel(f(*_with(args, i, v)))  # noqa: E731
        exact = (jax.jacrev if at.shape[-1] < n else jax.jacfwd)(whole)(x)  # (m, n)
        return whole(x), at, high, exact

    points = jnp.asarray(points)
    compiled = jax.jit(program).lower(points).compile(compiler_options=FAST_COMPILE)
    memory = compiled.memory_analysis()
    if getattr(memory, "temp_size_in_bytes", 0) > MEMORY:
        raise MemoryError(f"the bound's program needs {memory.temp_size_in_bytes} bytes")
    return tuple(np.asarray(a, dtype=np.float64) for a in compiled(points))


def _tangent(g: Callable) -> Callable:
    """t -> g'(t), by forward mode."""
    return lambda t: jax.jvp(g, (t,), (jnp.ones_like(t),))[1]


def _run32(f: Callable, args: tuple, i: int, points: np.ndarray) -> tuple[np.ndarray, Any]:
    """(f(x), f at the stencil's points), in float32 (what rounding does to f's values)."""
    x = jnp.ravel(jnp.asarray(args[i], dtype=jnp.float32))
    n = x.shape[0]

    @jax.jit
    def program(points: Any) -> Any:
        def value(j: Any, v: Any) -> Any:
            return jnp.ravel(f(*_with(args, i, x.at[j].set(v))))

        at = jax.vmap(jax.vmap(value), in_axes=(None, 0))(jnp.arange(n), points)
        return jnp.ravel(f(*_with(args, i, x))), at

    g0, at = program(jnp.asarray(points, dtype=jnp.float32))
    return np.asarray(g0, dtype=np.float64), np.asarray(at, dtype=np.float64)


__all__ = ["ROUNDING", "TRUNCATION", "StepError", "kink_note", "step_error", "what_to_do"]
