"""GradBench's particle and saddle evals: their four functions and their solver.

Both evals ask for an argmin found by gradient descent whose objective takes a
derivative inside itself (``adlab/catalog/particle.py``, ``saddle.py``). Their
functions ``rr``, ``ff``, ``fr`` and ``rf`` name the two modes, outer over inner:
the outer derivative is the argmin's, the inner one the model's own ``grad``.
The solver is GradBench's (``cpp/gradbench/gd.hpp``, ``multivariate_argmin``,
the one every C++ tool uses and whose answers the evals expect), in NumPy; the
tool hands it the prepared objective and derivative (``adlab.gradbench.argmin``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: GradBench's functions: (outer mode, inner mode)
COMBINATIONS: Mapping[str, tuple[str, str]] = {
    "rr": ("reverse", "reverse"),
    "ff": ("forward", "forward"),
    "fr": ("forward", "reverse"),
    "rf": ("reverse", "forward"),
}
#: how many values and derivatives GradBench's descent takes from its eval's input (JAX,
#: any combination): the tool's estimate of a descent's cost from one call of each
DESCENT_CALLS: Mapping[str, int] = {"particle": 84, "saddle": 155}
#: each model's loop, as (setting, fraction): run eagerly, a value of f at that fraction of
#: its loop, times its inverse, estimates a full one without waiting for it (TensorFlow's
#: eager particle takes minutes a value)
LOOPS: Mapping[str, tuple[str, int]] = {"particle": ("STEPS", 20), "saddle": ("ITERS", 10)}
#: the outer modes a function's first letter can name: AD modes (others, numeric and
#: complex step, take the outer derivative their own way, whatever the letter)
AD_MODES = ("forward", "reverse")


def combination(function: str, mode: str) -> tuple[str, str]:
    """(outer mode, inner mode) of GradBench's ``function`` for a tool in ``mode``.

    The function names both where the tool's mode is an AD mode; a tool taking
    derivatives by differences (``numeric``) or complex step keeps its own way for
    the outer derivative, and the function names the inner mode only.
    """
    outer, inner = COMBINATIONS[function]
    return (outer if mode in AD_MODES else mode), inner


def multivariate_argmin(f: Callable[[np.ndarray], float], grad: Callable[[np.ndarray], Any],
                        x: np.ndarray) -> np.ndarray:  # fmt: skip
    """GradBench's gradient descent (``gd.hpp``): the step doubles after ten successes,
    halves on a failure; it stops where |gradient| or the step is at most 1e-5."""
    x = np.asarray(x, dtype=np.float64)
    fx, gx = f(x), np.asarray(grad(x), dtype=np.float64)
    eta, i = 1e-5, 0
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
            x, fx, gx, i = moved, f_moved, np.asarray(grad(moved), dtype=np.float64), i + 1
        else:
            eta, i = eta / 2, 0


# ------------------------------------------------------------ the evals' inputs and outputs
def particle_arguments(input: Mapping[str, Any], model: Any) -> tuple:
    """The argmin's start: the control w, as the model's one-particle x."""
    return (np.array([float(input["w"])]),)


def particle_output(result: Any, input: Mapping[str, Any]) -> float:
    """w at the argmin."""
    return float(np.asarray(result, dtype=np.float64).reshape(-1)[0])


def saddle_arguments(input: Mapping[str, Any], model: Any) -> tuple:
    """The outer point x and the inner solver's start, both the eval's ``start``."""
    start = np.asarray(input["start"], dtype=np.float64)
    return (start.copy(), start)


def saddle_output(result: Any, input: Mapping[str, Any]) -> list:
    """The saddle point: x (the outer argmin), then y (the inner argmax at that x)."""
    return np.asarray(result, dtype=np.float64).reshape(-1).tolist()
