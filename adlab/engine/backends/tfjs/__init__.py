"""TensorFlow.js 4.22 (``backend="tfjs"``): the model translated to TF.js operations.

The model's f is traced with JAX at the prepared shapes, in float32, and its
jaxpr translated to TF.js operations (``translate``); the program runs in the
runtime of backend "js" (one Node process, or the Lab's page), which loads the
bundled TF.js (``static/tfjs.min.js``) on its first TF.js program
(``runtime_tfjs.js``):

- ``primal``: f itself;
- ``reverse``: ``tf.grad`` of the translated f: TF.js's own reverse mode, the
  asker's system (a vector f: one ``tf.grad`` per row). Where TF.js 4.22 has no
  gradient (comparisons and logic, integers computed from x) or a wrong one (tied
  maxima, ``cumsum`` along an axis not the last), the runtime and the rules give
  JAX's; an operation TF.js runs but cannot differentiate (``np.cumprod``) is a
  ``ModelError`` at the model's line, before ``tf.grad`` runs (and a gradient TF.js
  refuses that no rule foresaw is named there too);
- ``numeric``: finite differences on the translated f (forward, central,
  Richardson, and G9.js's ``gradient``: ``scheme="g9"``);
- ``hessian``, ``hvp``: reverse-over-reverse, TF.js's own nesting (``nested``):
  ``tf.grad`` of the gradient's component along v; a Hessian is n products along e_i.
  The other compositions need forward mode, which TF.js lacks: refused.

Forward mode and complex step are refused: TF.js has no forward mode, and no
complex AD. TF.js computes in float32: a call that names no precision runs in
float32 and its records say so; ``precision="float64"`` is refused. ``device``
is TF.js's backend: "cpu" (default), "wasm" or "webgl" (a browser only).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np

from ..base import Program
from ..js import JsBackend, one_argument, tupled
from ..js.nesting import nested
from ..js.node import node
from .program import TfjsFunction

#: why complex step cannot run here, in words
NO_COMPLEX = ("complex arithmetic through TF.js's AD: TF.js has complex64 tensors, but "
              "neither its gradients nor adlab's translation carry an imaginary part, so "
              "TF.js has no complex-step derivative")  # fmt: skip
#: why float64 cannot be honoured, in words
FLOAT32_ONLY = ("TensorFlow.js computes in float32 only (its tensors have no float64 "
                "dtype)")  # fmt: skip
#: TF.js's version, as the bundle pins it
VERSION = "4.22.0"


def page_modules() -> dict[str, str]:
    """The files a page's runtime needs for TF.js, by the name ``runtime.js`` and
    ``runtime_tfjs.js`` require them: the runtime, its second-order drivers and the bundle
    (1.8 MB)."""
    folder = resources.files(__name__)
    read = lambda *path: folder.joinpath(*path).read_text(encoding="utf-8")  # noqa: E731
    return {
        "../tfjs/runtime_tfjs": read("runtime_tfjs.js"),
        "./runtime_tfjs_nested": read("runtime_tfjs_nested.js"),
        "static/tfjs.min": read("static", "tfjs.min.js"),
    }


class TfjsBackend(JsBackend):
    name = "tfjs"
    ad = ("reverse",)  # tf.grad, tf.grads, tf.valueAndGrad: reverse mode only
    refuses = {"complex-step": NO_COMPLEX}
    chunked_forward = True
    devices = ("cpu", "wasm", "webgl")
    device = "cpu"

    def on_device(self, device: str | None) -> TfjsBackend:
        """This backend on TF.js's backend ``device`` (a copy; None: cpu)."""
        if device is None or device == self.device:
            return self
        if device not in self.devices:
            raise ValueError(f"device must be one of {list(self.devices)} on backend='tfjs' "
                             f"(TF.js's backends), got {device!r}")  # fmt: skip
        other = copy.copy(self)
        other.device = device
        return other

    def placed(self, where: str | None) -> str:
        """As ``js``'s; webgl only where the programs run in a page."""
        now = super().placed(where)
        if self.device == "webgl" and now != "browser":
            raise ValueError("device='webgl' runs in a browser only: Node has no WebGL (and "
                             "@tensorflow/tfjs-node cannot install here). Use device='cpu' "
                             "or 'wasm' in Node, or tick TF.js webgl in the Lab, whose page "
                             "runs it")  # fmt: skip
        return now

    def environment(self) -> dict[str, Any]:
        """Node's (``js``'s), with TF.js's version and backend in ``env`` (what records'
        ``env`` names)."""
        env = super().environment()
        return {**env, "version": VERSION, "device": self.device, "node_version": env["version"],
                "env": {**env.get("env", {}), "tfjs_version": VERSION,
                        "tfjs_backend": self.device}}  # fmt: skip

    def convert(self, args: tuple, precision: str) -> tuple:
        if precision != "float32":
            raise ValueError(f"{FLOAT32_ONLY}, so precision={precision!r} cannot be honoured; "
                             "leave precision unset (or precision='float32'), or use "
                             "backend='js' for float64 in JavaScript")  # fmt: skip
        return args

    def complex(self, x: Any, dtype: Any) -> Any:
        raise ValueError(f"{NO_COMPLEX}; mode 'reverse' gives the exact derivative on "
                         "backend='tfjs'")  # fmt: skip

    def node_function(self, f: Callable, wrt: Any, driver: str,
                      files: frozenset = frozenset(), options: dict | None = None,
                      with_error: bool = False) -> TfjsFunction:  # fmt: skip
        return TfjsFunction(f, one_argument(wrt, self.name), driver, files, options, with_error,
                            device=self.device)  # fmt: skip

    def nested(self, spec: Any, scheme: str, n: int, hvp: bool,
               with_gradient: bool = False) -> tuple[Callable, int]:  # fmt: skip
        """(program, passes) of a second derivative by TF.js's own nesting of tf.grad in
        tf.grad (``runtime_tfjs_nested.js``; ``js.nesting``): a Hessian is n products,
        H e_i, an HVP's v the argument after x."""
        return nested(self, spec, scheme, n, hvp, with_gradient)

    def differences_dtype(self, spec: Any) -> Any:
        """float32: TF.js holds x in it, so the step is float32's (the differences are
        ``js``'s drivers, run on TF.js's f)."""
        return np.float32

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        if forward:
            raise ValueError("TF.js has no forward mode: mode 'reverse' takes its Jacobian")
        return tupled(self.node_function(f, wrt, "rows"), wrt)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        """The first call translates, loads and runs the program (and starts TF.js's
        backend: a wasm instantiation), timed as its compile; later calls are timed in
        JavaScript (``js.timer``), and its memory measured there (``memory``)."""
        import time

        from ..js.timer import JsTimer

        fn = built.fn
        if not getattr(fn, "in_node", False):
            fn = self.node_function(fn, 0, "once")
        rest = inputs[1:]

        def call(x: Any) -> Any:
            return fn(x, *rest)

        start = time.perf_counter()
        first = guard(lambda: call(inputs[0]), False)
        js, reverse = getattr(fn, "js", fn), built.reverse_of is not None
        return Program(
            call=call,
            fallback=call,
            compile_s=time.perf_counter() - start,
            first=first,
            timer=JsTimer(js, device=self.device),
            memory=lambda: self.memory(js, reverse, lambda: call(inputs[0])),
        )

    def memory(self, fn: Any, reverse: bool, call: Callable[[], Any]) -> dict[str, Any]:
        """``Prepared.memory``'s fields, by TF.js's own counters where the program runs
        (``tfjs.memory``): one call of the program ``fn`` last ran (``call()``: one at the
        prepared inputs, where the runtime lost it)."""
        from .memory import measure

        return measure(fn, reverse, call)

    def tensors(self) -> int:
        """How many tensors TF.js holds now in Node (0 before its first program)."""
        return int(node().request({"op": "tfjs_memory"})["tensors"])


BACKEND = TfjsBackend()
