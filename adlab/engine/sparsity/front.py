"""The selection front: f = g(L(x)) where L only moves and copies x's entries.

Many models first cut x into pieces and copy them where they are used (ba
gives each observation its own copy of its camera's 11 parameters and its
point's 3) before any arithmetic. L, that data movement (slices, reshapes,
broadcasts, gathers at known indices...), is a 0/1 selection matrix S: each
entry of its outputs, the *front* values u, is one entry of x. So J_f = J_g S,
and J_g is far sparser in its rows: rows that share x's entries through
different copies share no entry of u. Reverse mode colors J_g's rows instead
(ba: 2 colors, where J_f's rows need one per observation of the busiest
camera), takes one VJP of g per color, and adds each nonzero (r, u_j) into
column ``src[j]`` of J_f (duplicates summed: two copies of one entry of x in a
row). This is the per-observation Jacobian that ADBench's tools write by hand,
found on the program (Srajer, Schwarz and Fitzgibbon 2018).

The front is read from f's jaxpr: walking from x, an equation whose float
operands are all selection values, whose other operands are known constants,
and whose primitive only moves entries gives selection values, a jitted function
of jnp's (np.take, np.flip) too where its body only moves them
(``adlab.engine.sparsity.selection``); a selection value used by any other equation, or
returned, is a front value. Where each front entry comes from is found by
running the same primitives on labels (1 + the entry's index), as the sparsity
detection does: exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, jaxpr_as_fun

from .coloring import Coloring, color_rows, recovery
from .index_sets import PatternTooLarge, size_of
from .pattern import flat_program, jacobian_pattern
from .selection import labels_of, run_known


@dataclass(frozen=True)
class Front:
    """x's entries as the first arithmetic of f sees them.

    Attributes:
        src: (U,) int64: the entry of x (flattened) each front entry is, the front
            values raveled and concatenated (u).
        shapes, dtypes: the front values', in that order.
        lift: ``lift(xf, *others)`` -> the front values, f's data movement run.
        g: ``g(values, *others)`` -> f's output, flattened: the rest of f.
        g_flat: ``g_flat(u, *others)``, the same from u (its pattern is read so).
        absorbed: front values that g can move out of others itself (``absorb``).
    """

    src: np.ndarray
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[Any, ...]
    lift: Callable
    g: Callable
    g_flat: Callable
    absorbed: int = 0

    @property
    def size(self) -> int:
        return int(self.src.size)


def _needed(eqns: Sequence, outs: Sequence, given: set) -> list:
    """The equations ``outs`` need, in order, stopping at the variables ``given``."""
    need = {v for v in outs if not hasattr(v, "val")} - given
    kept = []
    for eqn in reversed(eqns):
        if any(v in need for v in eqn.outvars):
            kept.append(eqn)
            need.update(a for a in eqn.invars if not hasattr(a, "val") and a not in given)
    return kept[::-1]


def _function(closed: Any, invars: list, outvars: list, given: set) -> Callable:
    jaxpr = closed.jaxpr
    eqns = _needed(jaxpr.eqns, outvars, given)
    # the model's own source info, its argument and result names unknown (they changed)
    info = jaxpr.debug_info._replace(arg_names=None, result_paths=None)
    sub = jaxpr.replace(invars=invars, outvars=outvars, eqns=eqns, debug_info=info)
    return jaxpr_as_fun(ClosedJaxpr(sub, closed.consts))


def find_front(f: Callable, args: Sequence[Any], i: int, absorb: bool = True) -> Front | None:
    """f's selection front with respect to ``args[i]``; None where there is none to gain
    from (every front entry is x's own, in x's order: the front is x itself).

    ``absorb``: g moves entries itself where each is moved once out of another front
    value (``_roots``); else every front value is one of g's inputs. ``Front.absorbed``
    says how many can be so.

    Call it with JAX at the arguments' precision (``precision_scope``), as
    ``jacobian_pattern``: the program read is the same.
    """
    if np.size(args[i]) >= 2**31 - 1:  # labels are int32
        return None
    closed, n = flat_program(f, args, i)
    jaxpr = closed.jaxpr
    xvar = jaxpr.invars[0]
    src = {xvar: np.arange(1, n + 1, dtype=np.int32)}
    parents: dict = {xvar: None}  # a selection value's selection operands
    known = dict(zip(jaxpr.constvars, (np.asarray(c) for c in closed.consts), strict=True))
    front: set = set()
    for eqn in jaxpr.eqns:
        touches = [a for a in eqn.invars if not hasattr(a, "val") and a in src]
        if not touches:
            if all(hasattr(a, "val") or a in known for a in eqn.invars):
                run_known(eqn, known)
            continue
        found = labels_of(eqn, src, known)
        if found is None:
            front.update(touches)
        else:
            labels, once = found
            src.update(zip(eqn.outvars, labels, strict=True))
            # g may move entries itself where each is moved once (ba's rotation's
            # columns); a copy (a broadcast, a gather repeating an index) stays a front
            # value of its own, so the rows using the copies stay apart
            parents.update(dict.fromkeys(eqn.outvars, touches if once else None))
    front.update(v for v in jaxpr.outvars if not hasattr(v, "val") and v in src)
    inner = _roots(parents, front)
    roots = inner if absorb else [v for v in parents if v in front]
    if roots == [xvar] or not roots:
        return None
    others = list(jaxpr.invars[1:])
    lift = _function(closed, list(jaxpr.invars), roots, set())
    rest_of_f = _function(closed, [*roots, *others], list(jaxpr.outvars), set(roots))
    shapes = tuple(tuple(v.aval.shape) for v in roots)
    dtypes = tuple(v.aval.dtype for v in roots)
    cuts = np.cumsum([size_of(v.aval) for v in roots])[:-1].tolist()

    # the program takes the other arguments' leaves (data may be a dict of arrays)
    def lift_parts(xf: Any, *more: Any) -> list:
        return lift(xf, *jax.tree_util.tree_leaves(more))

    def g(parts: Sequence, *more: Any) -> Any:
        (out,) = rest_of_f(*parts, *jax.tree_util.tree_leaves(more))
        return jnp.ravel(out)

    def g_flat(u: Any, *more: Any) -> Any:
        parts = [p.reshape(s).astype(d) for p, s, d in
                 zip(jnp.split(u, cuts), shapes, dtypes, strict=True)]  # fmt: skip
        return g(parts, *more)

    where = np.concatenate([src[v] for v in roots]).astype(np.int64) - 1
    return Front(where, shapes, dtypes, lift_parts, g, g_flat, len(front) - len(inner))


def _roots(parents: dict, front: set) -> list:
    """The front values g takes: those not moved, each entry once, out of another one
    it takes (ba's rotation is taken as a (p, 3) array, not again as each of its
    columns: fewer entries, and no two of one x entry in a row to add up)."""
    inside, roots = set(), []
    for v, ins in parents.items():  # in the program's order
        if ins is not None and all(a in inside for a in ins):
            inside.add(v)  # g computes it from the roots
        elif v in front:
            roots.append(v)
            inside.add(v)
    return roots


@dataclass(frozen=True)
class FrontRows:
    """Reverse mode through the front: J_g's rows colored, and where each nonzero goes.

    Attributes:
        front: the ``Front``.
        coloring: the row coloring of J_g (one color per row of f, as J_f's would be).
        at: (a, b): J_g's nonzeros, in the order of the J_f nonzeros they go to, are
            ``compressed[a, b]`` (compressed: W^T J_g, colors x U).
        to: the J_f nonzero (CSR position) each goes to, sorted; None where each goes
            to its own, in order (no duplicates to sum).
        was: the colors J_f's own rows need; ``exact`` False: at least (the most rows
            sharing a column: coloring J_f's rows, 0.3 s on ba1, was not needed).
    """

    front: Front
    coloring: Coloring
    at: tuple[np.ndarray, np.ndarray]
    to: np.ndarray | None
    was: int
    exact: bool = True

    def describe(self) -> str:
        return (f"{self.coloring.count:,} row colors through the selection front "
                f"(was {'' if self.exact else 'at least '}{self.was:,}): "
                f"{self.front.size:,} front entries")  # fmt: skip


def _pattern(front: Front, args: Sequence[Any], i: int) -> Any:
    """J_g's pattern, or None where it cannot be held."""
    rest = [a for k, a in enumerate(args) if k != i]
    u = np.zeros(front.size, dtype=np.result_type(*front.dtypes))
    try:
        return jacobian_pattern(front.g_flat, (u, *rest), 0).pattern
    except PatternTooLarge:  # more entries than J_f's: reverse mode as it was
        return None


def _most_per_column(pattern: Any) -> int:
    """The rows sharing one column at most: no row coloring takes fewer colors."""
    return int(np.bincount(pattern.indices, minlength=1).max())


def _fewest_colors(fronts: list) -> tuple[Front, Any, Coloring]:
    """Of (front, J_g's pattern) pairs, the one whose rows take the fewest colors, then
    has the fewest entries, then comes first; with its row coloring. A pattern is colored
    only where it could win: its most rows sharing a column bound its colors from below
    (ba1: the absorbed front, colored first, takes 2 colors; the other's bound is 2 and it
    has more entries, so its coloring, 0.2 s, is not made)."""
    best = None  # ((colors, entries, k), front, pattern, coloring)
    for bound, entries, k in sorted((_most_per_column(found), front.size, k)
                                    for k, (front, found) in enumerate(fronts)):  # fmt: skip
        if best is not None and best[0] < (bound, entries, k):  # it cannot take fewer
            continue
        front, found = fronts[k]
        coloring = color_rows(found)
        if best is None or (coloring.count, entries, k) < best[0]:
            best = ((coloring.count, entries, k), front, found, coloring)
    return best[1:]


def front_rows(f: Callable, args: Sequence[Any], i: int, pattern: Any
               ) -> tuple[FrontRows | None, Coloring | None]:  # fmt: skip
    """Reverse mode through the front where its rows need fewer colors than those of J_f
    (whose pattern is ``pattern``), else None; and J_f's row coloring where it was made
    to decide. Call under ``precision_scope``.

    Of the front with moves absorbed into g and the one without, the one needing fewer
    colors, then fewer entries: ba's rotation's columns, absorbed into the rotation, add
    no color and no entry to add up twice (2 colors either way, 16 entries an
    observation instead of 22, and one gather to read J_f's nonzeros, not a sum).
    """
    fronts = []  # (front, J_g's pattern): without moves absorbed, then with
    for absorb in (False, True):
        front = find_front(f, args, i, absorb)
        found = None if front is None else _pattern(front, args, i)
        if found is not None:
            fronts.append((front, found))
        if front is None or not front.absorbed:
            break
    own = None
    if not fronts:
        return None, own
    front, found, coloring = _fewest_colors(fronts)
    count = coloring.count
    was, exact = _most_per_column(pattern), False
    if count >= was:  # J_f's rows might take as few: color them to see
        own = color_rows(pattern)
        was, exact = own.count, True
        if count >= was:
            return None, own
    a, b = recovery(found, coloring)
    coo = found.tocoo()
    n = int(np.asarray(args[i]).size)
    keys = coo.row.astype(np.int64) * n + front.src[coo.col]
    fcoo = pattern.tocoo()  # CSR order: the keys are sorted
    fkeys = fcoo.row.astype(np.int64) * n + fcoo.col
    pos = np.minimum(np.searchsorted(fkeys, keys), max(fkeys.size - 1, 0))
    if not fkeys.size or np.any(fkeys[pos] != keys):  # not J_f's pattern: do not guess
        return None, own
    order = np.argsort(pos, kind="stable")
    to = pos[order]
    alone = to.size == fkeys.size and np.array_equal(to, np.arange(fkeys.size))
    rows = FrontRows(front, coloring, (a[order], b[order]), None if alone else to, was, exact)
    return rows, own
