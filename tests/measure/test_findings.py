"""Findings that hold up under noise: compare, significant crossovers, the floor, the noise.

Synthetic records with known intervals test the rules; a few short sweeps test
that the sweep feeds them (interleaved repeats, the floor beside each size,
the machine's noise before the first). No test asserts how fast anything is.

Internals: the rules behind compare and crossovers, on synthetic records with known
intervals: significance and ties (measure.findings), the floor and the noise
(measure.floor), summarize (measure.timing), and where the Lab, the plots and the bench
command show them (lab.runner, plots.rows.record_row, measure.cases.findings); the public
faces show only their verdicts.
"""

from __future__ import annotations

import math
import warnings

import pytest

import adlab
from adlab import NoisyMachineWarning, Record, compare
from adlab.measure import floor as floor_mod
from adlab.measure import sweep as sweep_mod
from adlab.measure.findings import significant, tied_pairs
from adlab.measure.floor import AT_FLOOR, FLOOR_BAND, NOISE_LIMIT, at_floor, noisy, ratio_text
from adlab.measure.timing import summarize

FAST = dict(repeats=3, target_s=0.002, reference=None)


def rec(label: str, n: int, t: float, spread: float = 0.05, **kw) -> Record:
    """A measured point: median ``t``, its interval ``t (1 -/+ spread)``."""
    kw.setdefault("mode", label)
    return Record(model="m", n=n, label=label, scheme=None, jit=True, precision="float64",
                  backend="jax", median_s=t, median_lo_s=t * (1 - spread),
                  median_hi_s=t * (1 + spread), **kw)  # fmt: skip


def series(label: str, points: dict[int, float], spread: float = 0.05, **kw) -> list[Record]:
    return [rec(label, n, t, spread, **kw) for n, t in points.items()]


# ------------------------------------------------------------------ compare
def test_compare_needs_the_intervals_apart():
    a, b = rec("a", 1, 1.0, 0.05), rec("b", 1, 1.2, 0.05)  # [0.95, 1.05] and [1.14, 1.26]
    assert compare(a, b) == -1 and compare(b, a) == 1
    c = rec("c", 1, 1.08, 0.05)  # [1.026, 1.134]: overlaps a's
    assert compare(a, c) == 0 == compare(c, a)


def test_compare_widens_by_the_noise_before_the_sweep():
    a, b = rec("a", 1, 1.0, 0.05), rec("b", 1, 1.2, 0.05)
    noisy_a = rec("a", 1, 1.0, 0.05, env={"noise": 0.2})  # 1.05 * 1.2 = 1.26 > 1.14
    assert compare(a, b) == -1 and compare(noisy_a, b) == 0


def test_points_measured_together_are_compared_without_a_margin():
    """One size of one sweep took its repeats in turn: the load hit both alike, so the
    noise before the sweep does not widen their comparison; two sweeps' points it does."""
    a = rec("a", 1, 1.0, 0.05, env={"noise": 0.5, "sweep": "s1"})
    b = rec("b", 1, 1.2, 0.05, env={"noise": 0.5, "sweep": "s1"})
    assert compare(a, b) == -1
    assert compare(a, rec("b", 1, 1.2, 0.05, env={"noise": 0.5, "sweep": "s2"})) == 0
    assert compare(a, rec("b", 3, 1.2, 0.05, env={"noise": 0.5, "sweep": "s1"})) == 0


def test_compare_widens_by_how_much_the_machine_speed_differed():
    """Two sweeps: the floor beside one took twice the other's. The 1.2x between the
    points is within what the machine itself changed."""
    a = rec("a", 1, 1e-4, 0.05, floor_s=1e-5)
    b_same = rec("b", 1, 1.2e-4, 0.05, floor_s=1e-5)
    b_slow_machine = rec("b", 1, 1.2e-4, 0.05, floor_s=2e-5)
    assert compare(a, b_same) == -1 and compare(a, b_slow_machine) == 0
    # a program run on a worker thread is bound by the hand-off's floor instead
    fa = rec("a", 1, 1e-4, 0.05, floor_s=1e-5, async_floor_s=1e-5, dispatch="async")
    fb = rec("b", 1, 1.2e-4, 0.05, floor_s=1e-5, async_floor_s=5e-5, dispatch="async")
    assert compare(fa, fb) == 0


