"""Where the emitted JavaScript runs: Node (``node.py``), or a page that speaks its protocol.

A transport is anything with ``Node``'s requests: ``request(msg, timeout)``,
``ensure()`` (the generation of the runtime now running: programs loaded in an
older one are gone), ``forget(generation, program)``, and ``where`` ("node" or
"browser"). The Lab's page runner (``adlab.lab.page_runner``) is the second one:
the same ``runtime.js`` run in the page that shows the Lab.

``running_in(transport)`` routes this thread's programs there (the Lab's worker
thread does so for a run while its page is attached); elsewhere they run in Node.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from .node import Node, node


class Transport(Protocol):
    """What a runtime for the emitted programs answers (``Node`` is one)."""

    generation: int
    version: str | None

    def request(self, msg: dict, timeout: float = ...) -> dict: ...

    def ensure(self) -> int: ...

    def forget(self, generation: int, program: int) -> None: ...


#: generations handed to runtimes other than Node, far from Node's own 1, 2, 3...: a
#: program loaded in one runtime is never taken as loaded in another
_generations = itertools.count(1_000_001)
_local = threading.local()


def new_generation() -> int:
    return next(_generations)


def current() -> Transport | Node:
    """The runtime this thread's JavaScript programs run in: Node unless routed elsewhere."""
    return getattr(_local, "transport", None) or node()


def where() -> str:
    """Where this thread's programs run: "browser" in a page, else "node"."""
    return getattr(current(), "where", "node")


@contextmanager
def running_in(transport: Any) -> Iterator[None]:
    """Run this thread's JavaScript programs in ``transport`` (None: in Node) meanwhile."""
    before = getattr(_local, "transport", None)
    _local.transport = transport
    try:
        yield
    finally:
        _local.transport = before
