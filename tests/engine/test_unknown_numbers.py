"""Numbers that could be silently wrong: NaN read as a number, a crossover missed
on a measured n, a derived setting left at its default (issue #12)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adlab
from adlab import tutorial
from adlab.tutorial import CostRow

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


# ----------------------------------------------------------------- crossovers
def timed(label: str, points: dict[int, float], mode: str | None = None) -> list[adlab.Record]:
    return [adlab.Record(model="m", mode=mode or label, n=n, label=label, scheme=None, jit=True,
                         precision="float64", backend="jax", median_s=t)
            for n, t in points.items()]  # fmt: skip


def test_a_crossover_on_a_measured_size_is_reported_there():
    # a is faster below n = 100, equal at 100, slower above: it is overtaken at 100
    records = timed("a", {10: 1e-5, 100: 1e-4, 1000: 1e-3})
    records += timed("b", {10: 1e-4, 100: 1e-4, 1000: 1e-4})
    (c,) = adlab.crossovers(records)
    assert isinstance(c, adlab.Crossover)
    assert (c.faster, c.slower, c.n, c.n_below, c.n_above) == ("b", "a", 100, 100, 100)
    assert c.time_s == pytest.approx(1e-4)
    assert c.describe() == "b overtakes a at n \u2248 100"


def test_a_tie_that_only_touches_is_no_crossover():
    records = timed("a", {10: 1e-5, 100: 1e-4, 1000: 1e-5})
    records += timed("b", {10: 1e-4, 100: 1e-4, 1000: 1e-4})
    assert adlab.crossovers(records) == []


def test_a_tie_over_several_sizes_spans_them():
    records = timed("a", {1: 1e-6, 10: 1e-5, 100: 1e-5, 1000: 1e-3})
    records += timed("b", {1: 1e-5, 10: 1e-5, 100: 1e-5, 1000: 1e-5})
    (c,) = adlab.crossovers(records)
    assert (c.faster, c.n_below, c.n_above) == ("b", 10, 100)
    assert c.n == pytest.approx(math.sqrt(10 * 100))


def test_crossovers_between_sizes_are_interpolated_and_primals_left_out():
    records = timed("a", {1: 1e-6, 100: 1e-4}) + timed("b", {1: 1e-5, 100: 1e-5})
    records += timed("f", {1: 1e-7, 100: 1e-3}, mode="primal")
    (c,) = adlab.crossovers(records)
    assert (c.faster, c.slower, c.n_below, c.n_above) == ("b", "a", 1, 100)
    assert c.n == pytest.approx(10)
    assert {(c.faster, c.slower) for c in adlab.crossovers(records, primal=True)} == {
        ("b", "a"), ("a", "f"), ("b", "f"),
    }  # fmt: skip


# ------------------------------------------------------------------- settings
DERIVED = """
N = 3
W = 2 * N  # follows N


def setup(n, rng):
    return (np.ones(n),)


def f(x):
    return np.sum(W * x**2)
"""


def test_a_derived_constant_follows_the_setting_it_is_computed_from():
    x = np.array([1.0, -2.0, 3.0])
    default = adlab.Model.from_source(DERIVED)
    assert default.settings == {"N": 3}  # W is computed: not something to set
    np.testing.assert_allclose(adlab.derivative(default, x), 2 * 6 * x, rtol=1e-15)
    five = adlab.Model.from_source(DERIVED, N=5)
    assert five.settings == {"N": 5}
    # W = 2 * N = 10: the gradient of sum(W x^2) is 2 W x, in both backends
    for backend in ("jax", "numpy"):
        assert float(five.function(backend)(np.ones(1))) == 10.0
    np.testing.assert_allclose(adlab.derivative(five, x), 2 * 10 * x, rtol=1e-15)
    np.testing.assert_allclose(adlab.derivative(default.with_settings(N=5), x), 20 * x)


def test_setting_a_computed_constant_says_what_to_change():
    with pytest.raises(ValueError, match=r"W is computed on line 3 \(`W = 2 \* N") as info:
        adlab.Model.from_source(DERIVED, W=4)
    assert "its settings are ['N']" in str(info.value)


def test_source_with_settings_writes_the_value_in_place_and_round_trips():
    five = adlab.Model.from_source(DERIVED, N=5)
    text = five.source_with_settings()
    assert text == DERIVED.replace("N = 3\n", "N = 5\n")
    again = adlab.Model.from_source(text)
    assert again.settings == {"N": 5}
    assert float(again.function("numpy")(np.ones(1))) == 10.0
    assert adlab.Model.from_source(DERIVED).source_with_settings() == DERIVED


def test_an_unchanged_nan_setting_leaves_the_source_alone():
    src = DERIVED.replace("N = 3\n", 'N = 3\nCAP = float("nan")\n')
    m = adlab.Model.from_source(src)
    assert math.isnan(m.settings["CAP"])
    assert m.source_with_settings() == src
    assert m.with_settings(N=4).source_with_settings() == src.replace("N = 3\n", "N = 4\n")
