"""The one thread that does all of the Lab's JAX work, in this process.

Every Lab shares it, so two Labs never measure at once (each would time the
other's work), and runs are done in the order they were started.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..engine.model.userline import speaking_to


class Worker:
    """One daemon thread running submitted calls in order (a one-thread executor).

    A daemon, unlike ``ThreadPoolExecutor``'s threads, which the interpreter
    joins at exit: a kernel shut down mid-sweep would first wait for the
    measurement in flight, a compile at n = 10,000 perhaps.
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="adlab-lab-worker", daemon=True)
        self.thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        self._calls.put((future, fn, args))
        return future

    def _loop(self) -> None:
        with speaking_to("lab"):  # a model error's advice names the Lab's controls
            while True:
                future, fn, args = self._calls.get()
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # kept in the future, as an executor does
                    future.set_exception(exc)


_worker: Worker | None = None
_worker_lock = threading.Lock()


def worker() -> Worker:
    """The one thread that does all of the Lab's JAX work, in this process."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = Worker()
        return _worker
