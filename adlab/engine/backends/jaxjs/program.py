"""f or one of its derivatives as a jax-js program, run by ``runtime_jaxjs.js``.

``JaxjsFunction`` is backend "js"'s ``JsFunction`` (called like the function it
stands for; traced anew at each new set of shapes; loaded in the runtime the thread's
programs run in, Node or the Lab's page) with another translation: the jaxpr of f
itself, in the precision of its arguments, as jax-js operations (``translate``), and
drivers that take jax-js's own derivative of it (``grad``, ``vjp``, ``jvp``; under its
``jit`` where asked) or differences of it.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import jax
import numpy as np

from ...model.precision import precision_scope
from ..js.nesting import second_driver
from ..js.node import encode
from ..js.program import JsFunction, Loaded, files_of
from ..js.transport import current
from .code import jaxjs_dtype
from .translate import translate

#: the drivers of ``runtime_jaxjs.js``, by JsFunction's driver names
DRIVERS = {"once": "jaxjs_once", "grad": "jaxjs_grad", "rows": "jaxjs_rows",
           "columns": "jaxjs_columns", "numeric": "jaxjs_numeric", "g9": "jaxjs_g9",
           "hvp": "jaxjs_hvp", "hessian": "jaxjs_hessian"}  # fmt: skip


def precision_of(leaves: list[np.ndarray]) -> str:
    """The precision f's arguments were cast to (the engine casts them before the call):
    float32 where a float argument is float32, else float64."""
    floats = [a.dtype for a in leaves if np.issubdtype(a.dtype, np.floating)]
    return "float32" if floats and all(d == np.float32 for d in floats) else "float64"


def translated(f: Callable, args: tuple, files: frozenset[str] = frozenset(), jit: bool = False
               ) -> tuple[str, list, tuple, str]:  # fmt: skip
    """(JavaScript source, constants, f's output shape, precision) of f as jax-js
    operations at ``args``' shapes, traced in the precision of its arguments: its inputs
    are the leaves of ``args``; ``jit``: it runs under jax-js's ``jit``. The derivatives are
    jax-js's, of this program."""
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    _, tree = jax.tree_util.tree_flatten(args)
    precision = precision_of(leaves)
    with precision_scope(precision):
        out_shape = tuple(jax.eval_shape(lambda *a: f(*a), *args).shape)
        closed = jax.make_jaxpr(lambda *flat: f(*jax.tree_util.tree_unflatten(tree, list(flat))))(
            *leaves
        )
        source, consts = translate(closed, files or files_of(f), jit)  # folds constants in JAX
    return source, consts, out_shape, precision


@dataclass
class JaxjsLoaded(Loaded):
    """One jax-js program, and what of it the runtime holds."""

    device: str = "wasm"
    jit: bool = False
    shapes: list | None = None  # the inputs' shapes and jax-js dtypes, by slot
    dtypes: list | None = None

    def load(self) -> None:
        n = current()  # Node, or the Lab's page (transport.running_in)
        self.id = next(_ids)
        extra = 1 if self.driver.get("step") else 0
        consts = [{"data": encode(np.asarray(a, np.float64).ravel()), "shape": list(a.shape),
                   "dtype": dtype} for a, dtype in self.consts]  # fmt: skip
        n.request({"op": "load", "kind": "jaxjs", "device": self.device, "jit": self.jit,
                   "id": self.id, "source": self.source, "consts": consts,
                   "driver": self.driver, "n_inputs": self.n_inputs + extra,
                   "shapes": self.shapes, "dtypes": self.dtypes})  # fmt: skip
        self.generation = n.generation
        self.transport = n
        self.sent = [None] * (self.n_inputs + extra)
        weakref.finalize(self, n.forget, self.generation, self.id)


#: program ids far from backend "js"'s (1, 2, 3...) and "tfjs"'s: all share the runtime's table
_ids = itertools.count(2_000_000_000)


class JaxjsFunction(JsFunction):
    """f (``driver="once"``) or a derivative of f, taken by jax-js on ``device``.

    Args: as ``JsFunction``'s (driver "once", "grad", "rows", "columns", "numeric" or
        "g9"), and device: jax-js's backend: "wasm", "cpu" (or "webgl", "webgpu", in a page);
        jit: the driver's work under jax-js's ``jit``.
    """

    def __init__(self, f: Callable, wrt: int, driver: str, files: frozenset[str] = frozenset(),
                 options: dict | None = None, with_error: bool = False,
                 device: str = "wasm", jit: bool = False) -> None:  # fmt: skip
        super().__init__(f, wrt, driver, files, options, with_error)
        self.device, self.jit = device, jit

    def _build(self, args: tuple, leaves: list) -> tuple[Loaded, int, tuple, tuple]:
        x_slot = len(jax.tree_util.tree_leaves(args[: self.wrt]))
        x_shape = leaves[x_slot].shape
        source, consts, out_shape, precision = translated(self.f, args, self.files, self.jit)
        out_shape, second = second_driver(self.driver, args, self.wrt, x_shape, out_shape)
        driver = {"kind": DRIVERS[self.driver], "x": x_slot, "n": math.prod(x_shape),
                  "m": math.prod(out_shape), "out_shape": list(out_shape),
                  "precision": precision, **self.options, **second}  # fmt: skip
        if self.step is not None:
            driver["step"] = len(leaves)
        always = len(jax.tree_util.tree_leaves(args[0]))  # f's first argument: new each call
        loaded = JaxjsLoaded(source, consts, driver, len(leaves), device=self.device,
                             jit=self.jit, shapes=[list(a.shape) for a in leaves],
                             dtypes=[jaxjs_dtype(a.dtype) for a in leaves])  # fmt: skip
        return loaded, always, out_shape, x_shape
