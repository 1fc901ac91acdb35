"""timing.js, the loop that times JavaScript series (in Node and in the Lab's page).

Its rules are checked on fake clocks, so nothing here depends on the machine's speed:
a call's cost is whatever the fake clock is advanced by. Then ``device=`` and ``where=``
as prepare and the variants take them.

Internals: runs timing.js in Node on fake clocks, so it asks the JS backend where Node is
(js.node.node_path); no public function runs the timing loop alone.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources

import numpy as np
import pytest

import adlab
from adlab._vocab import BACKENDS, DEVICES
from adlab.catalog import load_model
from adlab.engine.backends import installed
from adlab.engine.backends.js.node import node_path
from adlab.measure import parse_variant

needs_node = pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")

TIMING_JS = str(resources.files("adlab.engine.backends.js").joinpath("timing.js"))

# Each scenario: a fake clock (ms, as performance.now()) that calls advance, a Watch on
# it, its start and 3 repeats. Printed as one JSON object.
_SCENARIOS = r"""
const T = require(process.argv[1]);
const out = {};
function run(name, cost, options = {}) {
  let now = 0, calls = 0;
  const tick = options.tickMs || 0;
  // each reading moves the clock by 1 ns (so it never stands still), a call by its cost
  const clock = () => { now += 1e-6; return tick ? Math.floor(now / tick) * tick : now; };
  const call = () => { calls++; now += cost(calls); return calls; };
  const w = new T.Watch(call, { clock, targetS: 0.002, ...options.watch });
  const started = w.start();
  out[name] = { ...started, repeats: w.repeats(3), calls };
}
// 10 us a call, the first 5 ms (a compile)
run("steady", (k) => (k === 1 ? 5 : 0.01));
// V8's tiers: 8 us a call for the first 500 calls, 0.1 us after
run("tiered", (k) => (k <= 500 ? 0.008 : 0.0001));
// a page without cross-origin isolation: the clock ticks at 0.1 ms; calls of 1 us
run("coarse", () => 0.001, { tickMs: 0.1 });
// 50 ms a call with 0.1 s of budget: one call per repeat, and it ends
run("slow", () => 50, { watch: { budgetS: 0.1 } });
out.series = T.series(T.trivial(), 4, { targetS: 0.0005 });
out.describe = T.describe();
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def scenarios():
    if node_path() is None:
        pytest.skip("Node.js is not installed")
    done = subprocess.run([node_path(), "-e", _SCENARIOS, TIMING_JS], capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    return json.loads(done.stdout)


@needs_node
def test_the_first_call_is_kept_apart_and_repeats_last_the_target(scenarios):
    s = scenarios["steady"]
    assert s["first_s"] == pytest.approx(0.005, rel=1e-3)
    for sample in [s["sample_s"], *s["repeats"]]:  # the compile is in none of them
        assert sample == pytest.approx(1e-5, rel=1e-3)
    assert 0.7 * 0.002 <= s["loops"] * 1e-5 <= 1.5 * 0.002


@needs_node
def test_warm_up_waits_for_the_calls_after_v8s_tiers(scenarios):
    """Two slow calls alike do not end the warm-up: the repeats are of the fast tier,
    and the loop count is the fast tier's (an early count would give 20 us repeats)."""
    s = scenarios["tiered"]
    for sample in [s["sample_s"], *s["repeats"]]:
        assert sample == pytest.approx(1e-7, rel=1e-3)
    assert s["loops"] * 1e-7 >= 0.7 * 0.002


@needs_node
def test_a_coarse_clock_times_loops_of_many_ticks(scenarios):
    s = scenarios["coarse"]
    assert s["resolution_s"] == pytest.approx(1e-4, rel=1e-6)
    # each repeat spans >= 14 ticks of 0.1 ms: a tick's error is under 10%
    assert s["loops"] * 1e-6 >= 0.7 * 20 * 1e-4
    for sample in s["repeats"]:
        assert sample == pytest.approx(1e-6, rel=0.1)


@needs_node
def test_a_call_over_the_budget_ends_with_one_call_a_repeat(scenarios):
    s = scenarios["slow"]
    assert s["loops"] == 1
    assert s["sample_s"] == pytest.approx(0.05, rel=1e-3)
    assert s["calls"] <= 1 + 3 + 3  # first, at most 3 warm-ups in 0.1 s, 3 repeats


@needs_node
def test_series_and_describe_in_node(scenarios):
    s = scenarios["series"]
    assert len(s["samples_s"]) == 4 and s["samples_s"][0] == s["sample_s"]
    assert all(x > 0 for x in s["samples_s"])
    d = scenarios["describe"]
    assert d["runtime"] == "node" and d["runtime_version"].startswith("v")
    assert d["cross_origin_isolated"] is None  # no page
    assert 0 < d["timer_resolution_s"] < 1e-3


# ------------------------------------------------------------ device= and where=
@pytest.mark.parametrize("device", DEVICES)
def test_variants_read_devices_and_where(device):
    v = parse_variant(f"reverse(js,{device})")
    assert (v.backend, v.device) == ("js", device)
    assert parse_variant(v.spelled()) == v
    w = parse_variant("numeric[g9](js,browser)")
    assert (w.scheme, w.where) == ("g9", "browser")
    assert w.spelled() == "numeric[g9](js,browser)"


@pytest.mark.skipif("tfjs" not in BACKENDS, reason="backend 'tfjs' is not in BACKENDS yet")
def test_variants_read_tfjs_devices():
    v = parse_variant("reverse(tfjs,wasm)")
    assert (v.backend, v.device) == ("tfjs", "wasm")


def test_a_device_or_where_on_a_python_framework_is_refused():
    with pytest.raises(ValueError, match="backend='tfjs'"):
        parse_variant("reverse(wasm)").resolve(jit=None, precision="float64", backend="jax",
                                               scheme="central")  # fmt: skip
    with pytest.raises(ValueError, match="JavaScript"):
        parse_variant("reverse(node)").resolve(jit=None, precision="float64", backend="jax",
                                               scheme="central")  # fmt: skip
    m = load_model("rosenbrock")
    args = m.setup(3)
    with pytest.raises(ValueError, match="leave device unset"):
        adlab.prepare(m, *args, device="wasm")
    with pytest.raises(ValueError, match="leave where unset"):
        adlab.prepare(m, *args, where="node")
    with pytest.raises(ValueError, match="where must be one of"):
        adlab.prepare(m, *args, where="gpu")


@needs_node
def test_js_runs_on_cpu_and_in_node_where_no_page_is_attached():
    m = load_model("rosenbrock")
    args = m.setup(3)
    with pytest.raises(ValueError, match="'cpu' only"):
        adlab.prepare(m, *args, backend="js", device="webgl")
    p = adlab.prepare(m, *args, backend="js", where="browser", device="cpu")
    assert (p.where, p.device) == ("node", "cpu")  # no page: Node, and it says so
    assert p.timer is not None
    q = adlab.prepare(m, *args)
    assert (q.where, q.timer) == (None, None)
    value = adlab.derivative(m, *args, backend="js", device="cpu", where="node")
    assert np.allclose(value, adlab.derivative(m, *args), rtol=1e-12)
