"""particle's and saddle's functions: GradBench's argmin, driven by adlab's derivatives.

GradBench's ``rr``, ``ff``, ``fr`` and ``rf`` ask for the argmin itself (``evals/particle``,
``evals/saddle``), found by GradBench's gradient descent (``adlab.catalog.gradbench``)
on f, whose derivative the outer mode takes through the model's own ``grad`` in the
inner mode. The job prepares f and that derivative once (both with the inner mode: f's
value runs the model's ``grad`` too, as every GradBench tool's objective does), and each
run is the whole descent, as GradBench times it. saddle's answer adds the inner maximum's
point at the argmin (its step 2), the model's own solver with ``POINT = True``.

On NumPy (no AD) the inner derivative is central differences and the outer one the
tool's ``--mode`` (numeric): the tool's ``start`` config says so.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..catalog import gradbench as evals
from ..catalog.gradbench import GradBenchEval
from ..engine.backends import get_backend
from ..engine.derivative import prepare
from ..engine.model.source import Model
from ..engine.modes import get_rule
from ..measure.timing import awaited_call
from .jobs import Options, timing

#: seconds of one value of f, by (model, settings, backend, jit, inner), in this process
VALUE_SECONDS: dict[tuple, float] = {}
#: those keys whose seconds were estimated from a shorter loop (``LOOPS``), not timed whole
SCALED: dict[tuple, bool] = {}


class ArgminJob:
    """One of particle's or saddle's functions at one input's shapes.

    ``bind(args)`` then ``call()`` per run, as ``jobs.Job``; ``call`` returns the
    answer already in NumPy (the argmin, and saddle's inner point after it). Building
    it calls f and its derivative once each (the warm-up, a framework's one-off costs),
    and refuses (ValueError, saying why and what to do) a descent they show would take
    past ``max_seconds``: f first, so that a refusal costs one or two of f's values.
    """

    def __init__(self, adapter: GradBenchEval, function: str, model: Model, args: tuple,
                 options: Options) -> None:  # fmt: skip
        outer, inner = evals.combination(function, options.mode)
        self.combination = (outer, inner)
        # a framework without the outer mode (TF.js: no forward) is refused for that, before
        # any estimate, whose advice (a larger --max-seconds) could never help
        refusal = get_rule(outer).refusal(get_backend(options.backend))
        if refusal:
            raise ValueError(f"{model.name}'s {function} ({outer} over {inner}): {refusal}")
        self._function, self._model, self._options = function, model, options
        self._calls = evals.DESCENT_CALLS.get(model.name, 1)
        self._to_numpy = get_backend(options.backend).to_numpy
        self._bind(args)
        common = dict(backend=options.backend, jit=options.jit, precision=options.used_precision,
                      inner=inner)  # fmt: skip
        # f's value is the same program for both outer modes: a session's second function
        # over the same inner mode knows its cost (and a refusal costs nothing more)
        key = (model.name, tuple(sorted(model.settings.items())), options.backend, options.jit,
               inner)  # fmt: skip
        known = VALUE_SECONDS.get(key)
        if known is None and not get_backend(options.backend).resolve_jit(options.jit):
            known = self._scaled_value_s(model, args, common)
            if known is not None:
                VALUE_SECONDS[key], SCALED[key] = known, True
        self._scaled = SCALED.get(key, False)
        if known is not None and self._calls * known > options.max_seconds:
            raise ValueError(self._too_slow(known, 0.0))
        t0 = time.perf_counter()
        self._f = prepare(model, *args, mode="primal", **common)
        t1 = time.perf_counter()
        value_s = self._probe(self._f, 0.0, key)
        t2 = time.perf_counter()
        self._d = prepare(model, *args, mode=outer, scheme=options.scheme, **common)
        self._point = None
        if "POINT" in model.settings:  # saddle: the inner argmax at the outer argmin
            self._point = prepare(model.with_settings(POINT=True), *args, mode="primal",
                                  **common)  # fmt: skip
        t3 = time.perf_counter()
        self._probe(self._d, value_s)
        t4 = time.perf_counter()
        parts = [p for p in (self._f, self._d, self._point) if p is not None]
        compile_s = sum(p.compile_s for p in parts)
        self.timings = [timing("prepare", (t1 - t0) + (t3 - t2) - compile_s),
                        timing("compile", compile_s)]  # fmt: skip
        self._warmup_s = (t2 - t1) + (t4 - t3)
        self._first = True

    def _bind(self, args: tuple) -> None:
        self._x0 = np.asarray(args[0], dtype=np.float64)
        self._data = tuple(args[1:])

    def _scaled_value_s(self, model: Model, args: tuple, common: dict) -> float | None:
        """Eagerly, the seconds of a value of f estimated from a shorter loop (``LOOPS``:
        the loop's steps cost alike), its second call timed; None for a model without one."""
        if model.name not in evals.LOOPS:
            return None
        setting, fraction = evals.LOOPS[model.name]
        steps = max(1, int(model.settings[setting]) // fraction)
        short = prepare(model.with_settings(**{setting: steps}), *args, mode="primal", **common)
        awaited_call(short, (self._x0,))
        seconds, _ = awaited_call(short, (self._x0,))
        return seconds * int(model.settings[setting]) / steps

    def _probe(self, p: Any, before_s: float, key: tuple | None = None) -> float:
        """Seconds of one call of ``p`` (f, or its derivative after f's ``before_s``); a
        ValueError if the descent would take past ``max_seconds``. A first call over the
        limit, but within 3x, is timed again: it may hold one-off costs. ``key``: f's, to
        remember its seconds by (``VALUE_SECONDS``)."""
        limit = self._options.max_seconds
        seconds, _ = awaited_call(p, (self._x0,))
        if limit < self._calls * (before_s + seconds) <= 3 * limit:
            seconds, _ = awaited_call(p, (self._x0,))
        if key is not None:
            VALUE_SECONDS[key], SCALED[key] = seconds, False
            self._scaled = False
        if self._calls * (before_s + seconds) > limit:
            raise ValueError(self._too_slow(before_s or seconds, before_s and seconds))
        return seconds

    def bind(self, args: tuple) -> list[dict[str, Any]]:
        """Take a new input: the first is the one the job was built with, and warmed
        up then (``"warmup"``); a later one's data are bound for the calls (``"bind"``)."""
        self._bind(args)
        if self._first:
            self._first = False
            return [timing("warmup", self._warmup_s)]
        start = time.perf_counter()
        for p in (self._f, self._d, self._point):  # the data bound for later calls
            if p is not None:
                awaited_call(p, (self._x0, *self._data))
        return [timing("bind", time.perf_counter() - start)]

    def _too_slow(self, value_s: float, derivative_s: float) -> str:
        """Why the descent is refused: how long it would take, and what to do."""
        estimate = self._calls * (value_s + derivative_s)
        o = self._options
        outer, inner = self.combination
        jit = "compiled" if get_backend(o.backend).resolve_jit(o.jit) else "eagerly"
        return (
            f"{self._model.name}'s {self._function} ({outer} over {inner}) on {o.backend}, "
            f"run {jit}: one value of f "
            + (
                f"takes about {value_s:.3g} s (timed on a shorter loop)"
                if self._scaled
                else f"took {value_s:.3g} s"
            )
            + (f" and one derivative {derivative_s:.3g} s" if derivative_s else "")
            + f" (each runs the model's loop with a derivative inside every "
            f"step), and GradBench's descent takes about {self._calls} of each: "
            f"{'about' if derivative_s else 'at least'} {estimate:.0f} s, past the tool's "
            f"--max-seconds {o.max_seconds:g}. What to do: run the tool with --backend jax "
            f"(compiled once: milliseconds a derivative), or allow it with --max-seconds "
            f"{10 * math.ceil(estimate * 0.15)}"
        )

    # the input's data are bound (at prepare, or by ``bind``): each call hands over x only
    def _value(self, x: np.ndarray) -> float:
        return float(np.asarray(self._to_numpy(self._f(x))))

    def _derivative(self, x: np.ndarray) -> np.ndarray:
        d = np.asarray(self._to_numpy(self._d(x)), dtype=np.float64)
        return d.reshape(np.shape(x))

    def call(self) -> np.ndarray:
        """One run: the descent from the input's start (and saddle's inner point)."""
        x = evals.multivariate_argmin(self._value, self._derivative, self._x0)
        if self._point is None:
            return x
        y = np.asarray(self._to_numpy(self._point(x)), dtype=np.float64)
        return np.concatenate([x.reshape(-1), y.reshape(-1)])

    def to_numpy(self, result: Any) -> Any:
        return result
