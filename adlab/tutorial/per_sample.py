"""The per-sample loss written as a plain Python loop, and in other frameworks, for question 2.

The catalog's ``mlp_per_sample`` maps its net over the samples with a
compiled loop (``lax.map``) or with ``jax.vmap``. What many people write first
is a Python ``for`` loop; run eagerly, every operation of every sample is a
separate call into the framework, which is the per-sample overhead that made
the Flux gradient cost many times its primal. The net is the catalog's own
(same source, same settings); only ``f`` is replaced by the loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..catalog import source_of
from ..engine.backends import KNOWN
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


def in_framework(modes: Iterable[Series], backend: str) -> list[Series]:
    """The per-sample case's series (``cases.get_case("per-sample").modes``) in another
    framework: the same models and settings, labelled "loop (PyTorch)", "vmap (PyTorch)",
    "batched (PyTorch)".

    Each framework runs the model's ``map_samples`` its own way: PyTorch's and
    autograd's loop is a Python loop run eagerly, one sample at a time; JAX's a
    compiled loop (``lax.map``). ``vmap_samples`` is each one's vmap
    (``torch.func.vmap``, ``tf.vectorized_map``).
    """
    out = []
    for v in modes:
        style = "batched" if v.model == "mlp_batched" else dict(v.settings).get("STYLE", "map")
        way = "loop" if style == "map" else style
        out.append(replace(v, backend=backend, label=f"{way} ({KNOWN[backend].label})"))
    return out
