"""The colorings table counts the passes the sparse derivatives take, without running them.

Internals: the colorings table's rows (measure.colorings.coloring_rows), which notebook 07
reads and no package exports.
"""

from __future__ import annotations

import adlab
from adlab.engine.sparsity import color_rows, jacobian_pattern
from adlab.measure.colorings import coloring_rows


def test_reverse_passes_are_those_the_sparse_reverse_jacobian_takes():
    """ba's rows share each camera's columns (one color per observation of a camera),
    but through its data movement two colors do; a banded Jacobian has no such front."""
    (ba,) = coloring_rows("ba", [40])
    m = adlab.catalog.resolve_model("ba")
    args = m.setup(40, 0)
    own = color_rows(jacobian_pattern(m.function("jax"), args, 0).pattern).count
    p = adlab.prepare(m, *args, mode="reverse", sparse=True)
    assert ba.rows == p.colors < own
    assert (ba.colors, ba.nnz) == (adlab.prepare(m, *args, mode="forward", sparse=True).colors,
                                   p.nnz)  # fmt: skip
    (band,) = coloring_rows("bvp_residual", [50])
    m = adlab.catalog.resolve_model("bvp_residual")
    assert band.rows == adlab.prepare(m, *m.setup(50, 0), mode="reverse", sparse=True).colors
