"""Which selection front reverse mode takes (``adlab.engine.sparsity.front._fewest_colors``):
the one
whose J_g rows take the fewest colors, then the fewest entries, then the first; a front's
rows are colored only where their lower bound leaves it a chance.

Oracle: every pattern colored and the least (colors, entries, place) taken, as
``front_rows`` chose before it skipped colorings.

Internals: the choice among fronts itself (front._fewest_colors, front.find_front,
front._pattern), which sparse reverse mode makes inside and does not expose.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import adlab
from adlab.engine.model import precision_scope
from adlab.engine.sparsity import color_rows, front


def rows_sharing(pairs: list[tuple[int, ...]], rows: int) -> sp.csr_array:
    """A pattern whose column k is shared by the rows in ``pairs[k]``."""
    a = np.zeros((rows, len(pairs)), dtype=bool)
    for k, rs in enumerate(pairs):
        a[list(rs), k] = True
    return sp.csr_array(a)


ONE = rows_sharing([(0,), (1,), (2,)], 3)  # bound 1, 1 color
PAIRS = rows_sharing([(0, 1), (2, 3)], 4)  # bound 2, 2 colors
CYCLE = rows_sharing([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)], 5)  # bound 2, 3 colors


def chosen_by_coloring_all(fronts):
    keys = [(color_rows(found).count, f.size, k) for k, (f, found) in enumerate(fronts)]
    return min(keys)[2]


def spied(monkeypatch):
    colored = []

    def spy(pattern):
        colored.append(pattern)
        return color_rows(pattern)

    monkeypatch.setattr(front, "color_rows", spy)
    return colored


@pytest.mark.parametrize(
    ("patterns", "sizes", "colored"),
    [
        ([PAIRS, PAIRS], [22, 16], 1),  # ba's case: the smaller front, colored alone
        ([ONE, PAIRS], [22, 16], 1),  # one color: nothing can take fewer
        ([CYCLE, PAIRS], [16, 22], 2),  # same bound, but the first takes 3 colors
        ([PAIRS, CYCLE], [22, 16], 2),  # the smaller front colored first, and loses
        ([PAIRS, PAIRS], [16, 16], 1),  # a tie in all but place: the first
        ([CYCLE, CYCLE], [16, 22], 2),  # both above their bound: the colors tie, fewer entries
        ([CYCLE, CYCLE], [22, 16], 2),
        ([CYCLE], [5], 1),
    ],
)
def test_the_front_taken_is_the_one_coloring_all_would_take(patterns, sizes, colored,
                                                            monkeypatch):  # fmt: skip
    fronts = [(SimpleNamespace(size=s), p) for s, p in zip(sizes, patterns, strict=True)]
    want = chosen_by_coloring_all(fronts)
    seen = spied(monkeypatch)
    got, found, coloring = front._fewest_colors(fronts)
    assert got is fronts[want][0] and found is fronts[want][1]
    assert coloring.count == color_rows(found).count
    np.testing.assert_array_equal(coloring.colors, color_rows(found).colors)
    assert len(seen) == colored


def test_ba_colors_only_the_absorbed_front_and_takes_it(monkeypatch):
    m = adlab.load_model("ba", CAMERAS=5)
    args = m.setup(40)
    f = m.function("jax")
    with precision_scope("float64"):
        both = [front.find_front(f, args, 0, absorb) for absorb in (False, True)]
        fronts = [(fr, front._pattern(fr, args, 0)) for fr in both]
        assert fronts[1][0].size < fronts[0][0].size
        want = chosen_by_coloring_all(fronts)
        seen = spied(monkeypatch)
        got, _, coloring = front._fewest_colors(fronts)
    assert want == 1 and got is fronts[1][0] and coloring.count == 2
    assert len(seen) == 1 and seen[0] is fronts[1][1]
