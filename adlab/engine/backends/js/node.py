"""The one Node process that runs the emitted JavaScript: JSON lines over stdio.

Started on first use and kept for the life of the Python process (``atexit``
closes its stdin, and ``runtime.js`` exits when stdin closes, also when Python
dies without running ``atexit``). Every answer is awaited with a timeout, so a
crashed or stuck Node is an error that says so, never a hang; the next request
starts a fresh process (``generation`` tells programs to load themselves again). A Node
that died between requests is that error too, at the next request: never a silent restart.
"""

from __future__ import annotations

import atexit
import base64
import collections
import contextlib
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from importlib import resources
from typing import Any

import numpy as np

#: seconds to wait for one answer: a derivative at the catalog's sizes takes far less;
#: past it Node is stopped (its loop cannot be interrupted from outside)
TIMEOUT_S = 300.0
#: seconds for Node to start and answer its first ping
START_S = 30.0
#: the wait in force, and why, where a caller set its own (``answers_within``)
_waits: list[tuple[float, str]] = []


@contextlib.contextmanager
def answers_within(seconds: float, why: str) -> Iterator[None]:
    """Within the block, a request Node does not answer in ``seconds`` stops it (NodeCrashed,
    its message ending with ``why``: whose limit it was, and what to do)."""
    _waits.append((seconds, why))
    try:
        yield
    finally:
        _waits.pop()


class NodeCrashed(RuntimeError):
    """Node ended, or stopped answering, while adlab waited for it."""


class JsError(RuntimeError):
    """The JavaScript runtime raised (``kind`` says which of its errors)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def encode(a: Any) -> str:
    """An array as base64 of little-endian float64 (what ``runtime.js`` decodes)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8").copy()


def node_path() -> str | None:
    """The ``node`` executable, or None where Node is not installed."""
    return shutil.which("node")


class Node:
    """A Node child process speaking JSON lines; thread-safe (one request at a time)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = threading.Lock()
        self._seq = 0
        self.generation = 0  # bumped at each start: programs loaded before are gone
        self.version: str | None = None
        self._forgotten: list[tuple[int, int]] = []  # (generation, program id) to drop

    # ------------------------------------------------------------ process
    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def _running(self) -> None:
        """Start Node where none runs (first use, or closed after a crash, a timeout).

        Raises:
            NodeCrashed: the process died since its last answer (killed, out of memory);
                closed, so the next request starts a fresh one.
        """
        # A process found dead is reported, never restarted in silence: whether a death is
        # seen here or mid-request (a broken pipe, no answer) depends only on how soon the
        # kernel has reaped it, so a silent restart would make one crash an error or not
        # by a few milliseconds' timing (a GC pause, a busy CPU).
        if self._proc is not None and self._proc.poll() is not None:
            raise self._crashed("after its last answer")
        if self._proc is None:
            self._start()

    def _start(self) -> None:
        exe = node_path()
        if exe is None:
            raise RuntimeError("backend='js' needs Node.js, which is not installed here: "
                               "apt-get install -y nodejs (or see https://nodejs.org)")  # fmt: skip
        script = resources.files(__package__).joinpath("runtime.js")
        self._lines = queue.Queue()  # a new queue: the old reader may still be draining
        self._stderr.clear()
        self._proc = subprocess.Popen(
            [exe, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1,
        )  # fmt: skip
        proc, lines, tail = self._proc, self._lines, self._stderr
        threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True).start()
        threading.Thread(target=_pump, args=(proc.stderr, _keep(tail)), daemon=True).start()
        self.generation += 1
        self.version = self._ask({"op": "ping"}, START_S)["pong"]

    def close(self) -> None:
        """End the process: stdin closed (it exits), killed if it has not within 2 s."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=2)
        except Exception:  # noqa: BLE001 - already gone, or stuck: killed below
            pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def ensure(self) -> int:
        """Start Node where it is not running; the generation of the running process."""
        with self._lock:
            self._running()
            return self.generation

    # ---------------------------------------------------------- requests
    def request(self, msg: dict, timeout: float | None = None) -> dict:
        """Send ``msg``, return Node's answer; starts Node first where it is not running.

        Raises:
            NodeCrashed: Node ended or did not answer within ``timeout`` (then stopped).
            JsError: the runtime raised.
        """
        why = ""
        if timeout is None:
            timeout, why = _waits[-1] if _waits else (TIMEOUT_S, "")
        with self._lock:
            self._running()
            return self._ask(msg, timeout, why)

    def forget(self, generation: int, program: int) -> None:
        """Drop a program Python no longer holds, with the next request (safe to call
        from a finalizer: it takes no lock and sends nothing itself)."""
        self._forgotten.append((generation, program))

    def _ask(self, msg: dict, timeout: float, why: str = "") -> dict:
        self._seq += 1
        msg = {**msg, "seq": self._seq}
        drops = []
        while self._forgotten:
            generation, program = self._forgotten.pop()
            if generation == self.generation:  # one loaded before a restart is gone already
                drops.append(json.dumps({"op": "drop", "id": program, "seq": 0}) + "\n")
        try:
            for line in drops:  # answered with seq 0: never the answer awaited below
                self._proc.stdin.write(line)
            self._proc.stdin.write(json.dumps(msg) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed("while adlab sent it a request") from None
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                self.close()  # a stuck loop cannot be interrupted: stopped, restarted on next use
                raise NodeCrashed(f"Node did not answer within {timeout:.3g} s and was "
                                  f"stopped{why}{self._tail()}") from None  # fmt: skip
            if line is None:
                raise self._crashed("while adlab waited for its answer")
            try:
                answer = json.loads(line)
            except ValueError:  # not an answer (runtime.js writes nothing else): noise
                self._stderr.append(line)
                continue
            if answer.get("seq") == self._seq:
                break  # an answer to an earlier, timed-out request is dropped
        if "error" in answer:
            raise JsError(answer["error"], answer.get("kind", "js"))
        return answer

    def _crashed(self, when: str) -> NodeCrashed:
        proc = self._proc
        code = None if proc is None else proc.poll()
        if proc is not None and code is None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        how = (f"was killed by signal {-code}" if code is not None and code < 0 else
               f"exited with code {code}" if code is not None else "stopped answering")  # fmt: skip
        self.close()
        return NodeCrashed(f"Node crashed: it {how} {when}; the next call starts it "
                           f"again{self._tail()}")  # fmt: skip

    def _tail(self) -> str:
        text = "".join(self._stderr).strip()
        return f". Node's stderr ends:\n{text[-2000:]}" if text else ""


def _pump(stream, put) -> None:
    """Hand each line of ``stream`` to ``put``; None at its end, where it is closed (by
    this thread: closing it from another would wait for this one's read)."""
    try:
        for line in stream:
            put(line)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
    put(None)


def _keep(tail: collections.deque):
    return lambda line: line is not None and tail.append(line)


_NODE: Node | None = None
_NODE_LOCK = threading.Lock()


def node() -> Node:
    """The process-wide Node (started by its first request), closed at exit."""
    global _NODE
    with _NODE_LOCK:
        if _NODE is None:
            _NODE = Node()
            atexit.register(_NODE.close)
        return _NODE
