"""Trusted means something: a derivative is held to JAX's checked float64 one.

``crosscheck`` is issue 23's "trusted means something": a framework's own derivative
rule can be wrong (PyTorch's reverse-over-forward through ``slogdet``), or NaN where the
derivative is finite (a rule dividing by zero), and nothing else would notice. So the
result is compared once with JAX's float64 reverse mode (for a Hessian,
forward-over-reverse), which is itself checked first: against central differences (where
f is smooth there) or, where those disagree (a kink), against forward mode (another route
through the same rules). An unchecked reference makes no claim either way.

That whole reference costs as much as the derivative itself, so it is computed only for a
derivative of at most ``CHECK_MAX`` entries. A larger first derivative (a Jacobian of a
thousand outputs, a long gradient) is checked along ``PROJECTIONS`` random projections
instead (``projected``): u . (J v) read from the value against JAX's float64 forward mode
along v (one pass), itself checked against central differences of u . f along v (two
evaluations of f) or, where those disagree, against reverse mode ((u J) . v, one pass).
A larger Hessian is the Jacobian of the gradient, so it is checked the same way with f's
gradient for f: u . (H v) against forward-over-reverse along v, checked by central
differences of u . grad f or by reverse-over-reverse ((H u) . v); a Hessian-vector
product along d whose Hessian is that large, as u . (its value) against u . (H d).

Float32 finite differences have no fixed tolerance (``compare.tolerance``: their error is
1e-4 to 1e-1 of the derivative, by f): ``differences32`` holds one to its own truncation and
rounding at the step it took (``modes.numeric_bound``), and says where f has a kink within
that step, the usual way such a difference is wrong.

``prepare`` computes the whole reference: it is handed in (``adlab.engine.derivative``
binds it), as to the sparse entry point, so that this module never imports the one above
it. The projections are one JAX program, jitted and kept for the next call with the same
model and shapes (``_program_for``).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .backends import REFERENCE
from .backends.jax.disk_cache import use_cache
from .compare import FLOORS, close, flat, tolerance, verdict
from .model.args import cast_args, wrt_indices
from .model.known_bugs import known_bug
from .model.precision import precision_scope
from .modes.numeric import default_step
from .modes.numeric_bound import kink_note, step_error, what_to_do
from .whole_reference import FAST_COMPILE, as_value, whole

#: derivatives with more entries than this are not compared whole: the reference
#: would cost as much as the derivative itself (they are projected instead)
CHECK_MAX = 1024
#: the reference agrees with central differences to this where f is smooth ...
DIFFERENCES_AGREE = 1e-5
#: ... or with forward mode (the same rules, another route) to this (relative)
FORWARD_AGREE = 1e-10
#: absolute floors, for derivatives that are zero but for rounding (a Hessian of
#: sum(x) reads 1e-16 here, -5e-17 there): the differences' noise, and each precision's
DIFFERENCES_FLOOR = 1e-9

#: random projections a derivative above CHECK_MAX entries is checked along, each with
#: its own u and v (fixed seed: the same check on every run) ...
PROJECTIONS = 3
SEED = 0
#: ... and how far each may be off, in units of the whole derivative's tolerance: see
#: ``projected``
ROOM = 10.0
#: a float32 difference may be off by this many times its error at its step (truncation and
#: rounding, ``modes.numeric_bound``): those are estimates (f's rounding is measured on
#: JAX, where other frameworks round differently), not bounds; a kink is 1e3 times beyond
STEP_ROOM = 10.0
#: a float32 difference this close (normwise, relative) to the checked reference is taken
#: as right without its bound: 0.1% is no wrong answer to a float32 user, and the bound's
#: program (f's higher derivatives by nested forward mode) cost 1-3 s to compile, 20 s for
#: Richardson's fifth derivatives on lstm, on every right answer
DIFFERENCES32_CLOSE = 1e-3


def crosscheck(model: Any, args: tuple, value: Any, *, prepare: Callable, wrt: Any, mode: str,
               scheme: str | None, precision: str, backend: str, order: int = 1,
               direction: Any = None, reference: bool = False,
               step: Any = None) -> str | None:  # fmt: skip
    """Why ``value`` (``model``'s derivative at ``args``) cannot be trusted, or None: it
    agrees with JAX's checked float64 reference, or no check was made (a large second
    derivative, no JAX twin, a reference that failed or could not itself be checked).
    ``direction``: ``value`` is a Hessian-vector product along it (held to the Hessian
    times it). ``reference``: ``value`` is JAX's float64 reference itself, only checked to
    be finite (JAX's Hessian through svd is all NaN where the true one is finite).
    ``prepare``: ``adlab.prepare``, which computes the reference. ``step``: a numeric
    ``value``'s own step (None: the default). Where the model calls an operation that
    ``backend`` is known to differentiate wrongly there, the note says so (``known_bug``)."""
    wrong = _disagreement(model, args, value, prepare=prepare, wrt=wrt, mode=mode,
                          scheme=scheme, precision=precision, backend=backend, order=order,
                          direction=direction, reference=reference, step=step)  # fmt: skip
    if wrong is None:
        return None
    known = known_bug(model, args, wrt=wrt, backend=backend, scheme=scheme, order=order)
    return wrong if known is None else f"{wrong}. {known}"


def _disagreement(model: Any, args: tuple, value: Any, *, prepare: Callable, wrt: Any,
                  mode: str, scheme: str | None, precision: str, backend: str, order: int,
                  direction: Any, reference: bool, step: Any) -> str | None:  # fmt: skip
    """``crosscheck``'s finding, before any known bug is named."""
    a = flat(value)
    if not np.all(np.isfinite(a)):  # nothing to compare with: never called trusted
        i = int(np.argmin(np.isfinite(a)))
        return (f"entry {i} is {a[i]}: f may not be differentiable here, or a derivative rule "
                "divided by zero; compare mode='numeric'")  # fmt: skip
    if reference:  # the result is JAX's float64 reference itself
        return None
    tol = tolerance(mode, scheme, precision)
    size = np.size(value) if not isinstance(value, tuple) else sum(map(np.size, value))
    if direction is not None:
        size = np.size(direction) ** 2  # the reference is the whole Hessian
    if model.source is None and backend != REFERENCE:
        return None
    if tol is None:  # float32 differences: held to their own error at the step they took
        if mode != "numeric" or order != 1 or size > CHECK_MAX:
            return None
        return differences32(model, args, value, prepare=prepare, wrt=wrt, scheme=scheme,
                             step=step, backend=backend)  # fmt: skip
    if size > CHECK_MAX:  # along random projections
        return projected(model, args, value, wrt, tol, order=order, direction=direction)
    ref, _ = _reference(model, args, wrt, order, prepare)
    if ref is not None and direction is not None:
        k = np.size(direction)  # a scalar x's Hessian is a scalar: (1, 1) here
        ref = np.reshape(np.reshape(ref, (k, k)) @ np.ravel(direction), np.shape(direction))
    if ref is None or flat(ref).shape != flat(value).shape:  # not the same derivative
        return None
    return verdict(value, ref, tol)


def _reference(model: Any, args: tuple, wrt: Any, order: int,
               prepare: Callable) -> tuple[Any, str | None]:  # fmt: skip
    """(JAX's float64 derivative, checked, flat as ``compare.flat`` reads the value; the
    check it passed: "numeric", or "forward" where central differences disagreed: f has a
    kink near x). (None, None) when it fails or cannot be checked. The reference and its
    differences are one program, the other route (forward mode; reverse-over-reverse) a
    second, compiled only where the differences disagree (``whole_reference``: one compile,
    not ``prepare``'s two). ``prepare`` is not needed here any more."""
    indices = wrt_indices(wrt)
    args = cast_args(tuple(args), np.float64, indices)
    f = model.function(REFERENCE)
    try:
        ref, differences = whole(f, args, indices, order, "first", model)
        if not np.all(np.isfinite(ref)):
            return None, None
        if close(differences, ref, DIFFERENCES_AGREE, DIFFERENCES_FLOOR):
            return as_value(ref, args, indices), "numeric"
        (other,) = whole(f, args, indices, order, "other", model)
        if close(other, ref, FORWARD_AGREE, FLOORS["float64"]):
            return as_value(ref, args, indices), "forward"
    except Exception:  # the reference's own failure: no claim about the value
        return None, None
    return None, None


# ------------------------------------------------------------------ float32 differences
def differences32(model: Any, args: tuple, value: Any, *, prepare: Callable, wrt: Any,
                  scheme: str | None, step: Any, backend: str) -> str | None:  # fmt: skip
    """Why the float32 finite difference ``value`` cannot be trusted, or None.

    No fixed tolerance fits float32 differences (``compare.tolerance``), so ``value`` is
    held to their own error at the step each input took (``numeric_bound.step_error``:
    truncation and rounding where f is smooth), times ``STEP_ROOM``: an inexact answer
    passes, one off by more is wrong (one within ``DIFFERENCES32_CLOSE`` passes without
    that bound's program). Where it is, and f's values along the step show a
    kink there (or the reference's own central differences disagreed), the note says so
    and what to do."""
    ref, route = _reference(model, args, wrt, 1, prepare)
    if ref is None or flat(ref).shape != flat(value).shape:
        return None
    if close(value, ref, DIFFERENCES32_CLOSE, FLOORS["float32"]):
        return None
    try:
        err = step_error(model, args, wrt_indices(wrt), scheme or "central", step)
    except Exception:  # the bound's own failure (f not traceable so): no claim
        return None
    if err is None or err.bound.shape != flat(value).shape:
        return None
    allowed = STEP_ROOM * float(np.linalg.norm(err.bound))
    norm = float(np.linalg.norm(flat(ref)))
    wrong = verdict(value, ref, (allowed / norm, 0.0) if norm > 0 else (0.0, allowed))
    if wrong is None:
        return None
    why = (f"{wrong}. That is beyond {STEP_ROOM:g} x float32 {scheme} differences' own "
           "error at the step they took (truncation and rounding where f is smooth)")
    names = _names(model)
    kink = kink_note(err, flat(ref), flat(value), names, route == "forward")
    return f"{why}. {kink}" + what_to_do(backend) if kink else why


def _names(model: Any) -> list[str]:
    """f's parameters' names, for notes (empty when they cannot be read)."""
    try:
        return list(inspect.signature(model.function(REFERENCE)).parameters)
    except (TypeError, ValueError):
        return []


# ------------------------------------------------------------------ a large derivative
def projected(model: Any, args: tuple, value: Any, wrt: Any, tol: tuple[float, float],
              order: int = 1, direction: Any = None) -> str | None:  # fmt: skip
    """Why the derivative ``value`` disagrees with JAX's checked float64 one along random
    projections u . (J v), or None (it agrees, or no claim: see ``crosscheck``). For
    ``order`` 2, J is the Hessian H (the Jacobian of f's gradient); with ``direction`` d,
    ``value`` is H d, projected along u alone: u . value against u . (H d).

    The tolerance: a projection is a sum over every entry, u . (J v) = sum_ij u_i J_ij v_j,
    so the rounding of each entry does not add up entry by entry. For u and v of
    independent standard normal entries (u = 1 for a gradient), the projection of an
    error E = J - J_ref has mean 0 and standard deviation ||E||_F, whatever E's shape:
    the normwise tolerance on J (``tolerance``: ||E|| <= rtol ||J|| + atol) carries over
    to each projection as it is, times ``ROOM`` for the spread. ||J|| is read from the
    value: where it is right that is the reference's, and where it is wrong the wrong
    part dominates both the norm and the projection. A right value whose error is exactly
    at the tolerance, all in one entry or one rank (the heaviest tail: a product of two
    normals), is flagged by a projection with probability 1e-5; a wrong block with
    ||E|| = 100 x ROOM x rtol ||J|| (float64 AD: 1e-5 ||J||) escapes all three projections
    with probability 5e-5, a larger one less. An HVP's error e = H d - (H d)_ref is a
    vector: u . e has standard deviation ||e||, and its tolerance is on ||H d||.
    """
    indices = wrt_indices(wrt)
    parts = value if isinstance(value, tuple) else (value,)
    args = cast_args(tuple(args), np.float64, indices)
    xs = [args[i] for i in indices]
    n = sum(x.size for x in xs)
    m = sum(np.size(p) for p in parts) // max(n, 1)
    if n == 0 or len(parts) != len(xs):
        return None
    if any(np.size(p) != m * x.size for p, x in zip(parts, xs, strict=True)):
        return None  # not the same derivative
    rng = np.random.default_rng(SEED)
    if direction is not None:  # H d: one v for every projection, u of H's n rows
        if m != 1 or len(xs) != 1 or np.size(direction) != n:
            return None
        us = rng.standard_normal((PROJECTIONS, n))
        vs = [np.tile(np.ravel(np.asarray(direction, dtype=np.float64)), (PROJECTIONS, 1))]
        got, norm = us @ flat(value), float(np.linalg.norm(flat(value)))
        m = n  # the Hessian's rows
    else:
        us = np.ones((PROJECTIONS, 1)) if m == 1 else rng.standard_normal((PROJECTIONS, m))
        vs = [rng.standard_normal((PROJECTIONS, x.size)) for x in xs]
        # the value read as J's (m, n_i) blocks: one pass over it for all the projections
        blocks = [np.reshape(np.asarray(p, dtype=np.float64), (m, x.size))
                  for p, x in zip(parts, xs, strict=True)]  # fmt: skip
        got = sum(np.sum(us * (b @ v.T).T, axis=1) for b, v in zip(blocks, vs, strict=True))
        norm = math.sqrt(sum(float(np.vdot(b, b)) for b in blocks))
    ref = _projected_reference(model, args, indices, us, vs, order)
    if ref is None:
        return None
    allowed = ROOM * (tol[0] * norm + tol[1])
    off = np.abs(got - ref)
    k = int(np.argmax(np.where(np.isfinite(off), off, np.inf)))
    if off[k] <= allowed:
        return None
    # a gradient's projection, a Jacobian's, or a Hessian's (v: d for an HVP)
    what = "u . (H v)" if order == 2 else "g . v" if m == 1 else "u . (J v)"
    whole = "the Hessian" if order == 2 else "the derivative"
    ask = "scheme='forward-over-reverse'" if order == 2 else "mode='reverse'"
    return (f"it disagrees with JAX's checked float64 derivative along random projection "
            f"{k + 1} of {PROJECTIONS} ({whole} has {m * n} entries, too many to "
            f"compare whole): {what} is {got[k]:.6g} where the reference gives "
            f"{ref[k]:.6g}, {off[k]:.1e} apart (allowed {allowed:.1e}: {ROOM:g} x "
            f"{tol[0]:.0e} x its norm {norm:.3g}), so some entries are wrong. What to do: "
            f"compare it entry by entry with {ask} on backend={REFERENCE!r} "
            "(precision='float64'), or use that one")  # fmt: skip


def _projected_reference(model: Any, args: tuple, indices: tuple[int, ...], us: np.ndarray,
                         vs: list[np.ndarray], order: int = 1) -> np.ndarray | None:  # fmt: skip
    """u_k . (J v_k) for each projection k by JAX's float64 forward mode (of f's gradient for
    ``order`` 2: forward-over-reverse), checked (None when it fails or cannot be checked),
    as ``_reference`` checks the whole derivative."""
    xs = tuple(args[i] for i in indices)

    def run(route: str) -> np.ndarray:
        program, arrays = _program_for(model.function(REFERENCE), args, indices, route, order)
        use_cache()  # JAX's compilation cache on disk, as ``prepare`` turns it on
        with precision_scope("float64"):
            return np.asarray(program(xs, arrays, us, tuple(vs)), dtype=np.float64)

    try:
        ahead = run("forward")  # per projection: u . J v, and central differences of u . f
        ref = ahead[:, 0]
        if not np.all(np.isfinite(ref)):
            return None
        if close(ahead[:, 1], ref, DIFFERENCES_AGREE, DIFFERENCES_FLOOR):
            return ref
        if close(run("reverse"), ref, FORWARD_AGREE, FLOORS["float64"]):
            return ref
    except Exception:  # the reference's own failure: no claim about the value
        return None
    return None


#: what a check program may hold as a constant, and be kept by (see ``_program_for``)
_PLAIN = (bool, int, float, complex, str, np.generic, type(None))


def _program_for(f: Callable, args: tuple, indices: tuple[int, ...], route: str,
                 order: int = 1) -> tuple[Callable, list]:  # fmt: skip
    """(program, arrays): ``program(xs, arrays, us, vs)`` (``_projections``, jitted) for f's
    arguments ``args``, and the arrays of the others it takes. Their scalars (a Python
    number, a 0-d array) it holds as constants, as ``prepare`` holds small ones: a model may
    read them as Python numbers. It is kept for the next call with the same model, the same
    scalars and the same structure (a derivative taken in a loop), so that such a call
    costs the passes alone, not another compile; JAX compiles it anew for other shapes."""
    others = [None if i in indices else a for i, a in enumerate(args)]
    leaves, tree = jax.tree_util.tree_flatten(others)
    taken = tuple(i for i, a in enumerate(leaves) if np.ndim(a) > 0)
    held = tuple((i, type(a).__name__, a[()] if isinstance(a, np.ndarray) else a)
                 for i, a in enumerate(leaves) if np.ndim(a) == 0)  # fmt: skip
    build = _kept_program if all(isinstance(a, _PLAIN) for _, _, a in held) else _new_program
    return build(f, indices, route, order, tree, taken, held), [leaves[i] for i in taken]


def _new_program(f: Callable, indices: tuple[int, ...], route: str, order: int, tree: Any,
                 taken: tuple[int, ...], held: tuple) -> Callable:  # fmt: skip
    """``_projections``, jitted (see ``_program_for``)."""
    # it runs once: compiled fast (``whole_reference.FAST_COMPILE``)
    return jax.jit(_projections(f, indices, route, order, tree, taken, held),
                   compiler_options=FAST_COMPILE)  # fmt: skip


#: the last few check programs, each holding its model's f (not its data)
_kept_program = functools.lru_cache(maxsize=8)(_new_program)


def _projections(f: Callable, indices: tuple[int, ...], route: str, order: int, tree: Any,
                 taken: tuple[int, ...], held: tuple) -> Callable:  # fmt: skip
    """``program(xs, arrays, us, vs)``: for each projection k (batched with ``jax.vmap``),
    "forward": (u_k . J v_k by ``jax.jvp``, the central difference of u_k . f along v_k);
    "reverse": (u_k J by ``jax.vjp``) . v_k. For ``order`` 2, f's gradient stands for f
    (J is the Hessian: forward-over-reverse, differences of the gradient, and
    reverse-over-reverse). xs: f's arguments at ``indices``; arrays and held: the leaves
    of the others (``_program_for``)."""

    def program(xs: tuple, arrays: list, us: Any, vs: tuple) -> Any:
        leaves = dict(zip(taken, arrays, strict=True))
        leaves.update((i, a) for i, _, a in held)
        args = jax.tree_util.tree_unflatten(tree, [leaves[i] for i in range(len(leaves))])

        def of(*moved: Any) -> Any:  # f's output of the differentiated arguments
            full = list(args)
            for i, x in zip(indices, moved, strict=True):
                full[i] = x
            return f(*full)

        def scalar(*moved: Any) -> Any:  # a second derivative's f is a scalar
            return jnp.reshape(of(*moved), ())

        def along(*moved: Any) -> Any:  # f's output, flat, or for order 2 its gradient
            if order == 1:
                return jnp.ravel(of(*moved))
            grads = jax.grad(scalar, argnums=tuple(range(len(moved))))(*moved)
            return jnp.concatenate([jnp.ravel(g) for g in grads])

        # central differences' default step for x's largest entry, along v (~4 at its largest)
        biggest = jnp.max(jnp.stack([jnp.max(jnp.abs(x), initial=0.0) for x in xs]))
        longest = jnp.max(jnp.stack([jnp.max(jnp.abs(v)) for v in vs]))
        h = default_step(biggest, "central", np.float64, jnp) / longest

        def one(u: Any, *v: Any) -> Any:
            v = tuple(jnp.reshape(d, jnp.shape(x)) for d, x in zip(v, xs, strict=True))
            if route == "reverse":
                _, pull = jax.vjp(along, *xs)
                return sum(jnp.vdot(g, d) for g, d in zip(pull(u), v, strict=True))
            _, jv = jax.jvp(along, xs, v)
            plus = along(*(x + h * d for x, d in zip(xs, v, strict=True)))
            minus = along(*(x - h * d for x, d in zip(xs, v, strict=True)))
            return jnp.stack([u @ jv, (u @ plus - u @ minus) / (2 * h)])

        return jax.vmap(one)(us, *vs)

    return program


__all__ = ["CHECK_MAX", "PROJECTIONS", "crosscheck", "projected"]
