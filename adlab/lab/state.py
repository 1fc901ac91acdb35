"""The Lab's state and logic: a ``traitlets.HasTraits`` object with no widgets.

This is the jupyter-widgets tutorial's separation of concerns: everything the
Lab *does* lives here and can be driven and tested without a browser or a
widget; ``view.py`` only links widgets to these traits.

Threading. All JAX work (``bench``, ``step_errors``) runs on one worker thread
shared by every Lab in the process. The worker never touches a trait: it puts
``(generation, kind, payload)`` events on a queue and asks ``post`` to run
``_drain`` on the UI side. In a Jupyter kernel ``post`` is the kernel's IO
loop, so traits, widgets and Bokeh documents only ever change on the kernel's
main thread, between the messages it handles; without a kernel (tests,
scripts) ``_drain`` runs at once under ``lock``, which every UI-side change
also takes. Each run has a generation number; events of an outdated
generation are dropped, so an old run's points are never drawn over a new one.
"""

from __future__ import annotations

import collections
import hashlib
import math
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from traitlets import (
    Bool,
    Enum,
    Float,
    HasTraits,
    Instance,
    Int,
    List,
    TraitError,
    Unicode,
    observe,
    validate,
)

from .._vocab import PRECISIONS, SCHEMES, ModelError, Record, StepRecord
from ..accuracy.steps import STEP_SCHEMES, step_errors
from ..catalog import list_models, source_of
from ..engine.model import Model, is_model_source
from ..measure import bench
from ..measure.findings import Crossover, crossovers
from ..report import to_csv, to_json
from .edits import Edits

#: the mode checkboxes; "numpy" is finite differences in plain NumPy (the baseline)
MODE_CHOICES: tuple[str, ...] = ("forward", "reverse", "numeric", "complex-step", "numpy")
DEFAULT_N = 1000
N_MAX = 10_000
#: a settings change during a run restarts it after this quiet time
DEBOUNCE_S = 0.3
#: the step-size curves are drawn at min(n, this): their cost grows as n**2 (n
#: differences of an n-vector at each of ~60 steps), about 3 minutes at n = 10,000
#: on a laptop core, during which Stop would have to wait; their shape hardly depends on n
STEPS_N_MAX = 1000


class Worker:
    """One daemon thread running submitted calls in order (a one-thread executor).

    A daemon, unlike ``ThreadPoolExecutor``'s threads, which the interpreter
    joins at exit: a kernel shut down mid-sweep would first wait for the
    measurement in flight, a compile at n = 10,000 perhaps.
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="adlab-lab-worker", daemon=True)
        self.thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        self._calls.put((future, fn, args))
        return future

    def _loop(self) -> None:
        while True:
            future, fn, args = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # kept in the future, as an executor does
                future.set_exception(exc)


_worker: Worker | None = None
_worker_lock = threading.Lock()


def worker() -> Worker:
    """The one thread that does all of the Lab's JAX work, in this process."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = Worker()
        return _worker


def log_sizes(n: int, fixed: Sequence[int] | None = None) -> list[int]:
    """The sizes of a sweep up to ``n``: 1, 3, 10, 30, ... below n, then n itself.

    A grid size within 1.5x of n is left out (n = 102 measures 30 and 102, not
    100 and 102 too: two points that say the same thing, for twice the time).
    With ``fixed`` sizes, those up to ``n`` (or n itself, when none is).
    """
    n = max(1, int(n))
    if fixed:
        return sorted({int(s) for s in fixed if int(s) <= n}) or [n]
    out, k = [], 0
    while True:
        s = round(10 ** (k / 2))  # 1, 3, 10, 32 -> 30, 100, ...
        s = int(str(s)[0]) * 10 ** (len(str(s)) - 1)  # keep one significant digit
        if s * 1.5 > n:
            break
        out.append(s)
        k += 1
    return [*out, n]


def variant(mode: str, scheme: str) -> str:
    """The bench variant (and series label) of a mode checkbox."""
    if mode == "numeric":
        return f"numeric[{scheme}]"
    if mode == "numpy":
        return f"numeric[{scheme}](numpy)"
    return mode


@dataclass(frozen=True)
class _Job:
    """One run, as the worker sees it: a snapshot of the settings."""

    generation: int
    model: Model
    sizes: tuple[int, ...]
    variants: tuple[str, ...]
    scheme: str
    jit: bool
    precision: str
    n: int
    steps_n: int
    options: dict[str, Any] = field(default_factory=dict)
    steps: bool = True
    delay: float = 0.0


