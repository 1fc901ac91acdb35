"""Second derivatives by a JavaScript framework's own nesting of its transforms.

jax-js (``backend="jaxjs"``) and TF.js (``backend="tfjs"``) take a Hessian or an HVP
themselves, nesting their own transforms over the translated f in their runtime's
drivers ``hvp`` and ``hessian``; the Python side is the same for both: which driver, its
options, where v lies among f's arguments, and how many passes it costs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax


def nested(backend: Any, spec: Any, scheme: str, n: int, hvp: bool,
           with_gradient: bool = False, **build: Any) -> tuple[Callable, int]:  # fmt: skip
    """(program, passes) of a second derivative by ``backend``'s own nesting of its
    transforms: a Hessian is n products, H e_i (driver ``hessian``), an HVP's v the argument
    after x (driver ``hvp``). Passes: one per product (grad of jvp with the gradient: one
    more); forward-over-forward's inner gradient takes n jvps. ``build``: the backend's
    ``node_function``'s own options (jax-js's ``jit``)."""
    i = spec.indices[0]
    driver, options = ("hvp", {"with_gradient": with_gradient}) if hvp else ("hessian", {})
    fn = backend.on_device(spec.device).node_function(spec.f, i, driver, spec.files,
                                            {"scheme": scheme, **options},
                                            with_error=with_gradient,  # (gradient, HVP)
                                            **build)  # fmt: skip
    each = n if scheme == "forward-over-forward" else 1
    extra = with_gradient and scheme == "reverse-over-forward"
    return fn, (each + extra if hvp else n * each)


def second_driver(driver: str, args: tuple, wrt: int, x_shape: tuple, out_shape: tuple
                  ) -> tuple[tuple, dict[str, int]]:  # fmt: skip
    """(output shape, the driver's extra fields) of a program for ``driver``: a Hessian is
    n rows of x's shape (JsFunction shapes it (n, n)); an HVP's v, which f ignores, is the
    argument after x (its slot among the leaves: ``v``)."""
    if driver == "hessian":
        return x_shape, {}
    if driver == "hvp":
        return out_shape, {"v": len(jax.tree_util.tree_leaves(args[: wrt + 1]))}
    return out_shape, {}
