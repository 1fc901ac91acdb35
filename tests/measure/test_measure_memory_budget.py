"""The sweep predicts each point's peak memory from the smaller sizes, as it predicts time,
and skips one that would not fit in the memory free, with the predicted figure, before
anything of it is prepared (issue 32, M5).

Internals: the budget (measure.budget: Budget, loglog), fed peaks by hand, and the memory
the engine reads as free (engine.programs.memory.available_bytes, FRACTION), patched so
that a test does not depend on this machine's memory; and the sweep's call to prepare
(measure.preparing.prepare_series), watched to see a skipped point never prepared.
"""

from __future__ import annotations

import math

import pytest

import adlab
import adlab.engine.programs.memory
from adlab._format import human_bytes
from adlab.engine.programs.memory import FRACTION
from adlab.measure.budget import Budget, loglog

pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")
GB = 1e9


@pytest.fixture
def free(monkeypatch):
    """Set the memory said to be free: ``free(10e9)``."""

    def set_free(nbytes: float) -> None:
        monkeypatch.setattr(adlab.engine.programs.memory, "available_bytes", lambda: nbytes)

    return set_free


def dense(n: int) -> float:
    """A dense Jacobian's bytes: n^2 float64."""
    return 8.0 * n * n


def test_the_peak_is_extrapolated_on_log_log_axes_through_the_last_two_sizes():
    b = Budget(2.0)
    for n in (10, 100, 1000):
        b.add_memory("forward", n, dense(n) + 1e6 * (n == 10))  # n = 10: overhead, left behind
    peak, power, a, c = b.predict_peak("forward", 10_000)
    assert (a, c) == (100, 1000) and power == pytest.approx(2.0)
    assert peak == pytest.approx(dense(10_000))
    assert b.predict_peak("forward", 1000)[2:] == (10, 100)  # from the sizes below it only


def test_one_size_or_none_predicts_nothing_and_skips_nothing(free):
    free(1.0)  # nothing fits: only a prediction can skip
    b = Budget(2.0)
    assert b.predict_peak("reverse", 100) is None and b.over_memory("reverse", 100) is None
    b.add_memory("reverse", 10, 5e9)
    b.add_memory("reverse", 30, None)  # not measured: not kept
    b.add_memory("reverse", 30, 0.0)
    assert b.predict_peak("reverse", 100) is None and b.over("reverse", 100) is None


def test_a_point_predicted_past_the_free_memory_is_skipped_with_both_figures(free):
    free(10 * GB)  # a point may take FRACTION of it
    b = Budget(2.0)
    for n in (1000, 3000):
        b.add_memory("reverse", n, dense(n))
        b.add("reverse", n, 1e-4, 0.01, 1e-4, 1)  # fast: the time budget skips nothing
    fits = math.isqrt(int(FRACTION * 10 * GB / 8))  # the largest n whose n^2 float64 fit
    assert b.over("reverse", fits - 10) is None
    reason = b.over("reverse", 2 * fits)
    assert reason == b.over_memory("reverse", 2 * fits)
    assert reason.startswith(f"predicted peak {human_bytes(dense(2 * fits))}; 10 GB of memory free")
    assert "n^2 from n = 1000 to 3000" in reason
    free(100 * GB)  # the memory free is read at each check: more freed, it fits
    assert b.over("reverse", 2 * fits) is None


def test_peaks_that_shrink_are_taken_as_flat():
    assert loglog([(10, 5e6), (100, 4e6)], 1000, 1.0) == (4e6, 0.0)
    assert loglog([(10, 0.0), (100, 4e6)], 1000, 1.0) == (pytest.approx(4e7), 1.0)
    assert loglog([(10, 1.0), (100, 1e9)], 1000, 1.0)[1] == 3.0  # clamped


def test_a_sweep_skips_the_size_that_would_not_fit_before_preparing_it(free, monkeypatch):
    """Two sizes measured with memory aplenty; then the memory free shrinks to what the
    third size's predicted peak does not fit in: reverse is skipped with the figure the
    budget predicts from the records' own peaks, and never prepared."""
    free(1e15)
    sweep = adlab.bench("normal_logpdf", [30, 300, 3000], ["reverse"], repeats=3,
                        target_s=0.002, reference=None)  # fmt: skip
    first = [next(sweep) for _ in range(4)]  # f and reverse at 30 and 300
    assert all(r.peak_bytes for r in first), [r.note for r in first]
    reverse = {r.n: r.peak_bytes for r in first if r.label == "reverse"}
    predicted, _ = loglog(sorted(reverse.items()), 3000, 1.0)
    free(predicted / FRACTION * 0.9)  # just too little for reverse at n = 3000

    prepared = []
    original = adlab.measure.preparing.prepare_series

    def watched(m, point, v):
        prepared.append(v.label)
        return original(m, point, v)

    monkeypatch.setattr(adlab.measure.preparing, "prepare_series", watched)
    last = {r.label: r for r in sweep}
    assert last["reverse"].skipped.startswith(f"predicted peak {human_bytes(predicted)};")
    assert "reverse" not in prepared  # skipped before anything of it was allocated
