"""NumPy: the framework-free baseline. No AD and no compiler: finite differences and
complex step only, perturbing one coordinate at a time, as hand-written code does.

``np`` is NumPy itself at float64; at float32 its array makers (``np.linspace``,
``np.zeros``: ``_namespace.CREATORS``) make float32, so a float32 model computes
in float32 (with NumPy's defaults it would turn float64 from there on).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _namespace
from .._loops import python_loops
from ..base import Backend
from ..special import special_functions


def numpy_batch(f: Callable, args: Sequence[Any], i: int, coords: np.ndarray) -> np.ndarray:
    """f at x with coordinate j set to coords[j, b], for each block b and j: (k*n, *out).

    Rows come in the same layout as JAX's batch (block-major), so the
    difference formulas see one layout for every backend. ``coords`` is an
    (n, k) array, possibly complex. One coordinate is perturbed at a time in a
    private copy of x, with no per-evaluation allocation beyond f's own: this
    is the hand-written finite-difference loop, and its cost should be f's.
    """
    x = np.asarray(args[i])
    n, k = coords.shape
    work = x.astype(np.result_type(x.dtype, coords.dtype)).ravel()  # private copy
    view = work.reshape(x.shape)  # what f sees; shares memory with work
    new = list(args)
    new[i] = view
    out = None
    for j in range(n):
        base = work[j]
        for b in range(k):
            work[j] = coords[j, b]
            value = f(*new)
            if out is None:
                value = np.asarray(value)
                out = np.empty((k * n, *value.shape), dtype=value.dtype)
            out[b * n + j] = value  # copies, so later perturbations can't alias it
        work[j] = base
    return out


def _map(fn: Callable, xs: Any) -> Any:
    return np.stack([np.asarray(fn(x)) for x in xs])


class NumpyBackend(Backend):
    name = "numpy"
    ad = ()
    namespace_per_precision = True  # np.linspace and the other array makers
    xp = np

    def environment(self) -> dict[str, Any]:
        return {"version": np.__version__, "device": "cpu"}

    # NumPy has no vmap: both maps are a loop
    @functools.cache  # noqa: B019 - one namespace per precision, for the process
    def namespace(self, precision: str) -> dict[str, Any]:
        ns = np if precision == "float64" else _namespace.build(
            "numpy", np, creators=_namespace.CREATORS,
            creator_defaults=_namespace.float32_defaults(precision))  # fmt: skip
        return {"np": ns, "map_samples": _map, "vmap_samples": _map, **_LOOPS,
                **special_functions("numpy", ns)}  # fmt: skip

    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        """One coordinate at a time in a plain loop (``numpy_batch``), never
        materialising the batch."""
        F = numpy_batch(f, args, i, np.stack(blocks, axis=1))
        return F, np.concatenate(blocks)


_LOOPS = python_loops(np.stack, name="numpy")
BACKEND = NumpyBackend()
