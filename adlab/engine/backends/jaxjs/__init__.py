"""jax-js 0.1.25 (``backend="jaxjs"``): JAX's design in JavaScript, differentiating its own program.

The model's f is traced with JAX at the prepared shapes, in the call's precision, and its
jaxpr translated to jax-js operations (``translate``); the program runs in the runtime
of backend "js" (one Node process, or the Lab's page), which loads the bundled jax-js
(``static/jaxjs.min.js``) on its first jax-js program (``runtime_jaxjs.js``). jax-js's
own transforms then differentiate that program:

- ``primal``: f itself;
- ``reverse``: jax-js's ``grad`` (a vector f: one ``vjp`` per row);
- ``forward``: jax-js's ``jvp``, one pass per input (as g9jax takes G9's gradients);
- ``numeric``: finite differences on the translated f (forward, central, Richardson,
  and G9.js's ``gradient``: ``scheme="g9"``).
- ``hessian``, ``hvp``: jax-js's own nesting of those transforms (``nested``): its ``jvp``
  of its ``grad``, ``vjp`` of ``grad``, ``grad`` of ``jvp``, ``jvp`` of n ``jvp``s; a
  Hessian is n products along e_i.

``jit=True`` runs the driver's work under jax-js's ``jit`` (kernel fusion; its loops,
JavaScript loops, are traced and unrolled: ``rules_loops``). Precision: float64 or
float32, as asked. ``device`` is jax-js's backend: "wasm" (default) or "cpu" in Node,
"wasm", "webgl" or "webgpu" in the Lab's page. Complex step is refused: the translation
carries no imaginary part. jax-js counts references by hand; a call leaves its memory
as it found it (``tensors`` reads jax-js's own count).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from importlib import resources
from typing import Any

from ..base import Program
from ..facts import FACTS
from ..js import JsBackend, one_argument, tupled
from ..js.nesting import nested
from ..js.node import node
from .program import JaxjsFunction

#: why complex step cannot run here, in words
NO_COMPLEX = ("complex arithmetic through jax-js's AD: adlab's translation carries no "
              "imaginary part, so jax-js takes no complex-step derivative here")  # fmt: skip
#: jax-js's version, as the bundle pins it
VERSION = "0.1.25"
#: the devices that exist in a browser only
IN_PAGES = ("webgl", "webgpu")


def page_modules() -> dict[str, str]:
    """The files a page's runtime needs for jax-js, by the name ``runtime.js`` and
    ``runtime_jaxjs.js`` require them: the runtime and the bundle (0.3 MB)."""
    folder = resources.files(__name__)
    return {
        "../jaxjs/runtime_jaxjs": folder.joinpath("runtime_jaxjs.js").read_text(encoding="utf-8"),
        "static/jaxjs.min": folder.joinpath("static", "jaxjs.min.js").read_text(encoding="utf-8"),
    }


class JaxjsBackend(JsBackend):
    name = "jaxjs"
    ad = ("reverse", "forward")  # grad and vjp; jvp
    refuses = {"complex-step": NO_COMPLEX}
    chunked_forward = True  # one jvp per input: never a batch
    devices = FACTS["jaxjs"].devices
    device = devices[0]

    def on_device(self, device: str | None) -> JaxjsBackend:
        """This backend on jax-js's backend ``device`` (a copy; None: wasm)."""
        if device is None or device == self.device:
            return self
        if device not in self.devices:
            raise ValueError(f"device must be one of {list(self.devices)} on backend='jaxjs' "
                             f"(jax-js's backends), got {device!r}")  # fmt: skip
        other = copy.copy(self)
        other.device = device
        return other

    def placed(self, where: str | None) -> str:
        """As ``js``'s; webgl and webgpu only where the programs run in a page."""
        now = super().placed(where)
        if self.device in IN_PAGES and now != "browser":
            raise ValueError(f"device={self.device!r} runs in a browser only: jax-js has "
                             "neither in Node. Use device='wasm' or 'cpu' in Node, or tick "
                             "jax-js in the Lab, whose page runs it")  # fmt: skip
        return now

    def environment(self) -> dict[str, Any]:
        """Node's (``js``'s), with jax-js's version and backend in ``env``."""
        env = super().environment()
        return {**env, "version": VERSION, "device": self.device, "node_version": env["version"],
                "env": {**env.get("env", {}), "jaxjs_version": VERSION,
                        "jaxjs_backend": self.device}}  # fmt: skip

    def convert(self, args: tuple, precision: str) -> tuple:
        return args  # cast to precision by the engine already; the trace follows it

    def complex(self, x: Any, dtype: Any) -> Any:
        raise ValueError(f"{NO_COMPLEX}; mode 'forward' or 'reverse' gives the exact "
                         "derivative on backend='jaxjs'")  # fmt: skip

    def node_function(self, f: Callable, wrt: Any, driver: str,
                      files: frozenset = frozenset(), options: dict | None = None,
                      with_error: bool = False, jit: bool = False) -> JaxjsFunction:  # fmt: skip
        return JaxjsFunction(f, one_argument(wrt, self.name), driver, files, options,
                             with_error, device=self.device, jit=jit)  # fmt: skip

    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        return tupled(self.node_function(f, wrt, "grad", jit=jit), wrt)

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        return tupled(self.node_function(f, wrt, "columns" if forward else "rows", jit=jit), wrt)

    def nested(self, spec: Any, scheme: str, n: int, hvp: bool,
               with_gradient: bool = False) -> tuple[Callable, int]:  # fmt: skip
        """(program, passes) of a second derivative by jax-js's own nesting of its transforms
        (``runtime_jaxjs.js``'s ``nested``; ``js.nesting``): a Hessian is n products, H e_i,
        an HVP's v the argument after x."""
        return nested(self, spec, scheme, n, hvp, with_gradient, jit=spec.jit)

    def general(self, fn: Callable, jit: bool) -> Callable:
        return fn if getattr(fn, "in_node", False) else self.node_function(fn, 0, "once", jit=jit)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        """The first call translates, loads and runs the program (starting jax-js's backend
        where it is the first: a wasm instantiation; and its first kernels' compiles),
        timed as its compile; later calls are timed in JavaScript (``js.timer``), and its
        memory counted there (``memory``)."""
        import time

        from ..js.timer import JsTimer

        if precision == "float64" and self.device in IN_PAGES:  # jax-js: at its first kernel
            raise ValueError(f"jax-js's {self.device} backend computes in float32 only, so "
                             "precision='float64' cannot be honoured there; use "
                             "precision='float32', or device='wasm' for float64")  # fmt: skip
        fn = built.fn
        if not getattr(fn, "in_node", False):
            fn = self.node_function(fn, 0, "once", jit=jit)
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
        """``Prepared.memory``'s fields, by jax-js's own count of its buffers where the
        program runs (``jaxjs.memory``)."""
        from .memory import measure

        return measure(fn, reverse, call)

    def tensors(self) -> int:
        """How many buffers jax-js holds now in Node (0 before its first program)."""
        return int(node().request({"op": "jaxjs_memory"})["slots"])


BACKEND = JaxjsBackend()
