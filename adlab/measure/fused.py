"""Beating the dispatch floor: many gradient steps fused into one compiled call.

A tiny gradient costs about what one call into the framework costs (the
dispatch floor, question 1), however little arithmetic it holds. An
interactive solver takes many gradient steps per frame; calling a jitted
gradient once per step pays the floor every step. Writing the whole loop of K
steps as one jitted function (``jax.lax.fori_loop``) pays it once per K steps.
``fused_descent`` times both, beside eager JAX (the tf.grads of the question)
and finite differences in plain NumPy (the G9.js way), on the same steps of
plain gradient descent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ..catalog import resolve_model
from ..engine.backends import BASELINE, REFERENCE
from ..engine.derivative import cast_args, prepare
from ..engine.model.precision import dtype_of, precision_scope
from ..engine.model.source import Model
from .sweep import dispatch_floor
from .timing import time_call

#: the frame of interactive graphics at 60 frames per second


@dataclass(frozen=True)
class FusedDescent:
    """Seconds per gradient-descent step, four ways, on one model at one n.

    Attributes:
        model, n, steps, lr, precision: what was run (``steps`` steps of
            x <- x - lr * grad f(x)).
        numpy_fd_s: per step, central differences in plain NumPy (as G9.js).
        eager_s: per step, ``jax.grad`` without ``jit`` (as tf.grads).
        per_call_s: per step, one jitted step per call, ``steps`` calls.
        fused_s: per step, all ``steps`` steps in one jitted call.
        compile_step_s, compile_fused_s: compile time of the step and of the loop.
        floor_s: the dispatch floor (a trivial jitted call) on this machine.
        same_result: whether the per-call and the fused loops end at the same x
            (to 1e-9, relative): fusing changes the cost, not the answer.
    """

    model: str
    n: int
    steps: int
    lr: float
    precision: str
    numpy_fd_s: float
    eager_s: float
    per_call_s: float
    fused_s: float
    compile_step_s: float
    compile_fused_s: float
    floor_s: float | None
    same_result: bool

    @property
    def speedup(self) -> float:
        """How many times faster a fused step is than a step per call."""
        return self.per_call_s / self.fused_s

    def rows(self) -> list[tuple[str, float]]:
        """(way, seconds per step), slowest first."""
        return [
            ("NumPy finite differences (as G9.js)", self.numpy_fd_s),
            ("eager JAX reverse (as tf.grads)", self.eager_s),
            ("jitted reverse, one call per step", self.per_call_s),
            (f"jitted reverse, {self.steps} steps in one call", self.fused_s),
        ]


def fused_descent(
    model: str | Model = "g9_graphics",
    n: int = 10,
    steps: int = 100,
    lr: float = 1e-3,
    *,
    precision: str = "float64",
    seed: int = 0,
) -> FusedDescent:
    """Time ``steps`` steps of gradient descent per call vs fused into one compiled call.

    The gradient is reverse mode (``jax.grad``) with respect to the model's
    ``wrt`` argument (one array); every other argument is held fixed. Each way
    is timed with ``adlab.time_call`` (warm-up, autorange, median of repeats)
    with its inputs already on the device, so no copy is timed.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    m = resolve_model(model)
    if not isinstance(m.wrt, int):
        raise ValueError(f"fused_descent needs one argument to descend on, got wrt={m.wrt!r}")
    wrt = m.wrt
    point = cast_args(tuple(m.setup(n, seed)), dtype_of(precision), (wrt,))
    f = m.function(REFERENCE)
    grad = jax.grad(f, argnums=wrt)

    def step(*a: Any) -> Any:
        return a[wrt] - lr * grad(*a)

    def put(a: tuple, x: Any) -> tuple:
        return (*a[:wrt], x, *a[wrt + 1 :])

    def fused(*a: Any) -> Any:
        return jax.lax.fori_loop(0, steps, lambda _, x: step(*put(a, x)), a[wrt])

    fd = prepare(m, *point, mode="numeric", scheme="central", backend=BASELINE,
                 precision=precision)  # fmt: skip

    def numpy_fd(*a: Any) -> Any:
        return a[wrt] - lr * fd(*a)

    with precision_scope(precision):
        dev = tuple(jax.tree_util.tree_map(jax.device_put, point))
        start = time.perf_counter()
        step_c = jax.jit(step).lower(*dev).compile()
        compile_step = time.perf_counter() - start
        start = time.perf_counter()
        fused_c = jax.jit(fused).lower(*dev).compile()
        compile_fused = time.perf_counter() - start

        def per_call(*a: Any) -> Any:
            for _ in range(steps):
                a = put(a, step_c(*a))
            return a[wrt]

        per_call_t = time_call(per_call, dev)
        fused_t = time_call(fused_c, dev)
        eager_t = time_call(step, dev, warmups=2)  # eager JAX compiles each op on first use
        same = np.allclose(np.asarray(per_call(*dev)), np.asarray(fused_c(*dev)),
                           rtol=1e-9, atol=1e-12)  # fmt: skip
    numpy_t = time_call(numpy_fd, fd.inputs)  # fd's own bound arguments: nothing converted per call
    return FusedDescent(
        model=m.name, n=n, steps=steps, lr=lr, precision=precision,
        numpy_fd_s=numpy_t.median_s, eager_s=eager_t.median_s,
        per_call_s=per_call_t.median_s / steps, fused_s=fused_t.median_s / steps,
        compile_step_s=compile_step, compile_fused_s=compile_fused,
        floor_s=dispatch_floor(precision), same_result=bool(same),
    )  # fmt: skip
