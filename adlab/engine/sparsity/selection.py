"""Which equations of a program only move entries: found by running them on labels.

``adlab.engine.sparsity.front`` walks f's program from x; an equation whose float operands are
all selection values (entries of x moved, labelled 1 + the entry's index), whose other
operands are known constants, and which only moves entries gives selection values.
Each is run on the labels themselves, as the sparsity detection runs its primitives:
where each output entry comes from is then exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..programs.jaxpr import call_body
from .index_sets import inexact, size_of

#: primitives that move or copy entries, never combine them
SELECTION = frozenset({
    "reshape", "squeeze", "expand_dims", "broadcast_in_dim", "transpose", "slice", "rev",
    "concatenate", "gather", "dynamic_slice", "split", "stack", "tile",
})  # fmt: skip
#: calls whose body is walked as if written out: jnp wraps np.take, np.flip, np.roll...
#: in a jitted function (a custom derivative's call is not: its derivative is its own)
CALLS = frozenset({"jit", "pjit", "closed_call", "core_call", "remat", "checkpoint"})
#: what may move an entry more than once: found by running it (``_once``)
MAY_COPY = frozenset({"gather", "tile"}) | CALLS
#: primitives that leave each entry as it is (a float-to-float convert: its derivative is 1)
SAME = frozenset({"copy", "copy_p", "convert_element_type"})
#: an equation computing known indices (no input) is run only up to this many entries
KNOWN_MAX = 1 << 22


def _run(eqn: Any, labels: dict, known: dict) -> list[np.ndarray] | None:
    """The equation run with its float operands replaced by ``labels`` (1 + an entry's
    index), its index operands known; None if it cannot be, or an entry comes from no
    labelled one (a fill value)."""
    ins = []
    for a in eqn.invars:
        if hasattr(a, "val"):  # a literal: an index or a start, never an x entry
            if inexact(a.aval):
                return None
            ins.append(np.asarray(a.val))
        elif a in labels:
            ins.append(labels[a].reshape(a.aval.shape))
        elif a in known and not inexact(a.aval):
            ins.append(known[a])
        else:  # data, or indices computed from x or the data
            return None
    out = _call(eqn, ins) if eqn.primitive.name in CALLS else _bind(eqn, ins)
    if out is None:
        return None
    outs = [np.asarray(o) for o in out]
    if any(o.size and o.min() < 1 for o in outs):
        return None
    return [o.ravel() for o in outs]


def _bind(eqn: Any, ins: list) -> list | None:
    """The equation's outputs on ``ins`` (labels, known integers); None if it cannot run."""
    try:  # a gather's NaN fill value cast to the labels' integers: never an entry
        with np.errstate(invalid="ignore"):
            out = eqn.primitive.bind(*ins, **eqn.params)
    except Exception:  # anything it cannot run on labels is not a selection
        return None
    return list(out) if eqn.primitive.multiple_results else [out]


def _call(eqn: Any, ins: list) -> list[np.ndarray] | None:
    """A call's body run on ``ins`` (labels for its float operands): a selection only if
    each float value in it is moved (``SELECTION``, ``SAME``, a call of such) from its
    float operands, other work being on integers alone (indices); else None."""
    sub = call_body(eqn)
    if sub is None:
        return None
    jaxpr, consts = sub
    env = dict(zip(jaxpr.invars, ins, strict=True))
    # float constants are data, never labels: left unbound
    env.update((v, np.asarray(c)) for v, c in zip(jaxpr.constvars, consts, strict=True)
               if not inexact(v.aval))  # fmt: skip

    def read(a: Any) -> Any:
        if hasattr(a, "val"):
            return None if inexact(a.aval) else np.asarray(a.val)
        return env.get(a)

    for e in jaxpr.eqns:
        vals = [read(a) for a in e.invars]
        floats_in = any(inexact(a.aval) for a in e.invars)
        floats_out = any(inexact(v.aval) for v in e.outvars)
        name = e.primitive.name
        if any(v is None for v in vals):
            return None
        if name in SAME and floats_out:
            out = [vals[0]] if floats_in else None  # a float made from integers: data
        elif name in CALLS:
            out = _call(e, vals)
        elif name in SELECTION or not (floats_in or floats_out):
            out = _bind(e, vals)
        else:  # arithmetic on the operands' values
            return None
        if out is None:
            return None
        env.update(zip(e.outvars, (np.asarray(o) for o in out), strict=True))
    outs = [read(v) for v in jaxpr.outvars]
    return None if any(o is None for o in outs) else outs


def labels_of(eqn: Any, src: dict, known: dict) -> tuple[list[np.ndarray], bool] | None:
    """The output labels (1 + x's entry) of a selection equation, and whether it moves
    each of its operands' entries at most once; None if it is not a selection."""
    name = eqn.primitive.name
    if not all(inexact(v.aval) for v in eqn.outvars):
        return None
    if name in SAME:
        if len(eqn.invars) != 1 or eqn.invars[0] not in src or not inexact(eqn.invars[0].aval):
            return None
        return [src[eqn.invars[0]]], True
    if name not in SELECTION and name not in CALLS:
        return None
    outs = _run(eqn, src, known)
    if outs is None:
        return None
    return outs, _once(eqn, known)


def _once(eqn: Any, known: dict) -> bool:
    """Whether a selection equation moves each entry of its operands at most once, so g
    may move them itself. A broadcast is taken as a copy even where it copies nothing
    (ba's ``w[:, None]``, used by other rows than ``w``: absorbed, 3 colors, not 2)."""
    name = eqn.primitive.name
    if name == "broadcast_in_dim":
        return False
    if name not in MAY_COPY:  # slices, reshapes, concatenations...: never a copy
        return True
    # the same run on its float operands' positions: an output position seen twice is a copy
    positions, start = {}, 1
    for a in eqn.invars:
        if not hasattr(a, "val") and inexact(a.aval):
            positions[a] = np.arange(start, start + size_of(a.aval), dtype=np.int32)
            start += size_of(a.aval)
    moved = _run(eqn, positions, known)
    return moved is not None and int(np.bincount(np.concatenate(moved)).max(initial=0)) <= 1


def run_known(eqn: Any, known: dict) -> None:
    """Run an equation of constants only (indices built in f) so later gathers can use it."""
    if sum(size_of(v.aval) for v in eqn.outvars) > KNOWN_MAX:
        return
    ins = []
    for a in eqn.invars:
        if hasattr(a, "val"):
            ins.append(np.asarray(a.val))
        elif a in known:
            ins.append(known[a])
        else:
            return
    try:
        out = eqn.primitive.bind(*ins, **eqn.params)
    except Exception:
        return
    outs = out if eqn.primitive.multiple_results else [out]
    for v, o in zip(eqn.outvars, outs, strict=True):
        known[v] = np.asarray(o)
