"""particle's and saddle's functions: GradBench's argmin, driven by adlab's derivatives.

GradBench's ``rr``, ``ff``, ``fr`` and ``rf`` ask for the argmin itself (``evals/particle``,
``evals/saddle``), found by GradBench's gradient descent (``adlab.catalog._nested``)
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

from ..catalog import _nested
from ..catalog.gradbench import GradBenchEval
from ..engine.backends import get_backend
from ..engine.derivative import prepare
from ..engine.model.source import Model
from ..measure.timing import awaited_call
from .jobs import Options, timing


class ArgminJob:
    """One of particle's or saddle's functions at one input's shapes.

    ``bind(args)`` then ``call()`` per run, as ``jobs.Job``; ``call`` returns the
    answer already in NumPy (the argmin, and saddle's inner point after it).
    """

    def __init__(self, adapter: GradBenchEval, function: str, model: Model, args: tuple,
                 options: Options) -> None:  # fmt: skip
        outer, inner = _nested.combination(function, options.mode)
        self.combination = (outer, inner)
        common = dict(backend=options.backend, jit=options.jit, precision=options.used_precision,
                      inner=inner)  # fmt: skip
        start = time.perf_counter()
        self._f = prepare(model, *args, mode="primal", **common)
        self._d = prepare(model, *args, mode=outer, scheme=options.scheme, **common)
        self._point = None
        if "POINT" in model.settings:  # saddle: the inner argmax at the outer argmin
            point = model.with_settings(POINT=True)
            self._point = prepare(point, *args, mode="primal", **common)
        parts = [p for p in (self._f, self._d, self._point) if p is not None]
        compile_s = sum(p.compile_s for p in parts)
        self.timings = [timing("prepare", time.perf_counter() - start - compile_s),
                        timing("compile", compile_s)]  # fmt: skip
        self._to_numpy = get_backend(options.backend).to_numpy
        self._bind(args)
        self._first = True
        self._refusal: str | None = None
        self._function, self._model, self._options = function, model, options

    def _bind(self, args: tuple) -> None:
        self._x0 = np.asarray(args[0], dtype=np.float64)
        self._data = tuple(args[1:])

    def bind(self, args: tuple) -> list[dict[str, Any]]:
        """Take a new input; the first time, untimed calls of f and of its derivative
        (``"warmup"``: what a framework does once), never a whole descent. A descent
        they show would take past ``max_seconds`` is refused (ValueError, saying why):
        a first call over the limit is timed again, since it may hold one-off costs."""
        self._bind(args)
        timings = []
        if self._first:
            self._first = False
            start = time.perf_counter()
            calls = _nested.DESCENT_CALLS.get(self._model.name, 1)
            value_s, derivative_s = self._probe(calls)
            if calls * (value_s + derivative_s) > self._options.max_seconds:
                value_s, derivative_s = self._probe(calls)
            self._refusal = self._too_slow(calls, value_s, derivative_s)
            timings.append(timing("warmup", time.perf_counter() - start))
        else:  # the data bound for later calls (``Prepared``), converted once here
            for p in (self._f, self._d, self._point):
                if p is not None:
                    awaited_call(p, (self._x0, *self._data))
            timings.append(timing("bind", 0.0))
        if self._refusal:
            raise ValueError(self._refusal)
        return timings

    def _probe(self, calls: int) -> tuple[float, float]:
        """Seconds of one value of f and one derivative; the derivative is not called
        where f's value alone shows the descent is past ``max_seconds`` (0.0 then)."""
        value_s, _ = awaited_call(self._f, (self._x0,))
        if calls * value_s > self._options.max_seconds:
            return value_s, 0.0
        derivative_s, _ = awaited_call(self._d, (self._x0,))
        return value_s, derivative_s

    def _too_slow(self, calls: int, value_s: float, derivative_s: float) -> str | None:
        """Why the descent is refused: its estimate passes ``max_seconds``; else None."""
        estimate = calls * (value_s + derivative_s)
        o = self._options
        if estimate <= o.max_seconds:
            return None
        outer, inner = self.combination
        jit = "compiled" if get_backend(o.backend).resolve_jit(o.jit) else "eagerly"
        return (
            f"{self._model.name}'s {self._function} ({outer} over {inner}) on {o.backend}, "
            f"run {jit}: one value of f took {value_s:.3g} s"
            + (f" and one derivative {derivative_s:.3g} s" if derivative_s else "")
            + f" (each runs the model's loop with a derivative inside every "
            f"step), and GradBench's descent takes about {calls} of each: "
            f"{'about' if derivative_s else 'at least'} {estimate:.0f} s, past the tool's --max-seconds {o.max_seconds:g}. What to do: "
            f"run the tool with --backend jax (compiled once: milliseconds a derivative), or "
            f"allow it with --max-seconds {10 * math.ceil(estimate * 0.15)}"
        )

    # the input's data are bound (at prepare, or by ``bind``): each call hands over x only
    def _value(self, x: np.ndarray) -> float:
        return float(np.asarray(self._to_numpy(self._f(x))))

    def _derivative(self, x: np.ndarray) -> np.ndarray:
        d = np.asarray(self._to_numpy(self._d(x)), dtype=np.float64)
        return d.reshape(np.shape(x))

    def call(self) -> np.ndarray:
        """One run: the descent from the input's start (and saddle's inner point)."""
        x = _nested.multivariate_argmin(self._value, self._derivative, self._x0)
        if self._point is None:
            return x
        y = np.asarray(self._to_numpy(self._point(x)), dtype=np.float64)
        return np.concatenate([x.reshape(-1), y.reshape(-1)])

    def to_numpy(self, result: Any) -> Any:
        return result
