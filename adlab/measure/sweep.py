"""``bench``: sweep a model over sizes and variants, streaming the records of each size.

Order: for each size n (ascending), for each variant, the primal of f with the
variant's options (measured once per model and options) and then the variant
itself. At one size every point is prepared and warmed up (f first; the
derivatives' JAX programs compiled two at a time, ``preparing.Preparing``), then
their repeats, and the dispatch floor's, are taken in turn (round robin): a
change of load on a shared machine then hits all of them alike, instead of
whichever point happened to run during it. The records of a size are yielded
as soon as it is done, so a UI can plot them live; a point predicted to take
longer than its budget is yielded as skipped, with the reason, instead of
being run.

With the first size, the machine's noise is measured (``floor.machine_noise``: the
spread of the floor's repeats beside it, topped up to ``floor.NOISE_REPEATS``, rather
than a separate warmed-up floor before it, which delayed the first record) into each
record's ``env["noise"]``; a noisy machine gets a ``NoisyMachineWarning`` before the
first record. The noise is that of the sweep's own repeats (``TARGET_S``), the margin
that records of two sweeps are compared with: a busy machine's preemption swells a short
window several-fold, so it reads far higher than at ``time_call``'s 10 ms (3 to 9
against 0.03 to 0.4 at load 6 on 2 cores, at 2 ms), and taken at 10 ms the margin was
too small: an A/A test of two sweeps found 4 significant crossovers in 9 runs at load 4.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .._format import seconds
from .._vocab import Backend, Precision, Record, Scheme, Timing
from ..catalog import resolve_model
from ..engine.backends import DEFAULT, REFERENCE, get_backend, levels
from ..engine.backends.inner_grad import inner_note
from ..engine.model.source import Model
from ..engine.modes import get_rule
from .budget import Budget
from .env import environment
from .floor import (
    NOISE_LIMIT,
    NoisyMachineWarning,
    dispatch_floor,
    floor_watch,
    machine_noise,
    noise_text,
)
from .intervals import INTERVAL_WIDTH
from .point import Point, memory_fields, reason
from .point_errors import CHECK_MAX_INPUTS, REFERENCES, References, point_errors
from .preparing import Preparing
from .series import Series, parse_variants
from .stream import Sweep
from .timing import REPEATS, Stopwatch, interleave

#: the default sweep: 7 sizes from 1 to 1000 ...
DEFAULT_SIZES: tuple[int, ...] = (1, 3, 10, 30, 100, 300, 1000)
#: ... and 5 ways of taking the derivative
DEFAULT_MODES: tuple[str, ...] = (
    "forward", "reverse", "numeric[central]", "numeric[richardson]", "complex-step",
)  # fmt: skip


def default_modes(backend: str | None = None) -> tuple[str, ...]:
    """``DEFAULT_MODES`` that ``backend`` can run (NumPy has no AD: its differences and
    complex step); an explicit mode the backend lacks is still refused, with the reason."""
    if backend is None:
        return DEFAULT_MODES
    from ..engine.backends import get_backend
    from ..engine.modes import get_rule

    impl = get_backend(backend)
    return tuple(m for m in DEFAULT_MODES if get_rule(m.split("[")[0]).runs_on(impl))


#: default seconds one point may take, compile included
BUDGET_S = 2.0
#: seconds per repeat in a sweep: a fifth of ``time_call``'s, since a sweep's repeats go
#: on where they scatter (``interval_width``) instead of being long to begin with. At
#: 2 ms an A/A test of two sweeps (benchmarks/findings_aa.py) once found 3 significant
#: crossovers in 3 quiet runs, each one size's verdict (a burst of load over that size's
#: round robin); since a verdict must hold at the next size too (``findings``), none in
#: 12 runs at load 2-3, and the warm default sweep takes about 2 s (5 ms: 4.5-4.8 s)
TARGET_S = 0.002
__all__ = ["BUDGET_S", "CHECK_MAX_INPUTS", "DEFAULT_MODES", "DEFAULT_SIZES", "REFERENCES",
           "Sweep", "bench", "dispatch_floor"]  # fmt: skip


def _tag(model: Model) -> str:
    extra = ",".join(f"{k}={v}" for k, v in model.settings.items())
    return f"{model.name}{{{extra}}}" if extra else model.name


def bench(
    model: str | Model,
    sizes: Iterable[int] = DEFAULT_SIZES,
    modes: str | Sequence[str | Mapping[str, Any] | Series] = DEFAULT_MODES,
    *,
    scheme: Scheme = "central",
    jit: bool | None = None,
    precision: Precision = "float64",
    backend: Backend = DEFAULT,
    budget_s: float = BUDGET_S,
    repeats: int = REPEATS,
    target_s: float = TARGET_S,
    interval_width: float | None = INTERVAL_WIDTH,
    reference: str | None = "auto",
    seed: int = 0,
    settings: Mapping[str, Any] | None = None,
    warn: bool = True,
    memory: bool = True,
) -> Sweep:
    """Measure ``modes`` of ``model`` at each size; yields a ``Record`` per point, as they come.

    Args:
        model: a catalog name, a path to a model file, or a ``Model``.
        sizes: the sizes n (passed to the model's ``setup``); measured ascending.
        modes: variants, e.g. ``["forward", "numeric[richardson]", "reverse(eager)"]``,
            or one comma-separated string (syntax: ``adlab.measure.series``).
        scheme, jit, precision, backend: defaults for variants that do not say; ``jit``
            None: each backend as its users run it (JAX jitted, the others eagerly).
        budget_s: seconds one point may take, compile included. A point
            predicted over it is skipped with the reason; a measurement stops
            its repeats before passing it.
        repeats: the fewest timing repeats per point (median, IQR and the median's
            interval over them), taken in turn with the other points of the same size.
        target_s: seconds per repeat that ``timeit``'s autorange aims for.
        interval_width: each point takes repeats past ``repeats`` until its median's
            interval is at most this wide relative to it (``intervals.MAX_REPEATS``
            at the most, within ``budget_s``); None: exactly ``repeats``.
        reference: what ``error`` is measured against: "auto" (float64 reverse
            mode, checked against forward mode up to ``CHECK_MAX_INPUTS``
            inputs), "checked", "reverse" (unchecked), or None (no errors).
        seed: the seed for the model's ``setup``.
        settings: new values for the model's UPPERCASE settings.
        warn: warn (``NoisyMachineWarning``) when the machine is too noisy, before
            the first record. The Lab and the command line say it in their own words
            instead (``floor.noisy(records)``).
        memory: measure each point's memory once, after its repeats (``peak_bytes``,
            ``residual_bytes``, ``memory_counter``: ``Prepared.memory``); False leaves
            them None.

    Returns:
        A ``Sweep``: iterate it for records; ``.total`` and ``.records``.
        Per size: one primal record (mode "primal") per model and options,
        then one record per variant, all yielded once the size is done.
        KeyboardInterrupt propagates; the records yielded before it stay intact.

    Example:
        >>> sweep = adlab.bench("rosenbrock", [3, 10], ["forward", "reverse"], warn=False)
        >>> records = list(sweep)
        >>> sorted({(r.label, r.n) for r in records})
        [('forward', 3), ('forward', 10), ('primal', 3), ('primal', 10),
         ('reverse', 3), ('reverse', 10)]
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
        interval_width=interval_width,
        reference=reference,
        seed=seed,
        warn=warn,
        memory=memory,
    )
    return Sweep(run.records(), run.total)


