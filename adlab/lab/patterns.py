"""What a sparse run shows beside its times: each sparse kind's pattern, colored, and its colors.

A sparse series (``forward(sparse)``, ``reverse(sparse)``,
``hessian[...](sparse)``) takes one pass per color of its pattern, where the
dense derivative takes one per input. The Lab draws the pattern at a small n
measured (up to ``PATTERN_N_MAX``: a bigger one is a smear at the figure's
size; its structure is the same), and says the colors against the dense passes at the
largest n measured. Both come from the engine's own ``prepare_sparse``, the
path the timed series took, so they are the colors that were timed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .._vocab import Record
from ..engine.derivative import prepare
from ..engine.model.source import Model
from ..engine.sparse import prepare_sparse
from ..engine.sparsity.coloring import Coloring
from ..measure.series import parse_variant

#: the pattern is drawn at a size up to this: each nonzero a square of a 315-pixel figure
PATTERN_N_MAX = 60
#: what one pass of each sparse kind is, and what a color groups
_PASSES = {"forward": ("JVPs", "columns"), "reverse": ("VJPs", "rows"),
           "hessian": ("HVPs", "vertices")}  # fmt: skip


@dataclass(frozen=True)
class SparsityShown:
    """One sparse kind's pattern at size ``n``, as the Lab shows it.

    Attributes:
        label: the first sparse series of this kind in the run.
        kind: "forward", "reverse" or "hessian" (its own pattern and coloring).
        n: the size the pattern was read at.
        pattern: the boolean pattern, a ``scipy.sparse.csr_array``.
        coloring: the ``Coloring`` whose ``count`` passes the sparse series takes.
        nnz: the pattern's nonzeros.
        via: how the passes were found where not from this pattern's own coloring
            (``SparsePrepared.via``: reverse mode through the selection front, whose
            rows of one color may share a column of this pattern, not of the front's).
    """

    label: str
    kind: str
    n: int
    pattern: Any
    coloring: Coloring
    nnz: int
    via: str | None = None

    @property
    def colors(self) -> int:
        return self.coloring.count

    def title(self) -> str:
        """The figure's title, short enough for its width: the kind, colors, nonzeros, n."""
        plural = "s" if self.colors != 1 else ""
        if self.kind == "hessian":
            colors = f"Hessian: {self.colors} star color{plural}"
        else:
            colors = f"{self.kind}: {self.colors} color{plural} of {_PASSES[self.kind][1]}"
            if self.via:
                colors += " via the front"
        return f"{colors}, {self.nnz} nonzeros, n = {self.n}"


def sparse_kinds(variants: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """kind -> (the first sparse variant of that kind, its composition), in order."""
    out: dict[str, tuple[str, str | None]] = {}
    for spec in variants:
        v = parse_variant(spec)
        if v.sparse and v.mode not in out:
            out[v.mode] = (spec, v.scheme)
    return out


def patterns(model: Model, variants: Sequence[str], sizes: Sequence[int], precision: str
             ) -> Iterator[SparsityShown]:  # fmt: skip
    """The pattern of each sparse kind among ``variants``, at the largest of ``sizes`` (those
    measured) up to ``PATTERN_N_MAX``, or the smallest when none is that small.

    A kind the model refuses (a Hessian of a vector f) is left out: its records
    are skipped with the reason already.
    """
    kinds = sparse_kinds(variants)
    if not kinds or not sizes:
        return
    n = max((s for s in sizes if s <= PATTERN_N_MAX), default=min(sizes))
    for kind, (label, scheme) in kinds.items():
        composition = (scheme or "forward-over-reverse") if kind == "hessian" else None
        try:
            p = prepare_sparse(model, *model.setup(n), mode=kind, scheme=composition,
                               jit=False, precision=precision, prepare=prepare)  # fmt: skip
        except Exception:  # noqa: BLE001 - the records say why, on the user's line
            continue
        yield SparsityShown(label, kind, n, p.pattern, p.coloring, int(p.nnz), p.via)


def colors_notes(records: Iterable[Record]) -> list[str]:
    """For each sparse kind, its colors against the dense passes at the largest n measured."""
    last: dict[str, Record] = {}
    for r in records:
        if r.colors is not None and not r.skipped and r.n >= last.get(r.mode, r).n:
            last[r.mode] = r
    out = []
    for kind, r in last.items():
        passes = _PASSES.get(kind, ("passes", ""))[0]
        dense = "one per output" if kind == "reverse" else str(r.n)
        colors = f"{r.colors} color{'s' if r.colors != 1 else ''}"
        out.append(f"{r.label} at n = {r.n}: {colors} ({r.colors} {passes}) for {r.nnz} "
                   f"nonzeros, where dense takes {dense}.")  # fmt: skip
    return out
