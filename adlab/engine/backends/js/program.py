"""f or one of its derivatives as a JavaScript program in Node, called from Python.

``JsFunction(f, wrt, driver)`` is called like the function it stands for. On the
first call at a set of shapes it traces with JAX what the driver runs (f; the
program of ``jax.grad(f)``; a JVP or VJP of f), emits it as JavaScript
(``emit``), and loads it in Node with the driver that calls it: once, once per
column (forward mode), once per row (reverse mode of a vector f), or at the
perturbed points of finite differences or G9's gradient. Later calls send x
alone: the other arguments are sent again only when they are other objects.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ...._vocab import ModelError
from ...model.precision import precision_scope
from .code import Buffers
from .emit import emit
from .node import JsError, decode, encode
from .transport import current

_ids = itertools.count(1)


def files_of(f: Callable) -> frozenset[str]:
    """The source file of f (a model's synthetic file name): where its lines are named."""
    code = getattr(f, "__code__", None)
    return frozenset({code.co_filename}) if code is not None else frozenset()


def _traced(f: Callable, args: tuple, wrt: int, driver: str) -> Callable:
    """The function of the flat leaves (and, for a JVP or VJP, a direction) to emit."""
    leaves, tree = jax.tree_util.tree_flatten(args)

    def rebuilt(flat):
        return jax.tree_util.tree_unflatten(tree, list(flat))

    def at_x(flat):
        new = rebuilt(flat)
        return lambda x: f(*new[:wrt], x, *new[wrt + 1 :])

    n = len(leaves)
    if driver in ("grad", "rows"):  # the cotangent last: what the backward equations read
        return lambda *flat: jax.vjp(at_x(flat[:n]), rebuilt(flat[:n])[wrt])[1](flat[n])[0]
    if driver == "columns":
        return lambda *flat: jax.jvp(at_x(flat[:n]), (rebuilt(flat[:n])[wrt],), (flat[n],))[1]
    return lambda *flat: f(*rebuilt(flat))  # once, numeric, g9: f itself


def emitted(f: Callable, args: tuple, wrt: int, driver: str,
            files: frozenset[str] = frozenset()) -> tuple[str, list, tuple]:  # fmt: skip
    """(JavaScript source, constants, f's output shape) of the program ``driver`` runs
    at ``args``' shapes: its inputs are ``args``' leaves (then the direction, for a JVP
    or VJP). What ``benchmarks/js_emitted.py`` times."""
    return counted(f, args, wrt, driver, files)[:3]


def counted(f: Callable, args: tuple, wrt: int, driver: str,
            files: frozenset[str] = frozenset()) -> tuple[str, list, tuple, Buffers]:  # fmt: skip
    """``emitted``'s, and what the program's own buffers hold (``code.Buffers``)."""
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    x_shape = leaves[len(jax.tree_util.tree_leaves(args[:wrt]))].shape
    with precision_scope("float64"):
        out_shape = tuple(jax.eval_shape(lambda *a: f(*a), *args).shape)
        extra = {"columns": [np.zeros(x_shape)], "rows": [np.zeros(out_shape)],
                 "grad": [np.zeros(out_shape)]}.get(driver, [])  # fmt: skip
        closed = jax.make_jaxpr(_traced(f, args, wrt, driver))(*leaves, *extra)
    # a gradient's cotangent is 1, held in the program; a VJP per row takes it
    cotangent = {"grad": "one", "rows": "input"}.get(driver)
    source, consts, _, buffers = emit(closed, files or files_of(f), cotangent)
    return source, consts, out_shape, buffers


@dataclass
class Loaded:
    """One emitted program, and what of it Node holds."""

    source: str
    consts: list
    driver: dict
    n_inputs: int
    id: int = 0
    generation: int = -1  # the Node process it was loaded in
    sent: list | None = None  # the argument objects bound in Node, by slot
    transport: Any = None  # the runtime it was loaded in (Node, or the Lab's page)
    buffers: Buffers | None = None  # what its own buffers hold (the emitter's count)

    def load(self) -> None:
        n = current()  # Node, or the Lab's page (transport.running_in)
        self.id = next(_ids)
        extra = 1 if self.driver.get("step") else 0
        n.request({"op": "load", "id": self.id, "source": self.source,
                   "consts": [encode(c) for c in self.consts], "driver": self.driver,
                   "n_inputs": self.n_inputs + extra})  # fmt: skip
        self.generation = n.generation
        self.transport = n
        self.sent = [None] * (self.n_inputs + extra)
        # its buffers in Node go when Python lets go of it (a sweep makes one per point)
        weakref.finalize(self, n.forget, self.generation, self.id)

    def ask(self, msg: dict) -> dict:
        """Another request about this program (its timing: ``timer.JsTimer``), in the
        runtime it was loaded in."""
        return self.transport.request(msg)

    def run(self, leaves: list, always: int) -> list[np.ndarray]:
        """The driver's outputs at these inputs: the first ``always`` (x's) sent on every
        call, the others only where they are other objects than those last sent."""
        n = current()  # Node, or the Lab's page (transport.running_in)
        for attempt in (0, 1):
            if self.generation != n.ensure():
                self.load()
            sent = self.sent
            send = {str(slot): encode(leaf) for slot, leaf in enumerate(leaves)
                    if slot < always or sent[slot] is not leaf}  # fmt: skip
            try:
                answer = n.request({"op": "call", "id": self.id, "inputs": send})
            except JsError as exc:
                if exc.kind == "lost" and attempt == 0:  # Node restarted in between
                    self.generation = -1
                    continue
                raise _said(exc) from None
            sent[:] = leaves
            return [decode(o) for o in answer["out"]]
        raise AssertionError("unreachable")  # pragma: no cover


def _said(exc: JsError) -> Exception:
    if exc.kind == "g9":
        return ModelError(str(exc), hint="G9's gradient needs f finite near x with slopes "
                          "that settle as the step shrinks; scheme='central' or mode='reverse' "
                          "give the derivative there")  # fmt: skip
    return RuntimeError(f"the emitted JavaScript failed in Node (a bug of adlab's translation, "
                        f"not of the model): {exc}")  # fmt: skip


class JsFunction:
    """f (``driver="once"``) or a derivative of f, run as emitted JavaScript in Node.

    Args:
        f: the model's f, written with ``jax.numpy`` (traced at each new set of shapes).
        wrt: the differentiated argument's index.
        driver: "once" (f), "grad", "columns" (forward mode), "rows" (reverse mode of a
            vector f), "numeric" or "g9" (finite differences on the emitted f).
        files: the model's source files, where an operation js lacks is named.
        options: the driver's own (``scheme``, ``scale``; ``step``: an array of x's size).
        with_error: the call returns (derivative, Richardson's estimate).
    """

    def __init__(self, f: Callable, wrt: int, driver: str, files: frozenset[str] = frozenset(),
                 options: dict | None = None, with_error: bool = False) -> None:  # fmt: skip
        self.f, self.wrt, self.driver = f, wrt, driver
        self.files = files or files_of(f)
        self.options = dict(options or {})
        self.step = self.options.pop("step", None)
        self.with_error = with_error
        self._loaded: dict[Any, tuple[Loaded, int, tuple, tuple]] = {}
        self.last: Loaded | None = None

    in_node = True  # runs in Node: the backend's program calls it as it is

    def __call__(self, *args: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten(args)
        leaves = [np.asarray(a) for a in leaves]
        key = (tree, tuple((a.shape, a.dtype.str) for a in leaves))
        entry = self._loaded.get(key)
        if entry is None:
            entry = self._loaded[key] = self._build(args, leaves)
        loaded, always, out_shape, x_shape = entry
        self.last = loaded  # what a timer times: the program of the last call
        if self.step is not None:
            leaves = [*leaves, self.step]
        outs = loaded.run(leaves, always)
        if self.driver == "once":
            return outs[0].reshape(out_shape)
        if self.driver == "grad":
            return outs[0].reshape(x_shape)
        shaped = [o.reshape(out_shape + x_shape) for o in outs]
        return (shaped[0], shaped[1]) if self.with_error else shaped[0]

    def _build(self, args: tuple, leaves: list) -> tuple[Loaded, int, tuple, tuple]:
        x_slot = len(jax.tree_util.tree_leaves(args[: self.wrt]))
        x_shape = leaves[x_slot].shape
        source, consts, out_shape, buffers = counted(self.f, args, self.wrt, self.driver,
                                                     self.files)  # fmt: skip
        driver = {"kind": "once" if self.driver == "grad" else self.driver, "x": x_slot,
                  "n": math.prod(x_shape), "m": math.prod(out_shape), **self.options}  # fmt: skip
        if self.step is not None:
            driver["step"] = len(leaves)
        always = len(jax.tree_util.tree_leaves(args[0]))  # f's first argument: new each call
        loaded = Loaded(source, consts, driver, len(leaves), buffers=buffers)
        return loaded, always, out_shape, x_shape
