"""The Lab's page as a runtime for JavaScript series, with a stand-in page.

A real page is Chromium running ``static/page_runner.js`` (tests/browser/test_lab_javascript.py).
Here the page is played by Node running the same ``runtime.js``: each line the runner sends is
answered from another thread, as the kernel's main thread hands the page's messages over. So
what is tested is the runner's side: requests in Node's protocol, the routing of a thread's
programs (``running_in``), the Lab's run in the page, and a page that stops answering.

Internals: the page runner and what it stands in for: lab.page_runner (PageRunner,
PageOrNode, PageLost, describe), the JS backend's transport (where its programs run) and its
Node process (js.node: Node, JsError, node_path), which the stand-in page answers from.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import adlab
from adlab.catalog import resolve_model
from adlab.engine.backends import FACTS
from adlab.engine.backends.js import transport
from adlab.engine.backends.js.node import JsError, Node, node_path
from adlab.lab import page_runner
from adlab.lab.page_runner import PageLost, PageOrNode, PageRunner, describe
from adlab.measure import parse_variant

pytestmark = pytest.mark.skipif(node_path() is None, reason="backend 'js' needs Node")

SWIFTSHADER = {
    "user_agent": "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0 Safari/537.36",
    "cross_origin_isolated": False,
    "timer_resolution_ms": 0.1,
    "webgl": {"available": True, "software": True,
              "renderer": "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)))"},
}  # fmt: skip


class StandInPage:
    """What the page does with the runner's messages, done by a Node process."""

    def __init__(self, runner: PageRunner, answers: bool = True) -> None:
        self.runner, self.answers = runner, answers
        self.node = Node()
        self.ops: list[str] = []
        runner.send = self.receive  # the widget's messages to the front end come here
        runner._received(runner, {"op": "hello", "facts": SWIFTSHADER}, None)

    def receive(self, content: dict, buffers=None) -> None:
        if self.answers:
            threading.Thread(target=self._answer, args=(content,), daemon=True).start()

    def _answer(self, content: dict) -> None:
        if content["op"] == "boot":
            assert {"runtime", "timing"} <= set(content["modules"])
            reply = {"op": "booted", "seq": content["seq"]}
        else:
            msg = json.loads(content["line"])
            self.ops.append(msg["op"])
            seq = msg.pop("seq")
            try:
                out = self.node.request(msg)
            except JsError as exc:
                out = {"error": str(exc), "kind": exc.kind}
            out["seq"] = seq
            reply = {"op": "line", "line": json.dumps(out)}
        self.runner._received(self.runner, reply, None)  # the kernel's main thread, in Jupyter

    def close(self) -> None:
        self.node.close()


@pytest.fixture
def page():
    runner = PageRunner()
    stand_in = StandInPage(runner)
    yield stand_in
    stand_in.close()


def gradient(backend: str = "js", n: int = 10) -> np.ndarray:
    m = resolve_model("normal_logpdf")
    return np.asarray(adlab.derivative(m, *m.setup(n, 0), mode="reverse", backend=backend))


def test_programs_run_in_the_page_only_while_routed_there(page):
    want = gradient("jax")
    with transport.running_in(page.runner):
        assert transport.where() == "browser"
        got = gradient()
    assert {"load", "call"} <= set(page.ops), page.ops
    assert page.runner.answered >= 2
    np.testing.assert_allclose(got, want, rtol=1e-12)
    seen = len(page.ops)
    assert transport.where() == "node"
    np.testing.assert_allclose(gradient(), want, rtol=1e-12)  # Node again: the page hears nothing
    assert len(page.ops) == seen


def test_without_a_page_the_runner_refuses_at_once():
    with pytest.raises(PageLost, match="no page"):
        PageRunner().request({"op": "ping"})


def test_a_page_that_stops_answering_hands_over_to_node(monkeypatch):
    monkeypatch.setattr(page_runner, "BOOT_S", 0.5)
    runner = PageRunner()
    silent = StandInPage(runner, answers=False)
    notes: list[str] = []
    try:
        with transport.running_in(PageOrNode(runner, notes.append)):
            got = gradient(n=7)
    finally:
        silent.close()
    np.testing.assert_allclose(got, gradient("jax", n=7), rtol=1e-12)
    assert len(notes) == 1 and "did not answer" in notes[0] and "Node" in notes[0], notes


