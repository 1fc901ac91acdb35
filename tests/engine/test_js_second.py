"""backend="js": second derivatives as JAX's program of the whole composition, emitted.

A composition of modes (``modes.hessian``) nests the backend's passes; on js the composed
function is traced by JAX whole and emitted as one program (``JsBackend.program`` wraps
it), so inside that trace js's Jacobian, push-forward and pull-back are JAX's own.

Oracle: JAX's float64 Hessians and Hessian-vector products of the same models, among
them a model that takes its own gradient inside a loop (saddle) and GradBench
kmeans's Newton direction (the gradient over the HVP along ones).

Internals: the backend's passes and ``JsFunction``, which no public function exposes
until the facts of "js" say it nests modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import adlab
from adlab.engine.backends import installed

pytestmark = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

#: kmeans (GradBench's Newton direction), a loop (ode), the model's own grad in a loop
MODELS = {"kmeans": ({}, 6), "ode": ({"S": 3}, 3), "saddle": ({"ITERS": 10}, 2)}


@pytest.mark.parametrize("name", list(MODELS))
def test_hessians_and_hvps_composed_on_js_are_jaxs(name):
    import jax
    import jax.numpy as jnp

    from adlab.engine.backends import get_backend
    from adlab.engine.backends.js.program import JsFunction
    from adlab.engine.model import precision_scope

    settings, n = MODELS[name]
    m = adlab.load_model(name, **settings)
    f, args = m.function("js"), m.setup(n)
    js = get_backend("js")

    def grad(x, *rest):
        return jax.grad(f)(x, *rest)

    composed = {  # forward-over-reverse (a Hessian, an HVP), reverse-over-reverse (an HVP)
        "hessian by columns": lambda x, *r: js.jacobian(grad, 0, True, True)(x, *r),
        "newton direction": lambda x, *r: (lambda g, hv: g / hv)(
            *js.pushforward(lambda y: grad(y, *r), x, jnp.ones_like(x))),
        "hvp by a pull-back": lambda x, *r: js.pullback(lambda y: grad(y, *r), x,
                                                        jnp.ones_like(x))[1],
    }  # fmt: skip
    with precision_scope("float64"):
        h = np.asarray(jax.jit(jax.hessian(f))(*args))
        g = np.asarray(jax.jit(grad)(*args))
    ones = np.ones_like(args[0])
    want = {"hessian by columns": h, "newton direction": g / (h @ ones),
            "hvp by a pull-back": h @ ones}  # fmt: skip
    for what, fn in composed.items():
        got = JsFunction(fn, 0, "once")(*args)
        np.testing.assert_allclose(got, want[what], rtol=1e-11, atol=1e-13, err_msg=what)