class _DrainError(Exception):
    """An error on the UI side while applying results (a bug, not a model error)."""


def _smoke_check(model: Model) -> None:
    """Run the model once, in NumPy at n=2, so a broken edit is caught on its line now."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        args = model.setup(2)
        try:
            model.function("numpy")(*args)
        except Exception as exc:
            err = model.translate(exc, "f at n=2 (a NumPy check of the edit)", jit=False)
            if err is None:
                raise
            raise err from exc


class LabState(HasTraits):
    """Everything the Lab knows and does; widgets only link to these traits.

    Args:
        model: a catalog name, model source text, a ``Model`` built from source,
            or a path to a model file.
        sizes: fixed sizes for the sweep (those up to ``n`` are used); default:
            log-spaced up to ``n``.
        modes: which of ``MODE_CHOICES`` to measure; default all.
        n: the largest size, and the size of the step-size curves.
        post: runs a callable on the UI thread (the kernel's IO loop); None:
            at once, under ``lock``.
        edits: where edits are saved; default ``.adlab/`` in the working directory.
        steps: whether a run ends with the step-size curves at ``n``.
        steps_n_max: the largest n of the step-size curves (see ``STEPS_N_MAX``).
        **options: passed to ``adlab.bench`` (``budget_s``, ``repeats``, ...).
    """

    model_name = Unicode(help="the catalog name (or own name) of the model being edited")
    model_names = List(Unicode(), help="what the model dropdown offers")
    source = Unicode(help="the editor's text")
    model = Instance(Model, allow_none=True, help="the last model that compiled")
    error = Instance(Exception, allow_none=True, help="why the current source does not run")
    error_text = Unicode()
    n = Int(DEFAULT_N)
    n_max = Int(N_MAX)
    modes = List(Unicode())
    scheme = Enum(SCHEMES, default_value="central")
    jit = Bool(True)
    precision = Enum(PRECISIONS, default_value="float64")
    show_compile = Bool(False)
    running = Bool(False)
    progress = Float(0.0)
    status = Unicode()
    results = List(help="the records of the current run, in the order measured")
    steps = List(help="the step-size points of the current run")
    crossovers = List(help="Crossover: where one series overtakes another")
    run_id = Int(0, help="changes when a new run replaces the results")
    steps_n = Int(0, help="the n of the current step-size curves")

    def __init__(
        self,
        model: str | Model = "normal_logpdf",
        sizes: Sequence[int] | None = None,
        modes: Iterable[str] | None = None,
        *,
        n: int | None = None,
        post: Callable[[Callable[[], None]], None] | None = None,
        edits: Edits | str | Path | None = None,
        steps: bool = True,
        steps_n_max: int = STEPS_N_MAX,
        **options: Any,
    ) -> None:
        super().__init__()
        self.lock = threading.RLock()
        self._post = post
        self._queue: collections.deque = collections.deque()
        self._generation = 0
        self._future: Future | None = None
        self._total = 0
        self._started = 0.0
        self._quiet = True
        self._notes: list[str] = []
        #: errors in applying results (bugs, not model errors); ``wait`` raises the first
        self.bugs: list[BaseException] = []
        self.fixed_sizes = tuple(int(s) for s in sizes) if sizes else None
        self.options = dict(options)
        self.with_steps = steps
        self.steps_n_max = int(steps_n_max)
        self.edits = edits if isinstance(edits, Edits) else Edits(edits)
        self._originals: dict[str, str] = {}
        if self.fixed_sizes:
            self.n_max = max(N_MAX, *self.fixed_sizes)
        self.n = n if n is not None else (max(self.fixed_sizes) if self.fixed_sizes else DEFAULT_N)
        self.modes = list(MODE_CHOICES if modes is None else modes)
        name, original = self._resolve(model)
        self._originals[name] = original
        self.model_names = [*list_models(), *([name] if name not in list_models() else [])]
        self._select(name)
        self._quiet = False

    # ------------------------------------------------------------- models
    def _resolve(self, model: str | Model) -> tuple[str, str]:
        """(name, original source) of the model argument."""
        if isinstance(model, Model):
            if model.source is None:
                raise TypeError("the Lab edits source: build the model with Model.from_source")
            # settings given with the model go into the editor, so they stay with edits
            text, name = model.source_with_settings(), model.name
        elif isinstance(model, str) and model in list_models():
            return model, source_of(model)
        elif isinstance(model, str) and is_model_source(model):
            text, name = model, "custom"
        elif isinstance(model, str) and model.endswith(".py") and Path(model).is_file():
            text, name = Path(model).read_text(), Path(model).stem
        else:
            raise ValueError(
                f"no model named {model!r}; choose one of {list_models()}, or pass model source"
            )
        if name in list_models() and text == source_of(name):
            return name, text
        # Own models: the saved edit is keyed by the original text, so a changed
        # cell starts afresh while re-running the same cell restores the edit.
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        return f"{name}-{digest}", text

    def original(self, name: str | None = None) -> str:
        """The source a model started from (the catalog's, or the one given)."""
        name = name or self.model_name
        if name not in self._originals:
            self._originals[name] = source_of(name)
        return self._originals[name]

    def _select(self, name: str) -> None:
        """Load model ``name`` into the editor: its saved edit if there is one."""
        original = self.original(name)
        saved = self.edits.load(name)
        restored = saved is not None and saved != original
        with self.lock:
            self.model_name = name
            self._set_source(saved if restored else original)
            if restored:
                where = self.edits.path(name)
                self.status = (
                    f"Restored your edit of {name} from {where.parent.name}/{where.name} "
                    "(Reset to go back to the original)."
                )
                if self.error is not None:  # a broken saved edit: run the original meanwhile
                    try:
                        self.model = self._compile(original, name)
                    except Exception:  # noqa: BLE001 - the edit's own error is what to show
                        return
                    self.status += " It does not run yet, so the original model runs meanwhile."
            elif self.error is None:
                self.status = f"Model {name}: press Run to measure."

    @observe("model_name")
    def _model_name_changed(self, change: dict) -> None:
        if self._quiet or change["new"] == change["old"]:
            return
        self._select(change["new"])

    def _compile(self, text: str, name: str) -> Model:
        base = name if name in list_models() else name.rsplit("-", 1)[0]
        model = Model.from_source(text, name=base)
        _smoke_check(model)
        return model

    def set_source(self, text: str) -> None:
        """Replace the model source, as if typed into the editor."""
        self.source = text

    def reset_source(self) -> None:
        """Go back to the original source and forget the saved edit."""
        with self.lock:
            self.edits.drop(self.model_name)
            self.source = self.original()
            self.status = f"Back to the original {self.model_name}."

    @observe("source")
    def _source_changed(self, change: dict) -> None:
        if self._quiet:
            return
        with self.lock:
            note = ""
            try:
                self.edits.save(self.model_name, change["new"], self.original())
            except OSError as exc:
                note = f" (Your edit could not be saved: {exc})"
            self._set_source(change["new"], note)

    def _set_source(self, text: str, note: str = "") -> None:
        """Compile ``text``; on success it becomes the model, else the error is shown."""
        if self.source != text:
            quiet, self._quiet = self._quiet, True
            try:
                self.source = text
            finally:
                self._quiet = quiet
        try:
            model = self._compile(text, self.model_name)
        except Exception as exc:  # ModelError mostly; anything else is shown too
            self.error = exc
            where = f"line {exc.lineno}" if getattr(exc, "lineno", None) else "the model"
            kept = " The last good model still runs." if self.model is not None else ""
            self.status = f"Error in {where}.{kept}{note}"
            return
        self.error = None
        self.model = model
        if not self._quiet and not self.running:
            self.status = "Model updated: press Run to measure it." + note

    @observe("error")
    def _error_changed(self, change: dict) -> None:
        exc = change["new"]
        if exc is None:
            self.error_text = ""
        elif isinstance(exc, ModelError):
            self.error_text = str(exc)
        else:
            self.error_text = f"{type(exc).__name__}: {exc}"

    # ----------------------------------------------------------- settings
    @validate("n")
    def _valid_n(self, proposal: dict) -> int:
        return int(min(max(int(proposal["value"]), 1), self.n_max))

    @validate("modes")
    def _valid_modes(self, proposal: dict) -> list[str]:
        modes = list(proposal["value"])
        unknown = [m for m in modes if m not in MODE_CHOICES]
        if unknown:
            raise TraitError(f"unknown mode(s) {unknown}; choose from {list(MODE_CHOICES)}")
        return [m for m in MODE_CHOICES if m in modes]  # one order, no repeats

    @property
    def sizes(self) -> list[int]:
        """The sizes the next run measures."""
        return log_sizes(self.n, self.fixed_sizes)

    @property
    def variants(self) -> list[str]:
        """The bench variants (= series labels) of the selected modes."""
        return [variant(m, self.scheme) for m in self.modes]

    @observe("n", "modes", "scheme", "jit", "precision", "model")
    def _settings_changed(self, change: dict) -> None:
        if self._quiet or change["new"] == change["old"]:
            return
        with self.lock:
            if self.running and not self.modes:
                self.stop()
                self.status += " No mode is chosen."
            elif self.running:
                self._begin(delay=DEBOUNCE_S)
            elif self.results and self.error is None:
                self.status = "Settings changed: press Run to measure with them."

    # ---------------------------------------------------------------- run
    def run(self, wait: bool = False, timeout: float | None = None) -> None:
        """Start a sweep with the current settings (a running one is replaced)."""
        with self.lock:
            if self.model is None:
                self.status = "Nothing to run: fix the model's error first."
                return
            if not self.modes:
                self.status = "Choose at least one mode to measure."
                return
            self._begin(delay=0.0)
        if wait:
            self.wait(timeout)

    def stop(self) -> None:
        """Stop the sweep before its next measurement; the points so far stay."""
        with self.lock:
            if not self.running:
                return
            self._generation += 1  # the worker checks this before each measurement
            self.running = False
            self.status = f"Stopped after {len(self.results)} points."

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current run ends; True if it did within ``timeout``.

        Applies the run's results on this thread while waiting, so it is the
        way to run synchronously in a notebook cell (``run(wait=True)``).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            future = self._future
            if future is None:
                break
            futures.wait([future], timeout=0.05)
            self._drain()
            if future is self._future and future.done():
                break
            if deadline is not None and time.monotonic() > deadline:
                return False
        self._drain()
        if self.bugs:
            raise self.bugs[0]
        return True

    def _begin(self, delay: float) -> None:
        """Replace the current run by a new one (called under ``lock``)."""
        self._generation += 1
        job = _Job(
            generation=self._generation,
            model=self.model,
            sizes=tuple(self.sizes),
            variants=tuple(self.variants),
            scheme=self.scheme,
            jit=self.jit,
            precision=self.precision,
            n=self.n,
            steps_n=min(self.n, self.steps_n_max),
            options=dict(self.options),
            steps=self.with_steps,
            delay=delay,
        )
        self._total = 0
        self._notes = []
        self._started = time.perf_counter()
        # emptied before run_id changes: an observer of run_id sees the new, empty run
        self.results = []
        self.steps = []
        self.crossovers = []
        self.steps_n = job.steps_n
        self.run_id = self._generation
        self.progress = 0.0
        self.running = True
        self.status = "Starting..." if not delay else "Settings changed: starting again..."
        self._future = worker().submit(self._work, job)

    # ------------------------------------------------------------- worker
    def _superseded(self, job: _Job) -> bool:
        return job.generation != self._generation

    def _emit(self, job: _Job, kind: str, payload: Any = None) -> None:
        """From the worker: hand one event to the UI side."""
        self._queue.append((job.generation, kind, payload))
        if self._post is not None:
            self._post(self._drain_posted)
            return
        try:
            self._drain()
        except Exception as exc:
            raise _DrainError(f"applying {kind} failed: {exc}") from exc

    def _work(self, job: _Job) -> None:
        """The worker's side of one run: measure, emit, stop when superseded."""
        if self._superseded(job):
            return
        end = time.monotonic() + job.delay
        while time.monotonic() < end:  # the debounce: a newer run supersedes this one
            time.sleep(0.02)
            if self._superseded(job):
                return
        try:
            sweep = bench(job.model, job.sizes, list(job.variants), scheme=job.scheme,
                          jit=job.jit, precision=job.precision, **job.options)  # fmt: skip
            self._emit(job, "total", sweep.total)
            try:
                for record in sweep:
                    if self._superseded(job):
                        return
                    self._emit(job, "record", record)
                    if self._superseded(job):  # stop before the next measurement starts
                        return
            finally:
                sweep.close()
            if job.steps:
                self._emit(job, "status", f"Step sizes at n = {job.steps_n}...")
                if job.steps_n < job.n:
                    self._emit(job, "note", f"Step-size curves at n = {job.steps_n}, not "
                               f"{job.n}: they take minutes there (steps_n_max).")  # fmt: skip
                # one call, so one reference; the schemes come in order, complex step
                # last, and a model it refuses (not analytic) raises only when reached
                try:
                    for point in step_errors(job.model, job.steps_n, schemes=STEP_SCHEMES,
                                            precision=job.precision):  # fmt: skip
                        if self._superseded(job):
                            return
                        self._emit(job, "step", point)
                except _DrainError:
                    raise
                except Exception as exc:
                    self._emit(job, "note", f"Step-size curves stopped: {exc}")
            self._emit(job, "done")
        except _DrainError as exc:
            self.bugs.append(exc)
            raise
        except Exception as exc:
            self._emit(job, "failed", exc)

    def _drain_posted(self) -> None:
        """``_drain`` run by the kernel's IO loop, where an exception would only be logged."""
        try:
            self._drain()
        except Exception as exc:
            self.bugs.append(exc)
            self.status = f"Internal error while showing results: {type(exc).__name__}: {exc}"

    def _drain(self) -> None:
        """On the UI side: apply the queued events of the current run, in one batch."""
        with self.lock:
            events = []
            while self._queue:
                events.append(self._queue.popleft())
            records: list[Record] = []
            steps: list[StepRecord] = []
            notes: list[str] = []
            end: tuple[str, Any] | None = None
            for generation, kind, payload in events:
                if generation != self._generation:
                    continue  # an outdated run: never drawn
                if kind == "record":
                    records.append(payload)
                elif kind == "step":
                    steps.append(payload)
                elif kind == "total":
                    self._total = payload
                elif kind == "status":
                    self.status = payload
                elif kind == "note":
                    notes.append(payload)
                else:
                    end = (kind, payload)
            if records:
                self.results = [*self.results, *records]
                self.crossovers = crossovers(r for r in self.results if r.mode != "primal")
                done = len(self.results)
                share = 0.9 if self.with_steps else 1.0
                self.progress = share * min(1.0, done / self._total) if self._total else 0.0
                last = records[-1]
                self.status = f"Measured {last.label} at n = {last.n} ({done} of {self._total})."
            if steps:
                self.steps = [*self.steps, *steps]
            self._notes.extend(notes)
            if end is not None:
                self._finish(*end)

    def _finish(self, kind: str, payload: Any) -> None:
        self.running = False
        self._generation += 1  # nothing more belongs to this run
        seconds = time.perf_counter() - self._started
        if kind == "failed":
            if isinstance(payload, ModelError):
                self.error = payload
            self.status = f"The run failed: {type(payload).__name__}: {payload}"
            return
        self.progress = 1.0
        skipped = sum(1 for r in self.results if r.skipped)
        text = f"Done: {len(self.results)} points in {seconds:.1f} s"
        if skipped:
            text += f" ({skipped} skipped: see the table)"
        text += "."
        if self.crossovers:
            text += " " + "; ".join(c.describe() for c in _main_crossovers(self.crossovers)) + "."
        if self._notes:
            text += " " + " ".join(self._notes)
        self._notes = []
        self.status = text

    # ------------------------------------------------------------- export
    def export(self, stem: str | Path | None = None) -> tuple[Path, Path]:
        """Write the records to ``<stem>.csv`` and ``<stem>.json``; returns both paths.

        Default stem: ``.adlab/<model>-<date-time>`` beside the notebook. The
        formats are ``adlab.to_csv`` and ``adlab.to_json`` (every field, the
        environment included; ``adlab.from_json`` reads the JSON back).
        """
        if stem is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            stem = self.edits.folder / f"{self.model_name}-{stamp}"
        stem = Path(stem)
        with self.lock:
            records = list(self.results)
        stem.parent.mkdir(parents=True, exist_ok=True)
        csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
        csv_path.write_text(to_csv(records), encoding="utf-8")
        json_path.write_text(to_json(records), encoding="utf-8")
        return csv_path, json_path


def _main_crossovers(found: Sequence[Crossover], limit: int = 3) -> list[Crossover]:
    """The first crossover of each pair, at most ``limit`` of them: the status line is short."""
    seen: set[frozenset[str]] = set()
    out = []
    for c in found:
        pair = frozenset((c.faster, c.slower))
        if pair not in seen and math.isfinite(c.n):
            seen.add(pair)
            out.append(c)
    return out[:limit]
