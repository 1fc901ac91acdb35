"""The gradient and the HVP from one program (``hvp(..., with_gradient=True)``).

The oracle is adlab's own separate programs, each tested elsewhere against hand
Hessians: the reverse gradient (``derivative``) and the HVP alone (``hvp``), on
the same framework and composition. Fused, they must agree to rounding.

Internals: second order's tables (modes.hessian: COMPOSITIONS, ON), to run every fused
composition each framework nests, and the GradBench tool's Newton step and jobs
(catalog.gradbench: gradbench_eval, newton_direction; gradbench.jobs: Job, Options), which
use the fused program.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import adlab
from adlab.engine.backends import get_backend
from adlab.engine.modes.hessian import COMPOSITIONS, ON

#: relative error: the same arithmetic, maybe reassociated by a compiler
TOL = 1e-12
FRAMEWORKS = ("jax", "torch", "tensorflow", "autograd")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


@functools.cache
def point(name: str, n: int) -> tuple:
    """The model, its arguments and a direction v with no zero entry."""
    model = adlab.load_model(name)
    args = model.setup(n)
    v = np.linspace(-1.0, 1.5, np.size(args[model.wrt]))
    return model, args, v


def rel(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def cases():
    for fw in FRAMEWORKS:
        for mode in ON[fw]:
            if COMPOSITIONS[mode].hvp is None:
                continue
            # TensorFlow's eager accumulators are slow to start: one model there
            for name in ("kmeans", "logistic_regression")[: 1 if fw == "tensorflow" else 2]:
                yield pytest.param(fw, mode, name, id=f"{fw}-{mode}-{name}")


@pytest.mark.parametrize(("fw", "mode", "name"), list(cases()))
def test_fused_gradient_and_hvp_equal_the_separate_ones(fw, mode, name):
    model, (x, *data), v = point(name, 12)
    jit = True if fw == "jax" else None
    (g, hv), info = adlab.hvp(model, x, v, *data, mode=mode, backend=fw, jit=jit,
                              with_gradient=True, full_output=True)  # fmt: skip
    want_g = adlab.derivative(model, x, *data, mode="reverse", backend=fw)
    want_hv = adlab.hvp(model, x, v, *data, mode=mode, backend=fw, jit=jit)
    assert rel(g, want_g) <= TOL
    assert rel(hv, want_hv) <= TOL
    c = COMPOSITIONS[mode]
    assert info.f_evals == c.passes(np.size(x), True) + c.gradient_passes


@pytest.mark.parametrize(("fw", "mode"), [(fw, c) for fw in FRAMEWORKS for c in ON[fw]
                                           if COMPOSITIONS[c].hvp is not None])  # fmt: skip
def test_divided_is_the_fused_gradient_over_the_fused_product(fw, mode):
    """``divided=True`` (mode gradient-over-hvp): g / Hv elementwise, from one program."""
    model, (x, *data), v = point("logistic_regression", 12)
    jit = True if fw == "jax" else None
    p = adlab.prepare_hvp(model, x, v, *data, mode=mode, backend=fw, jit=jit, divided=True)
    assert (p.mode, p.scheme) == ("gradient-over-hvp", mode)
    pair = adlab.prepare_hvp(model, x, v, *data, mode=mode, backend=fw, jit=jit,
                             with_gradient=True)  # fmt: skip
    g, hv = (np.asarray(a) for a in get_backend(fw).to_numpy(pair(*pair.inputs)))
    got = np.asarray(get_backend(fw).to_numpy(p(*p.inputs)))
    assert np.all(hv != 0)
    assert rel(got, g / hv) <= TOL
    assert p.f_evals == pair.f_evals


@pytest.mark.parametrize("fw", ["torch", "tensorflow"])
def test_fused_under_the_framework_compiler(fw):
    model, (x, *data), v = point("logistic_regression", 6)
    g, hv = adlab.hvp(model, x, v, *data, backend=fw, jit=True, with_gradient=True)
    assert rel(g, adlab.derivative(model, x, *data, backend=fw)) <= TOL
    assert rel(hv, adlab.hvp(model, x, v, *data, backend=fw, jit=True)) <= TOL


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_a_scalar_x_gives_scalar_gradient_and_product(fw):
    src = """
def setup(n, rng):
    return 0.7


def f(x):
    return np.exp(x) * x**2
