"""The advisor: the fastest mode at one n beyond noise, ties said as ties, predictions
said as predictions; on the command line and in the Lab.

Hand-made records with known intervals test the rules; the command line and the Lab
run real (short) measurements. No test asserts how fast anything is.

Internals: the advisor's parts behind advise (measure.advisor: predict, smaller_sizes,
advice_from, PREDICTION_SPREAD), on hand-made records: a prediction's spread and the sizes
it tries are not public.
"""

from __future__ import annotations

import json
import math

import pytest
from _lab_helpers import FAST

import adlab
from adlab import Advice, Record
from adlab.cli import main
from adlab.lab import LabState
from adlab.measure import advisor
from adlab.measure.advisor import PREDICTION_SPREAD, advice_from, predict, smaller_sizes

MODEL = "normal_logpdf"


def rec(label: str, n: int, t: float | None, spread: float = 0.05, **kw) -> Record:
    """A point: median ``t``, its interval ``t (1 -/+ spread)``; ``t=None``: skipped."""
    kw.setdefault("mode", label.split("[")[0])
    if t is None:
        kw.setdefault("skipped", "predicted 5 s > budget 2 s")
        return Record(model=MODEL, n=n, label=label, scheme=None, jit=True,
                      precision="float64", backend="jax", **kw)  # fmt: skip
    return Record(model=MODEL, n=n, label=label, scheme=None, jit=True, precision="float64",
                  backend="jax", median_s=t, median_lo_s=t * (1 - spread),
                  median_hi_s=t * (1 + spread), **kw)  # fmt: skip


# ------------------------------------------------------------- the verdict
def test_a_clear_winner_by_how_much_and_at_what_error():
    records = [
        rec("primal", 1000, 5e-6),  # f itself is no candidate, however fast
        rec("reverse", 1000, 10e-6, error=2e-16),
        rec("forward", 1000, 370e-6, error=3e-16),
        rec("numeric[central]", 1000, 900e-6, error=1e-9),
    ]
    a = advice_from(records, 1000)
    assert (a.best, a.runner_up, a.tied, a.predicted) == ("reverse", "forward", (), ())
    assert a.speedup == pytest.approx(37.0) and a.error == 2e-16
    assert a.records == tuple(records)
    assert a.describe() == (
        "At n = 1000 on normal_logpdf: reverse is fastest, 37x faster than forward (error 2e-16)."
    )


def test_a_tie_is_said_as_a_tie():
    records = [rec("forward", 10, 10.0e-6, error=0.0), rec("reverse", 10, 10.4e-6, error=0.0)]
    a = advice_from(records, 10)
    assert a.best == "forward" and a.tied == ("reverse",)
    assert (
        a.describe() == "forward and reverse are within noise at n = 10 on normal_logpdf; either."
    )


def test_two_points_at_the_floor_tie_however_their_medians_fall():
    records = [rec("forward", 3, 10e-6, 0.01, at_floor=True),
               rec("reverse", 3, 16e-6, 0.01, at_floor=True)]  # fmt: skip
    a = advice_from(records, 3)
    assert a.tied == ("reverse",) and "within noise" in a.describe()


def test_a_tie_ahead_of_a_slower_mode_says_both():
    records = [rec("forward", 10, 10e-6), rec("reverse", 10, 10.3e-6),
               rec("numeric[central]", 10, 70e-6)]  # fmt: skip
    a = advice_from(records, 10)
    assert a.runner_up == "reverse" and a.tied == ("reverse",)
    assert a.describe() == ("forward and reverse are within noise at n = 10 on normal_logpdf; "
                            "either, 7x faster than numeric[central].")  # fmt: skip


def test_tied_modes_whose_errors_are_far_apart_say_which_is_more_accurate():
    records = [rec("numeric[central]", 10, 10e-6, error=1e-9),
               rec("reverse", 10, 10.2e-6, error=1e-16)]  # fmt: skip
    text = advice_from(records, 10).describe()
    assert "reverse is the more accurate: error 1e-16 against 1e-09" in text
    # within a hundred times machine epsilon, errors are not told apart
    close = [rec("forward", 10, 10e-6, error=0.0), rec("reverse", 10, 10.2e-6, error=1e-16)]
    assert "accurate" not in advice_from(close, 10).describe()


def test_nothing_measured_or_one_mode_only():
    skipped = [rec("forward", 100, None), rec("reverse", 100, None)]
    a = advice_from(skipped, 100)
    assert a.best is None and "no mode was measured" in a.describe()
    one = advice_from([rec("reverse", 100, 1e-5, error=0.0)], 100)
    assert (one.best, one.runner_up, one.speedup) == ("reverse", None, None)
    assert one.describe() == ("At n = 100 on normal_logpdf: only reverse was measured "
                              "(error 0 against the reference).")  # fmt: skip


