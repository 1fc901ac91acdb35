"""The shapes of the step-size curves: where the minimum lies, how the arms slope.

Assertions are about shape (the location of a minimum within a window, the
slope of an arm on a log-log plot, a ceiling for complex step), never about
the exact numbers of one machine. Theory (Nocedal & Wright, sec. 8.1): with
truncation error ~ h**q and round-off ~ eps / h, the minimum lies near
h* = eps**(1/(q+1)) with error ~ eps**(q/(q+1)).

Internals: the step sweep's own grid (default_steps, STEP_SCHEMES) and its theory
(expected_error), which the public step_errors and optimal_step use and do not expose: the
curves' shapes are checked against them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import adlab
from adlab import max_relative_error, reference
from adlab.accuracy.steps import STEP_SCHEMES, default_steps, expected_error

EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}
N = 10


@pytest.fixture(scope="module")
def refs():
    return {name: reference(adlab.load_model(name), *adlab.load_model(name).setup(N))
            for name in ("normal_logpdf", "rosenbrock", "wide_moments")}  # fmt: skip


@pytest.fixture(scope="module")
def sweeps(refs):
    """All four schemes on the Done-when models in both precisions, and central and
    Richardson on wide_moments (whose derivatives never vanish), computed once."""
    out = {}
    for name, precisions, schemes in [
        ("normal_logpdf", ("float64", "float32"), STEP_SCHEMES),
        ("rosenbrock", ("float64", "float32"), STEP_SCHEMES),
        ("wide_moments", ("float64",), ("central", "richardson")),
    ]:
        for precision in precisions:
            out[name, precision] = list(
                adlab.step_errors(name, N, schemes, precision=precision, ref=refs[name])
            )
    return out


def curve(records, scheme):
    rs = sorted((r for r in records if r.scheme == scheme), key=lambda r: -r.h)
    return np.array([r.h for r in rs]), np.array([r.error for r in rs])


def best(records, scheme):
    h, e = curve(records, scheme)
    k = int(np.argmin(e))
    return h[k], e[k]


def slope(h, e, lo, hi):
    """Least-squares slope of log10(error) against log10(h) for lo <= h <= hi."""
    keep = (h >= lo) & (h <= hi)
    assert keep.sum() >= 3, "too few points to fit a slope"
    return float(np.polyfit(np.log10(h[keep]), np.log10(e[keep]), 1)[0])


# ------------------------------------------------------------ where the minimum lies


@pytest.mark.parametrize("name", ["normal_logpdf", "rosenbrock"])
def test_forward_differences_bottom_out_near_sqrt_eps(sweeps, name):
    h, err = best(sweeps[name, "float64"], "forward")
    root = math.sqrt(EPS["float64"])
    assert root / 10 <= h <= root * 10
    # about half the digits: the minimum is near sqrt(eps), far from eps
    assert root / 100 < err < 100 * root


def test_central_differences_bottom_out_near_cbrt_eps(sweeps):
    h, err = best(sweeps["rosenbrock", "float64"], "central")
    cbrt = EPS["float64"] ** (1 / 3)
    assert cbrt / 10 <= h <= cbrt * 10
    assert err < 100 * expected_error("central")  # ~ eps**(2/3): two thirds of the digits


def test_central_differences_on_a_quadratic_have_no_truncation_arm(sweeps):
    """normal_logpdf is quadratic in theta, so the central difference is exact up to
    rounding: the curve is round-off only (error ~ eps / h), smallest at the largest h."""
    records = sweeps["normal_logpdf", "float64"]
    h, err = curve(records, "central")
    assert best(records, "central")[0] >= 1e-2
    assert slope(h, err, 1e-12, 1e-2) == pytest.approx(-1, abs=0.3)
    # ... and at adlab's default step it is still far better than forward differences
    default = next(r for r in records if r.scheme == "central" and r.is_default)
    assert default.error < 1e-8


def test_richardson_bottoms_out_near_fifth_root_of_eps(sweeps):
    """On a model whose fifth derivative does not vanish (wide_moments: exp(-x^2/2))."""
    h, err = best(sweeps["wide_moments", "float64"], "richardson")
    fifth = EPS["float64"] ** (1 / 5)
    assert fifth / 10 <= h <= fifth * 10
    assert err < 100 * expected_error("richardson")


# ------------------------------------------------------------ the arms of the V


@pytest.mark.parametrize(
    "name, scheme, order, lo",
    [
        ("normal_logpdf", "forward", 1, 1e-5),
        ("rosenbrock", "forward", 1, 1e-5),
        ("rosenbrock", "central", 2, 1e-4),
        ("rosenbrock", "complex-step", 2, 1e-5),
        ("wide_moments", "central", 2, 1e-4),
        ("wide_moments", "richardson", 4, 1e-2),
    ],
)
def test_truncation_error_falls_monotonically_at_large_h(sweeps, name, scheme, order, lo):
    h, err = curve(sweeps[name, "float64"], scheme)
    arm = (h >= lo) & (h <= 0.1)
    assert np.all(np.diff(err[arm]) < 0), "error must fall as h falls in the truncation regime"
    assert slope(h, err, lo, 0.1) == pytest.approx(order, abs=0.25)


@pytest.mark.parametrize("name", ["normal_logpdf", "rosenbrock"])
@pytest.mark.parametrize("scheme, power", [("forward", 1 / 2), ("central", 1 / 3)])
def test_round_off_grows_as_h_shrinks(sweeps, name, scheme, power):
    h, err = curve(sweeps[name, "float64"], scheme)
    top = EPS["float64"] ** power / 30
    assert slope(h, err, 1e-14, top) == pytest.approx(-1, abs=0.35)


@pytest.mark.parametrize("name", ["normal_logpdf", "rosenbrock"])
def test_complex_step_keeps_every_digit_down_to_1e_300(sweeps, name):
    h, err = curve(sweeps[name, "float64"], "complex-step")
    assert h.min() == pytest.approx(1e-300)
    small = h <= 1e-8
    assert small.sum() >= 20
    assert np.all(err[small] <= 1e-14)


# ------------------------------------------------------------ defaults and theory


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_default_record_is_the_engines_default(sweeps, refs, precision):
    model = adlab.load_model("rosenbrock")
    args = model.setup(N)
    ref = refs["rosenbrock"]
    records = sweeps["rosenbrock", precision]
    for scheme in ("forward", "central", "richardson", "complex-step"):
        defaults = [r for r in records if r.scheme == scheme and r.is_default]
        assert len(defaults) == 1
        mode = "complex-step" if scheme == "complex-step" else "numeric"
        value = adlab.derivative(model, *args, mode=mode, precision=precision,
                                 scheme=scheme if mode == "numeric" else "central")  # fmt: skip
        engine = max_relative_error(value, ref.value)
        if scheme == "complex-step":
            assert defaults[0].h == 1e-20
            assert abs(defaults[0].error - engine) <= 8 * EPS[precision]
        else:
            assert defaults[0].h == pytest.approx(adlab.optimal_step(scheme, precision))
            assert defaults[0].error == pytest.approx(engine, rel=0.5)


def test_optimal_steps_follow_theory():
    for precision, eps in EPS.items():
        assert adlab.optimal_step("forward", precision) == pytest.approx(eps**0.5)
        assert adlab.optimal_step("central", precision) == pytest.approx(eps ** (1 / 3))
        assert adlab.optimal_step("richardson", precision) == pytest.approx(eps**0.2)
        assert adlab.optimal_step("complex-step", precision) is None
    with pytest.raises(ValueError, match="scheme"):
        adlab.optimal_step("backward")


def test_records_carry_theory_and_the_reference_check(sweeps):
    for r in sweeps["rosenbrock", "float64"]:
        assert r.model == "rosenbrock" and r.n == N and r.precision == "float64"
        assert r.reference_trusted is True and r.reference_mismatch <= 1e-13
        assert (r.error_estimate is not None) == (r.scheme == "richardson")
        if r.scheme != "complex-step":
            assert r.optimal_h == adlab.optimal_step(r.scheme)


def test_summary_puts_measured_minimum_beside_theory(sweeps):
    summary = {s.scheme: s for s in adlab.step_summary(sweeps["rosenbrock", "float64"])}
    assert list(summary) == ["forward", "central", "richardson", "complex-step"]
    s = summary["central"]
    assert s.best_error <= s.default_error
    assert s.default_h == s.optimal_h


# ------------------------------------------------------------ float32 against float64


@pytest.mark.parametrize(
    "name, scheme", [("normal_logpdf", "forward"), ("rosenbrock", "forward"),
                     ("rosenbrock", "central")],
)  # fmt: skip
def test_float32_curves_bottom_out_where_float32_theory_says(sweeps, name, scheme):
    power = {"forward": 1 / 2, "central": 1 / 3}[scheme]
    h32, e32 = best(sweeps[name, "float32"], scheme)
    h64, e64 = best(sweeps[name, "float64"], scheme)
    assert EPS["float32"] ** power / 10 <= h32 <= EPS["float32"] ** power * 10
    expected = (1 - power) * math.log10(EPS["float32"] / EPS["float64"])  # 4.4 and 5.8 decades
    assert math.log10(e32 / e64) == pytest.approx(expected, abs=1.0)


def test_float32_steps_below_eps_vanish(sweeps):
    """In float32 a relative step below ~eps32 does not move x: the error is inf, shown."""
    h, err = curve(sweeps["rosenbrock", "float32"], "forward")
    assert np.all(np.isinf(err[h < EPS["float32"] / 4]))
    h, err = curve(sweeps["rosenbrock", "float32"], "complex-step")
    assert h.min() >= 1e-30  # no float32 step below ~1e-38 exists
    assert np.all(err[h <= 1e-4] < 30 * EPS["float32"])


def test_precision_table_float32_worse_by_the_expected_orders(refs):
    rows = {r.label: r for r in adlab.precision_table("rosenbrock", N, ref=refs["rosenbrock"])}
    assert set(rows) == {"forward", "reverse", "numeric[forward]", "numeric[central]",
                         "numeric[richardson]", "complex-step"}  # fmt: skip
    expected = {"numeric[forward]": 4.4, "numeric[central]": 5.8, "numeric[richardson]": 7.0}
    for label, decades in expected.items():
        row = rows[label]
        assert row.expected_decades == pytest.approx(decades, abs=0.05)
        assert row.decades == pytest.approx(decades, abs=1.0)
        assert row.error_float32 > row.error_float64
    for label in ("forward", "reverse", "complex-step"):
        assert rows[label].error_float64 < 1e-14
        assert rows[label].error_float32 < 1e-5


# ------------------------------------------------------------ Richardson's own estimate


def test_richardson_estimate_against_true_error():
    """Its estimate |R - D(h/2)| is the error of D(h/2): where truncation rules it matches
    that and bounds R's own error with room to spare; where round-off rules it is of the
    size of R's error (within a small factor, either side)."""
    steps = 10.0 ** -np.arange(1.0, 14.0)
    points = adlab.richardson_check("wide_moments", N, steps=steps)
    assert [p.h for p in points] == list(steps)
    for p in points:
        if p.h >= 1e-3:  # truncation
            assert p.estimate == pytest.approx(p.error_central_half, rel=0.5)
            assert p.estimate > 10 * p.error
        if p.h <= 1e-7:  # round-off
            assert p.error / 30 < p.estimate < 30 * p.error


