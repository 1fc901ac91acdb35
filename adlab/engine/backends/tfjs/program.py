"""f or one of its derivatives as a TF.js program, run by ``runtime_tfjs.js``.

``TfjsFunction`` is backend "js"'s ``JsFunction`` (called like the function it
stands for; traced anew at each new set of shapes; loaded in the runtime the
thread's programs run in, Node or the Lab's page) with another translation: the
jaxpr of f itself, in float32, as TF.js operations (``translate``), and drivers
that take TF.js's own derivative of it (``tf.grad``) or differences of it.
"""

from __future__ import annotations

import itertools
import math
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ...._vocab import ModelError
from ...model.precision import precision_scope
from ..js.nesting import second_driver
from ..js.node import encode
from ..js.program import JsFunction, Loaded, files_of
from ..js.transport import current
from .code import tf_dtype
from .translate import Translation, translate

#: the drivers of ``runtime_tfjs.js``, by JsFunction's driver names
DRIVERS = {"once": "tfjs_once", "grad": "tfjs_grad", "rows": "tfjs_rows",
           "numeric": "tfjs_numeric", "g9": "tfjs_g9", "hvp": "tfjs_hvp",
           "hessian": "tfjs_hessian"}  # fmt: skip
#: the drivers that take TF.js's own derivative (tf.grad; tf.grad of tf.grad)
REVERSE = ("grad", "rows", "hvp", "hessian")
#: TF.js's tape refusing a kernel's gradient: none registered, or one of another dtype
GRADIENT_REFUSED = re.compile(r"gradient function not found for (\w+)|"
                              r"Error in gradient for op (\w+)")  # fmt: skip
#: a kernel one of TF.js's backends lacks (its wasm backend has no UnsortedSegmentSum)
KERNEL_MISSING = re.compile(r"Kernel '(\w+)' not registered for backend '(\w+)'")
#: the kernels tf.grad runs for a function's gradient, and that function
GRADIENT_KERNELS = {"UnsortedSegmentSum": "gather"}
#: TF.js's kernels whose names are not their function's (``tf.where`` runs Select)
KERNEL_CALLS = {"select": "where", "pack": "stack", "tile": "broadcastto",
                "batchmatmul": "matmul", "multiply": "mul", "realdiv": "div",
                "floordiv": "div"}  # fmt: skip


def calls_kernel(call: str, kernel: str) -> bool:
    """Whether TF.js's function ``tf.<call>`` runs the kernel ``kernel``."""
    name = kernel.lower().removesuffix("v2")
    return call.lower() == KERNEL_CALLS.get(name, name)


def translated(f: Callable, args: tuple, files: frozenset[str] = frozenset()
               ) -> tuple[str, list, tuple, Translation]:  # fmt: skip
    """(JavaScript source, constants, f's output shape, the translation) of f as TF.js
    operations at ``args``' shapes, traced in float32 (what TF.js computes in): its
    inputs are the leaves of ``args``. The derivatives are TF.js's, of this program."""
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    _, tree = jax.tree_util.tree_flatten(args)
    with precision_scope("float32"):
        out_shape = tuple(jax.eval_shape(lambda *a: f(*a), *args).shape)
        closed = jax.make_jaxpr(lambda *flat: f(*jax.tree_util.tree_unflatten(tree, list(flat))))(
            *leaves
        )
    source, consts, translation = translate(closed, files or files_of(f))
    return source, consts, out_shape, translation


@dataclass
class TfjsLoaded(Loaded):
    """One TF.js program, and what of it the runtime holds."""

    device: str = "cpu"
    shapes: list | None = None  # the inputs' shapes and TF.js dtypes, by slot
    dtypes: list | None = None
    translation: Translation | None = None  # its steps: where a refusal names the line

    def load(self) -> None:
        n = current()  # Node, or the Lab's page (transport.running_in)
        self.id = next(_ids)
        extra = 1 if self.driver.get("step") else 0
        consts = [{"data": encode(np.asarray(a, np.float64).ravel()), "shape": list(a.shape),
                   "dtype": dtype} for a, dtype in self.consts]  # fmt: skip
        n.request({"op": "load", "kind": "tfjs", "device": self.device, "id": self.id,
                   "source": self.source, "consts": consts, "driver": self.driver,
                   "n_inputs": self.n_inputs + extra, "shapes": self.shapes,
                   "dtypes": self.dtypes})  # fmt: skip
        self.generation = n.generation
        self.transport = n
        self.sent = [None] * (self.n_inputs + extra)
        weakref.finalize(self, n.forget, self.generation, self.id)


