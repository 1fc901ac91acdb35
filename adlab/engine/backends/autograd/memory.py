"""autograd's residuals: what its tape's closures keep, counted by ``tracemalloc``.

autograd's arrays are NumPy's, which NumPy reports to Python's allocator: the
bytes still held after ``make_vjp``'s forward pass, while its pullback lives and
less the output, are what the backward pass will read, each array once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from autograd import make_vjp

from .._memory_count import TRACEMALLOC, of_wrt, traced_growth


def _nbytes(tree: Any) -> int:
    if isinstance(tree, (list, tuple)):
        return sum(_nbytes(t) for t in tree)
    return int(np.asarray(tree).nbytes)


def residuals(f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> tuple[float, str]:
    def forward() -> Any:
        argnum = tuple(range(len(wrt))) if len(wrt) > 1 else 0
        return make_vjp(of_wrt(f, inputs, wrt), argnum)(*(inputs[i] for i in wrt))

    return traced_growth(forward, lambda out: _nbytes(out[1])), f"{TRACEMALLOC}: held by the tape"
