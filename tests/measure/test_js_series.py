"""A JavaScript series is timed inside its runtime, and its repeats enter the sweep's
statistics as a Python series' do (``measure.runtime_watch``).

Internals: the stopwatches themselves (measure.runtime_watch: RuntimeStopwatch, stopwatch;
measure.timing: Stopwatch, interleave; the JS backend's JsTimer), which the sweep picks per
series and does not expose.
"""

from __future__ import annotations

import pytest

from adlab.engine.backends import installed
from adlab.engine.backends.js.timer import JsTimer
from adlab.measure import bench, time_call
from adlab.measure.runtime_watch import RuntimeStopwatch, stopwatch
from adlab.measure.timing import Stopwatch, interleave


class FakeTimer:
    """A runtime's timer that answers fixed seconds: the first call 1 s, repeats 2, 3, 4 ..."""

    where, device = "node", "cpu"

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.next = 2.0

    def start(self, target_s, budget_s=None):
        return {"first_s": 1.0, "warm_s": [5.0, 2.0], "loops": 7, "sample_s": 2.0,
                "env": {"js_runtime": "node"}}  # fmt: skip

    def repeats(self, k=1):
        self.asked.append(k)
        out = [self.next + 1 + i for i in range(k)]
        self.next = out[-1]
        return out


class FakeProgram:
    """A prepared program whose Python call is not what is timed."""

    def __init__(self) -> None:
        self.timer = FakeTimer()
        self.inputs = (0.0,)
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return "result"


def test_a_program_with_a_timer_is_timed_by_it_in_turn_with_others():
    p = FakeProgram()
    w = stopwatch(p, p.inputs, target_s=0.002)
    assert isinstance(w, RuntimeStopwatch)
    other = Stopwatch(lambda: None, target_s=1e-4)
    w.start()
    other.start()
    interleave([w, other], repeats=4)
    t = w.timing(compile_s=0.5)
    assert p.calls == 1  # one Python call: the inputs sent, the result kept
    assert w.result == "result"
    assert t.first_call_s == 1.0 and t.compile_s == 0.5  # the runtime's first call, apart
    assert t.loops == 7 and t.repeats == 4
    assert t.median_s == 3.5  # 2 (calibration's trial), 3, 4, 5: the runtime's seconds
    assert p.timer.asked == [1, 1, 1]  # one repeat per round of the round robin
    assert (w.where, w.env) == ("node", {"js_runtime": "node"})


def test_other_arguments_are_timed_in_python():
    p = FakeProgram()
    assert type(stopwatch(p, (1.0,))) is Stopwatch  # not the call the runtime times
    assert type(stopwatch(lambda: None)) is Stopwatch


def test_time_call_uses_the_runtimes_timer():
    p = FakeProgram()
    t = time_call(p, p.inputs, repeats=3)
    assert t.first_call_s == 1.0 and t.median_s == 3.0  # 2, 3, 4


@pytest.mark.skipif(not installed("js"), reason="Node.js is not installed")
def test_a_js_series_record_says_where_on_what_and_the_runtime(monkeypatch):
    counted: dict[int, int] = {}
    repeats = JsTimer.repeats

    def counting(self, k=1):
        out = repeats(self, k)
        counted[id(self)] = counted.get(id(self), 0) + len(out)
        return out

    monkeypatch.setattr(JsTimer, "repeats", counting)
    records = list(bench("rosenbrock", [4], ["reverse(js)", "reverse"], warn=False))
    js = [r for r in records if r.backend == "js"]
    assert [r.mode for r in js] == ["primal", "reverse"]
    for r in js:
        assert (r.where, r.device, r.skipped) == ("node", "cpu", None)
        assert r.first_call_s is not None and r.floor_s is not None
        env = r.env
        assert env["js_runtime"] == "node" and env["js_runtime_version"].startswith("v")
        assert env["timer_resolution_s"] > 0 and env["cross_origin_isolated"] is None
    # every repeat after the calibration's came from JavaScript's loop: the primal's,
    # the derivative's and the JS floor's timers
    assert len(counted) == 3
    assert all(r.repeats - 1 in counted.values() for r in js)
    jax = [r for r in records if r.backend == "jax"]
    assert all(r.where is None and r.device == "cpu" for r in jax)


@pytest.mark.skipif(not installed("tfjs"), reason="Node.js is not installed")
def test_a_tfjs_series_says_its_device_and_tfjs_in_env():
    records = list(
        bench("rosenbrock", [3], ["reverse(tfjs,wasm)"], warn=False, interval_width=None)
    )
    assert [r.mode for r in records] == ["primal", "reverse"]
    for r in records:
        assert (r.where, r.device, r.skipped) == ("node", "wasm", None)
        assert r.env["tfjs_backend"] == r.env["framework_device"] == "wasm"
        assert r.env["tfjs_version"] and r.env["js_runtime"] == "node"
