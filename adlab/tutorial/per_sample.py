"""The per-sample loss written as a plain Python loop, for question 2.

The catalog's ``mlp_per_sample`` maps its net over the samples with a
compiled loop (``lax.map``) or with ``jax.vmap``. What many people write first
is a Python ``for`` loop; run eagerly, every operation of every sample is a
separate call into the framework, which is the per-sample overhead that made
the Flux gradient cost many times its primal. The net is the catalog's own
(same source, same settings); only ``f`` is replaced by the loop.
"""

from __future__ import annotations

from typing import Any

from ..catalog import source_of
from ..engine.model import Model
from ..measure import Series

_LOOP_F = """

def f(params, xs):
    # a Python for loop over the samples, one sample at a time
    total = 0.0
    for i in range(xs.shape[0]):
        total = total + net(params, xs[i]) ** 2
    return total
"""


def python_loop_model(**settings: Any) -> Model:
    """``mlp_per_sample`` with ``f`` a Python ``for`` loop over the samples."""
    return Model.from_source(source_of("mlp_per_sample") + _LOOP_F, name="mlp_python_loop",
                             **settings)  # fmt: skip


def python_loop_variant(label: str = "Python loop (eager)", **settings: Any) -> Series:
    """A sweep variant: reverse mode of ``python_loop_model`` run eagerly (no jit).

    Under ``jit`` the loop would be unrolled into one program whose compile
    time grows with n; eagerly it runs as written, one call per operation.
    """
    return Series("reverse", jit=False, label=label, model=python_loop_model(**settings))
