"""Tutorial 02's readings of a profile (adlab.tutorial.per_sample), on hand-made profiles."""

from __future__ import annotations

import pytest

from adlab import OpCost, Profile, tutorial


def _profile() -> Profile:
    # primal: 100 flops in 1 s (100 flop/s); gradient: 300 flops in 4 s
    primal = [OpCost("dot (dot)", 0.8, 80.0, 1.0), OpCost("tanh_fusion (tanh)", 0.2, 20.0, 1.0)]
    gradient = [
        OpCost("ynn_fusion (dot, reduce, add)", 2.5, 100.0, 1.0),  # 40 flop/s: slow
        OpCost("dot.2 (dot)", 1.0, 190.0, 1.0),  # 190 flop/s: fast
        OpCost("broadcast (broadcast)", 0.45, 0.0, 1.0),  # no flops: slow
        OpCost("add (add)", 0.05, 10.0, 1.0),  # 200 flop/s: fast
    ]
    return Profile("mlp", 10, "reverse", None, "float64", "jax", primal, gradient, 1.0, 4.0, 10)


def test_the_flops_reading_is_the_ratio_of_xla_counts_and_the_operations():
    text = tutorial.flops_reading(_profile())
    assert "needs 3x the primal's XLA flops, in 4 operations (the primal: 2)" in text


def test_the_operations_table_gives_each_rate_against_the_primals():
    t = tutorial.operations_table(_profile(), top=3)
    rates = [row[-1] for row in t.rows]
    assert rates == ["0.40", "1.90", "no flops"]
    assert [row[2] for row in t.rows] == ["62%", "25%", "11%"]
    assert t.notes == ("... and 1 more operations",)


def test_gradient_hope_sets_the_measured_ratio_beside_the_flops_bound_and_names_the_slow():
    t = tutorial.gradient_hope(_profile())
    assert [row[-1] for row in t.rows] == ["4x", "3x", "0.75x"]
    assert t.notes[0] == "below the primal's rate / 2: 2 operations, 74% of the gradient's time"
    assert "ynn_fusion (dot, reduce, add): 62% of the time, 0.40 of the primal's rate" in t.notes[1]
    assert "broadcast (broadcast): 11% of the time, no flops" in t.notes[2]
    assert not any("dot.2" in note for note in t.notes)


@pytest.mark.parametrize("factor", [0.0, -1.0])
def test_a_factor_that_is_not_positive_is_refused(factor):
    with pytest.raises(ValueError, match="factor must be > 0"):
        tutorial.gradient_hope(_profile(), factor=factor)
