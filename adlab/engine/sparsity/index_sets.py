"""Index sets through one primitive: the rules ``adlab.engine.sparsity.pattern`` walks a
program with.

A pattern is a boolean ``scipy.sparse.csr_array`` with one row per entry of a
variable and one column per input: the inputs that entry depends on. None
stands for a variable that depends on no input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..programs import memory

#: a cumulative operation that would need more index pairs than this is taken as dense
PAIRS_MAX = 20_000_000
#: a pattern may hold at most this many entries: SciPy's row selection counts them in
#: 32 bits ("negative dimensions" past it)
ENTRIES_MAX = 2**31 - 1
#: bytes a pattern's entry takes while it is built: its column (8), its flag, a copy
ENTRY_BYTES = 24


class PatternTooLarge(memory.SizeError):
    """A variable whose pattern would hold more entries than can be held.

    Attributes:
        entries: the entries it would hold; rows: the variable's size; limit: the most allowed.
        where: the equations that made it, innermost first (the walk adds each level).
        dense: the primitive taken as dense (not analysed) that made it, else None.
    """

    def __init__(self, entries: int, rows: int, limit: int) -> None:
        super().__init__(
            f"a sparsity pattern of {entries:.3g} entries, more than the "
            f"{limit:.3g} adlab can hold: use sparse=False, or a smaller n"
        )
        self.entries, self.rows, self.limit = entries, rows, limit
        self.where: list = []
        self.dense: str | None = None  # the primitive taken as dense, if that made it


def check_entries(entries: int, rows: int) -> None:
    """Raise ``PatternTooLarge`` before building a pattern of ``entries`` that could not be
    held: past ``ENTRIES_MAX``, or past half of the memory available."""
    if entries < 1 << 24:  # small: not worth reading the memory available
        return
    room = memory.FRACTION * memory.available_bytes() / ENTRY_BYTES
    limit = int(min(ENTRIES_MAX, room))
    if entries > limit:
        raise PatternTooLarge(int(entries), int(rows), limit)


def as_bool(m: Any) -> sp.csr_array:
    """``m`` as a boolean CSR array, duplicates summed and indices sorted."""
    out = sp.csr_array(m, dtype=bool)
    out.sum_duplicates()
    out.sort_indices()
    return out


def empty(rows: int, n: int) -> sp.csr_array:
    return sp.csr_array((rows, n), dtype=bool)


def size_of(aval: Any) -> int:
    return int(np.prod(aval.shape, dtype=np.int64))


def inexact(aval: Any) -> bool:
    return np.issubdtype(np.dtype(aval.dtype), np.inexact)


def take(p: sp.csr_array, idx: np.ndarray) -> sp.csr_array:
    """Rows ``idx`` of ``p``; an index below 0 gives an empty row."""
    idx = np.asarray(idx, dtype=np.int64).ravel()
    keep = idx >= 0
    if not keep.any():  # p may have no rows at all (a zero-size intermediate): none to take
        return empty(idx.size, p.shape[1])
    check_entries(int(np.diff(p.indptr)[idx[keep]].sum()), idx.size)
    rows = p[np.where(keep, idx, 0)]
    if not keep.all():
        rows = sp.diags_array(keep.astype(np.int8), dtype=np.int8) @ rows
    return as_bool(rows)


def mapped(pairs_out: np.ndarray, pairs_in: np.ndarray, rows: int, cols: int) -> sp.csr_array:
    """The 0/1 matrix with a one at each (out, in) pair."""
    ones = np.ones(pairs_out.size, dtype=np.int8)
    return sp.csr_array((ones, (pairs_out.ravel(), pairs_in.ravel())), shape=(rows, cols))


def coords_of(shape: tuple) -> np.ndarray:
    """(ndim, size): the coordinates of every entry of an array of ``shape``, row-major."""
    if not shape:
        return np.zeros((0, 1), dtype=np.int64)
    return np.indices(shape).reshape(len(shape), -1).astype(np.int64)


def dot_map(shape_out, mine, other, contract, batch, mine_first: bool) -> tuple:
    """(out, in) index pairs of ``dot_general`` for one operand: each of its entries
    feeds the outputs at its batch and free coordinates, across the other's free ones."""
    (c_me, c_other), (b_me, b_other) = contract, batch
    free_me = [d for d in range(len(mine)) if d not in c_me and d not in b_me]
    free_other = [d for d in range(len(other)) if d not in c_other and d not in b_other]
    strides = np.cumprod((1, *shape_out[::-1]))[:-1][::-1].astype(np.int64)
    nb = len(b_me)
    free_at = nb + (0 if mine_first else len(free_other))
    other_at = nb + (len(free_me) if mine_first else 0)
    coords = coords_of(tuple(mine))
    base = sum((coords[d] * strides[k] for k, d in enumerate(b_me)), np.zeros(coords.shape[1],
               dtype=np.int64))  # fmt: skip
    for k, d in enumerate(free_me):
        base = base + coords[d] * strides[free_at + k]
    fshape = tuple(other[d] for d in free_other)
    fcoords = coords_of(fshape)
    off = np.zeros(fcoords.shape[1], dtype=np.int64)
    for k in range(len(fshape)):
        off = off + fcoords[k] * strides[other_at + k]
    out = base[:, None] + off[None, :]
    return out, np.broadcast_to(np.arange(coords.shape[1])[:, None], out.shape)


