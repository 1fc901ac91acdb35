"""bench(): the record schema, errors against the reference, budget skips, interruption.

Internals: the sweep's parts: its budget and repeats (measure.budget.Budget,
measure.intervals.MAX_REPEATS), how variants are split (measure.series.split_variants), a
run of the sweep (measure.sweep._Run), a point's errors (measure.point_errors,
accuracy.reference.FLOOR), and what a point calls (engine.prepared, programs.disk,
measure.preparing), patched to count conversions, cache loads and threads.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time

import jax.numpy as jnp
import numpy as np
import pytest

import adlab
from adlab import Model, Record, Series
from adlab.measure import parse_variant, parse_variants
from adlab.measure.budget import Budget
from adlab.measure.intervals import MAX_REPEATS
from adlab.measure.series import split_variants

FAST = dict(repeats=3, target_s=0.002)

# Every sweep measures the machine's noise first and warns when it is high; on a
# shared test machine it often is, and that is no failure of what is tested here
# (tests/measure/test_findings.py tests the warning itself).
pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")


@pytest.fixture(scope="module")
def records() -> list[Record]:
    modes = ["forward", "reverse", "numeric[richardson]", "complex-step", "numeric(numpy)"]
    sweep = adlab.bench("normal_logpdf", [5, 2], modes, **FAST)
    out = list(sweep)
    assert len(out) == sweep.total == len(sweep.records)
    return out


def test_records_come_in_size_order_with_one_primal_per_options(records):
    assert [r.n for r in records] == sorted(r.n for r in records)
    at2 = [r.label for r in records if r.n == 2]
    assert at2 == ["primal", "forward", "reverse", "numeric[richardson]", "complex-step",
                   "primal(numpy)", "numeric[central](numpy)"]  # fmt: skip


def test_every_record_has_the_schema(records):
    fields = {f.name for f in dataclasses.fields(Record)}
    for r in records:
        assert set(r.to_dict()) == fields
        assert r.model == "normal_logpdf" and r.skipped is None
        assert r.min_s <= r.median_s and r.iqr_s >= 0 and r.loops >= 1
        assert 3 <= r.repeats <= MAX_REPEATS  # the fewest, more where they scatter
        assert isinstance(r.unstable, bool)
        assert r.primal_s > 0
        assert r.ratio_to_primal == pytest.approx(r.median_s / r.primal_s)
        assert r.f_evals >= 1
        for key in ("adlab", "jax", "numpy", "device", "cpu_count", "precision", "xla_flags"):
            assert key in r.env
        assert r.env["precision"] == r.precision == "float64"


def test_xla_cost_for_jitted_jax_only(records):
    for r in records:
        if r.backend == "jax":
            assert r.jit and r.flops > 0 and r.primal_flops > 0 and r.floor_s > 0
            assert r.flops_ratio == pytest.approx(r.flops / r.primal_flops)
            assert r.bytes_accessed > 0 and r.temp_bytes is not None
            if r.env["device"].startswith("cpu") and r.env["cpu_async_dispatch"]:
                assert r.dispatch == ("inline" if r.flops < 1000 else "async")
        else:  # no XLA: no costs; the floor is the framework's own trivial call
            assert not r.jit
            assert r.flops is r.flops_ratio is r.dispatch is None
            assert r.floor_s > 0 and r.async_floor_s is None


def test_f_evals_per_mode(records):
    by = {(r.label, r.n): r.f_evals for r in records}
    assert by["forward", 5] == 5 and by["reverse", 5] == 1
    assert by["numeric[richardson]", 5] == 20 and by["complex-step", 5] == 5
    assert by["numeric[central](numpy)", 5] == 10


def test_errors_against_the_float64_reverse_reference(records):
    for r in records:
        if r.mode == "primal":
            assert r.error is None
            continue
        assert r.reference_trusted is True
        assert r.error_norm is not None and r.error_norm <= r.error * math.sqrt(r.n) + 1e-300
        bound = {"forward": 1e-14, "reverse": 0.0, "complex-step": 1e-14}.get(r.mode, 1e-5)
        assert r.error <= bound
    rich = [r for r in records if r.scheme == "richardson"]
    assert rich and all(r.error_estimate is not None for r in rich)
    assert all(r.error_estimate is None for r in records if r.scheme != "richardson")


def test_json_round_trip_and_csv(records):
    text = adlab.to_json(records)
    assert adlab.from_json(text) == records
    assert isinstance(json.loads(text), list)
    rows = adlab.to_csv(records).splitlines()
    assert len(rows) == len(records) + 1
    assert "median_s" in rows[0] and "env.jax" in rows[0]


def test_tables_show_every_series(records):
    table = adlab.format_table(records)
    for label in {r.label for r in records}:
        assert label in table
    assert "n = 2" in table and "n = 5" in table
    assert "numeric[richardson]" in adlab.format_records(records)


def test_non_finite_values_survive_json():
    r = Record(model="m", mode="numeric", n=1, label="x", scheme="central", jit=True,
               precision="float64", backend="jax", error=math.inf)  # fmt: skip
    assert adlab.from_json(adlab.to_json([r]))[0].error == math.inf


# --------------------------------------------------------------- variants
def test_variant_strings():
    v = parse_variant("numeric[richardson](eager,float32)")
    assert (v.mode, v.scheme, v.jit, v.precision) == ("numeric", "richardson", False, "float32")
    assert parse_variant("numeric(numpy)").backend == "numpy"
    defaults = dict(scheme="central", jit=True, precision="float64", backend="jax")
    assert v.resolve(**defaults).label == "numeric[richardson](eager,float32)"
    assert parse_variant("numeric").resolve(**defaults).label == "numeric[central]"
    assert parse_variant({"mode": "reverse", "label": "mine"}).resolve(**defaults).label == "mine"
    assert split_variants("forward,reverse(eager,float32), numeric[central]") == [
        "forward", "reverse(eager,float32)", "numeric[central]"]  # fmt: skip


@pytest.mark.parametrize(
    "spec, match",
    [("reverse[central]", "only 'numeric'"), ("forward(fast)", "unknown option"),
     ("backward", "unknown mode"), ("numeric[", "cannot read")],
)  # fmt: skip
def test_bad_variants_say_what_to_write(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_variants([spec])


def test_a_mode_that_cannot_run_on_a_backend_is_refused_before_the_sweep():
    with pytest.raises(ValueError, match="which backend='numpy' does not have"):
        adlab.bench("normal_logpdf", [2], ["reverse(numpy)"])


# ----------------------------------------------------------------- budget
def test_budget_extrapolates_log_log_through_the_last_two_sizes():
    b = Budget(1.0)
    b.add("a", 10, 1e-3, 0.05, 1e-3, 20)
    assert b.predict_call("a", 100) == pytest.approx(1e-3 * 100)  # one size: n^2 for f_evals > 1
    b.add("a", 100, 1e-2, 0.05, 1e-2, 200)
    assert b.predict_call("a", 1000) == pytest.approx(1e-1)  # slope 1 from the two sizes
    assert b.predict_point("a", 1000) == pytest.approx(0.05 + 3 * 1e-1)
    assert b.over("a", 1000) is None
    assert b.over("a", 10000) == "predicted 3.05 s > budget 1 s"


def test_budget_extrapolates_a_compile_that_grows_with_n():
    """A Python loop unrolled by jit: 0.3 s to compile at n = 30, 1.2 s at n = 100
    (measured here; 21 s at n = 300). The calls alone would fit the budget."""
    b = Budget(2.0)
    b.add("loop", 30, 1e-4, 0.3, 1e-4, 1)
    b.add("loop", 100, 3e-4, 1.2, 3e-4, 1)
    power = math.log(1.2 / 0.3) / math.log(100 / 30)
    assert b.predict_compile("loop", 300) == pytest.approx(1.2 * 3**power)
    reason = b.over("loop", 300)
    assert reason.startswith("predicted 4.") and "> budget 2 s" in reason
    assert "compiling 4." in reason and "grows with n" in reason


def test_budget_takes_short_compiles_as_flat():
    """Below COMPILE_GROWS_S a compile is overhead plus noise: 20 ms then 60 ms
    must not predict 60 ms x 1000^1 at n = 100,000."""
    b = Budget(1.0)
    b.add("a", 10, 1e-5, 0.02, 1e-5, 1)
    b.add("a", 100, 1e-5, 0.06, 1e-5, 1)
    assert b.predict_compile("a", 100_000) == 0.06
    assert b.over("a", 100_000) is None


def _slow_model(calls: dict[int, int], per_element_s: float,
                moved: dict[int, int] | None = None) -> Model:  # fmt: skip
    """A NumPy model whose f sleeps n * per_element_s and counts its calls per n; ``moved``
    counts the calls at an x other than setup's, which only a derivative makes."""
    given: dict[int, np.ndarray] = {}

    def setup(n, rng):
        given[n] = rng.normal(size=n)
        return (given[n].copy(),)

    def f(x):
        calls[x.size] = calls.get(x.size, 0) + 1
        if moved is not None and not np.array_equal(x, given[x.size]):
            moved[x.size] = moved.get(x.size, 0) + 1
        time.sleep(x.size * per_element_s)
        return np.sum(x**2)

    return Model.from_function(jnp.sum, setup, name="slow", f_numpy=f)


