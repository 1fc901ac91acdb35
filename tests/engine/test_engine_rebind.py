"""``p(x, *data)``: new data of the prepared shapes and dtypes, each call (issue 22, part 2).

Such calls go, unconverted, to a program that takes every argument (JAX: its compiled
C++ call); their results must be the converting path's, bit for bit, and other shapes,
dtypes and structures must still be converted and traced anew.

Internals: counts Prepared's conversions of arguments by wrapping the function it calls for
them (prepared.backend_inputs): the fast path is the absence of those calls.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _engine_hand import normal_logpdf

import adlab
from adlab.engine import prepared

NORMAL = adlab.load_model("normal_logpdf")
LOGISTIC = adlab.load_model("logistic_regression")  # f(w, X, y): several data arguments


def _fresh(model, args, **options):
    """The derivative at ``args`` from a ``prepare`` that bound them."""
    q = adlab.prepare(model, *args, **options)
    return q.with_error(*q.inputs) if options.get("mode") == "numeric" else q(*q.inputs)


@pytest.fixture
def conversions(monkeypatch):
    """Every conversion of arguments by ``Prepared`` (the slow path: a ``device_put`` each)."""
    calls = []
    original = prepared.backend_inputs

    def counted(args, *rest):
        calls.append(args)
        return original(args, *rest)

    monkeypatch.setattr(prepared, "backend_inputs", counted)
    return calls


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["reverse", "forward", "numeric"])
@pytest.mark.parametrize("model", [NORMAL, LOGISTIC], ids=["dict-data", "several-args"])
def test_rebound_data_gives_what_a_fresh_prepare_gives(model, mode, precision, conversions):
    options = {"mode": mode, "precision": precision}
    p = adlab.prepare(model, *model.setup(8), **options)
    for seed in (1, 2, 3):  # host NumPy arrays (float64, a Python float), new each call
        args = model.setup(8, seed=seed)
        got = p.with_error(*args) if mode == "numeric" else p(*args)
        want = _fresh(model, args, **options)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                        strict=True):  # fmt: skip
            assert g.dtype == np.dtype(precision)
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert conversions == [], "the data were converted in Python: not the fast path"
    # a later p(x) and p.inputs see the last data, converted now, as prepare converts
    x = model.setup(8, seed=4)[0]
    got = p.with_error(x) if mode == "numeric" else p(x)
    want = _fresh(model, (x, *args[1:]), **options)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    leaves = jax.tree_util.tree_leaves(p.inputs)
    assert all(isinstance(a, jax.Array) and a.dtype == np.dtype(precision) for a in leaves)
    for held, given in zip(leaves[1:], jax.tree_util.tree_leaves(args[1:]), strict=True):
        np.testing.assert_array_equal(np.asarray(held), np.asarray(given, precision))
    assert len(conversions) == 1


def test_rebinding_traces_f_once_and_converts_nothing_per_call(conversions):
    traces = []

    def f(theta, y, s):
        traces.append(1)
        return jnp.sum(-0.5 * ((y - theta) / s) ** 2)

    model = adlab.Model.from_function(f)
    rng = np.random.default_rng(0)
    p = adlab.prepare(model, rng.normal(size=5), rng.normal(size=5), 1.0)
    p(rng.normal(size=5), rng.normal(size=5), 2.0)  # builds the program that takes them all
    before = len(traces)
    for _ in range(4):
        theta, y, s = rng.normal(size=5), rng.normal(size=5), float(rng.uniform(1, 2))
        np.testing.assert_allclose(np.asarray(p(theta, y, s)), (y - theta) / s**2, rtol=1e-14)
    assert len(traces) == before and conversions == []


def test_the_callers_arrays_are_never_taken_for_the_bound_ones():
    """After a fast rebinding the caller's own arrays are passed again each call: refilled
    in place (a minibatch buffer), the next call sees the new values."""
    theta, data = NORMAL.setup(6)
    p = adlab.prepare(NORMAL, theta, data)
    batch = {"y": data["y"] + 1.0, "s": 1.5}
    np.testing.assert_allclose(np.asarray(p(theta, batch)), normal_logpdf(theta, batch),
                               rtol=1e-14)  # fmt: skip
    batch["y"][:] = -3.0
    np.testing.assert_allclose(np.asarray(p(theta, batch)), normal_logpdf(theta, batch),
                               rtol=1e-14)  # fmt: skip


@pytest.mark.parametrize(
    "change",
    [
        lambda t, d: (t[:5], {"y": d["y"][:5], "s": d["s"]}),  # another shape: traced anew
        lambda t, d: (t, {"y": d["y"].astype(np.float32), "s": d["s"]}),  # cast to float64
        lambda t, d: (t.astype(np.float32), d),
        lambda t, d: (list(t), d),  # a list for x
        lambda t, d: (t, {"y": d["y"], "s": 2}),  # a Python int where a float was
        lambda t, d: (t, {**d, "unused": 0.0}),  # another structure
    ],
    ids=["shape", "float32-data", "float32-x", "list-x", "int-leaf", "extra-key"],
)  # fmt: skip
def test_other_types_are_converted_as_before(change, conversions):
    theta, data = NORMAL.setup(6)
    p = adlab.prepare(NORMAL, theta, data)
    p(theta, {"y": data["y"] * 2, "s": 0.5})  # the fast program built
    assert conversions == []
    x, d = change(theta, data)
    got = np.asarray(p(x, d))
    assert got.dtype == np.float64 and len(conversions) == 1
    want = normal_logpdf(np.asarray(x, np.float64), {"y": np.asarray(d["y"], np.float64),
                                                     "s": float(d["s"])})  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # and the prepared types take the fast path again
    np.testing.assert_allclose(np.asarray(p(theta, data)), normal_logpdf(theta, data),
                               rtol=1e-14)  # fmt: skip
    assert len(conversions) == 1


def test_p_of_the_bound_inputs_after_a_rebinding_is_not_a_rebinding(conversions):
    theta, data = NORMAL.setup(6)
    p = adlab.prepare(NORMAL, theta, data)
    other = {"y": data["y"] - 1.0, "s": 3.0}
    p(theta, other)
    inputs = p.inputs  # converted once, here
    assert len(conversions) == 1
    np.testing.assert_allclose(np.asarray(p(*inputs)), normal_logpdf(theta, other), rtol=1e-14)
    assert len(conversions) == 1 and p.inputs is inputs
