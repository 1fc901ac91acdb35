"""One run of the Lab, as the worker thread sees it: what to measure, and measuring it.

A ``Job`` is a snapshot of the Lab's settings. ``run_job`` measures it on the
worker thread and reports by events, ``emit(kind, payload)``: "total",
"record", "status", "note" (the machine's noise; after the sweep, the
advisor's verdict at the slider's n, per derivative, and a sparse series'
colors), "pattern" (a sparse kind's pattern), "step", then "done" or "failed". It checks
``superseded()`` before each measurement, so a newer run (or Stop) ends it
there. It never touches a trait: the Lab applies the events on its UI side.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._vocab import Record, StepRecord
from ..accuracy.steps import STEP_SCHEMES, step_errors
from ..engine.backends import DEFAULT, REFERENCE, with_fact
from ..engine.backends.js.transport import running_in
from ..engine.model.source import Model
from ..measure import bench
from ..measure.advisor import advice_from
from ..measure.findings import Crossover, computes, tied_pairs
from ..measure.floor import noisy
from ..measure.series import parse_variant
from .patterns import SparsityShown, colors_notes, patterns
from .plan import plan


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


@dataclass(frozen=True)
class Job:
    """One run, as the worker sees it: a snapshot of the settings."""

    generation: int
    model: Model
    sizes: tuple[int, ...]
    variants: tuple[str, ...]
    scheme: str
    jit: bool | None  # None: each framework as its users run it
    precision: str
    n: int
    steps_n: int
    options: dict[str, Any] = field(default_factory=dict)
    steps: bool = True
    delay: float = 0.0
    page: Any = None  # the Lab's page runner, where JavaScript series run (None: Node)


@dataclass
class Batch:
    """The events of one run that reached the UI side at once, sorted by kind."""

    records: list[Record] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    patterns: list[SparsityShown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    total: int | None = None
    status: str | None = None
    end: tuple[str, Any] | None = None  # ("done", None) or ("failed", the exception)


def batch(events: Iterable[tuple[int, str, Any]], generation: int) -> Batch:
    """The events of run ``generation``, sorted; those of an outdated run are dropped."""
    out = Batch()
    for gen, kind, payload in events:
        if gen != generation:
            continue  # an outdated run: never drawn
        if kind == "record":
            out.records.append(payload)
        elif kind == "step":
            out.steps.append(payload)
        elif kind == "pattern":
            out.patterns.append(payload)
        elif kind == "note":
            out.notes.append(payload)
        elif kind in ("total", "status"):
            setattr(out, kind, payload)
        else:
            out.end = (kind, payload)
    return out


class DrainError(Exception):
    """An error on the UI side while applying results (a bug, not a model error)."""


def run_job(job: Job, emit: Callable[[str, Any], None], superseded: Callable[[], bool]) -> None:
    """The worker's side of one run: measure, emit, stop when superseded.

    A ``DrainError`` (applying an event failed: a bug) propagates; any other
    error is the run's failure, emitted as "failed".
    """
    if superseded():
        return
    end = time.monotonic() + job.delay
    while time.monotonic() < end:  # the debounce: a newer run supersedes this one
        time.sleep(0.02)
        if superseded():
            return
    try:
        # pairs of mode and framework that cannot run are left out, with the engine's reason
        chosen = plan(job.variants, scheme=job.scheme, jit=job.jit, precision=job.precision,
                      backend=DEFAULT)  # fmt: skip
        if chosen.left_out:
            emit("note", chosen.note())
        if not chosen.variants:
            raise ValueError(f"nothing can run. {chosen.note()}")
        with _javascript_runs_in(job, chosen.variants, emit):
            _sweep(job, chosen, emit, superseded)
    except DrainError:
        raise
    except Exception as exc:
        emit("failed", exc)


#: the frameworks whose series run in the Lab's page when one is attached: JavaScript's,
#: emitted from JAX's programs (their entry's ``traced``)
JS_IN_PAGE = with_fact("traced")


def _javascript_runs_in(job: Job, variants: Sequence[str], emit: Callable[[str, Any], None]):
    """The page (falling back to Node) for a run with JavaScript series and a page attached."""
    if job.page is None or not any(parse_variant(v).backend in JS_IN_PAGE for v in variants):
        return contextlib.nullcontext()
    from .page_runner import PageOrNode, describe

    emit("note", describe(job.page.facts))
    return running_in(PageOrNode(job.page, lambda text: emit("note", text)))


def _sweep(job: Job, chosen: Any, emit: Callable[[str, Any], None],
           superseded: Callable[[], bool]) -> None:  # fmt: skip
    # warn=False: a warning from the worker thread would reach no one; a note does
    sweep = bench(job.model, job.sizes, list(chosen.variants), scheme=job.scheme,
                  jit=job.jit, precision=job.precision, warn=False,
                  **job.options)  # fmt: skip
    emit("total", sweep.total)
    try:
        for i, record in enumerate(sweep):
            if superseded():
                return
            if i == 0:  # the machine's noise was measured before the first size
                _noise_note(record, emit)
            emit("record", _with_page_facts(record, job.page))
            if superseded():  # stop before the next measurement starts
                return
    finally:
        sweep.close()
    # the advisor's verdict at the slider's n, from the records just measured: one per
    # derivative computed (a gradient is not an alternative to a Hessian)
    groups: dict[str, list[Record]] = {}
    for r in sweep.records:
        groups.setdefault(computes(r), []).append(r)
    primals = groups.pop("primal", [])
    for group in groups.values():
        emit("note", advice_from([*primals, *group], job.n, job.model.name).describe())
    for note in colors_notes(sweep.records):
        emit("note", note)
    for shown in patterns(job.model, chosen.variants, job.sizes, job.precision):
        if superseded():
            return
        emit("pattern", shown)
    if job.steps and not _steps(job, emit, superseded, sweep.records):
        return
    emit("done", None)


def _with_page_facts(record: Record, page: Any) -> Record:
    """A record of TF.js's webgl in the page, its env naming the WebGL renderer and whether it
    is software (SwiftShader in headless Chromium): its times say nothing about a GPU then."""
    if page is None or record.where != "browser" or record.device != "webgl":
        return record
    gl = page.facts.get("webgl") or {}
    env = {**record.env, "webgl_renderer": gl.get("renderer"), "webgl_software": gl.get("software")}
    return dataclasses.replace(record, env=env)


def _noise_note(record: Record, emit: Callable[[str, Any], None]) -> None:
    text = noisy([record])
    if text:
        emit("note", f"Note: {text[0].upper()}{text[1:]}")


#: the modes whose derivative a step-size curve takes, at each of its dozens of steps
STEPPED = ("numeric", "complex-step")


def steps_unaffordable(records: Iterable[Record], n: int) -> str | None:
    """Why the step-size curves at ``n`` are not drawn: the derivative they take (JAX's
    finite differences or complex step, a series of the run) was predicted over the
    budget at its last size up to ``n``, as its record says; else None. A prepare that
    overran (under load, say) predicts nothing of the curves' calls: they are drawn."""
    last: dict[str, Record] = {}
    for r in records:
        if r.mode in STEPPED and r.backend == REFERENCE and r.n <= n:
            if r.label not in last or r.n >= last[r.label].n:
                last[r.label] = r
    for r in last.values():
        if r.skipped and r.skipped.startswith("predicted "):
            return f"{r.label} at n = {r.n}: {r.skipped}"
    return None