def test_a_point_predicted_over_budget_is_skipped_without_running():
    calls: dict[int, int] = {}
    moved: dict[int, int] = {}
    model = _slow_model(calls, 5e-3, moved)  # 5 ms steps: a sleep's jitter stays small
    sweep = adlab.bench(model, [1, 2, 40], ["numeric[forward](numpy)"], budget_s=0.5,
                        reference=None, **FAST)  # fmt: skip
    seen = list(sweep)
    assert moved[1] > 0 and moved[2] > 0  # the counter sees a derivative where one ran
    last = seen[-1]
    assert (last.n, last.mode) == (40, "numeric")
    assert last.skipped.startswith("predicted ") and last.skipped.endswith("> budget 500 ms")
    assert 40 not in moved  # the derivative at n = 40 never called f
    assert last.median_s is None and last.primal_s == seen[-2].median_s


def test_a_first_size_is_predicted_from_f_evals_and_the_primal():
    calls: dict[int, int] = {}
    moved: dict[int, int] = {}
    model = _slow_model(calls, 1e-3, moved)  # 20 ms per call of f at n = 20
    seen = list(adlab.bench(model, [20], ["numeric[forward](numpy)"], budget_s=0.5,
                            reference=None, **FAST))  # fmt: skip
    primal, numeric = seen
    assert primal.skipped is None and numeric.f_evals == 21
    assert numeric.skipped.startswith("predicted ") and "(21 f evals) > budget" in numeric.skipped
    assert 20 not in moved  # no derivative ran


