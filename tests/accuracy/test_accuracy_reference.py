"""The reference itself: checked against 50-digit values, and untrusted when it should be.

The oracle here is mpmath: each catalog model is written again, independently,
in mpmath arithmetic at 50 significant digits and differentiated there
(``mpmath.diff``, which raises its working precision to keep every digit), at
the model's own float64 inputs. adlab's reference (float64 reverse mode,
checked against forward mode) must agree to 1e-13 relative.

Internals: the reference's own bounds, AGREEMENT (forward against reverse) and FLOOR (the
scale below which a component counts as zero), and max_relative_size, the measure the public
errors are built on: what the public functions mean rests on them, and none is public.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from _engine_hand import golden_checked

import adlab
from adlab import max_relative_error, normwise_relative_error, reference
from adlab.accuracy.reference import AGREEMENT, FLOOR, max_relative_size

mp = mpmath.mp

# ------------------------------------------------------------------ the models in mpmath


def mpv(a):
    """Float64 values, exactly, as mpmath numbers."""
    return [mpmath.mpf(float(v)) for v in np.ravel(np.asarray(a, dtype=np.float64))]


def mp_normal_logpdf(theta, data):
    y, s = mpv(data["y"]), mpmath.mpf(float(data["s"]))
    return sum(
        -(mpmath.log(2 * mpmath.pi) + ((yi - t) / s) ** 2) / 2
        for yi, t in zip(y, theta, strict=True)
    )


def mp_rosenbrock(x):
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))


def mp_wide_moments(x):
    w = [mpmath.exp(-(v**2) / 2) for v in x]
    return [
        sum(w),
        sum(a * b for a, b in zip(w, x, strict=True)),
        sum(a * b**2 for a, b in zip(w, x, strict=True)),
    ]


def mp_g9_graphics(theta, data):
    bend = mpmath.mpf("0.1")
    lengths, (tx, ty) = mpv(data["lengths"]), mpv(data["target"])
    heading = [sum(theta[: i + 1]) for i in range(len(theta))]
    tip_x = sum(L * mpmath.cos(h) for L, h in zip(lengths, heading, strict=True))
    tip_y = sum(L * mpmath.sin(h) for L, h in zip(lengths, heading, strict=True))
    bending = sum((theta[i + 1] - theta[i]) ** 2 for i in range(len(theta) - 1))
    return (tip_x - tx) ** 2 + (tip_y - ty) ** 2 + bend * bending


def mp_gaussian_residual(d, x):
    d = mpv(d)
    n = len(d)
    t = [mpmath.mpf(-10) + 20 * mpmath.mpf(i) / (n - 1) for i in range(n)]
    g = [mpmath.exp(-mpmath.mpf("1.5") * (ti - x[0]) ** 2) for ti in t]
    c = sum(a * b for a, b in zip(d, g, strict=True)) / sum(b * b for b in g)
    return [di - c * gi for di, gi in zip(d, g, strict=True)]


def mp_bvp_residual(u):
    n = len(u)
    h = 1 / mpmath.mpf(n + 1)
    padded = [mpmath.mpf(0), *u, mpmath.mpf(0)]
    return [(2 * padded[i + 1] - padded[i] - padded[i + 2]) / h**2 + padded[i + 1] ** 3 - 1
            for i in range(n)]  # fmt: skip


def mp_logistic_regression(w, X, y):
    X, y = np.asarray(X, dtype=np.float64), mpv(y)
    z = [sum(mpmath.mpf(float(a)) * b for a, b in zip(row, w, strict=True)) for row in X]
    nll = sum(mpmath.log(1 + mpmath.exp(zi)) - yi * zi for zi, yi in zip(z, y, strict=True))
    return nll + sum(v**2 for v in w) / 2


def mp_mlp(n1, n2):
    def f(p, xs):
        w1, b1 = p[:n1], p[n1 : 2 * n1]
        w2 = p[2 * n1 : 2 * n1 + n1 * n2]  # row-major (n1, n2)
        rest = p[2 * n1 + n1 * n2 :]
        b2, w3, b3 = rest[:n2], rest[n2 : 2 * n2], rest[2 * n2]
        loss = mpmath.mpf(0)
        for x in mpv(xs):
            h1 = [mpmath.tanh(x * w1[j] + b1[j]) for j in range(n1)]
            h2 = [mpmath.tanh(sum(h1[j] * w2[j * n2 + k] for j in range(n1)) + b2[k])
                  for k in range(n2)]  # fmt: skip
            loss += (sum(h2[k] * w3[k] for k in range(n2)) + b3) ** 2
        return loss

    return f


def mp_jacobian(f, args, wrt):
    """d f / d x by mpmath.diff, laid out as JAX does: x's shape for a scalar f (which
    returns one number), (m,) + x's shape for a vector f (which returns a list)."""
    x = mpv(args[wrt])
    rest = list(args)

    def at(j, v):
        rest[wrt] = x[:j] + [v] + x[j + 1 :]
        out = f(*rest)
        return out if isinstance(out, list) else [out]

    rest[wrt] = x
    vector = isinstance(f(*rest), list)
    m = len(at(0, x[0]))
    jac = np.array([[float(mpmath.diff(lambda v, j=j, k=k: at(j, v)[k], x[j]))
                     for j in range(len(x))] for k in range(m)])  # fmt: skip
    jac = jac.reshape((m, *np.shape(args[wrt])))
    return jac if vector else jac[0]


