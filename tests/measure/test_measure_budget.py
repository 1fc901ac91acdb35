"""The budget's compile times: a time read from adlab's cache is a past measurement under
unknown load, no evidence on its own that compile time grows with n (issue 22, part 1).

The budget's other rules (calls, first calls, loops that really grow) are tested in
test_measure_sweep.py.

Internals: the budget itself (measure.budget: Budget, SMALL_COMPILE_S), fed compile times by
hand, and the caches' switch (programs.disk) to start from an empty cache; bench shows
only what the budget skips.
"""

from __future__ import annotations

import math
import pickle

import pytest

import adlab
from adlab import Model, tutorial
from adlab.measure.budget import SMALL_COMPILE_S, Budget

FAST = dict(repeats=3, target_s=0.002)
pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")

#: complex step's cold compile times on normal_logpdf as a cache held them (issue 22),
#: where compiling it takes 0.004-0.05 s at every n
ISSUE = {1: 0.096, 3: 0.47, 10: 0.19}


def _budget(compiles: dict[int, float], cached: bool, budget_s: float = 2.0) -> Budget:
    b = Budget(budget_s)
    for n, compile_s in compiles.items():
        b.add("cs", n, 1e-5, compile_s, 1e-5, 2, cached=cached)
    return b


# ----------------------------------------------------------------- the rules, on the budget
def test_compile_times_read_from_the_cache_that_disagree_claim_no_growth():
    """0.096 s at n = 1 and 0.47 s at n = 3, read from the cache, once predicted 2.69 s at
    n = 10 and 75 s at n = 100, skipping every size for good; now the last is taken flat."""
    two = _budget({1: ISSUE[1], 3: ISSUE[3]}, cached=True)
    assert two.predict_compile("cs", 10) == ISSUE[3]
    assert two.over("cs", 10) is None and two.over("cs", 100) is None
    three = _budget(ISSUE, cached=True)  # up, then down: no agreement
    assert three.predict_compile("cs", 30) == ISSUE[10]
    assert three.over("cs", 1000) is None


def test_one_inflated_cached_compile_claims_no_growth():
    b = _budget({1: 0.05, 3: 0.05}, cached=True)
    b.add("cs", 10, 1e-5, 1.5, 1e-5, 2, cached=True)  # one entry compiled under heavy load
    assert b.predict_compile("cs", 30) == 1.5
    assert b.over("cs", 30) is None


def test_a_cached_compile_beside_a_measured_one_claims_no_growth():
    b = _budget({1: 0.05}, cached=False)
    b.add("cs", 3, 1e-5, 0.5, 1e-5, 2, cached=True)
    assert b.predict_compile("cs", 10) == 0.5
    b = _budget({1: 0.05}, cached=True)
    b.add("cs", 3, 1e-5, 0.5, 1e-5, 2, cached=False)
    assert b.predict_compile("cs", 10) == 0.5


def test_three_cached_sizes_that_agree_claim_growth_at_the_smaller_exponent():
    """A loop unrolled by jit, every size read from the cache: each step grew, so it
    grows, by the step that grew less (the one both steps support)."""
    b = _budget({10: 0.1, 30: 0.2, 100: 1.2}, cached=True)
    smaller = math.log(0.2 / 0.1) / math.log(3)
    assert smaller < math.log(1.2 / 0.2) / math.log(100 / 30)
    assert b.predict_compile("cs", 300) == pytest.approx(1.2 * 3**smaller)
    reason = b.over("cs", 300)
    assert reason is not None and "grows with n" in reason


def test_compiles_measured_here_still_claim_growth():
    b = _budget({1: ISSUE[1], 3: ISSUE[3]}, cached=False)
    power = math.log(ISSUE[3] / ISSUE[1]) / math.log(3)
    assert b.predict_compile("cs", 10) == pytest.approx(ISSUE[3] * (10 / 3) ** power)


