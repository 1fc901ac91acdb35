"""Property: on random smooth compositions, every mode agrees with reverse mode.

Hypothesis builds f from sin, exp, log1p, polynomials, sums and products of
x, its reverse, its mean and its cumulative sum (so the Jacobian is not
diagonal), as model *source*, and checks each mode against reverse mode to
the tolerance its theory allows (see ``_engine_hand.tolerance``).

Arguments of exp and of polynomials are scaled into [-1, 1] using a bound on
their size, so values and derivatives stay moderate: the test is about the
modes agreeing, not about overflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from _engine_hand import FINITE_DIFFERENCES, error, tolerance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adlab


@dataclass(frozen=True)
class Expr:
    """Source text of an expression in x, and a bound on |value| for |x| <= 1."""

    text: str
    bound: float


LEAVES = st.sampled_from(
    [
        Expr("x", 1.0),
        Expr("x[::-1]", 1.0),
        Expr("np.mean(x)", 1.0),
        Expr("np.cumsum(x) / x.shape[0]", 1.0),
    ]
)
COEF = st.sampled_from([-2.0, -1.5, -0.5, 0.25, 1.0, 3.0])


def scaled(e: Expr) -> tuple[str, float]:
    """e scaled into [-1, 1] when its bound exceeds 1."""
    if e.bound <= 1.0:
        return e.text, e.bound
    return f"({e.text}) / {e.bound!r}", 1.0


def sin(e: Expr) -> Expr:
    return Expr(f"np.sin({e.text})", min(e.bound, 1.0))


def exp(e: Expr) -> Expr:
    text, b = scaled(e)
    return Expr(f"np.exp({text})", math.exp(b))


def log1p(e: Expr) -> Expr:
    return Expr(f"np.log1p(({e.text}) ** 2)", math.log1p(e.bound**2))


def poly(e: Expr, c: tuple[float, float, float]) -> Expr:
    text, b = scaled(e)
    c0, c1, c2 = c
    return Expr(f"({c0!r} + {c1!r} * {text} + {c2!r} * ({text}) ** 2)",
                abs(c0) + abs(c1) * b + abs(c2) * b * b)  # fmt: skip


def combine(op: str, a: Expr, b: Expr) -> Expr:
    if op == "+":
        return Expr(f"({a.text} + {b.text})", a.bound + b.bound)
    return Expr(f"({a.text} * {b.text})", a.bound * b.bound)


def extend(child: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        child.map(sin),
        child.map(exp),
        child.map(log1p),
        st.builds(poly, child, st.tuples(COEF, COEF, COEF)),
        st.builds(combine, st.sampled_from("+*"), child, child),
    )


EXPRESSIONS = st.recursive(LEAVES, extend, max_leaves=5)


def source(e: Expr, vector: bool) -> str:
    body = f"{e.text} + 0.0 * x" if vector else f"np.sum({e.text})"
    return (
        "def setup(n, rng):\n    return (rng.uniform(-1.0, 1.0, n),)\n\n\n"
        f"def f(x):\n    return {body}\n"
    )


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,  # a fixed sequence: CI runs are reproducible
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    e=EXPRESSIONS,
    vector=st.booleans(),
    n=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    precision=st.sampled_from(["float64", "float32"]),
    on_jax=st.sampled_from(FINITE_DIFFERENCES),
)
def test_modes_agree_on_random_smooth_compositions(e, vector, n, seed, precision, on_jax):
    """Forward mode, and every finite-difference scheme and complex step on the
    NumPy backend, against reverse mode; plus one of the latter, drawn, on JAX
    (each JAX run is an XLA compile, so one per example keeps this quick)."""
    m = adlab.Model.from_source(source(e, vector), "random")
    (x,) = m.setup(n, seed=seed)
    # the reference: reverse mode in float64 at the same (rounded) point
    x = x.astype(precision).astype(np.float64)
    ref = adlab.derivative(m, x, mode="reverse", precision="float64")
    assert ref.shape == ((n, n) if vector else (n,))
    runs = [("forward", "central", "jax"), (*on_jax, "jax")]
    runs += [(mode, scheme, "numpy") for mode, scheme in FINITE_DIFFERENCES]
    for mode, scheme, backend in runs:
        got = adlab.derivative(m, x, mode=mode, scheme=scheme, precision=precision,
                               backend=backend)  # fmt: skip
        err = error(got, ref)
        tol = tolerance(mode, scheme, precision)
        assert err <= tol, (
            f"{mode}/{scheme} on {backend}, {precision}: error {err:.3g} > {tol:.3g}\n{e.text}"
        )
