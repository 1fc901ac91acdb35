"""Question 2's per-sample loss as a plain Python loop, in other frameworks, and profiled.

The catalog's ``mlp_per_sample`` maps its net over the samples with a
compiled loop (``lax.map``) or with ``jax.vmap``. What many people write first
is a Python ``for`` loop; run eagerly, every operation of every sample is a
separate call into the framework, which is the per-sample overhead that made
the Flux gradient cost many times its primal. The net is the catalog's own
(same source, same settings); only ``f`` is replaced by the loop.

``operations_table`` and ``gradient_hope`` read an ``adlab.profile`` of the
gradient: where its time goes, and how much of it a better program could win
back (the question's "from 10x to 4x?").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .._format import seconds
from ..catalog import source_of
from ..engine.backends import KNOWN
from ..engine.model.source import Model
from ..measure import Series
from ..measure.profile import OpCost, Profile
from ..report.table import Table

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


def _flops(ops: Iterable[OpCost]) -> float:
    return sum(op.flops for op in ops if math.isfinite(op.flops))


def flops_reading(prof: Profile) -> str:
    """What XLA's count says, whatever the machine's speed: the gradient's flops over the
    primal's, and how many operations each runs (the deterministic part of a profile)."""
    return (f"{prof.model}, n = {prof.n}: the {prof.mode} gradient needs "
            f"{_flops(prof.derivative) / _flops(prof.primal):.2g}x the primal's XLA flops, in "
            f"{len(prof.derivative)} operations (the primal: {len(prof.primal)})")  # fmt: skip


def operations_table(prof: Profile, top: int = 8) -> Table:
    """The gradient's longest operations: time, share, flops, and flop rate against the
    primal's (1.0: as fast as the primal computes; 0.2: a fifth of its rate)."""
    total, rate = prof.derivative_ops_s, prof.primal_rate
    rows = [(op.name, seconds(op.time_s), f"{op.time_s / total:.0%}", f"{op.flops:.3g}",
             f"{op.flop_rate / rate:.2f}" if op.flops else "no flops")
            for op in prof.derivative[:top]]  # fmt: skip
    hidden = len(prof.derivative) - top
    return Table.of(
        ("operation", "time", "share", "flops", "rate / primal's"), rows,
        title=f"Where the {prof.mode} gradient's time goes ({prof.model}, n = {prof.n})",
        notes=[f"... and {hidden} more operations"] if hidden > 0 else [],
    )  # fmt: skip


def gradient_hope(prof: Profile, factor: float = 2.0) -> Table:
    """The gradient against the primal in time, in XLA flops and in flop rate, and the
    operations that run below the primal's rate / ``factor`` (where the time is lost).

    The primal's flop rate is what this machine reaches on this net's arithmetic.
    Were every operation of the gradient as fast, its time over the primal's
    would be its flops over the primal's: the bound that no program doing the
    same arithmetic beats. The slow operations hold the gap between the two.
    """
    fp, fd = _flops(prof.primal), _flops(prof.derivative)
    rows = [
        ("time per call (measured)", seconds(prof.primal_s), seconds(prof.derivative_s),
         f"{prof.derivative_s / prof.primal_s:.2g}x"),
        ("XLA flops", f"{fp:.3g}", f"{fd:.3g}", f"{fd / fp:.2g}x"),
        ("flop rate (GFLOP/s)", f"{prof.primal_rate / 1e9:.3g}",
         f"{prof.derivative_rate / 1e9:.3g}", f"{prof.derivative_rate / prof.primal_rate:.2g}x"),
    ]  # fmt: skip
    slow = prof.slow_ops(factor)
    total = prof.derivative_ops_s
    notes = [f"below the primal's rate / {factor:g}: {len(slow)} operations, "
             f"{sum(op.time_s for op in slow) / total:.0%} of the gradient's time"]  # fmt: skip
    notes += [f"  {op.name}: {op.time_s / total:.0%} of the time, "
              + (f"{op.flop_rate / prof.primal_rate:.2f} of the primal's rate" if op.flops
                 else "no flops (it only moves memory)") for op in slow]  # fmt: skip
    return Table.of(
        ("", "primal", prof.mode, f"{prof.mode} / primal"), rows,
        title=f"{prof.model}, n = {prof.n}: the gradient against the primal", notes=notes,
    )  # fmt: skip