def test_two_points_at_the_same_floor_are_tied():
    a, b = rec("a", 1, 1.0, at_floor=True), rec("b", 1, 1.5, at_floor=True)
    assert compare(a, b) == 0
    assert compare(a, rec("b", 1, 1.5, at_floor=False)) == -1
    # one run inline, one handed to a worker thread: two floors, and a real difference
    inline = rec("a", 1, 1e-5, at_floor=True, floor_s=1e-5, async_floor_s=8e-5)
    handed = rec("b", 1, 9e-5, at_floor=True, floor_s=1e-5, async_floor_s=8e-5, dispatch="async")
    assert compare(inline, handed) == -1


def test_the_machine_speed_is_read_from_like_floors():
    """Within one size of one sweep, an inline and an async point share both floors:
    no margin for the difference between the two floors themselves."""
    a = rec("a", 1, 1e-5, floor_s=1e-5, async_floor_s=6e-5, dispatch="inline")
    b = rec("b", 1, 7e-5, floor_s=1e-5, async_floor_s=6e-5, dispatch="async")
    assert compare(a, b) == -1


# --------------------------------------------------------------- crossovers
def test_a_clear_crossing_is_significant_and_interpolated():
    records = series("a", {1: 1e-6, 10: 1e-5, 100: 1e-4, 1000: 1e-3})  # grows as n
    records += series("b", {1: 3e-5, 10: 3e-5, 100: 3e-5, 1000: 3e-5})  # flat
    (c,) = adlab.crossovers(records)
    assert (c.faster, c.slower, c.n_below, c.n_above) == ("b", "a", 10, 100)
    assert c.significant and not c.tied_below
    assert c.n == pytest.approx(30)  # where 1e-6 n = 3e-5, in log-log
    assert c.time_s == pytest.approx(3e-5)
    assert c.describe() == "b overtakes a at n \u2248 30"


def test_a_crossing_inside_the_noise_is_a_tie():
    """Medians that swap order at every size, each within the other's interval."""
    records = series("a", {1: 1.00e-5, 10: 1.05e-5, 100: 1.00e-5, 1000: 1.05e-5}, 0.2)
    records += series("b", {1: 1.05e-5, 10: 1.00e-5, 100: 1.05e-5, 1000: 1.00e-5}, 0.2)
    found = adlab.crossovers(records)
    assert len(found) == 3 and not significant(found)
    assert tied_pairs(found) == [("a", "b")]
    assert all("tied" in c.describe() for c in found)


def test_tied_below_then_ahead_is_one_significant_crossover():
    """Both at the floor at small n (their medians swap), then b pulls ahead."""
    records = series("a", {1: 1.0e-5, 3: 1.1e-5, 10: 1.0e-5, 100: 1e-4, 1000: 1e-3},
                     at_floor=True)  # fmt: skip
    records += series("b", {1: 1.1e-5, 3: 1.0e-5, 10: 1.1e-5, 100: 2e-5, 1000: 3e-5},
                      at_floor=True)  # fmt: skip
    records = [r if r.n < 100 else _off_floor(r) for r in records]
    (c,) = adlab.crossovers(records)  # the swaps at the floor are inside it: one finding
    assert (c.faster, c.slower, c.n_below, c.n_above) == ("b", "a", 10, 100)
    assert c.significant and c.tied_below
    assert c.describe() == "b is faster than a from n \u2248 31.6; the two are tied below"


def _off_floor(r: Record) -> Record:
    import dataclasses

    return dataclasses.replace(r, at_floor=False)


def test_a_return_within_the_noise_is_no_new_crossover():
    """a is faster beyond noise, then a size where b's median is lower within the noise,
    then a faster again: nothing was overtaken."""
    records = series("a", {10: 1e-5, 100: 1.0e-4, 1000: 1e-3})
    records += series("b", {10: 2e-5, 100: 0.98e-4, 1000: 2e-3})
    found = adlab.crossovers(records)
    assert len(found) == 2 and not significant(found)


