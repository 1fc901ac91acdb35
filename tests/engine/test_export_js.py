"""``adlab export`` / ``adlab.export_js``: the module, run in Node, gives JAX's float64 f and
gradient, at any n where the model traces at a symbolic n; a wrong length is a clear Error;
what cannot be exported is refused at its line.

The page-side check (the module alone in Chromium) is tests/browser/test_export_page.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import jax
import numpy as np
import pytest

import adlab
from adlab.cli import main
from adlab.engine.backends import installed
from adlab.engine.model import precision_scope

pytestmark = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

#: (file, model, mode, n, other): a model with data arrays (a dict), one with a loop, one
#: whose loop runs n - 1 steps (lstm: at an odd and an even count), all at any n (called at n
#: and at ``other``); forward mode, built for n alone (``--fixed``)
EXPORTS = [("g9.mjs", "g9_graphics", "reverse", 6, 9), ("ode.mjs", "ode", "reverse", 5, 2),
           ("lstm.mjs", "lstm", "reverse", 9, 8),
           ("rosen.mjs", "rosenbrock", "forward", 4, None)]  # fmt: skip

#: imports each module, calls it at the inputs given, and prints what it answered
RUN = """
const cases = JSON.parse(process.argv[2]);
const out = {};
for (const [file, leaves, v, others] of cases) {
  const m = await import(new URL(file, "file://" + process.cwd() + "/").href);
  const a = leaves.map((l) => Float64Array.from(l));
  const g = m.grad(...a);
  const unchanged = a.every((x, k) => x.every((e, i) => e === leaves[k][i]));  // inputs read only
  const kept = Array.from(g);
  const [value, g2] = m.valueAndGrad(...a.map((x) => x.map((e) => e * 2)));  // other inputs
  const again = m.grad(...a);
  const r = { f: m.f(...a), grad: kept, kept: Array.from(g), again: Array.from(again),
              other: [value, Array.from(g2)], fresh: g !== again, unchanged };
  if (m.hvp) r.hvp = Array.from(m.hvp(a[0], Float64Array.from(v), ...a.slice(1)));
  if (others) {  // another n, then n again: each call at its own n
    const b = others.map((l) => Float64Array.from(l));
    r.otherN = [m.f(...b), Array.from(m.grad(...b))];
    r.back = Array.from(m.grad(...a));
    try { m.grad(new Float64Array(1), ...a.slice(1)); } catch (e) { r.small = e.message; }
  }
  try { m.grad(new Float64Array(a[0].length + 1), ...a.slice(1)); }
  catch (e) { r.error = e.message; }
  out[file] = r;
}
console.log(JSON.stringify(out));
"""


def reference(name: str, n: int, scale: float = 1.0) -> tuple[tuple, float, np.ndarray, Any]:
    """The model's arguments at n (scaled), JAX's float64 f and gradient there, and f."""
    model = adlab.load_model(name)
    args = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64) * scale, model.setup(n))
    f = model.function("jax")
    with precision_scope("float64"):
        value = float(f(*args))
    return args, value, adlab.reference(model, *args).value, f


def close(got, want) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-300)


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """The three modules written by the command line (one as its own process, as a user
    runs it), and what Node answered from them."""
    d = tmp_path_factory.mktemp("export")
    first, *rest = EXPORTS
    file, name, mode, n, _ = first
    subprocess.run([sys.executable, "-m", "adlab", "export", "--model", name, "--mode", mode,
                    "--n", str(n), "--hvp", "--dts", "-o", str(d / file)],
                   check=True, capture_output=True, text=True)  # fmt: skip
    for file, name, mode, n, other in rest:
        fixed = [] if other else ["--fixed"]
        assert main(["export", "--model", name, "--mode", mode, "--n", str(n), *fixed,
                     "-o", str(d / file)]) == 0  # fmt: skip
    cases = []
    for file, name, _, n, other in EXPORTS:
        leaves = [[np.ravel(a).tolist() for a in jax.tree_util.tree_leaves(reference(name, k)[0])]
                  for k in (n, other or n)]  # fmt: skip
        cases.append([file, leaves[0], np.linspace(-1.0, 1.0, n).tolist(),
                      leaves[1] if other else None])  # fmt: skip
    (d / "run.mjs").write_text(RUN)
    done = subprocess.run(["node", "run.mjs", json.dumps(cases)], cwd=d, check=True,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return d, json.loads(done.stdout)


@pytest.mark.parametrize("file,name,mode,n,other", EXPORTS)
def test_the_module_gives_jaxs_float64_f_and_gradient_in_node(answered, file, name, mode, n,
                                                              other):  # fmt: skip
    d, out = answered
    got = out[file]
    args, value, grad, f = reference(name, n)
    close(got["f"], value)
    close(got["grad"], grad)
    # a later call neither overwrites an array handed out nor hands out the same one
    assert got["kept"] == got["grad"] and got["again"] == got["grad"] and got["fresh"]
    assert got["unchanged"]  # the module never writes into the arrays it is given
    _, value2, grad2, _ = reference(name, n, 2.0)
    close(got["other"][0], value2)
    close(got["other"][1], grad2)
    if other:  # the same module at another n, then at n again
        _, value3, grad3, _ = reference(name, other)
        close(got["otherN"][0], value3)
        close(got["otherN"][1], grad3)
        close(got["back"], grad)
    source = (d / file).read_text()
    assert source.splitlines()[0] == f"// adlab export --model {name} --mode {mode} --n {n}" + (
        " --hvp" if "hvp" in got else "" if other else " --fixed")  # fmt: skip
    assert ("// Any size: n >= " in source) == bool(other)
    assert "import " not in source.replace("No imports", "")
    assert "// line " in source  # the model's lines, above the code they became


def test_hvp_and_declarations_are_written_when_asked(answered):
    d, out = answered
    args, _, _, f = reference("g9_graphics", 6)
    v = np.linspace(-1.0, 1.0, 6)
    with precision_scope("float64"):
        hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(lambda y: f(y, *args[1:])), (x,), (v,))[1])
        want = hvp(args[0], v)
    close(out["g9.mjs"]["hvp"], want)
    source = (d / "g9.mjs").read_text()  # the model's lines, as comments above their code
    assert "// line 20: heading = np.cumsum(theta)" in source and " (backward): " in source
    assert "/* line" not in source  # no placeholder of a comment left
    dts = (d / "g9.d.ts").read_text()
    assert "export declare function valueAndGrad(theta:" in dts
    assert "export declare function hvp(theta:" in dts
    assert "hvp" not in out["ode.mjs"]


def test_a_wrong_length_is_an_error_naming_the_shape(answered):
    _, out = answered
    # built for n: x's length is n's
    assert out["rosen.mjs"]["error"] == "grad: x must have 4 numbers (shape [4]), got 5"
    # any n: read from x's length, which the data's must then match, and at least the least
    assert out["g9.mjs"]["error"] == ("grad: data['lengths'] must have 7 numbers (shape [7]), "
                                      "got 6")  # fmt: skip
    assert "error" not in out["ode.mjs"]  # x of another length: another n
    assert out["ode.mjs"]["small"] == ("grad: x must have n numbers (shape [n]) for a whole "
                                       "n >= 2, got 1")  # fmt: skip


def test_complex_step_and_an_untranslated_operation_are_refused_at_export():
    with pytest.raises(adlab.ModelError, match="complex step needs complex arithmetic") as e:
        adlab.export_js("rosenbrock", mode="complex-step", n=3)
    assert "'reverse' or 'forward'" in str(e.value)
    with pytest.raises(ValueError, match="mode must be 'reverse' or 'forward'.*'backward'"):
        adlab.export_js("rosenbrock", mode="backward", n=3)
    source = ("def setup(n, rng):\n    return (rng.normal(size=n),)\n\n"
              "def f(x):\n    y = np.sort(x)\n    return np.sum(y ** 2)\n")  # fmt: skip
    model = adlab.Model.from_source(source, name="sorted")
    with pytest.raises(adlab.ModelError, match="'sort'.*no JavaScript translation") as e:
        adlab.export_js(model, n=4)
    assert e.value.lineno == 5 and "np.sort(x)" in e.value.line
    # the advice is an export's: no other backend to try in a web page
    assert "cannot export this model as JavaScript" in str(e.value)
    assert "still differentiate it there" in e.value.hint