MLP = dict(N1=4, N2=3)
CASES = [  # (catalog name, settings, mpmath twin, sizes, digits)
    ("normal_logpdf", {}, mp_normal_logpdf, (1, 5), 50),
    ("rosenbrock", {}, mp_rosenbrock, (2, 5), 50),
    ("wide_moments", {}, mp_wide_moments, (1, 4), 50),
    ("g9_graphics", {}, mp_g9_graphics, (1, 5), 50),
    # the residuals' derivatives span 1e-62 .. 1e-2 beside residuals ~1: 50 digits
    # would lose the small ones inside mpmath.diff, so this one gets 150
    ("gaussian_residual", {}, mp_gaussian_residual, (11, 21), 150),
    ("mlp_batched", MLP, mp_mlp(4, 3), (1, 3), 50),
    ("mlp_per_sample", MLP, mp_mlp(4, 3), (2,), 50),
    ("bvp_residual", {}, mp_bvp_residual, (1, 6), 50),
    ("logistic_regression", {}, mp_logistic_regression, (1, 4), 50),
]


def test_every_catalog_model_has_an_mpmath_twin():
    golden = golden_checked()  # GradBench's: checked against its C++ reference instead
    assert sorted(c[0] for c in CASES) == [m for m in adlab.list_models() if m not in golden]


@pytest.mark.parametrize("name, settings, twin, sizes, digits", CASES, ids=[c[0] for c in CASES])
def test_reference_agrees_with_50_digit_values(name, settings, twin, sizes, digits):
    model = adlab.load_model(name, **settings)
    with mpmath.workdps(digits):
        for n in sizes:
            for seed in (0, 1):
                args = model.setup(n, seed)
                ref = reference(model, *args)
                exact = mp_jacobian(twin, args, model.wrt)
                assert np.shape(ref.value) == np.shape(exact)
                assert ref.trusted, (n, seed, ref.note)
                assert max_relative_error(ref.value, exact) <= 1e-13, (n, seed)
                assert normwise_relative_error(ref.value, exact) <= 1e-14, (n, seed)


@pytest.mark.parametrize("n", [4, 7, 9])
def test_where_the_reference_is_less_accurate_its_mismatch_says_so(n):
    """gaussian_residual on a coarse grid cancels inside the derivative: float64 keeps
    fewer digits there (up to ~1e-11 off at n = 7). The forward/reverse mismatch shown
    with the reference is then within 10x of the reference's true error, so the user
    sees how far to trust it; beyond 1e-13 normwise it is marked untrusted."""
    model = adlab.load_model("gaussian_residual")
    with mpmath.workdps(150):
        for seed in (0, 1, 2):
            args = model.setup(n, seed)
            ref = reference(model, *args)
            exact = mp_jacobian(mp_gaussian_residual, args, model.wrt)
            err = max_relative_error(ref.value, exact)
            assert err <= max(1e-13, 10 * ref.mismatch_componentwise), (seed, err, ref)
            if normwise_relative_error(ref.value, exact) > 1e-12:
                assert ref.trusted is False


# ------------------------------------------------------------------ the metrics