class _Run:
    """The state of one sweep: resolved variants, caches, budget history."""

    def __init__(self, model, sizes, variants, defaults, *, budget, repeats, target_s,
                 reference, seed, warn=True, interval_width=INTERVAL_WIDTH,
                 memory=True):  # fmt: skip
        self.sizes = sizes
        self.memory = memory
        self.budget = budget
        self.repeats, self.target_s = repeats, target_s
        self.interval_width = interval_width
        self.seed = seed
        self.warn = warn
        self.prep = Preparing(budget, target_s)
        self.refs = References(reference, budget, self.prep.prepare)
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
            pv = Series("primal", jit=rv.jit, precision=rv.precision, backend=rv.backend,
                        device=rv.device, where=rv.where)  # fmt: skip
            self.series.append((m, pv.resolve(tag, **defaults), rv))
        primals = {(id(m), p.label) for m, p, _ in self.series}
        derivs = [v for _, _, v in self.series if v.mode != "primal"]
        self.total = len(sizes) * (len(primals) + len(derivs))
        self._env: dict[tuple[str, str], dict] = {}
        self._noise: float | None = None
        self._noise_alone: float | None = None
        self.id = uuid.uuid4().hex[:12]  # env["sweep"]: which records were measured together

    def env(self, precision: str, backend: str = DEFAULT,
            device: str | None = None) -> dict[str, Any]:  # fmt: skip
        """The records' environment: JAX's and the machine's, and the framework that ran
        them (a JavaScript runtime's version, its timer's resolution: ``impl["env"]``)."""
        if (precision, backend, device) not in self._env:
            impl = get_backend(backend).on_device(device).environment()
            self._env[(precision, backend, device)] = {
                **environment(precision), "noise": self._noise,
                "noise_alone": self._noise_alone, "sweep": self.id,
                "framework": backend, "framework_version": impl["version"],
                "framework_device": impl["device"], **impl.get("env", {}),
            }  # fmt: skip
        return self._env[(precision, backend, device)]

    # ------------------------------------------------------------- sweep
    def records(self) -> Iterator[Record]:
        for n in self.sizes:
            yield from self._size(n)

    def _check_noise(self, floors: dict[tuple, Stopwatch]) -> None:
        """How noisy the machine is, from JAX's floor beside the first size (topped up
        to ``NOISE_REPEATS``; measured alone where the size has none), into every
        record's ``env["noise"]`` before the first record is made: the margin records
        of two sweeps are compared with (``findings.compare``).

        The warning asks more: the floor timed alone, with nothing in turn beside it,
        must spread as much (``env["noise_alone"]``). Beside a size's points the
        floor's repeats pay for their neighbours (a worker thread left spinning, a
        cache another program filled): on an idle machine they spread 2-60% over 14
        sweeps at 2 ms, alone 2-19%; by that spread only, 3 of the 14 called it noisy.
        """
        precision = self.series[0][2].precision if self.series else "float64"
        watch = floors.get((precision, False, REFERENCE, None))
        self._noise = machine_noise(precision, self.target_s, watch=watch)
        alone = self._noise
        if watch is not None and self._noise > NOISE_LIMIT:
            alone = min(self._noise, machine_noise(precision, self.target_s))
        self._noise_alone = alone
        for env in self._env.values():
            env["noise"], env["noise_alone"] = self._noise, alone
        if self.warn and alone > NOISE_LIMIT:
            # stacklevel: past _size, records() and Sweep.__next__, to the loop that asked
            warnings.warn(noise_text(alone), NoisyMachineWarning, stacklevel=5)

    def _size(self, n: int) -> list[Record]:
        """All points of one size: f prepared and warmed, the derivatives prepared (JAX's
        two at a time, ``Preparing.compile_all``) and warmed, then their repeats (and the
        floor's) taken in turn; their records in the series' order."""
        self.prep.new_size()
        self.refs.new_size()
        args: dict[int, tuple | Exception] = {}
        primals: dict[tuple, Point] = {}
        points: list[Point] = []
        for m, pv, v in self.series:
            if id(m) not in args:
                args[id(m)] = self._setup(m, n)
            pkey = (id(m), pv.label)
            if pkey not in primals:
                primals[pkey] = self.prep.start(
                    Point(m, pv, args[id(m)], None, self._base(m, pv, n))
                )
                points.append(primals[pkey])
            if v.mode != "primal":
                points.append(Point(m, v, args[id(m)], primals[pkey], self._base(m, v, n)))
        # f first (how it grew tells how the passes of f grow), then the derivatives,
        # compiled two at a time, then warmed one by one
        later = [p for p in points if p.primal is not None]
        self.prep.compile_all([p for p in later if self.prep.check(p)])
        for p in later:
            self.prep.warm(p)
        live = [p for p in points if p.watch is not None]
        # the floors beside them: each framework's trivial call, and JAX's hand-off to
        # a worker thread; none for a framework whose points were all refused (a device
        # the page lacks: its floor would fail as they did)
        wanted = [(p.v.precision, False, p.v.backend, p.v.device) for p in live]
        wanted += [(p.v.precision, True, REFERENCE, None) for p in live if p.dispatch == "async"]
        floors = {key: floor_watch(key[0], key[1], target_s=self.target_s, backend=key[2],
                                   device=key[3])
                  for key in dict.fromkeys(wanted)}  # fmt: skip
        interleave([*floors.values(), *(p.watch for p in live)], self.repeats, self.interval_width)
        floor_t = {key: w.timing() for key, w in floors.items()}
        if self._noise is None:  # the first size: its floor's repeats say how noisy
            self._check_noise(floors)
        for p in points:
            key = (p.v.precision, p.v.backend, p.v.device)
            p.record = self._finish(p, floor_t.get((key[0], False, *key[1:])),
                                    floor_t.get((key[0], True, *key[1:])))  # fmt: skip
        return [p.record for p in points]

    def _setup(self, m: Model, n: int) -> tuple | Exception:
        try:
            return m.setup(n, self.seed)
        except Exception as exc:  # recorded on every point of this size
            return exc

    def _base(self, m: Model, v: Series, n: int) -> dict[str, Any]:
        return dict(
            model=m.name, mode=v.mode, n=n, label=v.label, scheme=v.scheme, jit=bool(v.jit),
            precision=v.precision, backend=v.backend, settings=dict(m.settings),
            env=self.env(v.precision, v.backend, v.device), order=get_rule(v.mode).order,
            levels=levels(v.backend, v.mode, v.scheme, v.inner or "reverse", m.uses_grad),
            **self._placement(v),
        )  # fmt: skip

    def _placement(self, v: Series) -> dict[str, Any]:
        """The record's ``device`` (the one adlab chose, else the framework's own) and
        ``where`` (JavaScript: where it runs now; the stopwatch's answer replaces it)."""
        impl = get_backend(v.backend).on_device(v.device)
        device = impl.device or self.env(v.precision, v.backend, v.device)["framework_device"]
        try:
            where = impl.placed(v.where)
        except ValueError:  # prepare says why, as the point's reason
            where = v.where
        return {"device": device, "where": where}

    def _finish(self, pt: Point, floor: Timing | None, async_floor: Timing | None) -> Record:
        """The point's record, once its repeats are in (``floor``: its framework's;
        ``async_floor``: JAX's hand-off, None elsewhere)."""
        v, n, base = pt.v, pt.base["n"], pt.base
        base.update(primal_s=pt.primal_s(), floor_s=floor.median_s if floor else None,
                    async_floor_s=async_floor.median_s if async_floor else None)  # fmt: skip
        if pt.watch is not None and pt.watch.error is not None:
            pt.skipped = reason(pt.watch.error)
        if getattr(pt.watch, "where", None) is not None:  # timed in a JavaScript runtime:
            base["where"] = pt.watch.where  # the one that timed it names itself
            base["env"] = {**base["env"], **pt.watch.env}
        if pt.skipped:
            return Record(**base, skipped=pt.skipped)
        p, notes = pt.prepared, pt.notes
        timing = pt.watch.timing(p.compile_s)
        # a program loaded from adlab's cache: the budget sees what compiling took, as the
        # next size may have to compile (a load time would hide a growing compile), marked
        # as read from the cache: a past compile, under unknown load (budget's docstring)
        cached = bool(getattr(p, "compile_loaded", False))
        compile_s = getattr(p, "cold_compile_s", p.compile_s)
        self.budget.add(v.label, n, timing.median_s, compile_s, timing.first_call_s, p.f_evals,
                        cached=cached)  # fmt: skip
        over = timing.repeats == 1 and timing.loops == 1 and self.repeats > 1
        if over:
            notes.append(
                f"one call only: {seconds(timing.median_s)} per warm call leaves no time "
                f"for repeats within the budget {seconds(self.budget.budget_s)}"
            )
        # a program handed to a worker thread is bound by the hand-off's floor
        bound = async_floor if pt.dispatch == "async" and async_floor else floor
        fields = pt.fields(timing, bound)
        if self.memory:  # once, outside the timed loop (the repeats are in)
            fields.update(memory_fields(p, notes, over and getattr(p, "compiled", None) is None))
            self.budget.add_memory(v.label, n, fields.get("peak_bytes"))  # the next size's
        if v.mode != "primal":
            # the reference compiles reverse (and forward) mode: after the timings
            out = pt.watch.result
            value, estimate = out if v.scheme == "richardson" else (out, None)
            value = value.toarray() if hasattr(value, "toarray") else value  # sparse: dense
            if p.trusted and p.note and (base["order"] == 2 or v.sparse):
                # what a numeric Hessian differences; primitives a pattern took as dense
                notes.append(p.note)
            ref = self.refs.get(pt.m, pt.args, n, v.mode)
            fields.update(point_errors(value, estimate, ref, notes, v.mode, v.scheme, v.precision))
        why = inner_note(v.backend) if pt.m.uses_grad else None
        if why:  # the model's grad(...) is no AD there
            notes.append(why)
        if notes:
            fields["note"] = "; ".join(notes)
        return Record(**{**base, **fields})
