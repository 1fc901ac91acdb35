"""A record's ``levels``: which framework takes each level of a nested derivative.

The words are each framework's facts (``Facts.takes``); what is tested is who is named at
each level: on the JavaScript backends a model's own ``grad`` is JAX's, traced into f,
and only the outer level is TF.js's or jax-js's; a second derivative on ``js`` is JAX's
program of the whole nesting, emitted. One small sweep shows the field reaches a record.
"""

from __future__ import annotations

import pytest

import adlab
from adlab.engine.backends import installed, levels

#: a model that takes its own derivative (particle's way, one step)
OWN_GRAD = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n\n"
            "def f(x):\n    g = grad(lambda y: np.sum(np.sin(y) * y))(x)\n"
            "    return np.sum(g ** 2)\n")  # fmt: skip


def test_a_first_derivative_without_grad_has_one_level():
    assert levels("jaxjs", "reverse") is None and levels("jax", "primal", own_grad=True) is None


@pytest.mark.parametrize("backend, outer", [
    ("tfjs", "TF.js's tf.grad (reverse)"),
    ("jaxjs", "jax-js's grad (reverse)"),
    ("js", "JAX's vjp (reverse), emitted as JavaScript"),
])  # fmt: skip
def test_the_models_own_grad_is_jaxs_traced_into_f_on_javascript(backend, outer):
    got = levels(backend, "reverse", own_grad=True)
    top, _, inside = got.partition("; inner: ")
    assert top == f"outer: {outer}", got
    assert inside.startswith("JAX's grad (reverse), traced into f"), got
    label = {"tfjs": "TensorFlow.js", "jaxjs": "jax-js"}.get(backend)
    assert (f"translated to {label} operations" if label else "emitted as JavaScript") in inside
    # inner-forward: JAX's jvp inside; jax-js's jvp outside in forward mode
    got = levels(backend, "forward", inner="forward", own_grad=True)
    assert "inner: JAX's jvp (forward)" in got, got


def test_a_second_derivative_names_its_outer_and_inner_framework():
    assert levels("jax", "hessian", "forward-over-reverse") == (
        "outer: JAX's jvp (forward); inner: JAX's grad (reverse)")  # fmt: skip
    assert levels("tfjs", "hessian", "forward-over-reverse") is None  # refused there
    assert levels("tfjs", "hvp", "reverse-over-reverse") == (  # tf.grad of tf.grad
        "outer: TF.js's tf.grad (reverse); inner: TF.js's tf.grad (reverse)")  # fmt: skip
    assert levels("jaxjs", "hvp", "reverse-over-forward") == (  # jax-js's own nesting
        "outer: jax-js's grad (reverse); inner: jax-js's jvp (forward)")  # fmt: skip
    got = levels("js", "hvp", "reverse-over-forward")
    assert got.startswith("outer: JAX's grad (reverse); inner: JAX's jvp (forward)"), got
    assert got.endswith("one program, emitted as JavaScript"), got
    assert levels("jax", "hessian", "numeric").startswith("outer: central differences of")


@pytest.mark.skipif(not installed("tfjs"), reason="Node.js is not installed")
def test_a_record_says_tfjs_takes_the_outer_level_and_jax_the_inner():
    m = adlab.Model.from_source(OWN_GRAD, name="own_grad")
    records = list(adlab.bench(m, sizes=[3], modes=["reverse(tfjs)"], repeats=3,
                               interval_width=None, target_s=0.001, warn=False))  # fmt: skip
    (r,) = [r for r in records if r.mode == "reverse"]
    assert r.levels == levels("tfjs", "reverse", own_grad=True), r.levels
    assert r.error is not None and r.error < 1e-4  # TF.js's float32 against JAX's float64
    assert all(r.levels is None for r in records if r.mode == "primal")


def test_a_refused_nesting_says_what_runs_where_and_what_to_use():
    m = adlab.Model.from_source(OWN_GRAD, name="own_grad")
    with pytest.raises(ValueError) as info:  # forward-over-reverse: TF.js has no forward
        adlab.hessian(m, *m.setup(3), scheme="forward-over-reverse", backend="tfjs")
    text = str(info.value)
    assert "no forward mode" in text and "backend='js'" in text, text
    assert "runs 'reverse-over-reverse'" in text, text


def test_the_tutorials_table_splits_outer_from_inner():
    from adlab import tutorial

    r = adlab.Record(model="m", mode="hessian", n=3, label="hessian(js)", jit=False,
                     scheme="forward-over-reverse", precision="float64", backend="js", order=2,
                     levels=levels("js", "hessian", "forward-over-reverse"))  # fmt: skip
    (row,) = tutorial.levels_table([r, adlab.Record(**{**r.to_dict(), "levels": None})]).rows
    assert row == ("hessian(js)", "JAX's jvp (forward)",
                   "JAX's grad (reverse); one program, emitted as JavaScript")  # fmt: skip
