"""The JavaScript backend "js" emits what a careful person writes: structural facts of the
emitted source (its values are checked against JAX elsewhere, tests/engine/test_backend_js.py).

Oracle: rosenbrock's gradient, written by hand, is one pass over x: each element reads
x[i - 1], x[i] and x[i + 1], and needs at most the gradient's buffer and one for the term
200 (x[i + 1] - x[i]^2) that element i + 1 reads again (else recomputed); f's value (the
primal's sum) is dead in the gradient's program. The emitter wrote 7 buffers and 7 loops.
ode's f is one pass over the state per step (each stage reads the one before at i - 1),
its new state and the old trading buffers after it rather than copied.

Internals: ``program.counted`` (the emitted source and its buffer count), which no public
function returns; ``JsFunction`` and ``precision_scope`` for a loop of 3 steps written in
JAX (not a catalog model) against JAX float64.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from adlab.catalog import load_model
from adlab.engine.backends.js.program import JsFunction, counted
from adlab.engine.model.precision import precision_scope

N = 50


def emitted(name: str, driver: str) -> tuple[str, int]:
    m = load_model(name)
    source, _, _, buffers = counted(m.function("js"), m.setup(N), 0, driver)
    return source, buffers.held


def test_rosenbrocks_gradient_is_one_pass_with_two_buffers_and_no_branches():
    source, held = emitted("rosenbrock", "grad")
    allocations = re.findall(r"new Float64Array\((\d+)\)", source)
    assert len(allocations) <= 2 and str(N) in allocations
    assert held == sum(int(a) for a in allocations) * 8 <= 2 * N * 8
    # one loop over the middle elements, the first and last element peeled (the pads of
    # x[1:] and x[:-1] change side there): no element tests which side it is on
    assert len(re.findall(r"for \(let i = ", source)) == 1
    assert "?" not in source
    assert "+=" not in source  # no sum: f's value is dead code, left out


def test_odes_f_is_one_pass_per_step():
    source, _ = emitted("ode", "once")
    step = source[source.index("for (let step") :]
    # per step: the stages' pass (its first elements peeled), no copy into the carry
    passes = re.findall(rf"for \(let i = \d+; i < {N}; i\+\+\)", step)
    assert len(passes) == 1, passes
    assert "const was = " in step


def test_a_loop_of_an_odd_number_of_steps_hands_back_its_carry_in_its_own_buffer():
    # the carry trades buffers with its new value at each step: after 3 steps it is in the
    # other one, copied back once; the gradient's loops trade too. JAX float64 is exact here.
    def f(x):
        def step(i, y):
            return jnp.concatenate([x[:1], y[:-1]]) * x + y * 0.5

        return jnp.sum(lax.fori_loop(0, 3, step, x))

    x = np.linspace(0.1, 1.0, 7)
    assert ".set(" in counted(f, (x,), 0, "once")[0]
    with precision_scope("float64"):
        value, grad = f(x), jax.grad(f)(x)
    np.testing.assert_allclose(JsFunction(f, 0, "once")(x), value, rtol=1e-12)
    np.testing.assert_allclose(JsFunction(f, 0, "grad")(x), grad, rtol=1e-12)


def test_a_buffer_whose_values_are_done_with_is_taken_again():
    # four products by A in a row: each result is read by the next product only, so two
    # buffers of n values take turns (and the sum's one value); the record counts what is made
    a = np.random.default_rng(0).normal(size=(7, 7)) / 3

    def f(x):
        for _ in range(4):
            x = jnp.asarray(a) @ x
        return jnp.sum(x)

    x = np.linspace(0.1, 1.0, 7)
    source, _, _, buffers = counted(f, (x,), 0, "once")
    allocations = [int(n) for n in re.findall(r"new Float64Array\((\d+)\)", source)]
    assert sorted(allocations) == [1, 7, 7], allocations
    assert buffers.held == 8 * sum(allocations)
    with precision_scope("float64"):
        value = f(x)
    np.testing.assert_allclose(JsFunction(f, 0, "once")(x), value, rtol=1e-12)
