"""Preparing one series at one point: first or second order, dense or sparse.

The one place a sweep (and its references) turns a ``Series`` into a compiled
derivative: ``prepare`` for first derivatives (``sparse`` passed on),
``prepare_hessian`` and ``prepare_hvp`` for second ones. An HVP is taken along
``direction``: fixed for a shape, so every composition and the reference
multiply the Hessian by the same v.

``Preparing`` readies a sweep's points of one size for their repeats: each
prepared, within the budget, then warmed up (``sweep._Run._size`` orders them).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .._format import seconds
from ..engine.backends import REFERENCE, get_backend
from ..engine.backends.facts import facts_of
from ..engine.derivative import UntrustedWarning, prepare
from ..engine.model.source import Model
from ..engine.programs.admission import admitting
from ..engine.second import prepare_hessian, prepare_hvp
from .budget import Budget
from .env import dispatch
from .point import Point, finite, reason
from .runtime_watch import stopwatch
from .series import Series


def direction(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A unit vector of ``shape`` from a seeded normal draw: an HVP's v in a sweep."""
    v = np.random.default_rng(seed).normal(size=shape)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else np.ones(shape)


def prepare_series(m: Model, point: tuple, v: Series) -> Any:
    """``v`` compiled at ``point`` (f's arguments), with ``v``'s resolved options."""
    options = dict(jit=v.jit, precision=v.precision, backend=v.backend, inner=v.inner or "reverse")
    if v.mode == "hessian":
        return prepare_hessian(m, *point, scheme=v.scheme, sparse=bool(v.sparse), **options)
    if v.mode == "hvp":
        i = m.wrt[0] if isinstance(m.wrt, tuple) else m.wrt
        u = direction(np.shape(point[i]))
        options.pop("inner")  # an HVP's own nesting is its bracket's
        return prepare_hvp(m, point[0], u, *point[1:], scheme=v.scheme, **options)
    return prepare(m, *point, mode=v.mode, scheme=v.scheme or "central",
                   sparse=bool(v.sparse), device=v.device, where=v.where,
                   checkpoint=v.checkpoint, **options)  # fmt: skip


class OverBudget(ValueError):
    """A program the budget skipped at this size, refused before it is compiled or run."""


def _key(m: Model, v: Series) -> tuple:
    """What one program of a size is known by: the model and the options that make it
    (a reference's series, never resolved, means ``inner`` "reverse" as resolved ones say)."""
    return (id(m), v.mode, v.scheme, v.jit, v.precision, v.backend, bool(v.sparse),
            v.inner or "reverse", v.device, v.where, v.checkpoint)  # fmt: skip