def test_the_reference_is_computed_only_for_measured_points():
    """The reference compiles reverse and forward mode: a point skipped by the
    budget must not pay for it, so a sweep does not block on it."""
    traced: dict[int, int] = {}

    def f_jax(x):
        traced[x.size] = traced.get(x.size, 0) + 1
        return jnp.sum(x**2)

    calls: dict[int, int] = {}
    slow = _slow_model(calls, 5e-3)  # 5 ms steps: a sleep's jitter stays small
    model = Model.from_function(f_jax, slow.setup, name="slow", f_numpy=slow.function("numpy"))
    records = list(adlab.bench(model, [1, 2, 40], ["numeric[forward](numpy)"], budget_s=0.5,
                               reference="reverse", **FAST))  # fmt: skip
    assert records[-1].n == 40 and records[-1].skipped
    assert records[1].error is not None and records[3].error is not None  # n = 1, 2 measured
    assert 40 not in traced  # no reference at n = 40


def test_a_reference_predicted_over_budget_is_left_out_with_its_reason():
    from adlab.measure.sweep import _Run

    run = _Run(adlab.load_model("normal_logpdf"), [10], parse_variants(["forward"]),
               dict(scheme="central", jit=True, precision="float64", backend="jax"),
               budget=Budget(2.0), reference="reverse", seed=0, **FAST)  # fmt: skip
    run.budget.add("reference of normal_logpdf", 5, 0.0, 0.5, 0.0, None)
    run.budget.add("reference of normal_logpdf", 8, 0.0, 1.5, 0.0, None)  # growing fast
    primal, fwd = list(run.records())
    assert fwd.skipped is None and fwd.median_s is not None  # the point itself is measured
    assert fwd.error is None
    assert fwd.note.startswith("no reference: predicted ") and "> budget 2 s" in fwd.note


