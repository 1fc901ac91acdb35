"""Plain JavaScript on Float64Array, emitted from the model's jaxprs and run in Node.

A backend that runs outside Python: the model's f is traced with JAX (its ``np``
is ``jax.numpy``) at the prepared shapes, and the program each mode needs is
emitted as JavaScript (``emit``, ``rules``) and run in one long-lived Node
process (``node``):

- ``primal``: f itself;
- ``reverse``: the program of ``jax.grad(f)`` (a VJP per row for a vector f):
  reverse mode by source transformation, no tape;
- ``forward``: the JVP program, one pass per column;
- ``numeric``: finite differences on the emitted f, taken in JavaScript
  (forward, central, Richardson, and G9.js's own ``gradient``: ``scheme="g9"``).

Loops (``fori_loop``, ``scan``, and JAX's ``while`` and ``cond``) are JavaScript loops,
whose size does not grow with the steps (``rules_loops``). A second derivative, where the
facts of js let it nest modes, is JAX's program of the whole composition, emitted
(``pushforward``, ``pullback``, and ``jacobian`` inside that trace).

Complex step is refused: JavaScript's Float64Array holds real numbers only.
Values are float64 only (a JavaScript number is a double).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from ..base import Backend, Program
from .node import node_path
from .program import JsFunction

#: why complex step cannot run here, in words
NO_COMPLEX = ("complex step needs complex arithmetic, and plain JavaScript has none: a "
              "Float64Array holds real numbers only, so the emitted programs are real")  # fmt: skip


def one_argument(wrt: Any, backend: str = "js") -> int:
    """The one argument differentiated (the JavaScript programs take one)."""
    if isinstance(wrt, tuple):
        if len(wrt) != 1:
            raise ValueError(f"backend={backend!r} differentiates one argument at a time yet; "
                             f"got wrt={wrt!r}: take each argument's derivative apart")  # fmt: skip
        return wrt[0]
    return wrt


def tupled(fn: JsFunction, wrt: Any) -> Callable:
    """``fn`` answering a one-element tuple where ``wrt`` is one (JAX's argnums)."""
    if not isinstance(wrt, tuple):
        return fn
    return in_node(lambda *args: (fn(*args),), fn)


def traced(args: tuple) -> bool:
    """Whether ``args`` are JAX's tracers: the call is inside a program being traced, to
    be emitted whole."""
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in jax.tree_util.tree_leaves(args))


def _jax() -> Backend:
    from .._registry import get_backend

    return get_backend("jax")


def in_node(fn: Callable, js: JsFunction | None = None) -> Callable:
    """``fn`` marked as run in JavaScript; ``js``: the program it calls (what is timed)."""
    fn.in_node = True  # type: ignore[attr-defined]
    fn.js = js if js is not None else fn  # type: ignore[attr-defined]
    return fn


def then_on_host(fn: Callable, then: Callable) -> Callable:
    """``then(fn(*a))``, ``then`` run in Python on what ``fn`` returns: where ``fn`` runs in
    JavaScript, so is this said to (JAX would trace it else), its program still ``fn``'s."""
    out = lambda *a: then(fn(*a))  # noqa: E731
    return in_node(out, getattr(fn, "js", fn)) if getattr(fn, "in_node", False) else out