def _steps(job: Job, emit: Callable[[str, Any], None], superseded: Callable[[], bool],
           records: Sequence[Record]) -> bool:  # fmt: skip
    """The step-size curves at ``job.steps_n``, where the run's records afford them
    (``steps_unaffordable``); False when superseded on the way."""
    why = steps_unaffordable(records, job.steps_n)
    if why:  # each curve would take that derivative at dozens of steps
        emit("note", f"Step-size curves not drawn: each takes the derivative at dozens of "
             f"steps, and the sweep skipped it ({why}).")  # fmt: skip
        return True
    emit("status", f"Step sizes at n = {job.steps_n}...")
    if job.steps_n < job.n:
        emit("note", f"Step-size curves at n = {job.steps_n}, not {job.n}: they take "
             "minutes there (steps_n_max).")  # fmt: skip
    # one call, so one reference; the schemes come in order, complex step
    # last, and a model it refuses (not analytic) raises only when reached
    try:
        for point in step_errors(job.model, job.steps_n, schemes=STEP_SCHEMES,
                                 precision=job.precision):  # fmt: skip
            if superseded():
                return False
            emit("step", point)
    except DrainError:
        raise
    except Exception as exc:
        emit("note", f"Step-size curves stopped: {exc}")
    return True


def done_text(points: int, skipped: int, seconds: float, found: Sequence[Crossover],
              notes: Sequence[str]) -> str:  # fmt: skip
    """The status line of a finished run: points, skips, the main crossovers, notes.

    Only crossovers that stand out of the noise are stated; pairs whose order
    flips only within it are said to be tied.
    """
    text = f"Done: {points} points in {seconds:.1f} s"
    if skipped:
        text += f" ({skipped} skipped: see the table)"
    text += "."
    if found:
        text += " " + findings_line(found)
    if notes:
        text += " " + " ".join(notes)
    return text


def findings_line(found: Sequence[Crossover], limit: int = 3) -> str:
    """The crossovers in words: the significant ones, and the pairs tied within the noise."""
    parts = [c.describe() for c in main_crossovers(found, limit)]
    tied = tied_pairs(found)
    if tied:
        shown = ", ".join(f"{a} and {b}" for a, b in tied[:limit])
        more = f" and {len(tied) - limit} more pairs" if len(tied) > limit else ""
        parts.append(f"tied within the noise: {shown}{more}")
    return "; ".join(parts) + "." if parts else ""


def main_crossovers(found: Sequence[Crossover], limit: int = 3) -> list[Crossover]:
    """The first significant crossover of each pair, at most ``limit`` of them: the status
    line is short."""
    seen: set[frozenset[str]] = set()
    out = []
    for c in found:
        pair = frozenset((c.faster, c.slower))
        if c.significant and pair not in seen and math.isfinite(c.n):
            seen.add(pair)
            out.append(c)
    return out[:limit]
