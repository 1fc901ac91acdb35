"""What coloring saves, without running anything: a pattern's colorings at each size.

``coloring_rows`` reads a model's sparsity pattern from its program at each
size and colors it the three ways (columns for forward mode, rows for reverse
mode, a star coloring for a Hessian); nothing is compiled or timed, so the
counts are the same on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..catalog import resolve_model
from ..engine.backends import REFERENCE
from ..engine.model.precision import precision_scope
from ..engine.model.source import Model
from ..engine.sparsity.coloring import color_columns, color_rows, star_color
from ..engine.sparsity.front import front_rows
from ..engine.sparsity.pattern import hessian_pattern, jacobian_pattern


@dataclass(frozen=True)
class ColoringRow:
    """One size's pattern and its colorings.

    Attributes:
        model, n: the model and its size.
        kind: "jacobian" or "hessian".
        nnz: the pattern's nonzeros; ``shape`` its shape.
        colors: passes by the coloring the sparse derivative uses: columns (forward mode)
            for a Jacobian, a star coloring (HVPs) for a Hessian.
        rows: passes by a row coloring (reverse mode: of the rows of f after its data
            movement where that needs fewer, as the sparse derivative takes them,
            ``adlab.engine.sparsity.front``); for a Hessian, by a column coloring, which
            ignores its symmetry.
        lower_bound: the most nonzeros in one row: no column coloring needs fewer.
        dense: the passes without coloring: n for forward mode (or n HVPs).
    """

    model: str
    n: int
    kind: str
    nnz: int
    shape: tuple[int, int]
    colors: int
    rows: int
    lower_bound: int
    dense: int


def coloring_rows(model: str | Model, sizes: Iterable[int], kind: str = "jacobian",
                  seed: int = 0) -> list[ColoringRow]:  # fmt: skip
    """Detect and color ``model``'s Jacobian (or Hessian) pattern at each size."""
    m = resolve_model(model)
    i = m.wrt[0] if isinstance(m.wrt, tuple) else m.wrt
    out = []
    for n in sorted({int(s) for s in sizes}):
        args = m.setup(n, seed)
        with precision_scope("float64"):
            detect = hessian_pattern if kind == "hessian" else jacobian_pattern
            pattern = detect(m.function(REFERENCE), args, i).pattern
            if kind == "hessian":
                first, second = star_color(pattern), color_columns(pattern)
            else:
                through, own = front_rows(m.function(REFERENCE), args, i, pattern)
                first = color_columns(pattern)
                second = through.coloring if through else own or color_rows(pattern)
        out.append(ColoringRow(m.name, n, kind, int(pattern.nnz), tuple(pattern.shape),
                               first.count, second.count, first.lower_bound,
                               pattern.shape[1]))  # fmt: skip
    return out