"""
    m = adlab.Model.from_source(src, "scalar")
    x = 0.7
    g, hv = adlab.hvp(m, x, 2.0, backend=fw, with_gradient=True)
    assert np.shape(g) == np.shape(hv) == ()
    # d/dx e^x x^2 = e^x (x^2 + 2x); second derivative e^x (x^2 + 4x + 2)
    assert abs(g - np.exp(x) * (x**2 + 2 * x)) <= 1e-14 * abs(g)
    assert abs(hv - 2.0 * np.exp(x) * (x**2 + 4 * x + 2)) <= 1e-14 * abs(hv)


def test_the_prepared_form_rebinds_x_v_and_data():
    model, (w, X, y), v = point("logistic_regression", 6)
    p = adlab.prepare_hvp(model, w, v, X, y, with_gradient=True)
    assert (p.mode, p.scheme) == ("gradient-and-hvp", "forward-over-reverse")
    w2, v2, X2 = w + 0.25, v[::-1].copy(), X * 1.5
    g, hv = p(w2, v2, X2, y)
    assert rel(g, adlab.derivative(model, w2, X2, y)) <= TOL
    assert rel(hv, adlab.hvp(model, w2, v2, X2, y)) <= TOL
    g, hv = p(w)  # the data and v bound by the last call
    assert rel(g, adlab.derivative(model, w, X2, y)) <= TOL
    assert rel(hv, adlab.hvp(model, w, v2, X2, y)) <= TOL


@pytest.mark.parametrize(
    ("mode", "inner"),
    [("forward-over-reverse", "reverse"), ("reverse-over-reverse", "reverse"),
     ("forward-over-forward", "forward")],
)  # fmt: skip
def test_over_a_gradient_the_gradient_costs_less_than_its_own_program(mode, inner):
    """XLA's flop counts, not times: one program shares the gradient the HVP computes,
    where two programs compute it twice."""
    model, (x, *data), v = point("logistic_regression", 30)
    fused = adlab.prepare_hvp(model, x, v, *data, mode=mode, with_gradient=True).cost()
    alone = adlab.prepare_hvp(model, x, v, *data, mode=mode).cost()
    gradient = adlab.prepare(model, x, *data, mode=inner).cost()
    assert alone["flops"] <= fused["flops"] < alone["flops"] + gradient["flops"]


def test_complex_step_has_no_hvp_with_or_without_the_gradient():
    model, (x, *data), v = point("rosenbrock", 4)
    with pytest.raises(ValueError, match="complex step for the full Hessian only"):
        adlab.hvp(model, x, v, *data, mode="complex-step", with_gradient=True)


@pytest.mark.parametrize(("mode", "programs"), [("reverse", ["gradient-over-hvp"]),
                                                ("forward", ["gradient-over-hvp"]),
                                                ("numeric", ["numeric", "hvp"])])  # fmt: skip
def test_the_gradbench_tool_takes_kmeans_dir_in_one_program_where_the_mode_fuses(mode, programs):
    from adlab.catalog.gradbench import gradbench_eval, newton_direction
    from adlab.gradbench.jobs import Job, Options

    rng = np.random.default_rng(1)
    input = {"centroids": rng.normal(size=(3, 2)).tolist(),
             "points": rng.normal(size=(20, 2)).tolist()}  # fmt: skip
    model, args = gradbench_eval("kmeans").inputs(input, "dir")
    job = Job("dir", model, args, Options(mode=mode))
    assert [p.mode for p, _ in job._parts] == programs
    x, *data = args
    g = adlab.derivative(model, *args, mode=mode)
    diagonal = adlab.hvp(model, x, np.ones_like(x), *data)
    got = job.to_numpy(job.call())
    assert rel(got, newton_direction(g, diagonal)) <= (1e-6 if mode == "numeric" else TOL)


def test_an_empty_clusters_direction_is_nan_without_a_warning():
    """A centroid no point is nearest to has zero gradient and zero curvature: 0 / 0."""
    from adlab.catalog.gradbench import gradbench_eval
    from adlab.gradbench.jobs import Job, Options

    rng = np.random.default_rng(2)
    points = rng.random((20, 2))
    input = {"centroids": [*points[:2].tolist(), [50.0, 50.0]], "points": points.tolist()}
    model, args = gradbench_eval("kmeans").inputs(input, "dir")
    job = Job("dir", model, args, Options(mode="reverse"))
    got = job.to_numpy(job.call()).reshape(3, 2)  # warnings are errors in the tests
    assert np.isnan(got[2]).all() and np.isfinite(got[:2]).all()