#: program ids far from backend "js"'s (1, 2, 3...): both kinds share the runtime's table
_ids = itertools.count(1_000_000_000)


class TfjsFunction(JsFunction):
    """f (``driver="once"``) or a derivative of f, taken by TF.js on ``device``.

    Args: as ``JsFunction``'s (driver "once", "grad", "rows", "numeric" or "g9"), and
        device: TF.js's backend: "cpu", "wasm" (or "webgl", in a page).
    """

    def __init__(self, f: Callable, wrt: int, driver: str, files: frozenset[str] = frozenset(),
                 options: dict | None = None, with_error: bool = False,
                 device: str = "cpu") -> None:  # fmt: skip
        super().__init__(f, wrt, driver, files, options, with_error)
        self.device = device

    def __call__(self, *args: Any) -> Any:
        try:
            return super().__call__(*args)
        except RuntimeError as exc:  # TF.js's tape refused a gradient no rule foresaw
            refused = self._refused(str(exc)) if self.driver in REVERSE else None
            if refused is None:
                raise
            raise refused from None

    def _refused(self, said: str) -> ModelError | None:
        """TF.js's refusal of a gradient (no gradient for a kernel, or one of another
        dtype) as a ModelError at the line of the step on x's path that called that
        kernel; None for any other error."""
        found = GRADIENT_REFUSED.search(said)
        missing = KERNEL_MISSING.search(said)
        loaded = self.last
        if (found is None and missing is None) or loaded is None or loaded.translation is None:
            return None
        hint = None
        if found is not None:
            kernel = found.group(1) or found.group(2)
            why = f"TF.js 4.22 refuses the gradient of its kernel {kernel}"
        else:  # the gradient's kernel is missing on this backend: another device has it
            needs, device = missing.groups()
            kernel = GRADIENT_KERNELS.get(needs, needs)
            why = (f"TF.js 4.22's {device} backend has no kernel {needs}, which tf.grad of "
                   f"tf.{kernel} needs")  # fmt: skip
            hint = ("device='cpu' (TF.js's default) differentiates it, or take mode "
                    "'reverse' on backend='js' or backend='jax'")  # fmt: skip
        path = loaded.translation.on_path(f"a{loaded.driver['x']}")
        for step in path:
            if any(calls_kernel(call, kernel) for call in step.calls):
                return loaded.translation.refusal(step, why, hint)
        return loaded.translation.refusal(None, why, hint)

    def _build(self, args: tuple, leaves: list) -> tuple[Loaded, int, tuple, tuple]:
        x_slot = len(jax.tree_util.tree_leaves(args[: self.wrt]))
        x_shape = leaves[x_slot].shape
        source, consts, out_shape, translation = translated(self.f, args, self.files)
        if self.driver in REVERSE:  # tf.grad refused before it runs, at the model's line
            refused = translation.undifferentiable(f"a{x_slot}")
            if refused is not None:
                raise refused
        out_shape, second = second_driver(self.driver, args, self.wrt, x_shape, out_shape)
        driver = {"kind": DRIVERS[self.driver], "x": x_slot, "n": math.prod(x_shape),
                  "m": math.prod(out_shape), "out_shape": list(out_shape),
                  **self.options, **second}  # fmt: skip
        if self.step is not None:
            driver["step"] = len(leaves)
        always = len(jax.tree_util.tree_leaves(args[0]))  # f's first argument: new each call
        loaded = TfjsLoaded(source, consts, driver, len(leaves), device=self.device,
                            shapes=[list(a.shape) for a in leaves],
                            dtypes=[tf_dtype(a.dtype) for a in leaves],
                            translation=translation)  # fmt: skip
        return loaded, always, out_shape, x_shape