def test_a_tie_at_a_measured_n_with_intervals():
    records = series("a", {10: 1e-5, 100: 1e-4, 1000: 1e-3})
    records += series("b", {10: 1e-4, 100: 1e-4, 1000: 1e-4})
    (c,) = adlab.crossovers(records)
    assert (c.faster, c.n, c.n_below, c.n_above, c.significant) == ("b", 100, 100, 100, True)


def test_one_size_ahead_is_not_a_crossover_unless_the_next_size_confirms_it():
    """A burst of load over one size's round robin in one sweep: b beyond noise at
    n = 3 only. Tied again at 10, so nothing was overtaken; ahead at 3 and 10 is."""
    a = {1: 1.0e-5, 3: 1.5e-5, 10: 1.0e-5, 30: 1.0e-5}
    burst = series("a", a) + series("b", {1: 1.0e-5, 3: 1.0e-5, 10: 1.0e-5, 30: 1.0e-5})
    assert not significant(adlab.crossovers(burst))
    held = series("a", {**a, 10: 1.5e-5}) + series("b", {n: 1.0e-5 for n in a})
    (c,) = significant(adlab.crossovers(held))
    assert (c.faster, c.slower, c.n_below, c.n_above, c.tied_below) == ("b", "a", 1, 3, True)
    # at the largest size there is no next one: a verdict there stands
    (last,) = significant(adlab.crossovers(series("a", {**a, 3: 1.0e-5, 30: 1.5e-5})
                                           + series("b", {n: 1.0e-5 for n in a})))  # fmt: skip
    assert (last.faster, last.n_above) == ("b", 30)


def test_an_aa_comparison_within_the_intervals_finds_nothing():
    """The same series twice, each point moved at random within its own interval."""
    import numpy as np

    rng = np.random.default_rng(0)
    truth = {1: 1e-5, 3: 1e-5, 10: 1.2e-5, 30: 3e-5, 100: 1e-4, 300: 3e-4, 1000: 1e-3}
    for _ in range(50):
        a = series("a", {n: t * (1 + rng.uniform(-0.04, 0.04)) for n, t in truth.items()})
        b = series("b", {n: t * (1 + rng.uniform(-0.04, 0.04)) for n, t in truth.items()})
        found = adlab.crossovers(a + b)
        assert not significant(found)
        assert all(not c.significant for c in found)


# -------------------------------------------------------------------- floor
def test_a_point_is_at_the_floor_within_the_band_of_the_floor_beside_it():
    floor = summarize([1e-5, 1e-5, 1e-5], loops=1)
    near = summarize([FLOOR_BAND * 0.99e-5] * 3, loops=1)
    above = summarize([FLOOR_BAND * 1.01e-5] * 3, loops=1)
    assert at_floor(near, floor) is True and at_floor(above, floor) is False
    assert at_floor(near, None) is None  # no floor (NumPy): no claim


def test_a_ratio_at_the_floor_reads_so_in_the_tables_and_the_lab():
    from adlab.plots.rows import record_row

    primal = rec("primal", 3, 2.5e-5, at_floor=True, floor_s=1.2e-5, ratio_to_primal=1.0)
    floored = rec("reverse", 3, 2e-5, at_floor=True, floor_s=1.2e-5, primal_s=2.5e-5,
                  ratio_to_primal=0.8)  # fmt: skip
    above = rec("forward", 3, 2.15e-4, at_floor=False, floor_s=1.2e-5, primal_s=2.5e-5,
                ratio_to_primal=8.6)  # fmt: skip
    assert ratio_text(floored) == AT_FLOOR and ratio_text(above) == "8.6x"
    table = adlab.format_table([primal, floored, above])
    assert f"({AT_FLOOR})" in table and "0.8x" not in table and "(8.6x)" in table
    assert f"{AT_FLOOR}: within" in table  # the mark is explained under the table
    assert AT_FLOOR in adlab.report.format_records([primal, floored, above])
    assert record_row(floored)["ratio_text"] == AT_FLOOR
    assert record_row(floored)["ratio_to_primal"] == 0.8  # the number stays for the plot