def test_small_compiles_below_are_never_skipped_on_a_predicted_compile_alone():
    """Measured here, 0.096 s then 0.47 s predict 2.69 s at n = 10, over the budget; but
    the series compiled in under a second below: it is prepared, its compile measured."""
    b = _budget({1: ISSUE[1], 3: ISSUE[3]}, cached=False)
    assert b.predict_point("cs", 10) > 2.0
    assert b.over("cs", 10) is None
    # calls over the budget by themselves are still skipped ...
    slow = Budget(2.0)
    slow.add("cs", 1, 0.5, ISSUE[1], 0.5, 2)
    slow.add("cs", 3, 1.0, ISSUE[3], 1.0, 2)
    assert slow.over("cs", 10).startswith("predicted ")
    # ... and so is a compile predicted from a second or more below
    big = _budget({30: 0.3, 100: 1.2}, cached=False)
    assert "grows with n" in big.over("cs", 300)


def test_a_prepare_that_overran_ends_the_benefit_of_the_doubt():
    """Prepared on small compiles below, a size whose prepare overran the budget by far
    bounds the next one: it is not prepared to compile longer still."""
    b = _budget({30: 0.3, 100: 0.9}, cached=False)
    assert b.over("cs", 300) is None  # prepared: 0.3 s and 0.9 s are small
    b.add_overrun("cs", 300, 21.0)  # and it took 21 s
    reason = b.over("cs", 1000)
    assert reason is not None and "preparing it took 21 s at n = 300" in reason
    # also with nothing measured at all: the first size overran
    first = Budget(2.0)
    first.add_overrun("cs", 1, 5.0)
    assert first.over("cs", 3) is not None


def test_a_prepare_just_over_the_budget_is_predicted_from_what_was_measured():
    """2.2 s for a 0.4 s compile may be a burst of load: the larger sizes are tried,
    unless what was measured predicts them over; no more benefit of the doubt."""
    b = _budget({1: 0.05, 3: 0.4}, cached=False)
    b.add_overrun("cs", 10, 2.2)
    assert b.predict_compile("cs", 30) == pytest.approx(0.4 * 10 ** math.log(8, 3))
    assert b.over("cs", 30) is not None  # growth measured here, and no small compiles
    flat = _budget({1: 0.3, 3: 0.3}, cached=False)
    flat.add_overrun("cs", 10, 2.2)
    assert flat.over("cs", 30) is None


# ----------------------------------------------------------------- the rules, in a sweep
@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """adlab's cache of compiled programs in a fresh directory."""
    from adlab.engine.programs import disk as cache

    monkeypatch.setenv("ADLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ADLAB_CACHE", raising=False)
    monkeypatch.setattr(cache, "_disabled", False)
    return tmp_path / "programs"


def _overran(r: adlab.Record) -> bool:
    """Skipped after its prepare (measured, not predicted) took longer than the budget."""
    return (r.skipped or "").startswith("prepare took")


def _model() -> Model:
    """normal_logpdf anew (the same source: the same cache entries)."""
    return Model.from_source(adlab.load_model("normal_logpdf").source, "normal_logpdf")


def test_an_inflated_compile_time_in_the_cache_skips_no_point(cache_dir):
    """The cache filled size by size, each entry's compile time then set to what the issue
    found (0.096 s, 0.47 s, 0.19 s): a warm sweep still measures every point."""
    planted: set[str] = set()
    for n, compile_s in ISSUE.items():
        list(adlab.bench(_model(), [n], ["complex-step"], reference=None, **FAST))
        for path in cache_dir.glob("*.program"):
            if path.name not in planted:
                entry = pickle.loads(path.read_bytes())
                entry["compile_s"] = compile_s
                path.write_bytes(pickle.dumps(entry))
                planted.add(path.name)
    assert planted
    records = list(adlab.bench(_model(), [1, 3, 10, 30], ["complex-step"], **FAST))
    # every point prepared (a prepare that overran on a busy machine is measured too)
    assert [(r.n, r.skipped) for r in records if r.skipped and not _overran(r)] == []
    loaded = {r.n for r in records if r.mode == "complex-step" and r.compile_loaded}
    assert loaded >= set(ISSUE)  # the planted entries were the ones read