def test_a_warm_call_over_budget_is_the_whole_measurement():
    calls: dict[int, int] = {}
    model = _slow_model(calls, 0.1)  # 0.3 s per call at n = 3
    sweep = adlab.bench(model, [3], ["primal(numpy)"], budget_s=0.5, reference=None)
    (r,) = list(sweep)
    assert (r.loops, r.repeats) == (1, 1) and r.unstable
    assert "one call only" in r.note and "per warm call" in r.note
    # prepare's shape check, the first call (kept apart) and one warm call: no autorange
    assert calls[3] == 3


def test_a_slow_first_call_neither_is_the_measurement_nor_skips_the_next_size():
    """As PyTorch's first torch.func jvp: one-off setup longer than the budget, then
    fast calls. The record times the fast calls, and the next size is not predicted
    from the setup."""
    calls: dict[int, int] = {}

    def f(x):
        calls[x.size] = calls.get(x.size, 0) + 1
        if calls == {3: 2}:  # the sweep's first call (the first was prepare's shape check)
            time.sleep(0.6)
        return np.sum(x**2)

    model = Model.from_function(jnp.sum, lambda n, rng: (rng.normal(size=n),), name="setup",
                                f_numpy=f)  # fmt: skip
    r3, r4 = list(adlab.bench(model, [3, 4], ["primal(numpy)"], budget_s=0.5, reference=None,
                              **FAST))  # fmt: skip
    assert r3.first_call_s >= 0.6  # the sleep is in the first call, kept apart
    assert r3.repeats >= FAST["repeats"] and r3.note is None  # timed from warm calls
    assert r4.skipped is None and r4.repeats >= FAST["repeats"]


def test_one_size_predicts_the_passes_of_f_growing_as_f_did():
    """PyTorch's jacfwd at n = 10 (as measured): 11.8 ms a call, mostly fixed overhead,
    beside f at 110 us; at n = 100 f took 119 us. n^2 from 11.8 ms would say 1.18 s."""
    b = Budget(2.0)
    b.add("primal(torch)", 10, 110e-6, 0.0, 1e-3, 1)
    b.add("forward(torch)", 10, 11.8e-3, 0.0, 1.6, 10)
    f_now = ("primal(torch)", 119e-6)
    assert b.predict_call("forward(torch)", 100, f_now) == pytest.approx(
        11.8e-3 * 10 * 119 / 110)  # 10x the passes, each as f grew  # fmt: skip
    assert b.over("forward(torch)", 100, f_now) is None
    assert b.over("forward(torch)", 100).startswith("predicted 3.54 s")  # n^2 without f
    # f faster at the larger size is noise: the passes do not shrink
    assert b.predict_call("forward(torch)", 100, ("primal(torch)", 50e-6)) == pytest.approx(
        11.8e-3 * 10)  # fmt: skip
    # a single pass (reverse) grows as f did
    b.add("reverse(torch)", 10, 1e-3, 0.0, 1e-3, 1)
    assert b.predict_call("reverse(torch)", 100, ("primal(torch)", 220e-6)) == pytest.approx(2e-3)
    # two sizes measured: their own slope, whatever f did
    b.add("forward(torch)", 100, 20e-3, 0.0, 20e-3, 100)
    assert b.predict_call("forward(torch)", 1000, f_now) == pytest.approx(
        20e-3 * 10 ** math.log10(20e-3 / 11.8e-3))  # fmt: skip


