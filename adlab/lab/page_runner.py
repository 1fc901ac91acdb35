"""The Lab's page as a runtime for backend "js": an anywidget that speaks Node's protocol.

``PageRunner`` is the second transport of ``adlab.engine.backends.js.transport``
(Node is the first): on the first request it sends ``runtime.js`` and the modules it
requires (``timing.js``) to the page (``static/page_runner.js``), which runs them
unchanged with stand-ins for Node's stdin and stdout. Then each request is one JSON
line to the page, each answer one line back, as with Node; the page's own
``performance.now()`` times what it runs.

Threads. The Lab's worker thread sends and waits (``request``); the page's answers
arrive as comm messages, which the kernel handles on its main thread (``_received``
puts them on a queue). So the page answers only while the main thread is free to
handle messages: a cell that blocks (``lab.run(wait=True)``) would starve it, and the
Lab runs its JavaScript series in Node then. A page that does not answer within
``timeout`` (closed, reloaded, a runaway loop) is a ``PageLost``: the Lab says so and
runs the rest in Node, never hangs.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ..engine.backends import JAVASCRIPT, with_fact
from ..engine.backends.js.node import JsError
from ..engine.backends.js.transport import new_generation

#: seconds to wait for one answer from the page (a repeat batch takes well under a second)
TIMEOUT_S = 60.0
#: seconds for the page to take the runtime's files and answer a ping
BOOT_S = 20.0


class PageLost(RuntimeError):
    """The page did not answer in time: closed, reloaded, or busy past the timeout."""


def runtime_modules() -> dict[str, str]:
    """The runtime's files by file name (no ``.js``): ``runtime``, what it requires beside
    it (``timing``), and TF.js's and jax-js's runtimes and bundles (``runtime_tfjs``,
    ``tfjs.min``: 1.8 MB; ``runtime_jaxjs``, ``jaxjs.min``: 0.34 MB; each parsed in the page
    only when a program of its framework is loaded)."""
    backends = resources.files("adlab.engine.backends")
    files = []
    for name in with_fact("traced"):  # the JavaScript backends' folders (and static/ bundles)
        folder = backends.joinpath(name)
        if folder.is_dir():
            static = folder.joinpath("static")
            files += [*folder.iterdir(), *(static.iterdir() if static.is_dir() else ())]
    return {f.name[:-3]: f.read_text(encoding="utf-8") for f in files
            if f.is_file() and f.name.endswith(".js")}  # fmt: skip


class PageRunner(anywidget.AnyWidget):
    """Runs the emitted JavaScript in the page that shows it; ``facts`` says what that page is.

    ``attached`` is True once a page has said hello (it has rendered the widget's
    model); ``facts`` holds what it measured of itself: user agent, timer resolution,
    cross-origin isolation, the WebGL renderer (SwiftShader in headless Chromium).
    """

    _esm = Path(__file__).parent / "static" / "page_runner.js"
    shown = traitlets.Unicode("").tag(sync=True)
    facts = traitlets.Dict(help="what the page measured of itself (its hello)")

    where = "browser"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._answers: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._seq = 0
        self._booted_for: int | None = None  # the page generation the runtime was sent to
        self._forgotten: list[tuple[int, int]] = []
        self.generation = new_generation()  # a new one at each hello: a page reloaded
        self.version: str | None = None
        self.answered = 0  # requests the page has answered: the runs it took
        self.on_msg(self._received)

    # ------------------------------------------------------------ the page
    @property
    def attached(self) -> bool:
        return bool(self.facts)

    def _received(self, _widget: Any, content: dict, _buffers: Any) -> None:
        """On the kernel's main thread: a message from the page."""
        op = content.get("op")
        if op == "hello":  # a page (re)started: what it held is gone
            self.generation = new_generation()
            self.facts = dict(content.get("facts") or {})
            self.version = self.facts.get("user_agent")
        elif op in ("line", "booted"):
            self._answers.put(content)

    # ----------------------------------------------------- the transport
    def ensure(self) -> int:
        """Send the runtime to the page where it has not had it yet; the page's generation."""
        with self._lock:
            self._boot()
            return self.generation

    def forget(self, generation: int, program: int) -> None:
        self._forgotten.append((generation, program))

    def request(self, msg: dict, timeout: float = TIMEOUT_S) -> dict:
        """Send ``msg`` to the page's runtime and return its answer (``Node.request``'s terms).

        Raises:
            PageLost: no page attached, or no answer within ``timeout``.
            JsError: the runtime raised.
        """
        with self._lock:
            self._boot()
            for generation, program in self._drops():
                if generation == self.generation:
                    self._send_line({"op": "drop", "id": program, "seq": 0})
            self._seq += 1
            seq = self._seq
            self._send_line({**msg, "seq": seq})
            answer = self._await(lambda a: a.get("op") == "line" and _seq_of(a) == seq, timeout)
        out = json.loads(answer["line"])
        self.answered += 1
        if "error" in out:
            raise JsError(out["error"], out.get("kind", JAVASCRIPT))
        return out

    def _drops(self) -> list[tuple[int, int]]:
        out = []
        while self._forgotten:
            out.append(self._forgotten.pop())
        return out

    def _boot(self) -> None:
        if not self.attached:
            raise PageLost("no page has shown the Lab: the JavaScript series run in Node")
        if self._booted_for == self.generation:
            return
        self._seq += 1
        seq = self._seq
        self.send({"op": "boot", "modules": runtime_modules(), "main": "runtime", "seq": seq})
        answer = self._await(lambda a: a.get("op") == "booted" and a.get("seq") == seq, BOOT_S)
        if answer.get("error"):
            raise PageLost(f"the page could not start adlab's runtime: {answer['error']}")
        self._booted_for = self.generation

    def _send_line(self, msg: dict) -> None:
        self.send({"op": "line", "line": json.dumps(msg)})

    def _await(self, wanted: Any, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                answer = self._answers.get(timeout=max(left, 0.0))
            except queue.Empty:
                self._booted_for = None  # whatever the page holds is not trusted now
                raise PageLost(f"the page did not answer within {timeout:.0f} s (closed, "
                               "reloaded, or the kernel busy with a cell)") from None  # fmt: skip
            if wanted(answer):
                return answer
            # an answer to an earlier, timed-out request: dropped


def _seq_of(answer: dict) -> int | None:
    try:
        return json.loads(answer["line"]).get("seq")
    except (ValueError, AttributeError):
        return None


def describe(facts: dict) -> str:
    """One line on where the JavaScript series run, for the Lab's panel."""
    if not facts:
        return "JavaScript series run in Node (no page attached)."
    agent = facts.get("user_agent", "")
    browser = _browser_name(agent)
    resolution = facts.get("timer_resolution_ms")
    isolated = facts.get("cross_origin_isolated")
    text = f"JavaScript series run in this page ({browser}"
    if resolution is not None:
        text += f"; timer ticks {resolution:g} ms"
    text += ", cross-origin isolated" if isolated else ", not cross-origin isolated"
    text += ")."
    gl = facts.get("webgl") or {}
    if not gl.get("available"):
        text += " WebGL: none in this page."
    elif gl.get("software"):
        text += (f" WebGL is software ({gl.get('renderer')}): its figures say nothing "
                 "about a GPU.")  # fmt: skip
    else:
        text += f" WebGL: {gl.get('renderer')}."
    return text


def _browser_name(agent: str) -> str:
    for name in ("HeadlessChrome", "Chromium", "Edg", "Chrome", "Firefox", "Safari"):
        i = agent.find(name + "/")
        if i >= 0:
            return agent[i:].split(" ")[0]
    return agent or "a browser"


class PageOrNode:
    """The page while it answers, then Node for the rest of the run (``note`` says so once).

    What the Lab's worker runs in (``transport.running_in``): a page lost mid-run
    (closed, reloaded, past the timeout) is a fallback, never a hang or a failed run.
    """

    def __init__(self, page: PageRunner, note: Any) -> None:
        from ..engine.backends.js.node import node

        self.page, self.node, self.note = page, node(), note
        self.lost: str | None = None

    @property
    def active(self) -> Any:
        return self.node if self.lost else self.page

    @property
    def where(self) -> str:
        return "node" if self.lost else "browser"

    @property
    def generation(self) -> int:
        return self.active.generation

    @property
    def version(self) -> str | None:
        return self.active.version

    def _fall_back(self, exc: PageLost) -> None:
        self.lost = str(exc)
        self.note(f"Note: {exc}; the JavaScript series go on in Node.")

    def ensure(self) -> int:
        if not self.lost:
            try:
                return self.page.ensure()
            except PageLost as exc:
                self._fall_back(exc)
        return self.node.ensure()

    def request(self, msg: dict, timeout: float = TIMEOUT_S) -> dict:
        if not self.lost:
            try:
                return self.page.request(msg, timeout)
            except PageLost as exc:
                self._fall_back(exc)
        return self.node.request(msg)

    def forget(self, generation: int, program: int) -> None:
        (self.page if generation == self.page.generation else self.node).forget(generation, program)
