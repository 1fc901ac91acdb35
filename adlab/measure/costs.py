"""What XLA says a derivative costs, without running it: flops and memory per mode and n.

Timings move with the machine and its load; XLA's own analysis of the
compiled program does not. ``xla_costs`` compiles each mode (and the primal)
at each size and reads the flop count and the memory analysis: temporary
buffers (what the program needs beside its inputs and outputs; for reverse
mode, the intermediates it keeps for the backward pass), arguments and
outputs. Nothing is timed.

XLA counts the body of a loop once, whatever its trip count (``lax.map``,
``fori_loop``): compare flops only between programs without loops.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..catalog import resolve_model
from ..engine.backends import DEFAULT, REFERENCE
from ..engine.derivative import prepare
from ..engine.model.source import Model
from .preparing import prepare_series
from .series import parse_variant


@dataclass(frozen=True)
class CostRow:
    """XLA's analysis of one compiled derivative (or of the primal, ``mode="primal"``).

    Attributes:
        model, label, mode, n, precision: what was compiled (``label`` as in a Record).
        f_evals: evaluations of f (AD: passes) per derivative.
        flops: XLA's flop count; ``primal_flops`` the same for f; ``flops_ratio`` their ratio.
        temp_bytes: temporary buffers; argument_bytes, output_bytes: inputs and outputs.
        bytes_accessed: bytes read and written, XLA's estimate.
    """

    model: str
    label: str
    mode: str
    n: int
    precision: str
    f_evals: int
    flops: float
    primal_flops: float
    flops_ratio: float
    temp_bytes: float
    argument_bytes: float
    output_bytes: float
    bytes_accessed: float


def xla_costs(
    model: str | Model,
    sizes: Iterable[int],
    modes: Sequence[str] = ("forward", "reverse"),
    *,
    precision: str = "float64",
    seed: int = 0,
) -> list[CostRow]:
    """Compile ``modes`` (variants such as "numeric[central]") at each size; XLA's costs.

    One row per (n, mode), sizes ascending, modes in the order given. JAX
    variants only: NumPy and eager runs have no compiled program to analyse.
    Second derivatives ("hvp[forward-over-reverse]") and sparse ones count too.
    """
    m = resolve_model(model)
    variants = [parse_variant(s) for s in modes]
    for v in variants:
        if (v.backend or DEFAULT) != REFERENCE or v.jit is False:  # NumPy, PyTorch, TF, autograd
            raise ValueError(f"{v.mode!r}: XLA analyses compiled JAX programs only (jit, jax)")
    out = []
    for n in sorted({int(s) for s in sizes}):
        point = m.setup(n, seed)
        primal = prepare(m, *point, mode="primal", precision=precision).cost() or {}
        pflops = primal.get("flops", math.nan)
        for spec, v in zip(modes, variants, strict=True):
            resolved = v.resolve(jit=True, precision=precision, backend=REFERENCE, scheme="central")
            p = prepare_series(m, point, resolved)  # second order and sparse too
            cost = p.cost() or {}
            flops = cost.get("flops", math.nan)
            out.append(CostRow(
                model=m.name, label=v.label or spec, mode=v.mode, n=n,
                precision=v.precision or precision, f_evals=p.f_evals,
                flops=flops, primal_flops=pflops,
                flops_ratio=flops / pflops if pflops else math.nan,
                temp_bytes=cost.get("temp_bytes", math.nan),
                argument_bytes=cost.get("argument_bytes", math.nan),
                output_bytes=cost.get("output_bytes", math.nan),
                bytes_accessed=cost.get("bytes_accessed", math.nan),
            ))  # fmt: skip
    return out
