"""Per-point time budget: predict the next size's cost from the sizes measured.

Per series (label), the time of one call is extrapolated on log-log axes
through the last two measured sizes, t(n) = t2 (n / n2)^p. With one size
measured, p is assumed: 2 when the derivative needs several passes of f
(``f_evals`` > 1: n passes of O(n) work each, as forward mode and finite
differences on an elementwise f), else 1. The exponent is clamped to [0, 3].

A point needs its compile (predicted as the series' last compile time) and at
least ``MIN_CALLS`` calls: the call ``prepare`` makes to warm jit's cache (or,
eagerly, a second warm-up), the uncounted warm-up, and one timed repeat. When
that is over the budget the point is skipped with its reason, before anything
runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: calls a point needs at the least (prepare's warm call, warm-up, one repeat)
MIN_CALLS = 3
#: bounds on the extrapolation exponent
MIN_POWER, MAX_POWER = 0.0, 3.0


def seconds(s: float) -> str:
    """A duration for people: '14 s', '0.8 s', '350 ms', '12 us'."""
    if s >= 10:
        return f"{s:.0f} s"
    if s >= 1:
        return f"{s:.2g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


@dataclass
class _Point:
    n: int
    call_s: float
    compile_s: float
    first_call_s: float
    f_evals: int | None


@dataclass
class Budget:
    """Measured history per series, and the prediction for its next size."""

    budget_s: float
    history: dict[str, list[_Point]] = field(default_factory=dict)

    def add(
        self, label: str, n: int, call_s: float, compile_s: float, first_call_s: float,
        f_evals: int | None,
    ) -> None:  # fmt: skip
        point = _Point(n, call_s, compile_s, first_call_s, f_evals)
        self.history.setdefault(label, []).append(point)

    def predict_call(self, label: str, n: int) -> float | None:
        """Predicted seconds of one call at ``n``, or None with nothing to go on."""
        pts = sorted((p for p in self.history.get(label, []) if p.n < n), key=lambda p: p.n)
        if not pts:
            return None
        last = pts[-1]
        prev = next((p for p in reversed(pts[:-1]) if p.n < last.n), None)
        if prev is not None and prev.call_s > 0 and last.call_s > 0:
            power = math.log(last.call_s / prev.call_s) / math.log(last.n / prev.n)
        else:
            power = 2.0 if (last.f_evals or 1) > 1 else 1.0
        power = min(max(power, MIN_POWER), MAX_POWER)
        return last.call_s * (n / last.n) ** power

    def predict_point(self, label: str, n: int) -> float | None:
        """Predicted seconds for the whole point: compile + ``MIN_CALLS`` calls, the
        first of which costs at least what it cost at the last size (eager JAX
        compiles each operation on the first call at a new shape)."""
        call = self.predict_call(label, n)
        if call is None:
            return None
        last = self.history[label][-1]
        return last.compile_s + max(last.first_call_s, call) + (MIN_CALLS - 1) * call

    def over(self, label: str, n: int) -> str | None:
        """The skip reason when the point is predicted over budget, else None."""
        predicted = self.predict_point(label, n)
        if predicted is not None and predicted > self.budget_s:
            return f"predicted {seconds(predicted)} > budget {seconds(self.budget_s)}"
        return None
