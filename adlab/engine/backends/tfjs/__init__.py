"""TensorFlow.js 4.22 (``backend="tfjs"``): the model translated to TF.js operations.

The model's f is traced with JAX at the prepared shapes, in float32, and its
jaxpr translated to TF.js operations (``translate``); the program runs in the
runtime of backend "js" (one Node process, or the Lab's page), which loads the
bundled TF.js (``static/tfjs.min.js``) on its first TF.js program
(``runtime_tfjs.js``):

- ``primal``: f itself;
- ``reverse``: ``tf.grad`` of the translated f: TF.js's own reverse mode, the
  asker's system (a vector f: one ``tf.grad`` per row);
- ``numeric``: finite differences on the translated f (forward, central,
  Richardson, and G9.js's ``gradient``: ``scheme="g9"``).

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
from ..js import JsBackend
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
    ``runtime_tfjs.js`` require them: the runtime and the bundle (1.8 MB)."""
    folder = resources.files(__name__)
    return {
        "../tfjs/runtime_tfjs": folder.joinpath("runtime_tfjs.js").read_text(encoding="utf-8"),
        "static/tfjs.min": folder.joinpath("static", "tfjs.min.js").read_text(encoding="utf-8"),
    }


def one_argument(wrt: Any) -> int:
    """The one argument differentiated (TF.js programs take one, as ``js``'s)."""
    if isinstance(wrt, tuple):
        if len(wrt) != 1:
            raise ValueError("backend='tfjs' differentiates one argument at a time yet; "
                             f"got wrt={wrt!r}: take each argument's derivative apart")  # fmt: skip
        return wrt[0]
    return wrt


def in_node(fn: Callable, js: Any = None) -> Callable:
    """``fn`` marked as run in JavaScript; ``js``: the program it calls (what is timed)."""
    fn.in_node = True  # type: ignore[attr-defined]
    fn.js = js if js is not None else fn  # type: ignore[attr-defined]
    return fn


def tupled(fn: TfjsFunction, wrt: Any) -> Callable:
    """``fn`` answering a one-element tuple where ``wrt`` is one (JAX's argnums)."""
    return fn if not isinstance(wrt, tuple) else in_node(lambda *args: (fn(*args),), fn)


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

    def _fn(self, f: Callable, wrt: Any, driver: str, files: frozenset = frozenset(),
            options: dict | None = None, with_error: bool = False) -> TfjsFunction:  # fmt: skip
        return TfjsFunction(f, one_argument(wrt), driver, files, options, with_error,
                            device=self.device)  # fmt: skip

    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        return tupled(self._fn(f, wrt, "grad"), wrt)

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        if forward:
            raise ValueError("TF.js has no forward mode: mode 'reverse' takes its Jacobian")
        return tupled(self._fn(f, wrt, "rows"), wrt)

    def finite_differences(self, spec: Any) -> Any:
        """The numeric mode's ``Built``: differences taken in JavaScript on TF.js's f, x
        held in float32 (as ``js``'s, whose drivers they follow)."""
        from ...modes import Built
        from ...modes.numeric import EVALS, STEP_POWER
        n = spec.size(one_argument(spec.wrt))
        if spec.scheme == "g9":
            from ...modes.g9 import check

            check(spec)
            fn = self._fn(spec.f, spec.wrt, "g9", spec.files)
            return Built(tupled(fn, spec.wrt), f_evals=2 * n + 1, chunked=True)
        if spec.scheme not in STEP_POWER:
            raise ValueError(f"scheme must be one of {sorted(STEP_POWER)} or 'g9', got "
                             f"{spec.scheme!r}")  # fmt: skip
        scale = float(np.finfo(np.float32).eps) ** STEP_POWER[spec.scheme]
        options: dict[str, Any] = {"scheme": spec.scheme, "scale": scale}
        if spec.step is not None:
            options["step"] = np.broadcast_to(np.asarray(spec.step, np.float64), (n,)).copy()
        richardson = spec.scheme == "richardson"
        fn = self._fn(spec.f, spec.wrt, "numeric", spec.files, options, with_error=richardson)
        if isinstance(spec.wrt, tuple):
            inner = fn
            fn = in_node((lambda *a: tuple((v,) for v in inner(*a))) if richardson
                         else (lambda *a: (inner(*a),)), inner)  # type: ignore[assignment]
        evals = EVALS[spec.scheme] * n + (spec.scheme == "forward")
        return Built(fn, f_evals=evals, with_error=richardson, step=spec.step, chunked=True)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        """The first call translates, loads and runs the program (and starts TF.js's
        backend: a wasm instantiation), timed as its compile; later calls are timed in
        JavaScript (``js.timer``)."""
        import time

        from ..js.timer import JsTimer

        fn = built.fn if getattr(built.fn, "in_node", False) else self._fn(built.fn, 0, "once")
        rest = inputs[1:]

        def call(x: Any) -> Any:
            return fn(x, *rest)

        start = time.perf_counter()
        first = guard(lambda: call(inputs[0]), False)
        return Program(call=call, fallback=call, compile_s=time.perf_counter() - start,
                       first=first, timer=JsTimer(getattr(fn, "js", fn), device=self.device))

    def general(self, fn: Callable, jit: bool) -> Callable:
        return fn if getattr(fn, "in_node", False) else self._fn(fn, 0, "once")

    def tensors(self) -> int:
        """How many tensors TF.js holds now in Node (0 before its first program)."""
        return int(node().request({"op": "tfjs_memory"})["tensors"])


BACKEND = TfjsBackend()