def product(a: sp.csr_array, p: sp.csr_array) -> sp.csr_array:
    """``a @ p`` for a 0/1 map ``a``, refused first if it could hold too many entries
    (the bound: each of a's ones brings its row of p whole)."""
    per_row = np.diff(p.indptr)
    check_entries(int(per_row[sp.csr_array(a).indices].sum()), a.shape[0])
    return as_bool(a @ p)


def broadcast(p: sp.csr_array | None, shape: tuple, out: tuple) -> sp.csr_array | None:
    """``p`` of an operand of ``shape`` broadcast to ``out`` as NumPy broadcasts (an
    elementwise operation in a jaxpr may broadcast size-1 axes)."""
    if p is None or tuple(shape) == tuple(out):
        return p
    index = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    return take(p, np.broadcast_to(index, out).ravel())


def union(ins: list, size: int) -> sp.csr_array | None:
    """Elementwise: each entry depends on what the same entry of each operand does."""
    out = None
    for p in ins:
        if p is None:
            continue
        if p.shape[0] != size:  # a rank-0 operand, broadcast
            p = take(p, np.zeros(size, dtype=np.int64))
        out = p if out is None else out + p
    return None if out is None else as_bool(out)


def moved(eqn, ins: list, known: list) -> list | None:
    """Where each entry goes, found by running the primitive on labels (1 + the entry's
    index; 0 for none); None where an index operand is not known."""
    labels, stack, offset = [], [], 0
    for a, p, k in zip(eqn.invars, ins, known, strict=True):
        if inexact(a.aval):
            size = size_of(a.aval)
            labels.append(np.arange(offset + 1, offset + size + 1, dtype=np.int32)
                          .reshape(a.aval.shape) if p is not None
                          else np.zeros(a.aval.shape, np.int32))  # fmt: skip
            if p is not None:
                stack.append(p)
                offset += size
        elif k is not None:
            labels.append(k)
        else:  # indices computed from x or the data: where entries go is unknown
            return None
    try:
        # a gather's fill value (NaN for floats) cast to the labels' integers: not an entry
        with np.errstate(invalid="ignore"):
            out = eqn.primitive.bind(*labels, **eqn.params)
    except Exception:
        return None
    outs = out if eqn.primitive.multiple_results else [out]
    every = as_bool(sp.vstack(stack)) if len(stack) > 1 else stack[0]
    return [take(every, np.asarray(o).ravel().astype(np.int64) - 1) for o in outs]