def test_records_round_trip_with_their_intervals():
    r = rec("reverse", 3, 2e-5, at_floor=True, async_floor_s=3e-5, env={"noise": 0.1})
    assert adlab.from_json(adlab.to_json([r])) == [r]
    header = adlab.to_csv([r]).splitlines()[0].split(",")
    assert {"median_lo_s", "median_hi_s", "at_floor", "async_floor_s", "env.noise"} <= set(header)


# -------------------------------------------------------------------- sweeps
def test_a_sweep_takes_the_repeats_of_a_size_together(monkeypatch):
    """One round robin per size over all its points and the floor; a size's records
    come out when it is done, before the next size is measured."""
    calls = []
    original = sweep_mod.interleave

    def spy(watches, repeats, *rule):
        calls.append(len(watches))
        return original(watches, repeats, *rule)

    monkeypatch.setattr(sweep_mod, "interleave", spy)
    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.0)
    sweep = adlab.bench("normal_logpdf", [2, 3], ["forward", "numeric(numpy)"], **FAST)
    first = next(sweep)
    # both primals, both derivatives and each backend's floor (JAX's, NumPy's): size 3 not begun
    assert calls == [6]
    rest = list(sweep)
    assert calls == [6, 6]
    assert [r.n for r in [first, *rest]] == [2] * 4 + [3] * 4


def test_records_carry_the_floor_measured_beside_them(monkeypatch):
    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.0)
    records = list(adlab.bench("normal_logpdf", [1, 2], ["reverse", "numeric(numpy)"], **FAST))
    for r in records:  # every backend has its own floor: its trivial call
        assert r.median_lo_s <= r.median_s <= r.median_hi_s
        assert r.floor_s > 0 and isinstance(r.at_floor, bool)
        if not r.at_floor:  # its median is beyond the band of the floor's (top of) interval
            assert r.median_s > FLOOR_BAND * r.floor_s
    assert len({r.env["sweep"] for r in records}) == 1
    for backend in ("jax", "numpy"):
        floors = {r.n: r.floor_s for r in records if r.backend == backend}
        assert len({r.floor_s for r in records if r.backend == backend and r.n == 1}) == 1
        assert set(floors) == {1, 2}  # one floor per size and backend, shared by its points


# --------------------------------------------------------------------- noise
def test_a_noisy_machine_is_warned_and_recorded(monkeypatch):
    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.6)
    with pytest.warns(NoisyMachineWarning, match="60%"):
        records = list(adlab.bench("normal_logpdf", [2], ["reverse"], **FAST))
    assert all(r.env["noise"] == 0.6 for r in records)
    assert "noise: this machine is noisy" in adlab.format_table(records)


def test_a_floor_noisy_only_beside_the_points_is_no_noisy_machine(monkeypatch):
    """The floor's repeats beside a size's points pay for their neighbours; the warning
    needs the floor timed alone to spread as much. The margin keeps the spread beside."""
    spreads = {True: 0.6, False: 0.05}  # beside the points (a watch given), alone
    monkeypatch.setattr(sweep_mod, "machine_noise",
                        lambda *a, watch=None, **k: spreads[watch is not None])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisyMachineWarning)
        records = list(adlab.bench("normal_logpdf", [2], ["reverse"], **FAST))
    assert all((r.env["noise"], r.env["noise_alone"]) == (0.6, 0.05) for r in records)
    assert "noise:" not in adlab.format_table(records)
    spreads[False] = 0.5  # alone too: the machine is noisy; the smaller spread is said
    with pytest.warns(NoisyMachineWarning, match="50%"):
        records = list(adlab.bench("normal_logpdf", [2], ["reverse"], **FAST))
    assert "noise: this machine is noisy" in adlab.format_table(records)