def test_max_relative_error_uses_a_floor_for_near_zero_components():
    ref = np.array([1.0, 1e-12, -2.0])
    approx = ref + np.array([1e-10, 1e-12, 0.0])
    # component 1 is compared against FLOOR * 2, not against 1e-12
    assert max_relative_error(approx, ref) == pytest.approx(1e-12 / (FLOOR * 2))
    assert max_relative_error(approx, ref, floor=0.0) == pytest.approx(1.0)
    assert max_relative_error(ref, ref) == 0.0
    assert max_relative_error(np.array([1e-3, 0.0]), np.zeros(2)) == pytest.approx(1e-3)
    assert math.isinf(max_relative_error(np.array([np.nan, 1.0, 1.0]), ref))
    with pytest.raises(ValueError, match="shapes"):
        max_relative_error(np.ones(2), np.ones(3))


def test_normwise_and_size_metrics():
    ref = np.array([3.0, 4.0])
    assert normwise_relative_error(ref + [0.0, 5e-6], ref) == pytest.approx(1e-6)
    assert normwise_relative_error(np.array([0.0, 1e-3]), np.zeros(2)) == pytest.approx(1e-3)
    assert math.isinf(normwise_relative_error(np.array([np.inf, 0.0]), ref))
    delta = np.array([3e-9, -4e-9])
    assert max_relative_size(delta, ref) == pytest.approx(1e-9)
    assert max_relative_error(ref + delta, ref) == pytest.approx(max_relative_size(delta, ref))
    # a tuple of arrays (tuple wrt) is one vector
    assert max_relative_error((ref, ref), (ref, ref + [0, 4e-8])) == pytest.approx(1e-8, rel=1e-6)


# ------------------------------------------------------------------ an untrusted reference


def test_forward_and_reverse_disagree_under_cancellation():
    """(A + 1) e^{bx} - A e^{bx} with A = 1e12: each mode rounds the two 1e12-sized
    terms of the derivative in a different order, so each keeps only ~4 digits,
    and they disagree with each other: the reference is marked untrusted."""

    def f(x):
        return jnp.sum((1e12 + 1) * jnp.exp(0.7 * x) - 1e12 * jnp.exp(0.7 * x))

    x = np.linspace(-1.0, 1.0, 5)
    ref = reference(f, x)
    assert ref.trusted is False
    assert ref.mismatch > 1e3 * AGREEMENT
    assert ref.mismatch == pytest.approx(normwise_relative_error(ref.forward, ref.value))
    assert ref.mismatch_componentwise == pytest.approx(max_relative_error(ref.forward, ref.value))
    assert "differ" in ref.note and f"{ref.mismatch:.1e}" in ref.note


def test_a_catalog_model_whose_derivative_is_rounding_noise_is_untrusted():
    """gaussian_residual on 3 grid points: only t = 0 sees the Gaussian, the residual is
    ~0 there and the derivative is pure rounding noise (~1e-17): forward and reverse
    differ by 100%, and records say so instead of reporting meaningless errors."""
    model = adlab.load_model("gaussian_residual")
    ref = reference(model, *model.setup(3))
    assert ref.trusted is False and ref.mismatch > 0.1
    recs = list(adlab.step_errors(model, 3, ("central",), steps=[1e-4], ref=ref))
    assert recs[0].reference_trusted is False
    assert recs[0].reference_mismatch == ref.mismatch
    # ... while at the question's own size, 21 points, it is trusted
    assert reference(model, *model.setup(21)).trusted is True


@jax.custom_vjp
def _sin_wrong_vjp(x):
    return jnp.sin(x)


_sin_wrong_vjp.defvjp(lambda x: (jnp.sin(x), x), lambda x, ct: (2.0 * ct * jnp.cos(x),))


def test_a_custom_vjp_model_is_unchecked_and_the_sweep_exposes_its_wrong_rule():
    """A custom_vjp model has no forward mode, so the reference cannot be checked
    (trusted is None, with the reason). Finite differences never use the rule: against
    the (wrong, doubled) reference they stay off by ~50% at every step."""

    def f(x):
        return jnp.sum(_sin_wrong_vjp(x))

    def setup(n, rng):
        return (rng.uniform(-1.0, 1.0, n),)

    model = adlab.Model.from_function(f, setup, name="wrong_vjp")
    ref = reference(model, *model.setup(4))
    assert ref.trusted is None and math.isnan(ref.mismatch)
    assert "forward mode failed" in ref.note
    recs = list(adlab.step_errors(model, 4, ("central", "complex-step"), steps=[1e-3, 1e-6]))
    assert all(r.reference_trusted is None for r in recs)
    assert all(0.4 < r.error < 0.6 for r in recs)
