"""Forward and reverse mode: the framework's own automatic differentiation.

Each backend says how (``Backend.gradient`` and ``Backend.jacobian``): JAX's
``grad`` / ``jacrev`` / ``jacfwd``, ``torch.autograd.grad`` and ``torch.func``,
TensorFlow's ``GradientTape`` and ``ForwardAccumulator``, autograd's ``grad``,
``jacobian`` and ``make_jvp``. A backend without AD (NumPy) cannot run these.

References:
    Griewank & Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008:
    forward mode costs one pass per input, reverse one pass per output,
    each pass a small multiple (<= ~4-6x) of the function's cost.
"""

from __future__ import annotations

import math

from ._registry import Built, Spec, register


def _inputs(spec: Spec) -> int:
    return sum(spec.size(i) for i in spec.indices)


@register("forward", needs="forward", summary="jvp / jacfwd: one pass per input",
          eager_cures=True)  # fmt: skip
def forward(spec: Spec) -> Built:
    # JAX pushes its tangents in chunks, autograd one at a time (chunked_forward)
    return Built(spec.impl.jacobian(spec.f, spec.wrt, forward=True, jit=spec.jit),
                 f_evals=_inputs(spec),
                 chunked=getattr(spec.impl, "chunked_forward", False))  # fmt: skip


@register("reverse", needs="reverse", summary="vjp / grad / jacrev: one pass per output",
          eager_cures=True)  # fmt: skip
def reverse(spec: Spec) -> Built:
    if spec.out_shape == ():
        return Built(spec.impl.gradient(spec.f, spec.wrt, jit=spec.jit), f_evals=1,
                     reverse_of=spec.f)  # fmt: skip
    return Built(spec.impl.jacobian(spec.f, spec.wrt, forward=False, jit=spec.jit),
                 f_evals=math.prod(spec.out_shape), reverse_of=spec.f)  # fmt: skip
