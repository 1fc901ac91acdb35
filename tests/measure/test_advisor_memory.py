"""The advisor weighs memory (issue 32): a mode whose peak at n, measured or predicted, is
past ``memory_limit`` is ruled out with its figure, and where the fastest needs far more
memory than another candidate the sentence says both.

Hand-made records test the rules; one short real measurement checks that the measured
peaks reach the verdict. No test asserts how fast anything is, or how much memory.

Internals: the advisor's parts behind advise (measure.advisor: advice_from, predict_peak,
MEMORY_WORTH), on hand-made records: the threshold for a word on memory is not public.
"""

from __future__ import annotations

import pytest

import adlab
from adlab import Record
from adlab.measure.advisor import MEMORY_WORTH, advice_from, predict_peak

MODEL = "normal_logpdf"
GB, MB = 1e9, 1e6
FAST = {"budget_s": 0.5, "repeats": 3, "target_s": 0.002}


def rec(label: str, n: int, t: float, peak: float | None = None, **kw) -> Record:
    kw.setdefault("mode", label.split("[")[0])
    return Record(model=MODEL, n=n, label=label, scheme=None, jit=True, precision="float64",
                  backend="jax", median_s=t, median_lo_s=t * 0.95, median_hi_s=t * 1.05,
                  peak_bytes=peak, **kw)  # fmt: skip


def fast_but_big(n: int = 1000) -> list[Record]:
    """Reverse 8x faster than forward at ``n``, but 80x its memory."""
    return [
        rec("reverse", n, 10e-6, 3.2 * GB, residual_bytes=3.0 * GB, error=2e-16),
        rec("forward", n, 80e-6, 40 * MB, error=3e-16),
    ]


def test_without_a_limit_the_fastest_is_said_with_the_memory_it_needs():
    a = advice_from(fast_but_big(), 1000)
    assert (a.best, a.runner_up, a.ruled_out) == ("reverse", "forward", {})
    assert a.memory == {"reverse": 3.2 * GB, "forward": 40 * MB}
    assert a.describe() == (
        "At n = 1000 on normal_logpdf: reverse is fastest, 8x faster than forward "
        "(error 2e-16), but needs 3.2 GB; forward needs 40 MB."
    )


def test_a_mode_past_the_limit_is_ruled_out_with_its_figure():
    for limit in ("1GB", "1 GB", 1e9, "1000MB"):
        a = advice_from(fast_but_big(), 1000, memory_limit=limit)
        assert (a.best, a.runner_up, a.memory_limit) == ("forward", None, 1e9)
        assert a.ruled_out == {"reverse": 3.2 * GB}
    assert a.describe() == (
        "At n = 1000 on normal_logpdf: only forward fits the memory limit (error 3e-16). "
        "Ruled out by the memory limit of 1 GB: reverse needs 3.2 GB."
    )
    assert advice_from(fast_but_big(), 1000, memory_limit="4GB").best == "reverse"  # it fits


def test_a_predicted_peak_rules_out_too_and_is_said_to_be_predicted():
    """Reverse measured at n = 100 and 300 (its peak growing as n^2); skipped at 1000:
    its time and its peak there are predicted, ~10 GB, past a 4 GB limit."""
    records = [
        rec("reverse", 100, 10e-6, 0.1 * GB), rec("reverse", 300, 30e-6, 0.9 * GB),
        rec("reverse", 1000, 0.0, skipped="predicted 5 s > budget 2 s"),
        rec("forward", 1000, 900e-6, 50 * MB),
    ]  # fmt: skip
    measured = {r.n: r for r in records[:2]}
    assert predict_peak(measured, 1000) == pytest.approx(10 * GB)
    assert predict_peak({300: records[1]}, 1000) is None  # one size: no growth known
    free = advice_from(records, 1000)
    assert free.best == "reverse" and "reverse" in free.predicted
    a = advice_from(records, 1000, memory_limit="4GB")
    assert a.best == "forward" and a.ruled_out == {"reverse": pytest.approx(10 * GB)}
    assert "Ruled out by the memory limit of 4 GB: reverse needs ~10 GB." in a.describe()


def test_when_no_mode_fits_the_advice_says_each_figure():
    a = advice_from(fast_but_big(), 1000, memory_limit="10MB")
    assert a.best is None and set(a.ruled_out) == {"reverse", "forward"}
    assert a.describe() == (
        "At n = 1000 on normal_logpdf: no mode fits the memory limit of 10 MB: "
        "reverse needs 3.2 GB; forward needs 40 MB."
    )


def test_memory_any_machine_has_to_spare_is_not_worth_a_word():
    small = [rec("reverse", 1000, 10e-6, MEMORY_WORTH / 20), rec("forward", 1000, 80e-6, 1e3)]
    assert "needs" not in advice_from(small, 1000).describe()
    close = [rec("reverse", 1000, 10e-6, 2 * GB), rec("forward", 1000, 80e-6, 1 * GB)]
    assert "needs" not in advice_from(close, 1000).describe()  # within MEMORY_APART


def test_a_limit_that_is_no_size_is_refused_before_measuring():
    with pytest.raises(ValueError, match="a size is bytes"):
        adlab.advise(MODEL, 10, ["reverse"], memory_limit="lots", **FAST)


def test_measured_peaks_reach_the_verdict():
    a = adlab.advise(MODEL, 30, ["forward", "reverse"], memory_limit=1, warn=False,
                     reference=None, **FAST)  # fmt: skip
    measured = {r.label: r.peak_bytes for r in a.records if r.mode != "primal"}
    assert all(measured.values()), a.records  # the sweep measured each peak ...
    assert a.best is None and a.ruled_out == measured  # ... and each is past 1 byte
    assert a.describe().startswith("At n = 30 on normal_logpdf: no mode fits the memory limit")