class JsBackend(Backend):
    name = "js"
    ad = ("reverse", "forward")
    refuses = {"complex-step": NO_COMPLEX}
    # forward mode and differences take one column, one point at a time: never a batch
    chunked_forward = True
    devices = ("cpu",)  # plain JavaScript: the CPU
    device = "cpu"
    xp = jnp  # where a composition's differences are taken: inside JAX's trace (pushforward)

    def placed(self, where: str | None) -> str:
        """Where its programs run: in the Lab's page while this thread's programs are
        routed there (``transport.running_in``), else in Node. ``where="browser"`` with
        no page attached (a script, nbval) runs in Node, and ``Prepared.where`` and the
        records say so; ``where="node"`` while a page is attached is refused (the
        programs follow the thread's runtime)."""
        from .transport import where as running

        now = running()
        if where == "node" and now != "node":
            raise ValueError("where='node' while this thread's JavaScript runs in the Lab's "
                             "page: leave where unset, or run it outside the Lab")  # fmt: skip
        return now

    def environment(self) -> dict[str, Any]:
        """Node's version, and in ``env`` what records say of the runtime (its version,
        the timer's resolution: ``timer.environment``)."""
        from .timer import environment
        from .transport import current

        n = current()  # Node, or the Lab's page where this thread's programs run there
        n.ensure()
        return {"version": n.version, "device": "cpu", "runtime": "node", "node": node_path(),
                "env": environment(n)}  # fmt: skip

    def namespace(self, precision: str) -> dict[str, Any]:
        """JAX's: the model is traced with ``jax.numpy``, and its program emitted. Its
        loops are ``lax``'s (emitted as JavaScript loops); ``checkpoint=`` is refused
        where the facts of js say so (``facts.checkpoint_refusal``), though the emitter
        writes ``remat``'s recomputation into the backward loop like any other body."""
        from .._loops import jax_loops
        from .._registry import get_backend

        return {**get_backend("jax").namespace(precision), **jax_loops(self.name)}

    def convert(self, args: tuple, precision: str) -> tuple:
        if precision != "float64":
            raise ValueError(f"backend='js' computes in float64 only (a JavaScript number is "
                             f"a double), so precision={precision!r} cannot be honoured; use "
                             "precision='float64'")  # fmt: skip
        return args

    def complex(self, x: Any, dtype: Any) -> Any:
        raise ValueError(f"{NO_COMPLEX}; mode 'forward' or 'reverse' gives the exact "
                         "derivative on backend='js'")  # fmt: skip

    def probe(self, f: Callable, args: tuple, inputs: tuple, jit: bool, guard: Callable) -> Any:
        """f's abstract output, traced by JAX (nothing runs): js runs what JAX traces."""
        from .._registry import get_backend

        return get_backend("jax").probe(f, args, inputs, True, guard)

    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        return tupled(self.node_function(f, wrt, "grad"), wrt)

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        driver = "columns" if forward else "rows"
        fn = tupled(self.node_function(f, wrt, driver), wrt)
        inside = _jax().jacobian(f, wrt, forward, True)
        return in_node(lambda *args: (inside if traced(args) else fn)(*args),
                       getattr(fn, "js", fn))  # fmt: skip

    # Second order: a composition of modes (``modes.hessian``) is run as one program, JAX's
    # program of the whole composition, emitted (``program`` traces the composed f): inside
    # that trace the passes it nests, and a Jacobian of them, are JAX's own.
    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        return _jax().pushforward(f, x, v)

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        return _jax().pullback(f, x, w)

    def node_function(self, f: Callable, wrt: Any, driver: str,
                      files: frozenset = frozenset(), options: dict | None = None,
                      with_error: bool = False) -> JsFunction:  # fmt: skip
        """The program ``driver`` of f (a subclass runs it elsewhere: TF.js)."""
        return JsFunction(f, one_argument(wrt, self.name), driver, files, options,
                          with_error=with_error)  # fmt: skip

    def differences_dtype(self, spec: Any) -> Any:
        """The dtype x is held in while differenced (its eps sets the step)."""
        return spec.dtype

    def finite_differences(self, spec: Any) -> Any:
        """The numeric mode's ``Built``: the differences taken in JavaScript, on the emitted f."""
        from ...modes import Built
        from ...modes.numeric import EVALS, STEP_POWER

        n = spec.size(one_argument(spec.wrt, self.name))
        if spec.scheme == "g9":
            from ...modes.g9 import check

            check(spec)
            fn = self.node_function(spec.f, spec.wrt, "g9", spec.files)
            return Built(tupled(fn, spec.wrt), f_evals=2 * n + 1, chunked=True)
        if spec.scheme not in STEP_POWER:
            raise ValueError(f"scheme must be one of {sorted(STEP_POWER)} or 'g9', got "
                             f"{spec.scheme!r}")  # fmt: skip
        scale = float(np.finfo(self.differences_dtype(spec)).eps) ** STEP_POWER[spec.scheme]
        options: dict[str, Any] = {"scheme": spec.scheme, "scale": scale}
        if spec.step is not None:
            options["step"] = np.broadcast_to(np.asarray(spec.step, np.float64), (n,)).copy()
        richardson = spec.scheme == "richardson"
        fn = self.node_function(spec.f, spec.wrt, "numeric", spec.files, options,
                                with_error=richardson)
        if isinstance(spec.wrt, tuple):
            inner = fn
            fn = in_node(
                (lambda *a: tuple((v,) for v in inner(*a)))
                if richardson
                else (lambda *a: (inner(*a),)),
                inner,
            )  # type: ignore[assignment]
        evals = EVALS[spec.scheme] * n + (spec.scheme == "forward")
        return Built(fn, f_evals=evals, with_error=richardson, step=spec.step, chunked=True)

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        """The first call translates, loads and runs the program: timed as its compile.
        Its later calls are timed in JavaScript (``timer``), not across the pipe; its
        memory is counted where it runs (``memory``), once, when ``Prepared.memory`` asks."""
        import time

        from .timer import JsTimer

        fn = built.fn if getattr(built.fn, "in_node", False) else JsFunction(built.fn, 0, "once")
        rest = inputs[1:]

        def call(x: Any) -> Any:
            return fn(x, *rest)

        start = time.perf_counter()
        first = guard(lambda: call(inputs[0]), False)
        js, reverse = getattr(fn, "js", fn), built.reverse_of is not None
        again = lambda: call(inputs[0])  # noqa: E731
        return Program(call=call, fallback=call, compile_s=time.perf_counter() - start,
                       first=first, timer=JsTimer(js),
                       memory=lambda: self.memory(js, reverse, again))  # fmt: skip

    def memory(self, fn: JsFunction, reverse: bool, call: Callable[[], Any]) -> dict[str, Any]:
        """``Prepared.memory``'s fields for the program ``fn`` last ran (``js.memory``):
        ``reverse``, whether the derivative has a reverse part; ``call()`` calls it at the
        prepared inputs (where it has not run yet)."""
        from .memory import measure

        return measure(fn, reverse, call)

    def general(self, fn: Callable, jit: bool) -> Callable:
        return fn if getattr(fn, "in_node", False) else self.node_function(fn, 0, "once")


BACKEND = JsBackend()
