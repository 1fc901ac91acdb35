"""The function itself, registered as a mode so that it is compiled, guarded
and timed exactly like a derivative: ratios to the primal compare like with like."""

from __future__ import annotations

from ._registry import Built, Spec, register


@register("primal", summary="f itself, for ratios",
          eager_cures=True, is_derivative=False)  # fmt: skip
def primal(spec: Spec) -> Built:
    return Built(spec.f, f_evals=1)