def test_the_budget_predicts_a_first_calls_excess_only_once_it_recurs():
    b = Budget(1.0)
    b.add("torch.func", 10, 2.5e-3, 0.0, 1.6, 10)  # one-off setup at the first size
    assert b.predict_first_excess("torch.func", 100) == 0.0
    assert b.over("torch.func", 100) is None
    b.add("torch.func", 100, 1e-2, 0.0, 1e-2, 100)  # none at the second
    assert b.predict_first_excess("torch.func", 1000) == 0.0
    b = Budget(1.0)
    b.add("eager", 10, 1e-3, 0.0, 0.5, 1)  # compiles its operations at every new shape
    b.add("eager", 100, 1e-3, 0.0, 0.7, 1)
    assert b.predict_first_excess("eager", 1000) == pytest.approx(0.499)
    assert b.predict_point("eager", 1000) == pytest.approx(0.499 + 3 * 1e-3)


def test_a_model_error_at_one_size_is_recorded_and_the_sweep_goes_on():
    source = (
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n"
        "def f(x):\n    y = np.reshape(x, (2,))\n    return np.sum(y ** 2)\n"
    )
    model = Model.from_source(source, name="two_only")
    recs = list(adlab.bench(model, [2, 3], ["forward", "reverse"], **FAST))
    assert [r.skipped is None for r in recs if r.n == 2] == [True, True, True]
    bad = [r for r in recs if r.n == 3]
    assert len(bad) == 3 and all(r.skipped and "line 5" in r.skipped for r in bad)


def test_ctrl_c_leaves_the_records_measured_so_far_intact():
    calls = 0

    def f(x):
        nonlocal calls
        calls += 1
        if x.size == 3:
            raise KeyboardInterrupt  # as if Ctrl-C arrived inside a measurement
        return np.sum(x**2)

    model = Model.from_function(jnp.sum, lambda n, rng: (rng.normal(size=n),), name="ctrl_c",
                                f_numpy=f)  # fmt: skip
    sweep = adlab.bench(model, [1, 2, 3], ["numeric(numpy)"], reference=None, **FAST)
    got = []
    with pytest.raises(KeyboardInterrupt):
        for r in sweep:
            got.append(r)
    assert [(r.n, r.mode) for r in got] == [(1, "primal"), (1, "numeric"), (2, "primal"),
                                            (2, "numeric")]  # fmt: skip
    assert sweep.records == got
    assert all(r.skipped is None and r.median_s > 0 for r in got)
    with pytest.raises(StopIteration):
        next(sweep)


def test_variants_may_bring_their_own_models():
    modes = [
        Series("reverse", label="loop", model="mlp_per_sample",
                settings={"N1": 8, "N2": 3, "STYLE": "map"}),
        Series("reverse", label="batched", model="mlp_batched", settings={"N1": 8, "N2": 3}),
    ]  # fmt: skip
    recs = list(adlab.bench("mlp_batched", [4], modes, reference=None, **FAST))
    assert [r.label for r in recs] == ["loop: primal", "loop", "batched: primal", "batched"]
    assert recs[0].settings["STYLE"] == "map" and recs[1].model == "mlp_per_sample"
    assert recs[1].primal_s == recs[0].median_s


def test_the_error_estimate_is_componentwise_like_the_error():
    """Record.error_estimate is on Record.error's scale: each component against its
    own reference component (floored), not the largest against the largest."""
    from adlab import Reference
    from adlab.accuracy.reference import FLOOR
    from adlab.measure.point_errors import point_errors

    ref = np.array([1.0, 1e-3])
    value, estimate = ref + np.array([1e-10, 1e-10]), np.array([1e-10, 1e-10])
    notes: list[str] = []
    fields = point_errors(value, estimate, Reference(ref, True, 0.0), notes)
    scale = np.maximum(np.abs(ref), FLOOR * np.max(np.abs(ref)))
    want = float(np.max(np.abs(estimate) / scale))  # 1e-7: the small component's
    assert fields["error_estimate"] == pytest.approx(want, rel=1e-12)
    assert fields["error"] == pytest.approx(want, rel=1e-5)  # the same measure
    assert notes == []