def test_richardson_estimate_bounds_the_error_at_the_default_step(sweeps):
    for name in ("rosenbrock", "wide_moments"):
        default = next(r for r in sweeps[name, "float64"]
                       if r.scheme == "richardson" and r.is_default)  # fmt: skip
        assert default.error_estimate >= default.error


# ------------------------------------------------------------ arguments and refusals


def test_steps_argument():
    recs = list(
        adlab.step_errors("rosenbrock", 3, ("central", "complex-step"), steps=[1e-3, 1e-30])
    )
    assert [(r.scheme, r.h) for r in recs] == [
        ("central", 1e-3), ("central", 1e-30), ("complex-step", 1e-3), ("complex-step", 1e-30)
    ]  # fmt: skip
    assert math.isinf(recs[1].error)  # x + 1e-30 == x: shown, not hidden
    assert recs[3].error < 1e-14
    per = list(adlab.step_errors("rosenbrock", 3, ("forward", "central"), steps={"forward": [0.1]}))
    assert sum(r.scheme == "forward" for r in per) == 1
    assert sum(r.scheme == "central" for r in per) == len(default_steps("central"))
    with pytest.raises(ValueError, match="positive"):
        list(adlab.step_errors("rosenbrock", 3, ("central",), steps=[1e-3, -1.0]))
    with pytest.raises(ValueError, match="scheme"):
        list(adlab.step_errors("rosenbrock", 3, ("backward",)))


