"""The frameworks in the tutorials: which are here, how each ran, and readings across them.

Questions 1, 3 and 5 were asked about frameworks: TensorFlow's ``tf.grads``
against hand-written differences, Julia's tapes against its tracing and
source-to-source packages, TensorFlow's advice on warm-up and precision. The
notebooks answer them in the Python frameworks adlab runs (``backend=``): a
tape (PyTorch eager, HIPS autograd, TensorFlow's ``GradientTape``), tracing
(JAX), and each one's compiler. Each function here reads records a sweep
already measured, or computes a fact that is the same on every machine
(passes of f, agreement of the frameworks' derivatives, digits kept in
float32). Nothing here times anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .._format import error_text, seconds
from .._vocab import FRAME_S, Record
from ..accuracy.reference import max_relative_error, reference
from ..catalog import resolve_model
from ..engine.backends import DEFAULT, KNOWN, get_backend, installed, pip_command
from ..engine.derivative import derivative, prepare
from ..engine.model.source import Model
from ..measure import Series, parse_variant
from ..report.table import Table

#: Question 3's gist (Julia, microseconds per gradient of sum log N(y_i | theta_i, s))
JULIA_GIST = {
    10: {"f": 0.11, "ForwardDiff": 0.74, "ReverseDiff": 1.0, "Zygote": 2.1, "Tracker": 14.0,
         "complex step": 1.1},
    100: {"f": 0.73, "ForwardDiff": 29.5, "ReverseDiff": 4.8, "Zygote": 5.5, "Tracker": 18.1,
          "complex step": 50.6},
    1000: {"f": 7.1, "ForwardDiff": 2513, "ReverseDiff": 42.5, "Zygote": 37.7, "Tracker": 58.2,
           "complex step": 9184},
}  # fmt: skip
_JULIA_HOW = (
    "ForwardDiff: dual numbers (forward mode); ReverseDiff and Tracker: tapes (reverse); "
    "Zygote: source to source (reverse)"
)


def how(backend: str, jit: bool) -> str:
    """How a framework ran a derivative, in a few words ("tape, eager", "torch.compile")."""
    known = KNOWN.get(backend)
    words = known.how(bool(jit)) if known is not None else None
    return words or f"{backend}{' (jit)' if jit else ''}"


def _us(s: float | None) -> str:
    """Microseconds as the gist prints them: 0.74, 29.5, 2513."""
    if s is None or not math.isfinite(s):
        return "-"
    us = s * 1e6
    return f"{us:.3g}" if us < 1000 else f"{us:.0f}"


def _measured(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if not r.skipped and r.median_s is not None]


# ------------------------------------------------------------------ installed
def available(variants: Sequence[str | Series]) -> list[str | Series]:
    """The variants whose framework is installed here, in order.

    The others are left out and named, with the command that installs their
    framework (on Binder, PyTorch and TensorFlow are not installed: see
    ``binder/requirements.txt``).
    """
    keep, missing = [], {}
    for spec in variants:
        v = parse_variant(spec)
        backend = v.backend or DEFAULT
        if installed(backend):
            keep.append(spec)
        else:
            missing.setdefault(backend, []).append(v.label or v.spelled())
    for backend, specs in missing.items():
        print(f"Left out: {', '.join(specs)}: {KNOWN[backend].label} is not installed here "
              f"({pip_command(backend)}).")  # fmt: skip
    return keep


def frameworks_table() -> Table:
    """Each framework: its version and device here, and its compiler; one not installed
    shows its pip command. Loads every installed framework (a notebook's first use of it)."""
    rows = []
    for name, known in KNOWN.items():
        if not installed(name):
            rows.append((known.label, "not installed", pip_command(name), "-"))
            continue
        env = get_backend(name).environment()
        rows.append((known.label, env.get("version") or "-", env.get("device") or "-",
                     known.compiler or "none"))  # fmt: skip
    return Table.of(("framework", "version", "device", "compiler (jit)"), rows)


# ---------------------------------------------------------------- question 1
def frame_table(records: Iterable[Record], n: int, baseline: str) -> Table:
    """Each derivative at size ``n``: how it ran, its time, its time over ``baseline``'s (the
    finite differences), and how many fit in one 16 ms frame."""
    at = {r.label: r for r in _measured(records) if r.n == n and r.mode != "primal"}
    base = at.get(baseline)
    rows = []
    for label, r in at.items():
        versus = f"{r.median_s / base.median_s:.3g}x" if base else "-"
        rows.append((label, how(r.backend, r.jit), seconds(r.median_s), versus,
                     f"{math.floor(FRAME_S / r.median_s):,}"))  # fmt: skip
    return Table.of(("series", "how", "time", f"/ {baseline}", "per 16 ms frame"), rows,
                    title=f"One gradient at n = {n}")  # fmt: skip


# ---------------------------------------------------------------- question 2
def ratios_table(records: Iterable[Record]) -> Table:
    """Per series and n: how it ran, its time over its own framework's primal, and its
    flops over the primal's where XLA or PyTorch's FlopCounterMode counted them."""
    rows = []
    for r in _measured(records):
        if r.mode == "primal":
            continue
        flops = f"{r.flops_ratio:.3g}x" if r.flops_ratio else "-"
        ratio = f"{r.ratio_to_primal:.3g}x" if r.ratio_to_primal else "-"
        rows.append((r.label, how(r.backend, r.jit), r.n, ratio, flops))
    return Table.of(("series", "how", "n", "time / f", "flops / f"), rows, notes=[
        "time / f: over the primal in the same framework, written the same way; flops / f: "
        "XLA's count for programs XLA compiles (JAX here), every operation; PyTorch's "
        "FlopCounterMode for PyTorch, matrix products only (elementwise work such as tanh "
        "is not counted): compare flops / f within one framework"])  # fmt: skip


# ---------------------------------------------------------------- question 3
def gist_table(records: Iterable[Record]) -> Table:
    """The gist's layout: one row per n, microseconds per gradient, one column per series,
    the primal f first; how each series ran is listed under the table."""
    records = _measured(records)
    labels = list(dict.fromkeys(r.label for r in records if r.mode != "primal"))
    primal = next((r.label for r in records if r.mode == "primal" and r.backend == DEFAULT), None)
    times = {(r.label, r.n): r.median_s for r in records}
    columns = ([primal] if primal else []) + labels
    rows = [(n, *(_us(times.get((c, n))) for c in columns))
            for n in sorted({r.n for r in records})]  # fmt: skip
    ways: dict[str, list[str]] = {}
    for label in labels:
        r = next(r for r in records if r.label == label)
        ways.setdefault(how(r.backend, r.jit), []).append(label)
    notes = ["microseconds per call; "
             + "; ".join(f"{way}: {', '.join(ls)}" for way, ls in ways.items())]  # fmt: skip
    return Table.of(("n", *(("f" if c == primal else c) for c in columns)), rows, notes=notes)


def julia_gist() -> Table:
    """Question 3's figures, as the gist printed them (microseconds, Julia)."""
    columns = list(next(iter(JULIA_GIST.values())))
    rows = [(n, *(f"{row[c]:g}" for c in columns)) for n, row in JULIA_GIST.items()]
    return Table.of(("n", *columns), rows, title="The gist (Julia, microseconds)",
                    notes=[_JULIA_HOW])  # fmt: skip


def passes_table(model: str | Model, variants: Sequence[str], sizes: Sequence[int]) -> Table:
    """Evaluations of f per derivative (``f_evals``), per series and n: the same on every
    machine. A tape and tracing both take one backward pass; forward mode and complex
    step take one pass per input."""
    m = resolve_model(model)
    rows = []
    for n in sizes:
        point = m.setup(n)
        for spec in variants:
            v = parse_variant(spec)
            p = prepare(m, *point, mode=v.mode, scheme=v.scheme or "central", jit=v.jit,
                        precision=v.precision or "float64",
                        backend=v.backend or DEFAULT)  # fmt: skip
            rows.append((spec, n, p.f_evals))
    return Table.of(("series", "n", "f evals"), rows)


# ---------------------------------------------------------------- question 5
def compiled_table(records: Iterable[Record]) -> Table:
    """Per framework and n: eager against compiled, what the compile cost, and after how many
    calls compiling breaks even with running eagerly (compile / the time a compiled call
    saves; "never" when it saves none)."""
    pairs: dict[tuple, dict[bool, Record]] = {}
    for r in _measured(records):
        if r.mode != "primal":
            pairs.setdefault((r.backend, r.mode, r.precision, r.n), {})[bool(r.jit)] = r
    rows = []
    for (backend, mode, _, n), got in pairs.items():
        eager, jit = got.get(False), got.get(True)
        faster = repay = "-"
        if eager and jit:
            faster = f"{eager.median_s / jit.median_s:.3g}x"
            saved = eager.median_s - jit.median_s
            repay = f"{jit.compile_s / saved:,.0f}" if saved > 0 and jit.compile_s else "never"
        rows.append((KNOWN[backend].label, mode, n, seconds(eager.median_s) if eager else "-",
                     seconds(jit.median_s) if jit else "-", faster,
                     seconds(jit.compile_s) if jit else "-", repay))  # fmt: skip
    return Table.of(("framework", "mode", "n", "eager", "compiled", "compiled faster by",
                     "compile", "calls to break even"), rows, notes=[
        "compiled: jax.jit, torch.compile, tf.function(jit_compile=True); autograd has no "
        "compiler; calls to break even: compile / (eager - compiled)"])  # fmt: skip


def precision_pairs(records: Iterable[Record]) -> Table:
    """Per series and n: float32 beside float64, in time and in error against the float64
    reference."""
    pairs: dict[tuple, dict[str, Record]] = {}
    for r in _measured(records):
        if r.mode != "primal":
            pairs.setdefault((r.backend, r.mode, bool(r.jit), r.n), {})[r.precision] = r
    rows = []
    for (backend, mode, jit, n), got in pairs.items():
        r64, r32 = got.get("float64"), got.get("float32")
        if not (r64 and r32):
            continue
        rows.append((KNOWN[backend].label, how(backend, jit), mode, n, seconds(r64.median_s),
                     seconds(r32.median_s), f"{r32.median_s / r64.median_s:.3g}x",
                     error_text(r64.error), error_text(r32.error)))  # fmt: skip
    return Table.of(("framework", "how", "mode", "n", "float64", "float32", "float32 / float64",
                     "float64 error", "float32 error"), rows)  # fmt: skip


def float32_check(model: str | Model, n: int, variants: Sequence[str]) -> Table:
    """Each variant's error in float64 and float32 against the float64 reference, as facts
    that hold on every machine: float64 keeps (nearly) all its digits, float32 about 7."""
    m = resolve_model(model)
    point = m.setup(n)
    ref = reference(m, *point)
    rows = []
    for spec in variants:
        v = parse_variant(spec)
        errors = [max_relative_error(derivative(m, *point, mode=v.mode, jit=v.jit,
                                                precision=precision,
                                                backend=v.backend or DEFAULT), ref.value)
                  for precision in ("float64", "float32")]  # fmt: skip
        rows.append((spec, "yes" if errors[0] < 1e-12 else "no",
                     "yes" if 1e-9 < errors[1] < 1e-5 else "no"))  # fmt: skip
    return Table.of(("series", "float64 error < 1e-12", "float32 error in 1e-9 .. 1e-5"), rows,
                    title=f"{m.name} at n = {n}")  # fmt: skip
