"""A point the budget skips costs nothing (issue 38): its program is never run, nor even
compiled where its first guess comes before compiling; no reference runs it; and the
advice names each mode it did not measure, with the figure.

The model's ``jax.debug.callback`` says which series' program ran, at which n: each
program is traced under its series' label, and the callback is baked in then.

Internals: ``measure.preparing.prepare_series``, wrapped to set the label being traced.
"""

from __future__ import annotations

import contextvars
import time

import jax
import jax.numpy as jnp
import pytest

import adlab
from adlab import Record
from adlab.engine.model.source import Model
from adlab.measure import preparing

#: each call of f sleeps this long: a first guess of n passes of f at n = N is over BUDGET_S
SLEEP_S, N, BUDGET_S = 0.01, 60, 1.0
QUICK = dict(budget_s=BUDGET_S, repeats=3, target_s=0.002, interval_width=None, warn=False)

_tracing: contextvars.ContextVar[str | None] = contextvars.ContextVar("tracing", default=None)


@pytest.fixture
def ran(monkeypatch) -> list[tuple[str | None, int]]:
    """(label, n) of every run of a program of ``_model``'s, in order."""
    real = preparing.prepare_series

    def labelled(m, point, v):
        token = _tracing.set(v.label)
        try:
            return real(m, point, v)
        finally:
            _tracing.reset(token)

    monkeypatch.setattr(preparing, "prepare_series", labelled)
    return []


def _model(ran: list[tuple[str | None, int]]) -> Model:
    def tick(label, n):
        ran.append((label, n))
        time.sleep(SLEEP_S)

    def f(x):
        label = _tracing.get()  # read when traced: the series this program is for
        jax.debug.callback(lambda: tick(label, x.size))
        return jnp.sum(x**2)

    return Model.from_function(f, lambda n, rng: (rng.normal(size=n),), name="sleepy")


def test_a_sweep_runs_only_the_programs_it_measures(ran):
    records = list(adlab.bench(_model(ran), [N], ["reverse", "forward", "numeric"], **QUICK))
    jax.effects_barrier()
    by = {r.label: r for r in records}
    # forward: N passes of f, each at least SLEEP_S, twice; numeric: 2N
    for label, passes in (("forward", N), ("numeric[central]", 2 * N)):
        why = by[label].skipped
        assert why.startswith("predicted ") and why.endswith(f"({passes} f evals) > budget 1 s")
    for label in ("forward", "numeric[central]"):  # refused before compiling
        assert by[label].compile_s is None and by[label].f_evals is not None
    assert by["reverse"].skipped is None and by["reverse"].median_s > 0
    assert {label for label, _ in ran} == {"primal", "reverse"}
    # the reference's check in forward mode is the skipped program: not run either
    assert "reference not checked: forward mode failed (over the sweep's budget: predicted" in (
        by["reverse"].note
    )


def test_the_advice_names_each_mode_it_did_not_measure_and_why(ran):
    # forward measured before at smaller sizes: its time at N is predicted from them
    earlier = [Record(model="sleepy", mode="forward", n=n, label="forward", scheme=None,
                      jit=True, precision="float64", backend="jax", median_s=t,
                      median_lo_s=0.9 * t, median_hi_s=1.1 * t)
               for n, t in ((2, 2e-3), (6, 6e-3))]  # fmt: skip
    advice = adlab.advise(_model(ran), N, ["reverse", "forward"], records=earlier, **QUICK)
    jax.effects_barrier()
    assert advice.best == "reverse" and advice.predicted == ("forward",)
    why = advice.skipped["forward"]
    assert why.startswith("predicted ") and why.endswith(f"({N} f evals) > budget 1 s")
    assert list(advice.skipped) == ["forward"]
    assert advice.describe().endswith(f" Not measured at n = {N}: forward: {why}.")
    assert ("forward", N) not in ran and ("reverse", N) in ran


def test_complex_step_is_guessed_in_complex_arithmetic():
    """mlp_batched at n = 1 on NumPy: f is 0.15 ms in float64 and 20 ms on complex numbers
    (NumPy's complex product), so the 22,041 passes of complex step are over the budget,
    which f's real time alone does not show (it ran them for a minute and more)."""
    (_, rec) = adlab.bench("mlp_batched", sizes=[1], modes=["complex-step(numpy)"], **QUICK)
    assert rec.label == "complex-step(numpy)" and rec.median_s is None
    assert "(22,041 f evals) > budget" in rec.skipped, rec.skipped
