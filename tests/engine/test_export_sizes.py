"""Any n (``export_sizes``): where a module takes any n, and where it is built for one n and
says why. The modules' numbers at other n are checked in Node by test_export_js.py.

Internals: the polynomials and templates of ``export_template`` (how a number becomes an
expression of n, and which programs are refused as general), which no public call shows
apart from whole models.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import jax
import numpy as np
import pytest
from _differential import models
from hypothesis import HealthCheck, given, settings

import adlab
from adlab.engine.backends import installed
from adlab.engine.backends.js.export_sizes import SAMPLES
from adlab.engine.backends.js.export_template import Poly, generalised
from adlab.engine.model import precision_scope


def _model(body: str, name: str) -> adlab.Model:
    source = f"def setup(n, rng):\n    return (rng.normal(size=n),)\n\ndef f(x):\n{body}"
    return adlab.Model.from_source(source, name=name)


def _why(source: str) -> str:
    """The header's reason for a fixed size ('' where the module takes any n)."""
    said = [line for line in source.splitlines()[:12] if line.startswith("// (Not any n: ")]
    return said[0] if said else ""


def test_a_polynomial_is_fitted_checked_and_written_in_javascript():
    p = Poly.fit([13, 18, 21, 23, 26], [Fraction(n * (n - 1), 2) for n in (13, 18, 21, 23, 26)])
    assert p is not None and p.whole and not p.integral  # n (n - 1) / 2: whole at every n
    assert str(p) == "(n*n - n) / 2" and p.js() == "((n * n - n) / 2)"
    assert not Poly((Fraction(0), Fraction(1, 2))).whole  # n / 2
    assert Poly.fit([13, 18, 21, 23, 26], [Fraction(n // 2) for n in (13, 18, 21, 23, 26)]) is None
    assert Poly((Fraction(-1), Fraction(2))).js() == "(2 * n - 1)" and Poly.const(7).js() == "7"


def test_a_program_that_changes_with_n_other_than_in_sizes_is_not_general():
    def program(n: int) -> str:  # a copy after an odd number of steps, decided in Python
        tail = " B1.set(B2);" if n % 2 else ""
        return f"for (let i = 0; i < {n - 1}; i++) {{ B1[i] = i; }}{tail}"

    assert generalised({n: program(n) for n in SAMPLES[:5]}) is None
    general = generalised({n: program(n) for n in (13, 21, 23, 31, 35)})  # all odd: a bad choice
    assert general is not None and general.js() == program(13).replace("12", "n - 1")
    # a number that is not a polynomial in n (1 / n)
    assert generalised({n: f"const h = {1 / n};" for n in SAMPLES[:5]}) is None


@pytest.mark.parametrize(
    "body,why",
    [
        ("    return np.sum(x[: x.shape[0] // 2] ** 2)\n",
         "a size in f is floordiv(n, 2), not a polynomial in n"),
        ("    h = 1.0 / x.shape[0]\n    return h * np.sum(x ** 2)\n",
         "a number in the emitted program is no polynomial in n"),
        ("    s = 0.0\n    for i in range(x.shape[0]):\n        s = s + x[i] ** 2\n    return s\n",
         "f needs n's value at line 6 (for i in range(x.shape[0]):): TypeError"),
    ],
)  # fmt: skip
def test_a_model_that_needs_ns_value_is_built_for_one_n_and_says_why(body, why):
    source = adlab.export_js(_model(body, "needs_n"), n=4)
    assert "// Fixed size: built for n=4" in source
    assert why in _why(source)


def test_a_mean_over_n_and_an_arange_of_n_take_any_n():
    body = "    return np.mean(x ** 2) + np.sum(np.arange(x.shape[0]) * x)\n"
    source = adlab.export_js(_model(body, "mean"), n=4)
    assert "// Any size: n >= 1, read from x's length (n numbers)" in source and not _why(source)
    # built for one n where asked, or where n is below the least the general program holds for
    assert "// Fixed size: built for n=4" in adlab.export_js(_model(body, "mean"), n=4, fixed=True)
    assert "n=1 is outside the n its general program holds for (n >= 2)" in _why(
        adlab.export_js("rosenbrock", n=1))


#: runs a module at each x it is given: f and the gradient, or the error's text
_RUN = """
import fs from "fs";
const m = await import(process.argv[2]);
const xs = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
console.log(JSON.stringify(xs.map((x) => {
  try { const a = Float64Array.from(x); return [m.f(a), Array.from(m.grad(a))]; }
  catch (e) { return String(e); }
})));
"""


@pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")
@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(models().filter(lambda case: not case.vector))
def test_random_models_at_any_n_are_jaxs_at_every_n(case):
    """The differential test's random models, exported: where one takes any n, it gives JAX's
    float64 f and gradient at its least n, at 7 and at 40 (sizes none of the samples are)."""
    model = adlab.Model.from_source(case.source, name="random")
    try:
        source = adlab.export_js(model, n=max(case.n, 3))
    except adlab.ModelError:  # an operation with no translation: refused, as at one n
        return
    least = re.search(r"^// Any size: (?:n >= )?(\d+)", source, re.M)
    if least is None:
        return
    f = model.function("jax")
    ns = sorted({int(least[1]), 7, 40})
    xs = [np.asarray(model.setup(n, 1)[0], np.float64) for n in ns]
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "m.mjs").write_text(source)
        (Path(d) / "run.mjs").write_text(_RUN)
        (Path(d) / "x.json").write_text(json.dumps([x.tolist() for x in xs]))
        done = subprocess.run(["node", "run.mjs", str(Path(d) / "m.mjs"), "x.json"], cwd=d,
                              capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    for n, x, got in zip(ns, xs, json.loads(done.stdout), strict=True):
        assert not isinstance(got, str), (n, got, case.source)
        with precision_scope("float64"):
            value, grad = float(f(x)), np.asarray(jax.grad(f)(x))
        np.testing.assert_allclose(got[0], value, rtol=1e-9, atol=1e-300, err_msg=case.source)
        np.testing.assert_allclose(got[1], grad, rtol=1e-9, atol=1e-12 * np.max(np.abs(grad)),
                                   err_msg=case.source)  # fmt: skip