def test_a_sweep_times_the_prepared_call_on_its_own_inputs(monkeypatch):
    """The sweep passes ``p.inputs`` (cast, on the device): no argument is converted per call."""
    from adlab.engine import prepared

    rebinds = []
    original = prepared.Prepared._rebind

    def rebind(self, x, args):
        rebinds.append(args)
        return original(self, x, args)

    monkeypatch.setattr(prepared.Prepared, "_rebind", rebind)
    records = list(adlab.bench("normal_logpdf", [3], ["reverse", "numeric[richardson]"], **FAST))
    assert all(r.skipped is None and r.error is not None for r in records if r.mode != "primal")
    assert rebinds == []


def test_a_program_loaded_from_the_cache_says_so_and_the_budget_sees_its_compile(
    tmp_path, monkeypatch
):
    """A point whose program was loaded from adlab's cache records its load as compile_s,
    marked ``compile_loaded``; the budget sees what compiling took (the next size may have
    to compile), not the load, marked as read from the cache."""
    from adlab.engine.programs import disk as cache

    monkeypatch.setenv("ADLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ADLAB_CACHE", raising=False)
    monkeypatch.setattr(cache, "_disabled", False)
    source = adlab.load_model("normal_logpdf").source
    given: list[tuple[str, float]] = []
    cached: list[bool] = []
    add = Budget.add

    def spy(self, label, n, call_s, compile_s, *rest, **kw):
        given.append((label, compile_s))
        if label in ("primal", "reverse"):
            cached.append(kw.get("cached", False))
        add(self, label, n, call_s, compile_s, *rest, **kw)

    monkeypatch.setattr(Budget, "add", spy)

    def sweep():
        model = Model.from_source(source, "normal_logpdf")  # a new model, the same source
        return list(adlab.bench(model, [3], ["reverse"], reference=None, **FAST))

    cold = sweep()
    warm = sweep()
    assert [r.compile_loaded for r in cold] == [False, False]
    assert [r.compile_loaded for r in warm] == [True, True]
    points = [(label, c) for label, c in given if label in ("primal", "reverse")]
    assert len(points) == 4 and [p[0] for p in points[2:]] == [p[0] for p in points[:2]]
    # the cold compile times as the cache kept them, not the loads: their CPU seconds, at
    # most the wall seconds the cold sweep saw (issue 31)
    assert all(0 < w <= c for (_, w), (_, c) in zip(points[2:], points[:2], strict=True))
    assert cached == [False, False, True, True]
    assert [r.compile_s for r in warm] != [c for _, c in points[2:]]


def test_jax_derivatives_are_compiled_two_at_a_time_and_the_rest_on_the_sweeps_thread(
    monkeypatch,
):
    """XLA's compile lets go of the GIL: a size's jitted JAX derivatives are prepared on
    two threads; f, eager runs and other frameworks on the sweep's own."""
    import threading

    from adlab.measure import preparing

    where: dict[str, set[str]] = {}
    real = preparing.prepare_series

    def spy(m, point, v):
        where.setdefault(v.label, set()).add(threading.current_thread().name)
        return real(m, point, v)

    monkeypatch.setattr(preparing, "prepare_series", spy)
    modes = ["forward", "reverse", "numeric[central]", "numeric[central](numpy)",
             "reverse(eager)"]  # fmt: skip
    records = list(adlab.bench("rosenbrock", [3, 5], modes, **FAST))
    assert all(r.skipped is None and r.median_s > 0 for r in records)
    me = threading.current_thread().name
    for label in ("forward", "reverse", "numeric[central]"):
        assert me not in where[label] and where[label], label
    rest = [label for label in where if label not in ("forward", "reverse", "numeric[central]")]
    assert len(rest) >= 4  # f, f eagerly, f and its differences on NumPy
    for label in rest:
        assert where[label] == {me}, label
    # and they compute what they do alone: checked against the float64 reference
    assert all(r.error < 1e-9 for r in records if r.label in ("forward", "reverse"))
