"""The Lab's step-size curves take JAX's finite differences and complex step at dozens of
steps each: where the sweep predicted one such derivative over its budget, they are not
drawn, and the note says why (issue 38: mlp_batched's defaults ran for over 10 minutes).

Internals: ``lab.runner.steps_unaffordable``, on hand-made records.
"""

from __future__ import annotations

from adlab import Record
from adlab.lab.runner import steps_unaffordable

OVER = "predicted 169 s (44,082 f evals) > budget 2 s"


def rec(label: str, n: int, skipped: str | None = None, backend: str = "jax") -> Record:
    return Record(model="mlp_batched", mode=label.split("[")[0].split("(")[0], n=n,
                  label=label, scheme=None, jit=True, precision="float64", backend=backend,
                  skipped=skipped, median_s=None if skipped else 1e-3)  # fmt: skip


def test_the_curves_are_not_drawn_past_a_derivative_predicted_over_budget():
    records = [rec("numeric[central]", 300), rec("numeric[central]", 1000, OVER),
               rec("reverse", 1000, "predicted 9 s > budget 2 s")]  # fmt: skip
    assert steps_unaffordable(records, 1000) == f"numeric[central] at n = 1000: {OVER}"
    # at the last size up to the curves' n: measured at 300, so drawn there
    assert steps_unaffordable(records, 300) is None


def test_a_prepare_overrun_or_another_framework_leaves_the_curves_drawn():
    overrun = [rec("complex-step", 10, "prepare took 2.1 s > budget 2 s")]
    assert steps_unaffordable(overrun, 10) is None  # a burst of load predicts no call
    numpy = [rec("numeric[central](numpy)", 10, OVER, backend="numpy")]
    assert steps_unaffordable(numpy, 10) is None  # the curves are JAX's