def reduced(eqn, p: sp.csr_array) -> sp.csr_array:
    """A reduction over ``axes``: each output entry takes the union of what it reduces."""
    shape = eqn.invars[0].aval.shape
    axes = tuple(eqn.params["axes"])
    kept = [d for d in range(len(shape)) if d not in axes]
    coords = coords_of(tuple(shape))
    kshape = tuple(shape[d] for d in kept)
    out = (np.ravel_multi_index(tuple(coords[kept]), kshape) if kept
           else np.zeros(coords.shape[1], dtype=np.int64))  # fmt: skip
    rows = int(np.prod(kshape, dtype=np.int64))
    return as_bool(mapped(out, np.arange(out.size), rows, out.size) @ p)


def cumulative(eqn, p: sp.csr_array) -> sp.csr_array | None:
    """A cumulative sum (product, max...): each entry takes the union of those before it
    along the axis (after it, reversed); None where that is too many pairs to list."""
    shape = eqn.invars[0].aval.shape
    axis, length = eqn.params["axis"], shape[eqn.params["axis"]]
    lines = np.moveaxis(np.arange(int(np.prod(shape))).reshape(shape), axis, -1)
    lines = lines.reshape(-1, length)
    if lines.shape[0] * length * (length + 1) // 2 > PAIRS_MAX:
        return None
    at, before = np.tril_indices(length)  # output position at >= input position before
    if eqn.params.get("reverse", False):
        at, before = before, at
    return as_bool(mapped(lines[:, at], lines[:, before], lines.size, lines.size) @ p)


def dot(eqn, ins: list) -> sp.csr_array | None:
    """``dot_general``: each output entry takes the union over its contracted entries."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    shape_out = eqn.outvars[0].aval.shape
    size_out = size_of(eqn.outvars[0].aval)
    a, b = (v.aval.shape for v in eqn.invars)
    parts = []
    if ins[0] is not None:
        o, i = dot_map(shape_out, a, b, (lc, rc), (lb, rb), mine_first=True)
        parts.append(product(mapped(o, i, size_out, size_of(eqn.invars[0].aval)), ins[0]))
    if ins[1] is not None:
        o, i = dot_map(shape_out, b, a, (rc, lc), (rb, lb), mine_first=False)
        parts.append(product(mapped(o, i, size_out, size_of(eqn.invars[1].aval)), ins[1]))
    return union([as_bool(q) for q in parts], size_out)


def gathered(eqn, p: sp.csr_array) -> sp.csr_array | None:
    """A gather at indices not known (data, or computed from x): each output entry takes
    the union over every position the indices could pick, along the indexed axes of the
    operand, at its own position along the others (``x[:, idx]``: row k of the output
    from row k of x). None for a gather with batching axes (taken as dense)."""
    dims = eqn.params["dimension_numbers"]
    if getattr(dims, "operand_batching_dims", ()):
        return None
    shape = eqn.invars[0].aval.shape
    out_shape = eqn.outvars[0].aval.shape
    indexed, collapsed = set(dims.start_index_map), set(dims.collapsed_slice_dims)
    window = [d for d in range(len(shape)) if d not in collapsed]  # in the output's offset_dims
    fixed = [d for d in range(len(shape)) if d not in indexed]  # known position: the key
    key_shape = tuple(shape[d] for d in fixed)
    coords = coords_of(tuple(shape))
    key_in = (np.ravel_multi_index(tuple(coords[fixed]), key_shape) if fixed
              else np.zeros(coords.shape[1], dtype=np.int64))  # fmt: skip
    rows = int(np.prod(key_shape, dtype=np.int64))
    groups = product(mapped(key_in, np.arange(key_in.size), rows, key_in.size), p)
    out_coords = coords_of(tuple(out_shape))
    at = {d: out_coords[o] for d, o in zip(window, dims.offset_dims, strict=True)}
    zero = np.zeros(out_coords.shape[1], dtype=np.int64)  # a collapsed axis: position 0
    key_out = (np.ravel_multi_index(tuple(at.get(d, zero) for d in fixed), key_shape) if fixed
               else zero)  # fmt: skip
    return take(groups, key_out)
