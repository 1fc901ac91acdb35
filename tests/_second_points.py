"""The points the JavaScript frameworks' second derivatives are checked at (jax-js, TF.js):
two small models, a direction, and JAX's float64 Hessian there."""

from __future__ import annotations

import functools

import numpy as np

import adlab
from adlab.engine.backends import COMPOSITIONS

#: arithmetic alone, and one with data arrays (a design matrix and labels)
MODELS = ("rosenbrock", "logistic_regression")
#: the four nestings of two AD modes
NESTED = [c for c in COMPOSITIONS if "-over-" in c]


@functools.cache
def point(name: str) -> tuple:
    """(model, its arguments at n = 3, a direction v, JAX's float64 Hessian)."""
    model = adlab.load_model(name)
    args = model.setup(3)
    ref = np.asarray(adlab.hessian_reference(model, *args).value)
    return model, args, np.linspace(-1.0, 1.0, 3), ref


def rel(got, want) -> float:
    """The largest difference relative to the largest entry of ``want``."""
    return float(np.max(np.abs(np.asarray(got) - want)) / np.max(np.abs(want)))
