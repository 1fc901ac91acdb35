"""Which entries of a Jacobian or Hessian can be nonzero, read from the program.

f is traced once to a jaxpr (JAX's program of primitives) and each variable
gets, for each of its entries, the set of inputs that entry depends on: a
boolean sparse matrix (entries x inputs). The sets flow through the
primitives: elementwise operations take the union of their operands'; moves
(slices, reshapes, tiles, concatenations, pads, gathers at known indices) carry
each entry's set to where the entry goes; a gather at indices not known takes
the union over the positions it could pick; reductions, cumulative sums and
``dot_general`` take the union over what they combine; calls, custom
derivatives, ``cond`` and ``scan`` are walked inside. A primitive not analysed
here makes every entry of its output depend on every input any of its
operands depends on: a superset, so the pattern stays valid, and the detection
says so (``Detected.notes``).

The pattern is structural: it holds for every x and every value of the data
(the other arguments are traced as unknowns), so it never misses an entry
that is zero only at the points one happened to look at, which sampling
random points can. The Hessian's pattern is the Jacobian pattern of the
gradient's program (``jax.grad`` traced), made symmetric.

References:
    Walther, "Computing sparse Hessians with automatic differentiation", ACM TOMS
    34(1), 2008 (index-domain propagation); Hill & Dalle, "Sparser, better,
    faster, stronger: sparsity detection for efficient automatic
    differentiation", TMLR 2025 (the same idea by operator overloading).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
import scipy.sparse as sp

from ..model.userline import eqn_line, source_line
from ..programs.jaxpr import call_body
from .index_sets import (
    PatternTooLarge,
    as_bool,
    broadcast,
    cumulative,
    dot,
    empty,
    gathered,
    inexact,
    mapped,
    moved,
    reduced,
    size_of,
    take,
    union,
)

# Each output entry depends on the same entry of each operand (a rank-0 operand
# is broadcast). Primitives with an integer or boolean output never get here.
ELEMENTWISE = frozenset({
    "abs", "acos", "acosh", "add", "add_any", "asin", "asinh", "atan", "atan2", "atanh",
    "bessel_i0e", "bessel_i1e", "cbrt", "clamp", "conj", "convert_element_type", "copy",
    "copy_p", "cos", "cosh", "digamma", "div", "erf", "erf_inv", "erfc", "exp", "exp2",
    "expm1", "igamma", "igammac", "imag", "integer_pow", "lgamma", "log", "log1p",
    "logistic", "max", "min", "mul", "neg", "nextafter", "pow", "real", "reduce_precision",
    "rem", "rsqrt", "select_n", "sin", "sinh", "sqrt", "square", "sub", "tan", "tanh",
    "complex", "polygamma", "zeta", "regularized_incomplete_beta",
})  # fmt: skip
# Their derivative is zero wherever it exists: no output entry depends on any input.
ZERO = frozenset({"sign", "floor", "ceil", "round", "stop_gradient"})
# Entries move and are copied, never combined: where each one goes is found by
# running the primitive itself on labels (1 + the entry's index; 0 for none).
MOVES = frozenset({
    "reshape", "squeeze", "expand_dims", "broadcast_in_dim", "transpose", "slice", "rev",
    "concatenate", "pad", "dynamic_slice", "dynamic_update_slice", "gather", "split", "stack",
    "tile",
})  # fmt: skip
# Calls: their body takes their operands and gives their outputs; walked inside.
CALLS = frozenset({
    "jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
    "custom_vjp_call_jaxpr", "remat", "checkpoint",
})  # fmt: skip
REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"})
CUMULATIVE = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})
#: a scan at most this long is walked step by step; a longer one as one step
#: taking every step's inputs (a superset), carried to its fixed point
SCAN_UNROLL = 64


@dataclass(frozen=True)
class Detected:
    """A sparsity pattern and how it was found.

    Attributes:
        pattern: boolean ``scipy.sparse.csr_array`` (outputs x inputs), sorted indices.
        notes: one line per primitive taken as dense (not analysed), else empty.
    """

    pattern: sp.csr_array
    notes: tuple[str, ...] = ()

    @property
    def nnz(self) -> int:
        return int(self.pattern.nnz)


class _Walk:
    """Index sets through one program: ``run(jaxpr, consts, patterns, values)``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.dense: dict[str, int] = {}

    # ------------------------------------------------------------ the program
    def run(self, jaxpr, consts, pats: Sequence, vals: Sequence) -> list:
        pat: dict[Any, Any] = {}
        val: dict[Any, Any] = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            val[v] = c
        for v, p, x in zip(jaxpr.invars, pats, vals, strict=True):
            pat[v], val[v] = p, x

        def get(env, a):
            return np.asarray(a.val) if hasattr(a, "val") else env.get(a)

        for eqn in jaxpr.eqns:
            ins = [None if hasattr(a, "val") else pat.get(a) for a in eqn.invars]
            known = [get(val, a) for a in eqn.invars]
            if all(p is None for p in ins):
                outs = [None] * len(eqn.outvars)
                for v, x in zip(eqn.outvars, self._evaluate(eqn, known), strict=True):
                    val[v] = x
            else:
                try:
                    outs = self.equation(eqn, ins, known)
                except PatternTooLarge as too_large:
                    too_large.where.append(eqn)  # inner first: jnp.sort's sort, its jit
                    raise
            for v, p in zip(eqn.outvars, outs, strict=True):
                pat[v] = p if inexact(v.aval) else None
        return [None if hasattr(a, "val") else pat.get(a) for a in jaxpr.outvars]

    @staticmethod
    def _evaluate(eqn, known: list) -> list:
        """Concrete outputs of an equation on known inputs (index arrays built in f)."""
        if any(k is None for k in known) or sum(size_of(v.aval) for v in eqn.outvars) > 1 << 20:
            return [None] * len(eqn.outvars)
        try:
            out = eqn.primitive.bind(*known, **eqn.params)
        except Exception:  # anything it cannot run eagerly is just not known
            return [None] * len(eqn.outvars)
        outs = out if eqn.primitive.multiple_results else [out]
        return [np.asarray(o) for o in outs]

    # -------------------------------------------------------- one primitive
    def equation(self, eqn, ins: list, known: list) -> list:
        name = eqn.primitive.name
        out_avals = [v.aval for v in eqn.outvars]
        if name in ZERO or not any(inexact(a) for a in out_avals):  # comparisons, indices
            return [None] * len(out_avals)
        if name in ELEMENTWISE:
            out = out_avals[0].shape
            spread = [broadcast(p, a.aval.shape, out) for p, a in zip(ins, eqn.invars, strict=True)]
            return [union(spread, size_of(out_avals[0]))]
        if name in MOVES:
            outs = moved(eqn, ins, known)
            if outs is not None:
                return outs
            if name == "gather" and ins[0] is not None:  # at indices not known
                done = gathered(eqn, ins[0])
                if done is not None:
                    return [done]
        elif name in REDUCTIONS:
            return [reduced(eqn, ins[0])]
        elif name in CUMULATIVE:
            done = cumulative(eqn, ins[0])
            if done is not None:
                return [done]
        elif name == "dot_general":
            return [dot(eqn, ins)]
        elif name == "cond":
            return self._cond(eqn, ins, known)
        elif name == "scan":
            return self._scan(eqn, ins, known)
        elif name in CALLS and (sub := call_body(eqn)) is not None:
            return self.run(sub[0], sub[1], ins, known)
        return self._dense(name, ins, out_avals)

    def _dense(self, name: str, ins: list, out_avals: list) -> list:
        self.dense[name] = self.dense.get(name, 0) + 1
        every = union([as_bool(np.asarray(p.sum(axis=0)).reshape(1, -1)) for p in ins
                             if p is not None], 1)  # fmt: skip
        try:
            return [None if every is None else take(every, np.zeros(size_of(a), dtype=np.int64))
                    for a in out_avals]  # fmt: skip
        except PatternTooLarge as too_large:
            too_large.dense = name
            raise

    def _cond(self, eqn, ins: list, known: list) -> list:
        outs: list = [None] * len(eqn.outvars)
        for branch in eqn.params["branches"]:
            got = self.run(branch.jaxpr, branch.consts, ins[1:], known[1:])
            outs = [union([o, g], size_of(v.aval))
                    for o, g, v in zip(outs, got, eqn.outvars, strict=True)]  # fmt: skip
        return outs

    def _scan(self, eqn, ins: list, known: list) -> list:
        """Step by step while short; else every step at once, carried to a fixed point."""
        body, length = eqn.params["jaxpr"], eqn.params["length"]
        nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
        consts, carry, xs = ins[:nc], ins[nc : nc + nk], ins[nc + nk :]
        xs_avals = [v.aval for v in eqn.invars[nc + nk :]]
        steps = range(length)[::-1] if eqn.params.get("reverse") else range(length)

        def slice_of(p, aval, t):  # rows of step t (None: every step's)
            if p is None:
                return None
            per = size_of(aval) // length
            if t is None:
                return as_bool(mapped(np.tile(np.arange(per), length), np.arange(size_of(aval)),
                                     per, size_of(aval)) @ p)  # fmt: skip
            return p[t * per : (t + 1) * per]

        unknown = [None] * len(known)
        if length <= SCAN_UNROLL:
            ys_steps = []
            for t in steps:
                step_xs = [slice_of(p, a, t) for p, a in zip(xs, xs_avals, strict=True)]
                out = self.run(body.jaxpr, body.consts, [*consts, *carry, *step_xs], unknown)
                carry, ys = out[:nk], out[nk:]
                ys_steps.append((t, ys))
            ys_steps.sort(key=lambda ty: ty[0])
            ys = []
            for k, v in enumerate(eqn.outvars[nk:]):
                steps_k = [y[k] for _, y in ys_steps]
                per = size_of(v.aval) // max(length, 1)
                ys.append(None if all(y is None for y in steps_k) else as_bool(sp.vstack(
                    [empty(per, self.n) if y is None else y for y in steps_k])))  # fmt: skip
            return [*carry, *ys]
        step_xs = [slice_of(p, a, None) for p, a in zip(xs, xs_avals, strict=True)]
        for _ in range(length):
            out = self.run(body.jaxpr, body.consts, [*consts, *carry, *step_xs], unknown)
            pairs = zip(carry, out[:nk], eqn.outvars[:nk], strict=True)
            grown = [union([c, o], size_of(v.aval)) for c, o, v in pairs]
            if all(_same(g, c) for g, c in zip(grown, carry, strict=True)):
                break
            carry = grown
        ys = [None if y is None else take(y, np.tile(np.arange(y.shape[0]), length))
              for y in out[nk:]]  # fmt: skip
        return [*carry, *ys]