# -------------------------------------------------------------- predictions
def test_an_unmeasured_mode_is_predicted_from_its_growth_and_said_so():
    """forward costs c n^2 (flops d n^2): measured to n = 100, skipped at 1000; its
    prediction at 1000 is c 1000^2, and reverse, measured there, wins by far."""
    c, d = 3e-9, 7.0
    fwd = [rec("forward", n, c * n**2, flops=d * n**2, error=0.0) for n in (10, 30, 100)]
    records = [*fwd, rec("forward", 1000, None), rec("reverse", 1000, 1e-5, error=0.0)]
    a = advice_from(records, 1000)
    assert a.predicted == ("forward",) and a.predicted_from == {"forward": 100}
    assert a.times["forward"] == pytest.approx(c * 1000**2)
    assert a.best == "reverse" and a.speedup == pytest.approx(c * 1000**2 / 1e-5)
    assert "300x faster than forward (predicted from n <= 100: ~3 ms)" in a.describe()
    assert "~300x" in a.describe()  # a ratio to a prediction is approximate


def test_a_prediction_without_flops_follows_the_times_power_law():
    """NumPy has no XLA flops: the time's own log-log slope carries it (here n^1.5)."""
    measured = {n: rec("numeric[central](numpy)", n, 2e-7 * n**1.5) for n in (10, 100)}
    assert predict(measured, 1000) == pytest.approx(2e-7 * 1000**1.5)
    # a fixed cost per call plus work in proportion to the flops: both recovered
    affine = {n: rec("forward", n, 2e-5 + 1e-9 * n**2, flops=4.0 * n**2) for n in (30, 100)}
    assert predict(affine, 1000) == pytest.approx(2e-5 + 1e-9 * 1000**2)
    assert predict({10: measured[10]}, 1000) is None  # one size says nothing of growth


def test_a_prediction_ties_with_what_lies_within_its_spread():
    fwd = [rec("forward", n, 1e-8 * n**2, flops=float(n**2)) for n in (10, 100)]
    near = 1e-8 * 1000**2 * PREDICTION_SPREAD / 1.5  # well inside the spread
    a = advice_from([*fwd, rec("reverse", 1000, near)], 1000)
    assert a.best == "forward" and a.tied == ("reverse",) and a.predicted == ("forward",)


def test_advise_measures_smaller_sizes_for_a_mode_over_budget(monkeypatch):
    """advise measures n; forward is over budget there, so it is measured again at smaller
    sizes (and only it), then predicted."""
    calls = []

    def fake_bench(model, sizes, modes, **options):
        calls.append((list(sizes), [v.mode for v in modes], options))
        if sizes == [1000]:
            return [rec("primal", 1000, 5e-6), rec("forward", 1000, None),
                    rec("reverse", 1000, 1e-5)]  # fmt: skip
        return [rec("forward", n, 1e-9 * n**2, flops=float(n**2)) for n in sizes]

    monkeypatch.setattr(advisor, "bench", fake_bench)
    a = adlab.advise(MODEL, 1000, ["forward", "reverse"], backend="jax", repeats=3)
    assert [c[0] for c in calls] == [[1000], smaller_sizes(1000)] == [[1000], [33, 100, 333]]
    assert calls[1][1] == ["forward"]
    assert calls[0][2]["backend"] == "jax" and calls[0][2]["repeats"] == 3
    assert a.predicted == ("forward",) and a.best == "reverse"
    assert a.predicted_from == {"forward": 333}

    # records of an earlier sweep already hold forward's growth: nothing more is measured
    calls.clear()
    earlier = [rec("forward", n, 1e-9 * n**2, flops=float(n**2)) for n in (10, 100)]
    b = adlab.advise(MODEL, 1000, ["forward", "reverse"], records=earlier)
    assert len(calls) == 1 and b.predicted_from == {"forward": 100}


def test_advise_measures_for_real():
    a = adlab.advise(MODEL, 3, ["forward", "reverse"], repeats=3, target_s=0.002, warn=False)
    assert isinstance(a, Advice) and a.best in ("forward", "reverse")
    assert {r.label for r in a.records} == {"primal", "forward", "reverse"}
    assert all(r.n == 3 for r in a.records) and a.predicted == ()
    assert math.isfinite(a.speedup) and a.speedup >= 1
    assert "n = 3 on normal_logpdf" in a.describe()


# ------------------------------------------------------- command line, Lab
def test_the_command_line_prints_the_verdict_then_the_evidence(capsys):
    assert main(["advise", "--n", "3", "--modes", "forward,reverse", "--budget", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "n = 3 on normal_logpdf" in out[0]
    assert out[0].endswith(".") and out[1] == ""
    assert any(line.startswith("forward ") for line in out[2:])  # the table's rows
    assert any(line.startswith("reverse ") for line in out[2:])

    assert main(["advise", "--n", "3", "--modes", "reverse", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["best"] == "reverse" and got["runner_up"] is None
    assert got["describe"].startswith("At n = 3 on normal_logpdf: only reverse was measured")
    assert {r["label"] for r in got["records"]} == {"primal", "reverse"}


def test_the_command_line_says_what_is_wrong_with_a_bad_mode(capsys):
    assert main(["advise", "--n", "3", "--modes", "backward"]) == 2
    assert "backward" in capsys.readouterr().err


def test_the_lab_states_the_verdict_at_the_sliders_n(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # saved edits go to tmp_path/.adlab
    # the verdict is the state's (the Run button's path is test_lab_run's): no view to build
    lab = LabState(n=10, modes=["forward", "reverse"], steps=False, **FAST)
    lab.run(wait=True, timeout=120)
    verdict = advice_from(lab.results, 10, MODEL).describe()
    assert "n = 10 on normal_logpdf" in verdict
    assert lab.status.startswith("Done") and verdict in lab.status
