"""Forward and reverse mode: JAX's own automatic differentiation.

References:
    Griewank & Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008:
    forward mode costs one pass per input, reverse one pass per output,
    each pass a small multiple (<= ~4-6x) of the function's cost.
"""

from __future__ import annotations

import math

import jax

from ._registry import Built, Spec, register


def _inputs(spec: Spec) -> int:
    return sum(spec.size(i) for i in spec.indices)


@register("forward", backends=("jax",), summary="JAX jvp / jacfwd: one pass per input",
          eager_cures=True)  # fmt: skip
def forward(spec: Spec) -> Built:
    return Built(jax.jacfwd(spec.f, argnums=spec.wrt), f_evals=_inputs(spec))


@register("reverse", backends=("jax",), summary="JAX vjp / grad / jacrev: one pass per output",
          eager_cures=True)  # fmt: skip
def reverse(spec: Spec) -> Built:
    if spec.out_shape == ():
        return Built(jax.grad(spec.f, argnums=spec.wrt), f_evals=1)
    return Built(jax.jacrev(spec.f, argnums=spec.wrt), f_evals=math.prod(spec.out_shape))
