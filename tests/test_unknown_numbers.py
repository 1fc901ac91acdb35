"""Numbers that could be silently wrong: NaN read as a number, a crossover missed
on a measured n, a derived setting left at its default (issue #12)."""

from __future__ import annotations

import math

import pytest

from adlab import tutorial
from adlab.measure.costs import CostRow

NAN = math.nan


def cost(label: str, n: int, flops: float, primal_flops: float = 10.0, model: str = "m") -> CostRow:
    return CostRow(model=model, label=label, mode=label, n=n, precision="float64", f_evals=1,
                   flops=flops, primal_flops=primal_flops, flops_ratio=flops / primal_flops,
                   temp_bytes=0.0, argument_bytes=8.0, output_bytes=8.0,
                   bytes_accessed=16.0)  # fmt: skip


# ---------------------------------------------------------------- bound_table
def test_bound_table_never_reads_an_uncounted_mode_as_within():
    rows = [
        cost("reverse", 3, 30.0), cost("reverse", 5, 40.0),  # 3x, 4x: within
        cost("forward", 3, NAN), cost("forward", 5, NAN),  # XLA counted nothing
        cost("numeric", 3, 20.0), cost("numeric", 5, NAN),  # 2x, then unknown
        cost("complex-step", 3, 90.0), cost("complex-step", 5, NAN),  # 9x: over already
    ]  # fmt: skip
    t = tutorial.bound_table(rows)
    got = {mode: (largest, within) for mode, largest, within in t.rows}
    assert got["reverse"] == ("4", "yes")
    assert got["forward"] == ("-", "no data")
    assert got["numeric"] == ("2", "unknown")
    assert got["complex-step"] == ("9", "no")
    assert "forward: no flop count at n = 3, 5" in t.notes


def test_bound_table_nan_first_does_not_hide_a_count():
    # max(nan, x) is nan and max(x, nan) is x in Python: the order must not matter
    t = tutorial.bound_table([cost("forward", 3, NAN), cost("forward", 5, 80.0)])
    assert t.rows == (("forward", "8", "no"),)


# ------------------------------------------------------------- cheapest_table
@pytest.mark.parametrize("order", [1, -1])
def test_cheapest_table_never_names_an_uncounted_mode(order):
    rows = [cost("forward", 3, NAN), cost("reverse", 3, 50.0)][::order]
    t = tutorial.cheapest_table(rows)
    assert t.rows == (("m", "3", "reverse", "-"),)
    assert t.notes == ("m at n = 3: no flop count for forward",)


def test_cheapest_table_with_nothing_counted_says_no_data():
    t = tutorial.cheapest_table([cost("forward", 3, NAN), cost("reverse", 3, NAN)])
    assert t.rows == (("m", "3", "no data", "-"),)


def test_cheapest_table_names_the_fewest_and_the_gap():
    t = tutorial.cheapest_table([cost("forward", 3, 300.0), cost("reverse", 3, 50.0)])
    assert t.rows == (("m", "3", "reverse", "6x"),) and t.notes == ()