def test_a_quiet_machine_is_not_warned_and_warn_false_stays_silent(monkeypatch):
    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: NOISE_LIMIT / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoisyMachineWarning)
        records = list(adlab.bench("normal_logpdf", [2], ["reverse"], **FAST))
        assert "noise:" not in adlab.format_table(records)
        monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.6)
        list(adlab.bench("normal_logpdf", [2], ["reverse"], warn=False, **FAST))


def test_the_noise_is_measured_as_the_spread_of_the_floor():
    noise = floor_mod.machine_noise("float64", target_s=0.002)
    assert noise >= 0 and math.isfinite(noise)
    assert noisy([rec("a", 1, 1.0, env={"noise": NOISE_LIMIT * 1.5})]).startswith("this machine")
    assert noisy([rec("a", 1, 1.0, env={"noise": NOISE_LIMIT / 2})]) is None
    assert noisy([rec("a", 1, 1.0)]) is None  # not measured: no claim


def test_adlab_bench_says_a_noisy_machine_in_its_output(monkeypatch, capsys):
    from adlab.cli import main

    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.6)
    args = ["bench", "--sizes", "2", "--modes", "reverse", "--repeats", "3", "--quiet"]
    assert main(args) == 0  # no warning raised: the CLI says it in the table
    assert "noise: this machine is noisy" in capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    assert "adlab: note: this machine is noisy" in captured.err
    assert adlab.from_json(captured.out)[0].env["noise"] == 0.6


# ---------------------------------------------------------- findings in words
def test_the_lab_states_only_significant_crossovers(monkeypatch):
    from adlab.lab.runner import Job, done_text, run_job

    clear = series("a", {1: 1e-6, 10: 1e-5, 100: 1e-4}) + series("b", {1: 3e-5, 10: 3e-5,
                                                                       100: 3e-5})  # fmt: skip
    noise = series("c", {1: 1.00e-5, 10: 1.05e-5}, 0.2) + series("d", {1: 1.05e-5, 10: 1e-5}, 0.2)
    text = done_text(6, 0, 1.0, adlab.crossovers(clear + noise), [])
    assert "b overtakes a at n \u2248 30" in text
    assert "tied within the noise: c and d" in text and "flips" not in text

    events = []
    monkeypatch.setattr(sweep_mod, "machine_noise", lambda *a, **k: 0.6)
    job = Job(generation=0, model=adlab.load_model("normal_logpdf"), sizes=(2,),
              variants=("reverse",), scheme="central", jit=True, precision="float64", n=2,
              steps_n=2, options=dict(FAST), steps=False)  # fmt: skip
    run_job(job, lambda kind, payload: events.append((kind, payload)), lambda: False)
    notes = [p for kind, p in events if kind == "note"]
    assert len(notes) == 2 and "noisy" in notes[0] and events[-1] == ("done", None)
    assert "n = 2 on normal_logpdf" in notes[1]  # the advisor's verdict, after the sweep


def test_bench_findings_and_the_notebooks_table_say_tied():
    from adlab import tutorial
    from adlab.measure.cases import findings

    records = series("reverse", {1: 1.0e-5, 10: 1.0e-5, 100: 1.2e-5, 1000: 2e-5}, 0.2)
    records += series("forward", {1: 1.05e-5, 10: 0.95e-5, 100: 1e-4, 1000: 1e-2}, 0.2)
    records += series("numeric", {1: 1.05e-5, 10: 1.1e-5, 100: 1.1e-5, 1000: 2.1e-5}, 0.2)
    lines = findings(records)
    assert "reverse is faster than forward from n \u2248 31.6; the two are tied below" in lines
    assert "forward and reverse: tied where their order flips (within the noise)" not in lines
    assert any(line.startswith("fastest derivative at n=1: reverse") and "tied with" in line
               for line in lines)  # fmt: skip
    t = tutorial.crossover_table(records, [("forward", "reverse"), ("numeric", "reverse")])
    assert t.rows[0][2] == "reverse faster above n \u2248 31.6 (tied below)"
    assert t.rows[1][2] == "tied at every n measured (1 to 1000)"
