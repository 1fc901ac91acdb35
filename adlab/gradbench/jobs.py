"""One GradBench function at one set of shapes, prepared once and called per run.

A ``Job`` is built the first time the eval asks for a (function, shapes): the
derivative is compiled with ``adlab.prepare`` (the tool's mode, scheme and
backend), and its one-off costs are reported as their own timings, never as
``"evaluate"``: building it (``"prepare"``, ``"compile"``) and its first call
(``"warmup"``). A later input of the same shapes binds its data to the same job
(an untimed call, ``"bind"``); then each run is one awaited call of the
derivative with its data already converted and on the device.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..catalog.gradbench import newton_direction
from ..engine.backends import DEFAULT, KNOWN, REFERENCE, get_backend
from ..engine.derivative import prepare
from ..engine.model.args import backend_inputs, wrt_indices
from ..engine.model.source import Model
from ..engine.modes.hessian import NESTING_BACKENDS as NESTING
from ..engine.second import prepare_hessian, prepare_hvp
from ..engine.sparse import SparsePrepared
from ..measure.timing import awaited_call

#: The second-order composition standing in for each first-order mode, where kmeans's
#: ``dir`` needs the Hessian's diagonal: the mode over itself (complex step has no HVP,
#: so its full Hessian is taken and its diagonal read).
HESSIAN_MODES = {
    "reverse": "reverse-over-reverse",
    "forward": "forward-over-forward",
    "numeric": "numeric",
    "complex-step": "complex-step",
}
#: the modes whose ``dir`` is one program, the gradient over H times ones, divided in it
#: (``prepare_hvp(..., divided=True)``): their compositions are over the mode's own
#: gradient, so it comes free, and the direction stays on the device like any other
#: result (taking the pair to the host and dividing there cost ~40 us beside a ~100 us
#: program: kmeans, k=10, n=1000 on JAX). Numeric keeps its own gradient of f (the
#: composition's would be the reverse gradient it differences), and complex step its
#: full Hessian: those two divide on the host.
FUSED = ("reverse", "forward")


@dataclass(frozen=True)
class Options:
    """How the tool takes its derivatives: the command line's choices."""

    mode: str
    scheme: str = "central"
    backend: str = DEFAULT
    jit: bool | None = None
    precision: str | None = None  # None: the framework's own (float64; TF.js: float32)
    #: the longest a particle or saddle descent may take, as estimated from its first
    #: value and derivative; a longer one is refused, saying how long and what runs faster
    max_seconds: float = 120.0

    @property
    def used_precision(self) -> str:
        """``precision``, or where it is None the framework's own (TF.js: float32)."""
        return self.precision or KNOWN[self.backend].precisions[0]

    def config(self) -> dict[str, Any]:
        """The ``config`` of the ``start`` response: what produced these answers."""
        config: dict[str, Any] = {"mode": self.mode}
        if self.mode == "numeric":
            config["scheme"] = self.scheme
        config.update(backend=self.backend, precision=self.used_precision)
        config["jit"] = "framework default" if self.jit is None else self.jit
        if not KNOWN[self.backend].has_ad:  # a model's own grad (particle, saddle): differences
            config["inner"] = "central differences (NumPy has no AD)"
        return config


def _forward_in_time(model: Model, args: tuple, o: Options) -> None:
    """Refuse (ValueError, saying what to do) a forward-mode Jacobian that one tangent per
    input would take past ``max_seconds`` to build, estimated from one tangent's pass.

    Timed, not predicted from f's value: a pass's cost over f's differs by model (lstm's
    scan on autograd took far more than the ~11x f seen on ode, and ran past the session).
    """
    if KNOWN[o.backend].forward_column_cost is None or get_backend(o.backend).resolve_jit(o.jit):
        return
    impl = get_backend(o.backend)
    held = impl.convert(tuple(args), o.used_precision)
    f = model.function(o.backend, o.used_precision)
    tangent = np.zeros(np.shape(args[0]))
    tangent.flat[0] = 1.0
    (v,) = impl.convert((tangent,), o.used_precision)
    start = time.perf_counter()
    impl.pushforward(lambda x: f(x, *held[1:]), held[0], v)
    seconds = time.perf_counter() - start
    n = int(np.size(args[0]))
    estimate = n * seconds
    if estimate > o.max_seconds:
        raise ValueError(
            f"forward mode on {o.backend}, run eagerly, pushes one tangent per input: {n} "
            f"inputs at {seconds:.3g} s each (one timed), about {estimate:.0f} s for one "
            f"derivative, past the tool's --max-seconds {o.max_seconds:g}. What to do: run the "
            f"tool with --mode reverse (one pass), or --backend jax, or allow it with "
            f"--max-seconds {10 * math.ceil(estimate * 0.15)}"
        )