def _same(a: sp.csr_array | None, b: sp.csr_array | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.nnz == b.nnz and (a != b).nnz == 0


def refusal(too_large: PatternTooLarge, files: frozenset[str], mode: str) -> str:
    """What to tell a user whose f makes a pattern too large to hold, naming their line."""
    # an equation inside a library's jit carries frames up to that jit only
    found = next(filter(None, (eqn_line(eqn, files) for eqn in too_large.where)), None)
    code = source_line(*found) if found else None
    at = f"line {found[1]}" + (f" (`{code.strip()}`)" if code else "") if found else "f"
    n = too_large.entries / max(too_large.rows, 1)
    if too_large.dense:
        why = (f"{at} uses `{too_large.dense}`, which the sparsity detection does not "
               f"follow: it takes each of the {too_large.rows:,} entries made there as "
               f"depending on every input (about {n:,.0f} each)")  # fmt: skip
    else:
        why = (f"{at} makes {too_large.rows:,} entries that depend on about {n:,.0f} inputs "
               "each: that derivative is nearly dense")  # fmt: skip
    return (f"sparse {mode}: {why}, a pattern of {too_large.entries:.3g} entries, more than "
            f"the {too_large.limit:.3g} adlab can hold. Use sparse=False (the dense derivative, "
            "or a Jacobian-vector product), or a smaller n")  # fmt: skip


def flat_program(f: Callable, args: Sequence[Any], i: int) -> tuple[Any, int]:
    """f's program (a closed jaxpr) as a function of args[i] flattened, then the other
    arguments; and args[i]'s size."""
    x = np.asarray(args[i])
    shape = x.shape
    rest = [a for k, a in enumerate(args) if k != i]

    def flat(xf, *others):
        new = list(others)
        new.insert(i, xf.reshape(shape))
        return f(*new)

    return jax.make_jaxpr(flat)(x.ravel(), *rest), int(x.size)


def jacobian_pattern(f: Callable, args: Sequence[Any], i: int) -> Detected:
    """The pattern of d f / d args[i], (outputs x inputs), f's output and args[i] flattened.

    The other arguments are traced as unknowns: the pattern holds for any data.
    Call it with JAX at the arguments' precision (``precision_scope``).
    """
    closed, n = flat_program(f, args, i)
    jaxpr = closed.jaxpr
    walk = _Walk(n)
    pats = [sp.eye_array(n, dtype=bool, format="csr")] + [None] * (len(jaxpr.invars) - 1)
    out = walk.run(jaxpr, closed.consts, pats, [None] * len(jaxpr.invars))
    if len(out) != 1:
        raise ValueError("a sparse derivative needs f to return one array")
    m = max(size_of(jaxpr.outvars[0].aval), 1)
    pattern = empty(m, n) if out[0] is None else as_bool(out[0])
    notes = tuple(f"{name} ({count}x): not analysed, taken as dense (each output entry "
                  f"depends on all of its operands' inputs)"
                  for name, count in sorted(walk.dense.items()))  # fmt: skip
    return Detected(pattern, notes)


def hessian_pattern(f: Callable, args: Sequence[Any], i: int) -> Detected:
    """The Hessian pattern of a scalar f: its gradient program's Jacobian pattern, symmetric."""
    found = jacobian_pattern(jax.grad(f, argnums=i), args, i)
    return Detected(as_bool(found.pattern + found.pattern.T), found.notes)
