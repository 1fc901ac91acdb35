"""backend="js": loops (``scan``, ``while``, ``cond``) emitted as JavaScript loops.

Oracles: JAX's own float64 values (f, its gradient, its JVP) of the catalog's models
whose f loops, and of small functions that reach what the models do not (reverse scans,
swapped carries, nested and checkpointed scans, while loops, branches); the size of the
emitted source, which must not follow the trip count.

Internals: the emitted program itself (``JsFunction``, ``emitted``), which no public
function exposes.
"""

from __future__ import annotations

import numpy as np
import pytest

import adlab
from adlab.engine.backends import installed

pytestmark = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

#: the catalog's models whose f loops, at sizes that keep each case well under a second
LOOPED = {"ode": ({"S": 10}, 4), "lstm": ({}, 4), "particle": ({"STEPS": 30}, 2),
          "saddle": ({"ITERS": 30}, 2)}  # fmt: skip


def _rel(a, b) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("name", list(LOOPED))
def test_a_models_loop_runs_on_js_with_jaxs_values(name):
    settings, n = LOOPED[name]
    m = adlab.load_model(name, **settings)
    args = m.setup(n)
    for mode in ("primal", "reverse", "forward"):
        want = adlab.prepare(m, *args, mode=mode, backend="jax")
        got = adlab.prepare(m, *args, mode=mode, backend="js")
        assert _rel(got(*got.inputs), want(*want.inputs)) <= 1e-12, mode


def test_the_program_does_not_grow_with_the_steps():
    """ode's f and gradient at 1,000 RK4 steps: the loop's body written once (JS2)."""
    from adlab.engine.backends.js.program import emitted

    for driver in ("once", "grad"):
        sizes = []
        for steps in (10, 1000):
            m = adlab.load_model("ode", S=steps)
            sizes.append(len(emitted(m.function("js"), m.setup(5), 0, driver)[0]))
        assert sizes[1] <= 1.2 * sizes[0], (driver, sizes)


SORTED_IN_LOOP = """
def setup(n, rng):
    return (rng.normal(size=n),)

def f(x):
    def step(i, y):
        return np.sort(y) * 0.5 + x
    return np.sum(fori_loop(0, 3, step, x))
"""


@pytest.mark.parametrize("mode", ["primal", "reverse"])
def test_an_operation_js_lacks_inside_a_loop_is_named_at_its_line_in_the_body(mode):
    m = adlab.Model.from_source(SORTED_IN_LOOP, "sorted_in_loop")
    with pytest.raises(adlab.ModelError) as info:
        adlab.prepare(m, *m.setup(4), mode=mode, backend="js")
    err = info.value
    assert err.lineno == 7 and "np.sort" in err.line, (err.lineno, err.line)
    assert "'sort'" in err.reason and "backend='jax'" in err.hint


# ------------------------------------------------------ each loop on its own
_rng = np.random.default_rng(1)
X, XS = _rng.normal(size=3), _rng.normal(size=(5, 3))


def _loop_cases():
    import jax
    import jax.numpy as jnp
    from jax import lax

    from adlab.engine.backends._loops import jax_loops

    loops = jax_loops()

    def rnn(c, row):
        h = jnp.tanh(c * row + 0.3 * jnp.roll(c, 1))
        return h, jnp.sum(h * row)

    def swap(c, row):
        a, b = c
        return (b * row, a + 1.0), a  # the old carry a is also a y

    def nested(c, row):
        inner = lax.scan(lambda d, r: (jnp.sin(d) + r * row, d[0]), c, XS[:2] * row)[0]
        return inner, jnp.sum(inner)

    def counted(x):
        return lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, jnp.cos(s[1]) * x),
                              (0, x))[1]  # fmt: skip

    return {
        "scan, forward and reverse": (
            lambda x, xs: lax.scan(rnn, x, xs)[1] + lax.scan(rnn, x, xs, reverse=True)[1],
            (X, XS),
        ),
        "swapped carries, a y the old carry": (
            lambda x, xs: jnp.concatenate(lax.scan(swap, (x, 2 * x), xs)[1]) * x[0],
            (X, XS),
        ),
        "fori_loop: no xs, an integer carry": (
            lambda x: lax.fori_loop(0, 4, lambda i, c: c * jnp.cos(c) + i, x),
            (X,),
        ),
        "nested scans": (lambda x, xs: lax.scan(nested, x, xs)[1], (X, XS)),
        "checkpoint='sqrt': recomputed, nested scans": (
            lambda x, xs: loops["scan"](rnn, x, xs, checkpoint="sqrt")[1],
            (X, XS),
        ),
        "while": (counted, (X,)),
        "cond and switch": (
            lambda x: (
                lax.cond(x[0] > 0, jnp.sin, jnp.cos, x * 2.0) * x
                + lax.switch(2, [jnp.sin, jnp.cos, lambda a: a**3], x)
                + lax.switch((x[1] > 0).astype(int), [jnp.exp, jnp.tanh], x)
            ),
            (X,),
        ),
        "grad inside a loop": (
            lambda x: lax.fori_loop(
                0, 3, lambda i, c: c - 0.1 * jax.grad(lambda y: jnp.sum(jnp.sin(y) * x))(c), x
            ),
            (X,),
        ),
    }


@pytest.mark.parametrize("case", list(_loop_cases()))
def test_each_loop_and_its_gradient_and_jvp_agree_with_jax(case):
    import jax

    from adlab.engine.backends.js.program import JsFunction
    from adlab.engine.model import precision_scope

    f, args = _loop_cases()[case]
    loss = lambda *a: jax.numpy.sum(f(*a) ** 2)  # noqa: E731
    with precision_scope("float64"):
        want = np.asarray(jax.jit(f)(*args))
        jacobian = np.asarray(jax.jit(jax.jacfwd(f))(*args))
        if case != "while":  # JAX has no reverse mode of a while loop
            grad = np.asarray(jax.jit(jax.grad(loss))(*args))
    np.testing.assert_allclose(JsFunction(f, 0, "once")(*args), want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(JsFunction(f, 0, "columns")(*args), jacobian, rtol=1e-12,
                               atol=1e-13)  # fmt: skip
    if case != "while":
        np.testing.assert_allclose(JsFunction(loss, 0, "grad")(*args), grad, rtol=1e-12,
                                   atol=1e-13)  # fmt: skip
