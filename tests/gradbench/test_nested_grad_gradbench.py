"""particle and saddle (Pearlmutter & Siskind; GradBench's evals): a derivative of a model
that takes derivatives inside itself, against finite differences and against GradBench's
published answers, reached by GradBench's own solver driven by adlab's derivative.
"""

from __future__ import annotations

import numpy as np
import pytest

import adlab
from adlab.catalog import source_of

PARTICLE, SADDLE = source_of("particle"), source_of("saddle")

#: GradBench's expected outputs (evals/particle/run.py, evals/saddle/run.py)
PARTICLE_W = 0.2071918746486116
SADDLE_POINT = 8.246324826140356e-06
#: GradBench's four functions: the outer mode over the inner
COMBINATIONS = {"rr": ("reverse", "reverse"), "ff": ("forward", "forward"),
                "fr": ("forward", "reverse"), "rf": ("reverse", "forward")}  # fmt: skip


def argmin(f, grad, x):
    """GradBench's solver (tools/futhark/solver.fut, ``multivariate_argmin``): gradient
    descent whose step doubles after ten successes and halves on a failure."""
    fx, gx, eta, i = f(x), grad(x), 1e-5, 0
    while True:
        if np.linalg.norm(gx) <= 1e-5:
            return x
        if i == 10:
            eta, i = 2 * eta, 0
            continue
        moved = x - eta * gx
        if np.linalg.norm(x - moved) <= 1e-5:
            return x
        f_moved = f(moved)
        if f_moved < fx:
            x, fx, gx, i = moved, f_moved, grad(moved), i + 1
        else:
            eta, i = eta / 2, 0


def _solver_calls(m, args, combination):
    """f and its derivative in the argmin's variable, compiled once (JAX)."""
    outer, inner = COMBINATIONS[combination]
    d = adlab.prepare(m, *args, mode=outer, inner=inner)
    primal = adlab.prepare(m, *args, mode="primal")
    return (lambda x: float(primal(x))), (lambda x: np.asarray(d(x)))


@pytest.mark.parametrize("combination", sorted(COMBINATIONS))
def test_particle_reaches_gradbench_w(combination: str) -> None:
    m = adlab.Model.from_source(PARTICLE, name="particle")
    f, grad = _solver_calls(m, (np.zeros(1),), combination)
    w = argmin(f, grad, np.zeros(1))
    np.testing.assert_allclose(w, [PARTICLE_W], rtol=1e-9)


@pytest.mark.parametrize("combination", sorted(COMBINATIONS))
def test_saddle_reaches_gradbench_point(combination: str) -> None:
    m = adlab.Model.from_source(SADDLE, name="saddle")
    start = np.ones(2)
    f, grad = _solver_calls(m, (start, start), combination)
    x = argmin(f, grad, start)
    # step 2: the argmax at that x, not nested (the objective's y-gradient is -2y)
    y = argmin(lambda y: np.sum(y**2) - np.sum(x**2), lambda y: 2 * y, start)
    np.testing.assert_allclose(np.concatenate([x, y]), [SADDLE_POINT] * 4, rtol=1e-9)


# smaller and coarser, so every framework runs them in seconds: still a derivative of
# a derivative, checked against central differences of the same model (the outer
# derivative; the inner one JAX's reverse mode: numpy's own differences of differences
# are 1e-5 apart after the particle's steps)
SMALL = {"particle": {"DT": 1.0, "STEPS": 40}, "saddle": {"ITERS": 60}}


@pytest.mark.parametrize("backend", ("jax", "torch", "tensorflow", "autograd"))
@pytest.mark.parametrize("name", sorted(SMALL))
def test_derivative_agrees_with_differences(name: str, backend: str) -> None:
    m = adlab.Model.from_source(PARTICLE if name == "particle" else SADDLE, name=name,
                                **SMALL[name])  # fmt: skip
    args = (np.array([0.1]),) if name == "particle" else m.setup(2, seed=1)
    want = adlab.derivative(m, *args, mode="numeric", backend="jax")
    # TensorFlow's eager accumulators nested in tapes: one combination (a minute for four)
    pairs = [("forward", "reverse")] if backend == "tensorflow" else [
        ("reverse", "forward"), ("forward", "reverse")]  # fmt: skip
    for outer, inner in pairs:
        got = adlab.derivative(m, *args, mode=outer, inner=inner, backend=backend)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