def test_the_default_modes_run_twice_on_one_cache_skip_nothing_the_first_measured(
    cache_dir, monkeypatch
):
    """The first run fills the cache on a busy machine: every compile at n = 10 takes
    0.4 s at the least, measured and stored. No point is skipped for its predicted compile
    after compiles under a second, and the second run, loading them all, skips nothing
    the first measured."""
    import time

    import jax

    compile_ = jax.stages.Lowered.compile

    def busy(self, *args, **kwargs):
        start = time.perf_counter()
        out = compile_(self, *args, **kwargs)
        shapes = [getattr(a, "shape", ()) for a in jax.tree_util.tree_leaves(self.args_info)]
        if any(10 in s for s in shapes):
            time.sleep(max(0.0, 0.4 - (time.perf_counter() - start)))
        return out

    sizes = tutorial.pick((1, 3, 10, 30, 100, 300, 1000), (1, 10, 100))
    monkeypatch.setattr(jax.stages.Lowered, "compile", busy)
    first = list(adlab.bench(_model(), sizes, **FAST))
    monkeypatch.setattr(jax.stages.Lowered, "compile", compile_)
    second = list(adlab.bench(_model(), sizes, **FAST))
    assert {r.mode for r in first} >= {"forward", "reverse", "numeric", "complex-step"}
    # the first run compiles: a series may be skipped on its compile only after compiling
    # for a second or more below, or a prepare that overran (a machine far busier than
    # 0.4 s a compile)
    for r in first:
        if "compil" in (r.skipped or ""):
            below = [q for q in first if q.label == r.label and q.n < r.n]
            assert any((q.compile_s or 0.0) >= SMALL_COMPILE_S or _overran(q) for q in below), (
                r.label, r.n, r.skipped)  # fmt: skip
    # the second loads: nothing read from the cache makes a compile grow
    assert [r.skipped for r in second if "compil" in (r.skipped or "")] == []
    measured = {(r.label, r.n) for r in first if r.skipped is None}
    assert [(r.label, r.n, r.skipped) for r in second if (r.label, r.n) in measured
            and r.skipped] == []  # fmt: skip
    assert all(r.compile_loaded for r in second if (r.label, r.n) in measured)


#: what each compile waits for a core while the cache is filled (issue 31): past the budget
WAIT_S = 2.0


def test_a_cache_filled_on_a_busy_machine_skips_no_point_of_a_quiet_sweep(cache_dir, monkeypatch):
    """Issue 31: the cache filled at n = 3 beside 8 CPU-burning processes kept each compile's
    wall seconds, stretched past the budget, and a quiet sweep of the same model later
    skipped n = 10 on them. Here each compile of the fill waits first (a sleep: wall seconds
    without CPU seconds, as a process waiting for a core), through the real recording path:
    the wait shows in the fill's compile_s, the cache keeps the CPU seconds, and the quiet
    sweep, loading n = 3, skips nothing on a prediction."""
    import time

    import jax

    compile_ = jax.stages.Lowered.compile

    def waiting(self, *args, **kwargs):
        time.sleep(WAIT_S)
        return compile_(self, *args, **kwargs)

    monkeypatch.setattr(jax.stages.Lowered, "compile", waiting)
    filled = list(adlab.bench(_model(), [3], ["complex-step"], reference=None, **FAST))
    monkeypatch.setattr(jax.stages.Lowered, "compile", compile_)
    # what the user waited is shown as the compile time
    assert all(r.compile_s >= WAIT_S for r in filled), [(r.label, r.compile_s) for r in filled]
    kept = [pickle.loads(p.read_bytes())["compile_s"] for p in cache_dir.glob("*.program")]
    assert kept and all(s < WAIT_S for s in kept), kept
    quiet = list(adlab.bench(_model(), [1, 3, 10], ["complex-step"], reference=None, **FAST))
    assert all(r.compile_loaded for r in quiet if r.n == 3)
    # a prepare that overran on a busy machine may bound the next size (preparing it took)
    predicted = [(r.label, r.n, r.skipped) for r in quiet if (r.skipped or "").startswith(
        "predicted") and "preparing it took" not in r.skipped]  # fmt: skip
    assert predicted == []
