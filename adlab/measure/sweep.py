"""``bench``: sweep a model over sizes and variants, streaming one record per point.

Order: for each size n (ascending), for each variant, the primal of f with the
variant's options (measured once per model and options) and then the variant
itself. Records are yielded as soon as each point is measured, so a UI can
plot them live; a point predicted to take longer than its budget is yielded
as skipped, with the reason, instead of being run.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import jax
import numpy as np

from .._format import seconds
from .._vocab import Record, Timing
from ..catalog import resolve_model
from ..engine.derivative import UntrustedWarning, prepare
from ..engine.model import Model
from ..engine.precision import dtype_of, precision_scope
from .budget import Budget
from .env import dispatch, environment
from .references import CHECK_MAX_INPUTS, REFERENCES, References, point_errors
from .series import Series, parse_variants
from .timing import REPEATS, TARGET_S, measure, time_call

#: the default sweep: 7 sizes from 1 to 1000 ...
DEFAULT_SIZES: tuple[int, ...] = (1, 3, 10, 30, 100, 300, 1000)
#: ... and 5 ways of taking the derivative
DEFAULT_MODES: tuple[str, ...] = (
    "forward", "reverse", "numeric[central]", "numeric[richardson]", "complex-step",
)  # fmt: skip
#: default seconds one point may take, compile included
BUDGET_S = 2.0
__all__ = ["BUDGET_S", "CHECK_MAX_INPUTS", "DEFAULT_MODES", "DEFAULT_SIZES", "REFERENCES",
           "Sweep", "bench", "dispatch_floor"]  # fmt: skip


def _tag(model: Model) -> str:
    extra = ",".join(f"{k}={v}" for k, v in model.settings.items())
    return f"{model.name}{{{extra}}}" if extra else model.name


def _finite(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


class Sweep(Iterator[Record]):
    """The records of one sweep, measured as they are iterated.

    Attributes:
        total: the number of records the sweep will yield.
        records: the records yielded so far (intact if the sweep is interrupted).
    """

    def __init__(self, gen: Iterator[Record], total: int) -> None:
        self._gen = gen
        self.total = total
        self.records: list[Record] = []

    def __iter__(self) -> Sweep:
        return self

    def __next__(self) -> Record:
        rec = next(self._gen)
        self.records.append(rec)
        return rec

    def close(self) -> None:
        """Stop the sweep; records already yielded stay in ``records``."""
        self._gen.close()


def bench(
    model: str | Model,
    sizes: Iterable[int] = DEFAULT_SIZES,
    modes: str | Sequence[str | Mapping[str, Any] | Series] = DEFAULT_MODES,
    *,
    scheme: str = "central",
    jit: bool = True,
    precision: str = "float64",
    backend: str = "jax",
    budget_s: float = BUDGET_S,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    reference: str | None = "auto",
    seed: int = 0,
    settings: Mapping[str, Any] | None = None,
) -> Sweep:
    """Measure ``modes`` of ``model`` at each size; yields ``Record``s as they come.

    Args:
        model: a catalog name, a path to a model file, or a ``Model``.
        sizes: the sizes n (passed to the model's ``setup``); measured ascending.
        modes: variants, e.g. ``["forward", "numeric[richardson]", "reverse(eager)"]``,
            or one comma-separated string (syntax: ``adlab.measure.series``).
        scheme, jit, precision, backend: defaults for variants that do not say.
        budget_s: seconds one point may take, compile included. A point
            predicted over it is skipped with the reason; a measurement stops
            its repeats before passing it.
        repeats: timing repeats per point (median and IQR over them).
        target_s: seconds per repeat that ``timeit``'s autorange aims for.
        reference: what ``error`` is measured against: "auto" (float64 reverse
            mode, checked against forward mode up to ``CHECK_MAX_INPUTS``
            inputs), "checked", "reverse" (unchecked), or None (no errors).
        seed: the seed for the model's ``setup``.
        settings: new values for the model's UPPERCASE settings.

    Returns:
        A ``Sweep``: iterate it for records; ``.total`` and ``.records``.
        Per size: one primal record (mode "primal") per model and options,
        then one record per variant. KeyboardInterrupt propagates; the
        records yielded before it stay intact.
    """
    if not budget_s > 0:
        raise ValueError(f"budget_s must be > 0, got {budget_s}")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {list(REFERENCES)}, got {reference!r}")
    ns = sorted({int(n) for n in sizes})
    if not ns or ns[0] < 1:
        raise ValueError(f"sizes must be positive integers, got {list(sizes)}")
    run = _Run(
        resolve_model(model, **(settings or {})),
        ns,
        parse_variants(modes),
        dict(scheme=scheme, jit=jit, precision=precision, backend=backend),
        budget=Budget(budget_s),
        repeats=repeats,
        target_s=target_s,
        reference=reference,
        seed=seed,
    )
    return Sweep(run.records(), run.total)


class _Run:
    """The state of one sweep: resolved variants, caches, budget history."""

    def __init__(self, model, sizes, variants, defaults, *, budget, repeats, target_s,
                 reference, seed):  # fmt: skip
        self.sizes = sizes
        self.budget = budget
        self.repeats, self.target_s = repeats, target_s
        self.seed = seed
        self.refs = References(reference, budget, self._prepare)
        models: dict[tuple, Model] = {}
        self.series: list[tuple[Model, Series, Series]] = []  # (model, primal, variant)
        for v in variants:
            m = model
            if v.model is not None:
                key = (id(v.model) if isinstance(v.model, Model) else v.model,
                       tuple(sorted(v.settings.items())))  # fmt: skip
                if key not in models:
                    models[key] = resolve_model(v.model, **v.settings)
                m = models[key]
            # a series on its own model: its primal is named after it
            tag = (v.label or _tag(m)) if m is not model else None
            rv = v.resolve(tag, **defaults)
            pv = Series("primal", jit=rv.jit, precision=rv.precision, backend=rv.backend)
            self.series.append((m, pv.resolve(tag, **defaults), rv))
        primals = {(id(m), p.label) for m, p, _ in self.series}
        derivs = [v for _, _, v in self.series if v.mode != "primal"]
        self.total = len(sizes) * (len(primals) + len(derivs))
        self._env: dict[str, dict] = {}
        self._floor: dict[str, float | None] = {}
        self._prepared: dict[tuple, tuple[Any, list[str]]] = {}

    # ------------------------------------------------------------ caches
    def env(self, precision: str) -> dict[str, Any]:
        if precision not in self._env:
            self._env[precision] = environment(precision)
        return self._env[precision]

    def floor(self, precision: str) -> float | None:
        """The time of a trivial jitted call through adlab's own call path."""
        if precision not in self._floor:
            self._floor[precision] = dispatch_floor(precision, self.target_s)
        return self._floor[precision]

    # ------------------------------------------------------------- sweep
    def records(self) -> Iterator[Record]:
        for n in self.sizes:
            self._prepared = {}  # per size: compiled programs are shape-specific
            self.refs.new_size()
            args: dict[int, Any] = {}
            primal: dict[tuple, tuple[Record, Any]] = {}
            for m, pv, v in self.series:
                if id(m) not in args:
                    args[id(m)] = self._setup(m, n)
                point = args[id(m)]
                pkey = (id(m), pv.label)
                if pkey not in primal:
                    rec, cost = self._point(m, pv, n, point, None, None)
                    primal[pkey] = rec, cost
                    yield rec
                if v.mode == "primal":
                    continue
                ref = functools.partial(self.refs.get, m, point, n)
                yield self._point(m, v, n, point, ref, primal[pkey])[0]

    def _setup(self, m: Model, n: int) -> tuple | Exception:
        try:
            return m.setup(n, self.seed)
        except Exception as exc:  # recorded on every point of this size
            return exc

    def _prepare(self, m: Model, point: tuple, v: Series) -> tuple[Any, list[str]]:
        """``prepare`` once per size and options: the reference and the measured point
        share it (its compile time is the one measured). Returns (prepared, notes)."""
        key = (id(m), v.mode, v.scheme, v.jit, v.precision, v.backend)
        if key not in self._prepared:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UntrustedWarning)
                p = prepare(m, *point, mode=v.mode, jit=v.jit, precision=v.precision,
                            scheme=v.scheme or "central", backend=v.backend)  # fmt: skip
            notes = [str(w.message) for w in caught if issubclass(w.category, UntrustedWarning)]
            self._prepared[key] = (p, notes)
        return self._prepared[key]

    def _first_guess(self, v: Series, n: int, f_evals: int, primal_s: float | None):
        """For a series' first size only: two calls of f_evals primals (warm-up and
        one repeat), or None. Later sizes are predicted from the series itself."""
        if primal_s is None or v.mode == "primal" or self.budget.predict_call(v.label, n):
            return None
        return 2 * f_evals * primal_s

    def _base(self, m: Model, v: Series, n: int) -> dict[str, Any]:
        return dict(
            model=m.name, mode=v.mode, n=n, label=v.label, scheme=v.scheme, jit=bool(v.jit),
            precision=v.precision, backend=v.backend, settings=dict(m.settings),
            env=self.env(v.precision),
        )  # fmt: skip

    def _point(self, m, v, n, point, ref, primal) -> tuple[Record, Any]:
        """Measure one point; returns (record, XLA cost or None). ``ref`` is None or
        a callable giving the reference, asked for only once the point is measured."""
        base = self._base(m, v, n)
        primal_rec = primal[0] if primal else None
        primal_s = primal_rec.median_s if primal_rec else None
        base["primal_s"] = primal_s
        base["floor_s"] = self.floor(v.precision) if v.backend == "jax" else None
        if isinstance(point, Exception):
            return Record(**base, skipped=f"setup failed: {point}"), None
        reason = self.budget.over(v.label, n)
        if reason:
            return Record(**base, skipped=reason), None
        start = time.perf_counter()
        deadline = start + self.budget.budget_s
        try:
            p, notes = self._prepare(m, point, v)
            notes = list(notes)
            cost = p.cost()
            base.update(compile_s=p.compile_s, f_evals=p.f_evals)
            if time.perf_counter() > deadline:
                return Record(**base, skipped=(
                    f"prepare took {seconds(time.perf_counter() - start)} > budget "
                    f"{seconds(self.budget.budget_s)}")), cost  # fmt: skip
            first = self._first_guess(v, n, p.f_evals, primal_s)
            if first is not None and time.perf_counter() + first > deadline:
                return Record(**base, skipped=(
                    f"predicted {seconds(first)} ({p.f_evals} f evals x primal, twice) > budget "
                    f"{seconds(self.budget.budget_s)}")), cost  # fmt: skip
            call_args = p.inputs  # cast and on the device (as in a training loop): no copy timed
            richardson = v.scheme == "richardson"
            # Eager JAX compiles each operation on its first call at a new shape:
            # a second warm-up call is the first steady one.
            eager = v.backend == "jax" and not v.jit
            timing, out = measure(
                p.with_error if richardson else p, call_args, repeats=self.repeats,
                target_s=self.target_s, compile_s=p.compile_s, deadline=deadline,
                warmups=2 if eager else 1,
            )  # fmt: skip
        except Exception as exc:  # ModelError, SizeError, ...: shown, the sweep goes on
            msg = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            return Record(**base, skipped=msg), None
        self.budget.add(v.label, n, timing.median_s, p.compile_s, timing.first_call_s, p.f_evals)
        if timing.repeats == 1 and timing.loops == 1 and self.repeats > 1:
            notes.append(
                f"one call only: {seconds(timing.first_call_s)} per call leaves no time "
                f"for repeats within the budget {seconds(self.budget.budget_s)}"
            )
        fields = _timing_fields(timing)
        if v.mode == "primal":
            primal_s = timing.median_s
            fields["primal_s"] = primal_s
        if primal_s:
            fields["ratio_to_primal"] = timing.median_s / primal_s
        if cost:
            fields.update(
                flops=_finite(cost["flops"]),
                bytes_accessed=_finite(cost["bytes_accessed"]),
                temp_bytes=_finite(cost["temp_bytes"]),
            )
            fields["dispatch"] = dispatch(fields["flops"], base["env"])
            pcost = cost if v.mode == "primal" else (primal[1] if primal else None)
            if pcost:
                fields["primal_flops"] = _finite(pcost["flops"])
                if fields["flops"] is not None and fields["primal_flops"]:
                    fields["flops_ratio"] = fields["flops"] / fields["primal_flops"]
        if v.mode != "primal":
            value, estimate = out if richardson else (out, None)
            fields.update(point_errors(value, estimate, ref() if ref else None, notes))
        if notes:
            fields["note"] = "; ".join(notes)
        return Record(**{**base, **fields}), cost


def _timing_fields(t: Timing) -> dict[str, Any]:
    return dict(compile_s=t.compile_s, first_call_s=t.first_call_s, min_s=t.min_s,
                median_s=t.median_s, iqr_s=t.iqr_s, loops=t.loops, repeats=t.repeats,
                unstable=t.unstable)  # fmt: skip


def dispatch_floor(precision: str = "float64", target_s: float = TARGET_S) -> float | None:
    """Median seconds of a trivial jitted call (x + 1 on a scalar) through adlab's call path.

    Below this no derivative can go: it is the fixed cost of one call on this
    device. A derivative close to it is bound by overhead, not arithmetic.
    """
    model = Model.from_function(lambda x: x + 1.0, name="floor")
    with precision_scope(precision):
        x = jax.device_put(np.zeros((), dtype_of(precision)))
        p = prepare(model, x, mode="primal", precision=precision)
        return time_call(p, (x,), target_s=target_s).median_s
