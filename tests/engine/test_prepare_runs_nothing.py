"""``prepare`` compiles and runs nothing (issue 38): JAX's program is compiled ahead of
time and first runs when it is called, so a sweep's budget can still skip it for free.
A model's ``jax.debug.callback`` counts each run of its program.

Internals: a program loaded from adlab's cache that does not run (``backends.jax.call``'s
``_programs.load`` and ``drop``, patched): dropped at its first failure, the jitted
fallback serving from then on.
"""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import adlab
from adlab.engine.backends.jax import call as jax_call
from adlab.engine.model.source import Model


def _counting() -> tuple[Model, list[int]]:
    """A model whose program appends to the list each time it runs."""
    runs: list[int] = []

    def f(x):
        jax.debug.callback(lambda: runs.append(1))
        return jnp.sum(x**2)

    return Model.from_function(f, lambda n, rng: (rng.normal(size=n),), name="counting"), runs


@pytest.mark.parametrize("mode", ["forward", "numeric"])
def test_prepare_compiles_without_running_the_program(mode):
    model, runs = _counting()
    (x,) = model.setup(5)
    p = adlab.prepare(model, x, mode=mode)
    jax.effects_barrier()  # every callback dispatched so far has run
    assert runs == [] and p.compile_s > 0  # compiled, ahead of time, and not run
    g = p(*p.inputs)
    jax.effects_barrier()
    assert runs and np.allclose(g, 2 * x, rtol=1e-6)  # the first call runs it


def test_a_loaded_program_that_does_not_run_is_dropped_and_compiled_afresh(monkeypatch):
    model = adlab.load_model("rosenbrock")
    x, *data = model.setup(3)
    want = adlab.derivative(model, x, *data, check=False)

    class Unrunnable:
        """What JAX loaded from a cache entry but cannot run (jax 0.10 on CPU)."""

        def _call(self, *args):
            raise RuntimeError("NOT_FOUND: Function adlab_program not found")

    hit = SimpleNamespace(biggest=(0, ""), xla={"temp_bytes": 0.0, "output_bytes": 0.0},
                          compiled=Unrunnable(), load_s=1e-3, compile_s=0.1, cost=None)  # fmt: skip
    dropped: list[str] = []
    monkeypatch.setattr(jax_call._programs, "load", lambda key: hit)
    monkeypatch.setattr(jax_call._programs, "drop", dropped.append)
    p = adlab.prepare(model, x, *data)
    assert p.compile_loaded and dropped == []  # nothing ran yet, so nothing failed
    assert np.allclose(p(*p.inputs), want) and len(dropped) == 1
    assert np.allclose(p(*p.inputs), want) and len(dropped) == 1  # dropped once
