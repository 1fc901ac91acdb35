"""The Lab's state and logic: a ``traitlets.HasTraits`` object with no widgets.

This is the jupyter-widgets tutorial's separation of concerns: everything the
Lab *does* lives here and can be driven and tested without a browser or a
widget; ``view.py`` only links widgets to these traits (``traits.py``). The
model being edited is ``model_state.py``'s part of it (its saved text:
``saved_edits.py``; the widget typed into: ``code_editor.py``); which variants the
ticks make is ``modes.py``'s.

Threading. All JAX work (``bench``, ``step_errors``: ``runner.run_job``) runs
on one worker thread shared by every Lab in the process (``worker.py``). The
worker never touches a trait: it puts ``(generation, kind, payload)`` events
on a queue and asks ``post`` to run ``_drain`` on the UI side. In a Jupyter
kernel ``post`` is the kernel's IO loop, so traits, widgets and Bokeh
documents only ever change on the kernel's main thread, between the messages
it handles; without a kernel (tests, scripts) ``_drain`` runs at once under
``lock``, which every UI-side change also takes. Each run has a generation
number; events of an outdated generation are dropped, so an old run's points
are never drawn over a new one.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from traitlets import observe

from .._vocab import AnyMode, Backend, Composition, ModelError
from ..catalog import list_models
from ..engine.backends import JAXJS, TFJS
from ..engine.model.source import Model
from ..measure.findings import crossovers
from ..report import to_csv
from ..report.runs import save
from .model_state import ModelEditing
from .modes import checkpoint_refusal, nested, nothing_chosen, on_device, variants
from .runner import DrainError, Job, batch, done_text, log_sizes, run_job
from .saved_edits import Edits
from .sources import resolve
from .traits import (
    DEFAULT_COMPOSITIONS,
    DEFAULT_FRAMEWORKS,
    DEFAULT_MODE_TICKS,
    DEFAULT_N,
    FRAMEWORK_CHOICES,
    MODE_CHOICES,
    N_MAX,
)
from .worker import worker

__all__ = ["DEBOUNCE_S", "FRAMEWORK_CHOICES", "MODE_CHOICES", "STEPS_N_MAX", "LabState"]

#: a settings change during a run restarts it after this quiet time
DEBOUNCE_S = 0.3
#: the step-size curves are drawn at min(n, this): their cost grows as n**2 (n
#: differences of an n-vector at each of ~60 steps), about 3 minutes at n = 10,000
#: on a laptop core, during which Stop would have to wait; their shape hardly depends on n
STEPS_N_MAX = 1000


class LabState(ModelEditing):
    """Everything the Lab knows and does; widgets only link to its traits.

    Args:
        model: a catalog name, model source text, a ``Model`` built from source,
            or a path to a model file.
        sizes: fixed sizes for the sweep (those up to ``n`` are used); default:
            log-spaced up to ``n``.
        modes: which of ``MODE_CHOICES`` to measure; default the first-order ones.
        frameworks: which of ``FRAMEWORK_CHOICES`` to run each mode on; default
            ``DEFAULT_FRAMEWORKS`` (JAX, and NumPy's differences as the baseline).
        n: the largest size, and the size of the step-size curves.
        compositions: how Hessian and HVP nest their modes (``COMPOSITION_CHOICES``);
            default forward-over-reverse.
        sparse: "dense", "sparse" (forward, reverse and Hessian from their sparsity
            pattern) or "both".
        checkpoints: for a model with loops, reverse mode once per choice of
            ``CHECKPOINT_CHOICES`` ("false", "true", "sqrt"); default "false" alone.
        post: runs a callable on the UI thread (the kernel's IO loop); None:
            at once, under ``lock``.
        edits: where edits are saved; default ``.adlab/`` in the working directory.
        steps: whether a run ends with the step-size curves at ``n``.
        steps_n_max: the largest n of the step-size curves (see ``STEPS_N_MAX``).
        **options: passed to ``adlab.bench`` (``budget_s``, ``repeats``, ...).
    """

    def __init__(
        self,
        model: str | Model = "normal_logpdf",
        sizes: Sequence[int] | None = None,
        modes: Iterable[AnyMode] | None = None,
        frameworks: Iterable[Backend] | None = None,
        *,
        n: int | None = None,
        compositions: Iterable[Composition] | None = None,
        sparse: str = "dense",
        checkpoints: Iterable[str] = ("false",),
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
        #: the Lab's page runner (``page_runner.PageRunner``), set by the view: JavaScript
        #: series run in the page while it is attached; None (no page): in Node
        self.page: Any = None
        if self.fixed_sizes:
            self.n_max = max(N_MAX, *self.fixed_sizes)
        self.n = n if n is not None else (max(self.fixed_sizes) if self.fixed_sizes else DEFAULT_N)
        self.modes = list(DEFAULT_MODE_TICKS if modes is None else modes)
        self.compositions = list(DEFAULT_COMPOSITIONS if compositions is None else compositions)
        self.sparse = sparse
        self.checkpoints = list(checkpoints)
        self.frameworks = list(DEFAULT_FRAMEWORKS if frameworks is None else frameworks)
        name, original = resolve(model)
        self._originals[name] = original
        self.model_names = [*list_models(), *([name] if name not in list_models() else [])]
        self._select(name)
        self._quiet = False

    # ----------------------------------------------------------- settings
    @property
    def sizes(self) -> list[int]:
        """The sizes the next run measures."""
        return log_sizes(self.n, self.fixed_sizes)

    @property
    def variants(self) -> list[str]:
        """The bench variants (= series labels): each selected mode on each framework
        (a second-order one in each composition; see ``modes.variants``)."""
        # checkpointing is offered for a model with loops, in reverse mode
        offered = checkpoint_refusal(self.model, self.modes) is None
        chosen = variants(self.modes, self.frameworks, self.scheme, self.compositions,
                          self.sparse, self.checkpoints if offered else ())  # fmt: skip
        if self.model is not None and self.model.uses_grad:  # particle, saddle: rr ff fr rf
            chosen = nested(chosen)
        devices = {TFJS: self.device, JAXJS: self.jaxjs_device}
        return [on_device(v, devices) for v in chosen]

    @observe("n", "modes", "compositions", "sparse", "frameworks", "scheme", "jit", "precision",
             "device", "jaxjs_device", "model", "checkpoints")  # fmt: skip
    def _settings_changed(self, change: dict) -> None:
        if self._quiet or change["new"] == change["old"]:
            return
        with self.lock:
            if self.running and not self.variants:
                self.stop()
                self.status += " " + nothing_chosen(self.modes)
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
            if not self.variants:
                self.status = nothing_chosen(self.modes)
                return
            # a cell that waits keeps the kernel from hearing the page: Node runs JS then
            self._begin(delay=0.0, in_page=not wait)
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

    def _begin(self, delay: float, in_page: bool = True) -> None:
        """Replace the current run by a new one (called under ``lock``); its JavaScript
        series run in the page where ``in_page`` and a page is attached."""
        page = self.page if in_page and getattr(self.page, "attached", False) else None
        self._generation += 1
        job = Job(
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
            page=page,
        )
        self._total = 0
        self._notes = []
        self._started = time.perf_counter()
        # emptied before run_id changes: an observer of run_id sees the new, empty run
        self.results = []
        self.steps = []
        self.crossovers = []
        self.patterns = []
        self.steps_n = job.steps_n
        self.run_id = self._generation
        self.progress = 0.0
        self.running = True
        self.status = "Starting..." if not delay else "Settings changed: starting again..."
        self._future = worker().submit(self._work, job)

    # ------------------------------------------------- worker -> UI side
    def _work(self, job: Job) -> None:
        """On the worker: measure ``job`` (``runner.run_job``), its events go to the UI side."""
        try:
            run_job(
                job,
                emit=lambda kind, payload: self._emit(job, kind, payload),
                superseded=lambda: job.generation != self._generation,
            )
        except DrainError as exc:
            self.bugs.append(exc)
            raise

    def _emit(self, job: Job, kind: str, payload: Any) -> None:
        """From the worker: hand one event to the UI side."""
        self._queue.append((job.generation, kind, payload))
        if self._post is not None:
            self._post(self._drain_posted)
            return
        try:
            self._drain()
        except Exception as exc:
            raise DrainError(f"applying {kind} failed: {exc}") from exc

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
            got = batch(events, self._generation)
            if got.total is not None:
                self._total = got.total
            if got.status is not None:
                self.status = got.status
            if got.records:
                self.results = [*self.results, *got.records]
                self.crossovers = crossovers(self.results)
                done = len(self.results)
                share = 0.9 if self.with_steps else 1.0
                self.progress = share * min(1.0, done / self._total) if self._total else 0.0
                last = got.records[-1]
                self.status = f"Measured {last.label} at n = {last.n} ({done} of {self._total})."
            if got.steps:
                self.steps = [*self.steps, *got.steps]
            if got.patterns:
                self.patterns = [*self.patterns, *got.patterns]
            self._notes.extend(got.notes)
            if got.end is not None:
                self._finish(*got.end)

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
        self.status = done_text(len(self.results), skipped, seconds, self.crossovers, self._notes)
        self._notes = []

    # ------------------------------------------------------------- export
    def export(self, stem: str | Path | None = None) -> tuple[Path, Path]:
        """Write the records to ``<stem>.csv`` and ``<stem>.json``; returns both paths.

        Default stem: ``.adlab/<model>-<date-time>`` beside the notebook. The CSV is
        ``adlab.to_csv``'s; the JSON is a saved run, the file ``adlab.save`` and ``adlab
        bench --save`` write (every field, the machine and the model's source included;
        ``adlab.load`` reads it, ``adlab compare`` compares two).
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
        save(records, json_path, source={self.model_name: self.source})
        return csv_path, json_path

    def export_js(self) -> Future:
        """Write ``<model>.grad.mjs`` beside the records ``export`` writes: the model's f and
        gradient at n as one JavaScript module, in the ticked js series' mode
        (``js_module``; ``adlab.export_js``). Traced on the worker, as every run's JAX work;
        the status then says where it went, or why not. Returns the future of its path."""
        from .js_module import said, write_module

        self.status = "Writing the JavaScript module..."
        ticked = (list(self.modes), list(self.frameworks))
        future = worker().submit(write_module, self.model, self.model_name, self.n, *ticked,
                                 self.edits.folder)  # fmt: skip
        future.add_done_callback(lambda f: self._on_ui(lambda: setattr(self, "status", said(f))))
        return future

    def _on_ui(self, fn: Callable[[], None]) -> None:
        """``fn`` run on the UI side (the kernel's IO loop; without one, at once, locked)."""
        if self._post is not None:
            self._post(fn)
            return
        with self.lock:
            fn()