class Preparing:
    """The points of one size made ready for their repeats: each prepared (compiled,
    derivatives two at a time where they are JAX's), then warmed up, or skipped with
    the reason; ``prepare`` keeps one program per size and options.

    A point the budget skips costs nothing: it is skipped before it is prepared where
    the sizes below predict it, else once its mode has built it and says how many passes
    of f it takes, before it is compiled (``admitting``); and nothing prepares its
    program again at that size (a reference's check in the same mode: ``OverBudget``).
    """

    def __init__(self, budget: Budget, target_s: float) -> None:
        self.budget, self.target_s = budget, target_s
        self.programs: dict[tuple, tuple[Any, list[str]]] = {}
        self.skipped: dict[tuple, str] = {}  # the programs the budget skipped, and why

    def new_size(self) -> None:
        self.programs = {}  # compiled programs are shape-specific
        self.skipped = {}

    def prepare(self, m: Model, point: tuple, v: Series,
                 caught: bool = True) -> tuple[Any, list[str]]:  # fmt: skip
        """``prepare`` once per size and options: the reference and the measured point
        share it (its compile time is the one measured). Returns (prepared, notes): the
        ``UntrustedWarning``s it gave, or without ``caught`` (on a thread of
        ``compile_all``), its caveat as that warning says it. A program the budget
        skipped at this size is refused (``OverBudget``)."""
        key = _key(m, v)
        if key in self.skipped:
            raise OverBudget(f"over the sweep's budget: {self.skipped[key]}")
        if key not in self.programs:
            if not caught:
                p = prepare_series(m, point, v)
                notes = [] if p.trusted else [f"{v.mode}: {p.note}"]
            else:
                with warnings.catch_warnings(record=True) as warned:
                    warnings.simplefilter("always", UntrustedWarning)
                    p = prepare_series(m, point, v)
                notes = [str(w.message) for w in warned
                         if issubclass(w.category, UntrustedWarning)]  # fmt: skip
            self.programs[key] = (p, notes)
        return self.programs[key]

    def _first_guess(self, pt: Point, f_evals: int, spent_s: float) -> str | None:
        """For a series' first size only, the skip reason where ``spent_s`` (of its
        prepare so far) and two calls of ``f_evals`` primals (warm-up and one repeat) are
        over the budget, else None. Later sizes are predicted from the series itself."""
        v, n = pt.v, pt.base["n"]
        primal_s = pt.primal.estimate_s() if pt.primal else None
        if primal_s is None or v.mode == "primal" or self.budget.predict_call(v.label, n):
            return None
        if v.mode == "complex-step":
            primal_s = max(primal_s, _complex_f_s(pt) or 0.0)
        first, budget_s = 2 * f_evals * primal_s, self.budget.budget_s
        if spent_s + first <= budget_s:
            return None
        return f"predicted {seconds(first)} ({f_evals:,} f evals) > budget {seconds(budget_s)}"

    def _skip(self, pt: Point, why: str) -> None:
        """Skip the point for its cost: its program is not prepared at this size again."""
        pt.skipped = why
        self.skipped[_key(pt.m, pt.v)] = why

    def _admit(self, pt: Point, f_evals: int, start: float) -> None:
        """``prepare``'s question before compiling (``admitting``): refused where its
        first guess is over the budget (its passes of f on the record)."""
        why = self._first_guess(pt, f_evals, time.perf_counter() - start)
        if why is not None:
            pt.base["f_evals"] = f_evals
            raise OverBudget(why)

    def start(self, pt: Point) -> Point:
        """Prepare a point and warm it up (autorange included), or say why it is skipped.
        Its repeats come later, in turn with the other points of its size."""
        if self.check(pt):
            self.compile(pt)
            self.warm(pt)
        return pt

    def check(self, pt: Point) -> bool:
        """Whether the point is to be prepared: its setup ran and it is not predicted
        over budget (else ``pt.skipped`` says why)."""
        if isinstance(pt.args, Exception):
            pt.skipped = f"setup failed: {pt.args}"
            return False
        v, n = pt.v, pt.base["n"]
        primal_s = pt.primal.estimate_s() if pt.primal else None
        why = self.budget.over(v.label, n, (pt.primal.v.label, primal_s) if primal_s else None)
        if why:
            self._skip(pt, why)
        return why is None

    def compile_all(self, points: list[Point]) -> None:
        """``compile`` each point, jitted JAX programs two at a time.

        XLA's compile lets go of the GIL, so two compiles, or one beside another's
        tracing, share the 2 cores of a small machine: the default sweep's 35
        derivatives took 5.1 s to prepare one by one, cold, XLA's compile 3.6 s of it.
        Each ``compile_s`` is its own compile's seconds, a few percent over what it
        takes alone. Other frameworks' programs are prepared one by one (TensorFlow's
        NumPy behaviour is switched per call, process-wide), and so is a series whose
        caveats come only as a warning (second order, sparse): the warnings module's
        record of them is not per thread.
        """
        pooled = [p for p in points if p.v.backend == REFERENCE and p.v.jit
                  and p.base["order"] == 1 and not p.v.sparse]  # fmt: skip
        for p in points:
            if p not in pooled:
                self.compile(p)
        if len(pooled) < 2:
            for p in pooled:
                self.compile(p)
            return
        # each in a copy of this thread's context (how errors are worded: the command
        # line's terms); its caveat read from its program (``trusted``, ``note``)
        runs = [(contextvars.copy_context(), p) for p in pooled]
        with warnings.catch_warnings(record=True), ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda cp: cp[0].run(self.compile, cp[1], False), runs))

    def compile(self, pt: Point, caught: bool = True) -> None:
        """Prepare the point's program and read its cost; ``pt.skipped`` says why not."""
        v = pt.v
        # the framework's import (once a process, seconds under load) is no part of the
        # point's prepare, which the budget extrapolates to the next sizes
        with contextlib.suppress(Exception):  # a missing framework: prepare says so below
            get_backend(v.backend)
        start = time.perf_counter()
        try:
            with admitting(lambda f_evals: self._admit(pt, f_evals, start)):
                p, notes = self.prepare(pt.m, pt.args, v, caught)
            # XLA's analysis reads the compiled program; PyTorch counts by running it,
            # so its count waits until after the timing (Point.counted)
            pt.prepared, pt.notes = p, list(notes)
            pt.cost = p.cost() if v.backend == REFERENCE else None
            if pt.cost:
                pt.dispatch = dispatch(finite(pt.cost["flops"]), pt.base["env"])
            colors, nnz = getattr(p, "colors", None), getattr(p, "nnz", None)  # sparse only
            pt.base.update(
                compile_s=p.compile_s,
                f_evals=p.f_evals,
                colors=colors,
                nnz=nnz,
                compile_loaded=getattr(p, "compile_loaded", None),
            )
        except OverBudget as exc:  # refused before compiling: nothing of it ran
            self._skip(pt, str(exc))
        except Exception as exc:  # ModelError, SizeError, ...: shown, the sweep goes on
            pt.skipped = reason(exc)
        pt.prepare_s = time.perf_counter() - start

    def warm(self, pt: Point) -> None:
        """Warm a prepared point up (autorange included), or say why it is skipped."""
        if pt.skipped or pt.prepared is None:
            return
        v, n, p = pt.v, pt.base["n"], pt.prepared
        start = time.perf_counter() - pt.prepare_s
        budget_s = self.budget.budget_s
        if pt.prepare_s > budget_s:
            pt.skipped = f"prepare took {seconds(pt.prepare_s)} > budget {seconds(budget_s)}"
            self.budget.add_overrun(v.label, n, pt.prepare_s)  # the next size: longer still
            return
        # asked before compiling too (``_admit``); now with the compile's seconds
        why = self._first_guess(pt, p.f_evals, pt.prepare_s)
        if why is not None:
            self._skip(pt, why)
            return
        try:
            fn = p.with_error if v.scheme == "richardson" else p
            # p.inputs: cast and on the device (as in a training loop), no copy timed.
            # The first call is kept apart, uncharged (eager JAX compiles each operation
            # at a new shape; PyTorch's first jvp sets itself up): the budget is for warm calls.
            # a program run outside Python (JavaScript) is timed where it runs: p.timer
            pt.watch = stopwatch(fn, p.inputs, target_s=self.target_s,
                                 budget_s=budget_s - (time.perf_counter() - start))  # fmt: skip
            pt.watch.start()
        except Exception as exc:  # ModelError, SizeError, ...: shown, the sweep goes on
            pt.watch, pt.skipped = None, reason(exc)


def _complex_f_s(pt: Point) -> float | None:
    """One f in complex arithmetic, timed (the faster of two calls), where complex step runs
    f eagerly on NumPy's arrays: a complex product can cost a thousand real ones (NumPy's
    1 x 22,041 row through mlp_batched: 0.15 ms real, 20 ms complex here), which the
    primal's time does not show. None elsewhere (compiled programs: the primal's time
    holds) or for several differentiated arguments."""
    m, args = pt.m, pt.args
    if not facts_of(pt.v.backend).on_numpy_arrays or isinstance(args, Exception):
        return None
    if not isinstance(m.wrt, int):
        return None
    f, shifted = m.function(pt.v.backend), list(args)
    shifted[m.wrt] = np.asarray(shifted[m.wrt]) + 0j
    best = float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a guess: the mode's own call says what matters
        for _ in range(2):
            start = time.perf_counter()
            try:
                f(*shifted)
            except Exception:  # noqa: BLE001 - complex step's own run reports it, at its line
                return None
            best = min(best, time.perf_counter() - start)
    return best
