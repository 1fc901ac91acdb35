"""What a backend is: the few primitive things every mode is written on top of.

As in Julia's DifferentiationInterface, each framework says how to do a few
things (bind ``np`` in the model, convert the inputs once, pull back, push
forward, evaluate f on a batch of points, compile, wait), and the operators
(gradient, Jacobian, finite differences, complex step) are written once, in
``adlab.engine.modes``, on top of them. ``prepare`` does every one-off thing
through ``Backend.program``, so the timed call does nothing else.

This base class is the framework-free part: the call path of the frameworks
that run eagerly by default (PyTorch, TensorFlow, autograd, NumPy). JAX's
call path, built around ``jax.jit``, is its own (``backends/jax/``).
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..._vocab import DEVICES
from ._registry import KNOWN, Known


@dataclass
class Program:
    """How ``prepare``'s result calls the derivative.

    Attributes:
        call: ``call(x)`` -> the derivative at x, the other arguments bound: the hot path.
        fallback: the same for an x that ``call`` refused (JAX: traced anew for its
            shape; other frameworks: x converted first).
        compile_s: seconds the framework took to compile (the first call of a
            compiled function); 0.0 when nothing was compiled.
        first: the first call's result, where compiling made one (``torch.compile``,
            ``tf.function``, JavaScript); None: no call made yet (JAX compiles ahead of
            time, and nothing runs until the program is called).
        cost: ``cost()`` -> XLA's analysis of the program, or None where there is none.
        compiled: JAX's ``jax.stages.Compiled`` program (what ``adlab.profile`` reads),
            else None.
        loaded: the program was loaded from adlab's cache (``compile_s`` is the load).
        cold_compile_s: what compiling it took when it was compiled (``compile_s`` itself
            unless ``loaded``); None: as ``compile_s``.
        timer: for a program that runs outside Python (JavaScript), what times it where
            it runs (``start(target_s, budget_s)``, ``repeats(k)``, ``where``, ``device``;
            see ``backends.js.timer``); None: a sweep times the Python call.
        typed: ``call`` refuses an x of another dtype than the one it was made for (JAX's
            compiled program checks its arguments' types in C++), so ``Prepared`` reads x's
            dtype only after a refusal, not before every call.
        memory: for a program that runs outside Python (JavaScript), ``memory()`` -> the
            fields ``Prepared.memory`` returns, measured where it runs; None: measured in
            Python with the backend's ``peak`` and ``residuals``.
        broken: called once where ``call`` failed at the very inputs it was made for, so
            ``fallback`` serves from then on (JAX: a program loaded from adlab's cache that
            loads but does not run, dropped from the cache); None: nothing to do.
    """

    call: Callable[[Any], Any]
    fallback: Callable[[Any], Any]
    compile_s: float = 0.0
    first: Any = None
    cost: Callable[[], dict[str, float] | None] = lambda: None
    compiled: Any = None
    loaded: bool = False
    cold_compile_s: float | None = None
    timer: Any = None
    typed: bool = False
    memory: Callable[[], dict[str, Any]] | None = None
    broken: Callable[[], None] | None = None


def tree_map(fn: Callable, tree: Any) -> Any:
    """``fn`` on every leaf of nested dicts, lists and tuples (the arguments a model
    takes): plain Python, so compilers that trace Python (``torch.compile``) see through it."""
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(fn, v) for v in tree)
    return fn(tree)


class NotAnArray:
    """What ``Backend.probe`` reports for a return value that is no array (e.g. a str)."""

    def __init__(self, value: Any) -> None:
        self.type_name = type(value).__name__


def with_arg(f: Callable, args: Sequence[Any], i: int, shape: tuple[int, ...]) -> Callable:
    """``x_flat -> f(*args with args[i] = x_flat reshaped to shape)``."""

    def at(xf):
        new = list(args)
        new[i] = xf.reshape(shape)
        return f(*new)

    return at


#: the functions whose batches of points could not be vectorized (``batch_or_loop``)
_LOOPED: weakref.WeakSet = weakref.WeakSet()


def batch_or_loop(f: Callable, vectorized: Callable[[Any], Any], loop: Callable[[Any], Any],
                  X: Any) -> Any:  # fmt: skip
    """``vectorized(X)``; where f cannot be vectorized, ``loop(X)``: f at one point (row
    of X) at a time, eagerly, as NumPy's backend evaluates it (learned once per f).

    ``torch.func.vmap`` and ``tf.vectorized_map`` refuse what eager code runs:
    Python ``if``/``max`` on values, ``len(x)`` or ``float(v)`` of a traced tensor.
    Finite differences need only f's values, so they are taken one point at a time
    there; an error of the loop is f's own, raised eagerly on the model's line."""
    if f not in _LOOPED:
        try:
            return vectorized(X)
        except Exception:
            try:
                _LOOPED.add(f)
            except TypeError:  # pragma: no cover - f is not weakly referable: retried later
                pass
    return loop(X)


@functools.lru_cache(maxsize=32)
def hit_mask(k: int, n: int) -> np.ndarray:
    """(k, n) booleans: row r is True at coordinate r mod n, the one the r-th point moves."""
    return (np.arange(k) % n)[:, None] == np.arange(n)[None, :]


class Backend:
    """One framework's primitives. Subclasses set the facts and override what differs.

    Class attributes:
        name: the ``backend=`` value; its static facts (compiler, default ``jit``, pip
            extra) are in ``_registry.KNOWN``, readable without importing the framework.
        ad: the directions of automatic differentiation it has ("reverse", "forward").
        xla_costs: its compiled programs have XLA's cost analysis (``Prepared.cost``).
        namespace_per_precision: see below.
    """

    name: ClassVar[str] = ""
    ad: ClassVar[tuple[str, ...]] = ("reverse", "forward")
    xla_costs: ClassVar[bool] = False
    #: the model's ``np`` differs by precision (its array makers' dtype): run per precision
    namespace_per_precision: ClassVar[bool] = False
    #: a NumPy-like namespace for adlab's own arithmetic in the modes (steps, differences)
    xp: Any = np
    #: the devices ``device=`` may name, the default first (TF.js: cpu, wasm, webgl);
    #: empty: the framework runs where it puts itself (``environment()["device"]``)
    devices: ClassVar[tuple[str, ...]] = ()
    #: the device its programs run on, where adlab chooses it (None: the framework's own)
    device: str | None = None

    # -------------------------------------------------------------- facts
    @property
    def known(self) -> Known:
        return KNOWN[self.name]

    def resolve_jit(self, jit: bool | None) -> bool:
        """``jit`` with None meaning the framework's default; True without a compiler
        is refused, never ignored."""
        if jit is None:
            return self.known.default_jit
        if jit and self.known.compiler is None:
            raise ValueError(
                f"backend={self.name!r} has no compiler, so jit=True cannot be honoured; "
                "leave jit unset (or jit=False) to run it as its users do, eagerly"
            )
        return bool(jit)

    def environment(self) -> dict[str, Any]:
        """The framework's version and device, for records (``env``: more fields for
        records' ``env``, as they are)."""
        return {"version": None, "device": "cpu"}

    def on_device(self, device: str | None) -> Backend:
        """This backend with its programs on ``device`` (None: its default); a device it
        cannot choose is refused, with the ones it can. A backend with several devices
        returns a copy of itself set to one (TF.js)."""
        if device is None or (self.devices and device == self.devices[0]):
            return self
        if device not in DEVICES:
            raise ValueError(f"device must be one of {list(DEVICES)}, got {device!r}")
        if self.devices:
            raise ValueError(f"backend={self.name!r} runs on {' or '.join(map(repr, self.devices))}"
                             f" only, not device={device!r}; TF.js chooses between "
                             f"{', '.join(DEVICES)}: backend='tfjs'")  # fmt: skip
        raise ValueError(f"device={device!r} chooses TF.js's backend (cpu, wasm or webgl: "
                         f"backend='tfjs'); backend={self.name!r} runs where its framework "
                         "puts it: leave device unset")  # fmt: skip

    def placed(self, where: str | None) -> str | None:
        """Where its programs run, ``where=`` asked: None for a framework that runs in
        Python; "node" or "browser" for JavaScript (``backends.js``)."""
        if where is not None:
            raise ValueError(f"where={where!r} applies to the JavaScript backends ('js', "
                             f"'tfjs'); backend={self.name!r} runs in Python: leave where "
                             "unset")  # fmt: skip
        return None

    # ------------------------------------------------------------- memory
    # Each framework's own counter, never an estimate from shapes; measured once per
    # point, outside any timed loop (``Prepared.memory``). The default is Python's own
    # allocator's: NumPy reports its arrays to ``tracemalloc``.
    def peak(self, call: Callable[[Any], Any], x: Any, compiled: Any) -> tuple[float | None, str]:
        """(the most bytes one ``call(x)`` holds at once above what was held before it,
        how that was counted); ``compiled``: JAX's compiled program, else None."""
        from ._memory_count import TRACEMALLOC, traced_peak

        return traced_peak(lambda: call(x)), TRACEMALLOC

    def residuals(self, f: Callable, inputs: tuple,
                  wrt: tuple[int, ...]) -> tuple[float | None, str]:  # fmt: skip
        """(the bytes reverse mode's forward pass of ``f(*inputs)`` keeps for its backward
        pass, with respect to ``inputs[i]`` for i in ``wrt``, each buffer once and f's
        arguments not counted, how that was counted); None where there is no reverse mode."""
        return None, "no reverse mode"

    # ------------------------------------------------------ the model's np
    def namespace(self, precision: str) -> dict[str, Any]:
        """What a model's source sees besides its own names: ``np`` and the sample maps."""
        raise NotImplementedError

    # ---------------------------------------------------------------- data
    def convert(self, args: tuple, precision: str) -> tuple:
        """Arguments already cast to ``precision`` (NumPy), as the framework holds them."""
        return args

    def to_numpy(self, tree: Any) -> Any:
        """A result as NumPy arrays (tuples kept)."""
        if isinstance(tree, tuple):
            return tuple(self.to_numpy(t) for t in tree)
        return None if tree is None else np.asarray(tree)

    def constant(self, array: np.ndarray) -> Any:
        """A NumPy constant as an array of this framework, on its device."""
        return array

    def complex(self, x: Any, dtype: Any) -> Any:
        """``x`` cast to NumPy complex type ``dtype``."""
        return x.astype(dtype)

    def probe(self, f: Callable, args: tuple, inputs: tuple, jit: bool, guard: Callable) -> Any:
        """f's output at the prepared inputs, for its shape and dtype (NumPy)."""
        out = guard(lambda: f(*inputs), False)
        if hasattr(out, "shape") and hasattr(out, "dtype"):
            return self.to_numpy(out)
        return out if isinstance(out, (int, float)) else NotAnArray(out)

    # ------------------------------------------------------- AD operators
    def gradient(self, f: Callable, wrt: int | tuple[int, ...], jit: bool) -> Callable:
        """Reverse mode of a scalar f: ``fn(*args)`` -> df/d args[wrt] (a tuple for a tuple)."""
        raise NotImplementedError

    def jacobian(self, f: Callable, wrt: int | tuple[int, ...], forward: bool, jit: bool):
        """The Jacobian (out_shape + x_shape) by columns (forward) or rows (reverse)."""
        raise NotImplementedError

    # The two passes that second order nests (``adlab.engine.modes.hessian``), as in
    # DifferentiationInterface.jl: f is a function of x alone, and what they return can be
    # differentiated again by the same framework (f may itself take a derivative, of
    # ``inner_grad``'s making). The gradient they nest over is ``inner_grad.make``'s.
    def pushforward(self, f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
        """Forward mode: (f(x), f'(x) v)."""
        raise NotImplementedError

    def pullback(self, f: Callable, x: Any, w: Any) -> tuple[Any, Any]:
        """Reverse mode: (f(x), f'(x)^T w)."""
        raise NotImplementedError

    # -------------------------------------------------- perturbed points
    def n_chunks(self, k: int, n: int) -> int:
        """How many chunks a batch of k points of size n is evaluated in (see JAX's)."""
        return 1

    def points(self, f: Callable, args: Sequence[Any], i: int, blocks: list, flat: bool):
        """f at x_i with coordinate j set to ``blocks[b][j]``, for every block b and j.

        Returns (F, P): F is (k*n, *out), block-major; P[r] the coordinate the
        r-th evaluation saw (equal to the block's, bit for bit). ``flat``: the
        batch written without loops, for XLA's cost analysis (JAX chunks large ones).
        """
        raise NotImplementedError

    # --------------------------------------------------------- the call
    def compile(self, fn: Callable) -> Callable:
        """``fn`` under the framework's compiler."""
        raise NotImplementedError

    def wait(self, out: Any) -> Any:
        """``out`` once computed (see ``needs_wait``): on a GPU, the framework's own sync."""
        return out

    def program(self, built: Any, inputs: tuple, args: tuple, *, jit: bool, precision: str,
                guard: Callable) -> Program:  # fmt: skip
        """``built.fn`` bound to ``inputs[1:]``, compiled if ``jit`` (its first call,
        timed as the compile, made here)."""
        fn = self.compile(built.fn) if jit else built.fn
        call = self._bind(fn, inputs[1:])
        first, compile_s = None, 0.0
        if jit:
            start = time.perf_counter()
            first = guard(lambda: call(inputs[0]), False)
            compile_s = time.perf_counter() - start
        return Program(call=call, fallback=self._converting(call, precision),
                       compile_s=compile_s, first=first)  # fmt: skip

    def general(self, fn: Callable, jit: bool) -> Callable:
        """``fn`` (compiled if ``jit``) for ``rebind``: the same function, new arguments."""
        return self.compile(fn) if jit else fn

    def rebinding(self, general: Callable, inputs: tuple, precision: str,
                  jit: bool) -> Callable | None:  # fmt: skip
        """``call(*args, x)``, as ``general`` takes them, at arguments as the caller has
        them, not converted first; it refuses (raises on) any it was not built for.
        None where the framework has no such call: new arguments are converted (``rebind``)."""
        return None

    def rebind(self, general: Callable, inputs: tuple, precision: str) -> Callable:
        """``call(x)`` with new bound arguments (already converted)."""
        return self._bind(general, inputs[1:])

    def needs_wait(self) -> bool:
        """Whether results must be waited for (``wait``): computed asynchronously."""
        return False

    def _bind(self, fn: Callable, rest: tuple) -> Callable:
        if not self.needs_wait():  # one frame per call
            return lambda x: fn(x, *rest)
        wait = self.wait
        return lambda x: wait(fn(x, *rest))

    def _converting(self, call: Callable, precision: str) -> Callable:
        """``call`` for an x not yet in the framework's type (a NumPy array, a list)."""

        def run(x: Any) -> Any:
            from ..model.args import cast_leaf
            from ..model.precision import dtype_of

            x = np.asarray(self.to_numpy(x))  # a framework's array (np.asarray fails on some)
            return call(self.convert((cast_leaf(x, dtype_of(precision)),),
                                     precision)[0])  # fmt: skip

        return run