def test_default_grids():
    fd = default_steps("central")
    assert fd[0] == pytest.approx(0.1) and fd.min() == pytest.approx(1e-16)
    assert np.all(np.diff(fd) < 0)
    for scheme in ("forward", "central", "richardson"):
        assert np.any(np.isclose(fd, adlab.optimal_step(scheme)))
    assert default_steps("complex-step").min() == pytest.approx(1e-300)
    assert 1e-20 in default_steps("complex-step")
    assert default_steps("complex-step", "float32").min() >= 1e-30


SMOOTH_ABS = """
def setup(n, rng):
    return (rng.normal(size=n),)

def f(x):
    return np.sum(np.real(x * np.conj(x)) ** 1.5)  # |x|^3, not analytic
"""


def test_non_analytic_model_complex_step_refused_differences_still_swept():
    model = adlab.Model.from_source(SMOOTH_ABS, name="abs_cubed")
    sweep = adlab.step_errors(model, 4, ("central", "complex-step"), steps=[1e-4])
    central = next(sweep)
    assert central.scheme == "central" and central.error < 1e-6
    with pytest.raises(adlab.ModelError, match="analytic") as info:
        next(sweep)
    assert info.value.lineno == 6
    rows = {r.label: r for r in adlab.precision_table(model, 4, modes=("reverse", "complex-step"))}
    assert rows["complex-step"].skipped and "analytic" in rows["complex-step"].skipped
    assert rows["complex-step"].decades is None
    assert rows["reverse"].skipped is None


def test_tuple_wrt_sweeps_every_argument():
    """Each differentiated argument gets steps scaled to its own |x|."""

    def f(a, b):
        return a[0] ** 3 * b + a[1] * b**2

    def setup(n, rng):
        return np.array([1.5, -0.5]), 200.0

    model = adlab.Model.from_function(f, setup, wrt=(0, 1))
    recs = list(adlab.step_errors(model, 1, ("central",), steps=[1e-5]))
    assert recs[0].error < 1e-8