def test_the_lab_runs_its_javascript_series_in_its_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lab = adlab.Lab(n=10, sizes=[10], modes=["reverse"], frameworks=["jax", "js"], steps=False,
                    budget_s=5.0)  # fmt: skip
    lab.state.page = page.runner
    lab.run()  # as the Run button does: a cell that waits would keep Node (below)
    assert lab.wait(timeout=240)
    js = [r for r in lab.results if r.backend == "js"]
    assert js and all(r.where == "browser" for r in js), [(r.label, r.where) for r in js]
    assert "run in this page" in lab.status and "software" in lab.status, lab.status
    assert "call" in page.ops

    seen = len(page.ops)
    lab.run(wait=True, timeout=240)  # the kernel is busy with this cell: the page cannot answer
    js = [r for r in lab.results if r.backend == "js"]
    assert js and all(r.where == "node" for r in js), [(r.label, r.where) for r in js]
    assert len(page.ops) == seen


def test_the_lab_says_where_javascript_runs_and_what_webgl_is():
    assert "Node" in describe({})
    text = describe(SWIFTSHADER)
    assert "HeadlessChrome/156" in text and "0.1 ms" in text, text
    assert "not cross-origin isolated" in text
    assert "software" in text and "SwiftShader" in text and "nothing about a GPU" in text


def test_the_tfjs_device_choice_names_the_variants():
    lab = adlab.Lab(n=10, modes=["reverse"], frameworks=["js", "tfjs"], steps=False)
    assert lab.state.variants == ["reverse(js)", "reverse(tfjs)"]
    lab.device_toggle.value = "wasm"
    assert lab.state.variants == ["reverse(js)", "reverse(tfjs,wasm)"]
    lab = adlab.Lab(n=10, modes=["reverse"], frameworks=["tfjs"], steps=False, device="webgl")
    assert lab.device_toggle.value == "webgl" and "device" not in lab.state.options
    assert lab.state.variants == ["reverse(tfjs,webgl)"]


def test_the_jaxjs_device_choice_names_the_variants():
    """jax-js's toggle offers its facts' devices; a GPU one (float32 only) in a float64
    sweep runs in float32, as TF.js does, and its label says so."""
    lab = adlab.Lab(n=10, modes=["reverse"], frameworks=["tfjs", "jaxjs"], steps=False)
    assert tuple(lab.jaxjs_device_toggle.options) == FACTS["jaxjs"].devices
    assert lab.state.variants == ["reverse(tfjs)", "reverse(jaxjs)"]
    lab.jaxjs_device_toggle.value = "webgpu"
    assert lab.state.variants == ["reverse(tfjs)", "reverse(jaxjs,webgpu)"]
    (v,) = [parse_variant(lab.state.variants[1]).resolve(jit=None, precision="float64",
                                                         backend="jax", scheme="central")]
    assert (v.device, v.precision, v.label) == ("webgpu", "float32",
                                                "reverse(jaxjs,float32,webgpu)")  # fmt: skip
    lab = adlab.Lab(n=10, modes=["reverse"], frameworks=["jaxjs"], steps=False,
                    jaxjs_device="webgl")  # fmt: skip
    assert lab.jaxjs_device_toggle.value == "webgl" and "jaxjs_device" not in lab.state.options


def test_the_jaxjs_tick_runs_reverse_jaxjs_in_the_page(page):
    """jax-js's box names ``reverse(jaxjs)``; the page is sent jax-js's runtime and bundle,
    and its programs run there as js's do (float32, jax-js's default); its GPU backends,
    a page's only, refuse float64 before jax-js would at its first kernel."""
    lab = adlab.Lab(n=10, modes=["reverse"], frameworks=["jaxjs"], steps=False)
    assert lab.state.variants == ["reverse(jaxjs)"]
    assert {"runtime_jaxjs", "jaxjs.min"} <= set(page_runner.runtime_modules())
    with transport.running_in(page.runner):
        got = gradient("jaxjs")
        m = resolve_model("normal_logpdf")
        with pytest.raises(ValueError, match="webgpu backend computes in float32 only"):
            adlab.derivative(m, *m.setup(4), backend="jaxjs", device="webgpu",
                             precision="float64")  # fmt: skip
    assert "load" in page.ops
    np.testing.assert_allclose(got, gradient("jax"), rtol=1e-5)