def _ns(seconds: float) -> int:
    return max(int(round(seconds * 1e9)), 0)


def timing(name: str, seconds: float) -> dict[str, Any]:
    """One entry of a response's ``timings``."""
    return {"name": name, "nanoseconds": _ns(seconds)}


class Job:
    """A compiled (function, shapes): ``bind(args)`` then ``call()`` once per run.

    Attributes:
        timings: the one-off costs of building it (``"prepare"``, ``"compile"``),
            reported once, with the evaluate that built it.
    """

    def __init__(self, kind: str, model: Model, args: tuple, options: Options) -> None:
        self.kind = kind
        self.options = options
        self._first = True
        self._parts: list[tuple[Any, Callable[[tuple], tuple]]] = []
        o = options
        if kind != "primal" and o.mode == "numeric" and o.used_precision == "float32":
            # float32 differences keep 3 to 4 digits: GradBench's validators judged
            # TF.js's llsq, lse and gmm invalid (2e-4 to 0.3 relative off)
            raise ValueError(
                f"finite differences in float32 ({o.backend}) keep only 3 to 4 digits, short "
                "of the eval's tolerance, so the answer would be judged wrong. What to do: "
                "run the tool with --mode reverse (exact), or a float64 backend "
                "(--backend js or jax) for differences"
            )
        if kind in ("gradient", "sparse") and o.mode == "forward":
            _forward_in_time(model, args, o)
        compile_s = prepare_s = 0.0
        for build, arrange in self._plan(kind, model, o):
            start = time.perf_counter()
            p = build(*arrange(args))
            prepare_s += time.perf_counter() - start
            compile_s += p.compile_s
            self._parts.append((p, arrange))
        self._inputs = [p.inputs for p, _ in self._parts]
        self.timings = [timing("prepare", prepare_s - compile_s), timing("compile", compile_s)]
        self._to_numpy = get_backend(o.backend).to_numpy
        # an empty cluster's 0 / 0 is NaN, as in JAX or C++, without NumPy's warning
        # where NumPy divides (on the host, or autograd's program); JAX's never warns
        self._quiet = kind == "dir" and (o.backend != REFERENCE or len(self._parts) > 1)
        self._arm()

    @staticmethod
    def _plan(kind: str, model: Model, o: Options) -> list[tuple[Callable, Callable]]:
        """(build, arrange) per prepared derivative the kind needs."""
        same = lambda a: a  # noqa: E731
        common = dict(backend=o.backend, jit=o.jit, precision=o.used_precision)
        if kind == "primal":
            return [(lambda *a: prepare(model, *a, mode="primal", **common), same)]
        if kind == "sparse" and o.mode in ("forward", "reverse") and KNOWN[o.backend].sparse:
            # the pattern read from f's program, one pass per color (adlab.engine.sparse)
            return [(lambda *a: prepare(model, *a, mode=o.mode, sparse=True, **common), same)]
        if kind in ("gradient", "sparse"):  # sparse: dense where the mode has no sparse form
            return [(lambda *a: prepare(model, *a, mode=o.mode, scheme=o.scheme, **common), same)]
        if kind == "dir":
            if o.backend not in NESTING:
                raise ValueError(
                    f"kmeans's dir needs the Hessian's diagonal, and adlab takes second "
                    f"derivatives on {', '.join(NESTING)} only, not on {o.backend}: run the "
                    f"tool with --backend {NESTING[0]} for kmeans"
                )
            second = HESSIAN_MODES[o.mode]
            nested = common
            # the diagonal of a diagonal Hessian (see newton_direction) is H times ones
            ones = lambda a: (a[0], np.ones_like(np.asarray(a[0])), *a[1:])  # noqa: E731
            if o.mode in FUSED:  # one program: the HVP's outer pass computes the gradient
                return [(lambda *a: prepare_hvp(model, *a, scheme=second, divided=True,
                                                **nested), ones)]  # fmt: skip
            gradient = (lambda *a: prepare(model, *a, mode=o.mode, scheme=o.scheme, **common), same)
            if second == "complex-step":  # no HVP: the full Hessian, its diagonal read
                return [gradient, (lambda *a: prepare_hessian(model, *a, scheme=second, **nested),
                                   same)]  # fmt: skip
            return [gradient, (lambda *a: prepare_hvp(model, *a, scheme=second, **nested), ones)]
        raise ValueError(f"adlab's GradBench tool cannot compute a {kind!r} yet")

    def bind(self, args: tuple) -> list[dict[str, Any]]:
        """Give the job an input's ``(x, *data)``; returns the one-off timings it took.

        A new job holds its inputs already; one untimed call (``"warmup"``) pays
        what a framework does once on a first call (PyTorch's ``torch.func`` set-up,
        caches filled), as a user's second call would not. A later input is
        converted to the framework's arrays here, and one untimed call binds its
        data (``"bind"``; the first such call compiles a program that takes every
        argument), so that the runs hand the framework only what it already holds.
        """
        start = time.perf_counter()
        if self._first:
            self._first = False
            awaited_call(self.call)
            return [timing("warmup", time.perf_counter() - start)]
        for i, (p, arrange) in enumerate(self._parts):
            inputs = backend_inputs(arrange(args), p.precision, p.backend, wrt_indices(p.wrt))
            awaited_call(p, inputs)
            # x as converted here; the data as the call bound them (p.inputs), so that
            # the runs are ``Prepared``'s fast path (the bound data, recognised as such)
            self._inputs[i] = (inputs[0], *p.inputs[1:])
        self._arm()
        return [timing("bind", time.perf_counter() - start)]

    def _arm(self) -> None:
        """One program, nothing to do around it: ``call`` is that program's call on the
        bound inputs, with no Python of ours in between (a ``partial``). The general
        ``call`` cost 4-9 us more per awaited run of kmeans's 65 us primal (JAX, pinned
        to one CPU, medians of 3,000 runs)."""
        if len(self._parts) == 1 and not self._quiet:
            p = self._parts[0][0]
            # a sparse Jacobian's run ends at its nonzeros in CSR order, which is the
            # layout ADBench's BASparseMat holds (manual's timed output); SciPy's packing
            # of them is the answer's conversion (``to_numpy``), as for a dense result
            run = p.values if isinstance(p, SparsePrepared) else p
            self.call = functools.partial(run, *self._inputs[0])

    def call(self) -> Any:
        """One run: the derivative at the bound input (the framework's arrays; kmeans's
        ``dir`` in numeric mode and complex step, NumPy's)."""
        if self._quiet:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self._call()
        return self._call()

    def _call(self) -> Any:
        results = [p(*inputs) for (p, _), inputs in zip(self._parts, self._inputs, strict=True)]
        if len(results) == 1:
            return results[0]
        # kmeans's dir from two programs (numeric, complex step): divided on the host, in
        # NumPy, where its k*d numbers take ~3 us and one eager JAX operation ~20 us
        gradient, second = self._to_numpy(tuple(results))
        # complex step's full Hessian: its diagonal
        diagonal = second if second.ndim == 1 else second.diagonal()
        return newton_direction(gradient, diagonal)

    def to_numpy(self, result: Any) -> Any:
        if isinstance(result, sp.sparray):  # a sparse Jacobian: SciPy's, on the host already
            return result
        p = self._parts[0][0]
        if isinstance(p, SparsePrepared):  # its nonzeros, from ``values``
            return p.to_csr(result)
        return np.asarray(self._to_numpy(result))
