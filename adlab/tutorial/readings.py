"""Readings of finished records: the few numbers each tutorial points at.

Each function takes records a sweep already measured (``Record``,
``StepRecord``) and returns a ``Table`` (or plain numbers): where one series
overtakes another, what compiling costs against a steady call, what a
reverse-mode Jacobian costs per output row, the order of each
finite-difference scheme. Nothing here measures anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from .._format import error_text, seconds
from .._vocab import FRAME_S, Record, StepRecord
from ..accuracy.precision_table import PrecisionRow
from ..accuracy.reference import max_relative_error, reference
from ..accuracy.steps import RichardsonPoint, SchemeSummary
from ..catalog import resolve_model
from ..engine.backends import DEFAULT
from ..engine.derivative import derivative
from ..engine.model.source import Model
from ..measure import Series, parse_variant
from ..measure.findings import compare, crossovers, series_records, series_times
from ..measure.floor import floor_kind
from ..measure.fused import FusedDescent
from ..report.table import Table


def _measured(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if not r.skipped and r.median_s is not None]


# ------------------------------------------------------------------ crossovers
def crossover_table(records: Iterable[Record], pairs: Sequence[tuple[str, str]]) -> Table:
    """Where series ``a`` and ``b`` of each pair cross, or which wins at every n measured.

    Only a crossover that stands out of the noise is stated
    (``adlab.measure.findings``); where the two are within each other's noise
    they are "tied". A crossover n is interpolated in log-log between the two
    sizes around it; with few sizes it is a rough place, not a number.
    """
    records = _measured(records)
    by_label = series_records(records)
    rows = []
    for a, b in pairs:
        if a not in by_label or b not in by_label:
            missing = a if a not in by_label else b
            rows.append((a, b, f"no measured points of {missing!r}"))
            continue
        found = crossovers((r for r in records if r.label in (a, b)), primal=True)
        real = [c for c in found if c.significant]
        common = sorted(set(by_label[a]) & set(by_label[b]))
        if real:
            text = "; ".join(f"{c.faster} faster above n \u2248 {c.n:.3g}"
                             + (" (tied below)" if c.tied_below else "") for c in real)  # fmt: skip
        elif not common:
            text = "no common sizes"
        else:
            text = _order_words(a, b, by_label, common)
        rows.append((a, b, text))
    return Table.of(("series", "against", "crossover"), rows)


def _order_words(a: str, b: str, by_label, common: list[int]) -> str:
    """No crossover: who wins, where beyond the noise, and where the two are tied."""
    lo, hi = common[0], common[-1]
    verdicts = {n: compare(by_label[a][n], by_label[b][n]) for n in common}
    if all(v == 0 for v in verdicts.values()):
        return f"tied at every n measured ({lo} to {hi})"
    winner = a if min(verdicts.values()) < 0 else b
    tied = [n for n, v in verdicts.items() if v == 0]
    if not tied:
        return f"{winner} faster at every n measured ({lo} to {hi})"
    ns = ", ".join(str(n) for n in tied)
    return f"{winner} faster where they differ ({lo} to {hi}); tied at n = {ns}"


def floor_table(records: Iterable[Record]) -> Table:
    """Each derivative at its smallest n against its own framework's dispatch floor
    (``x + 1`` as that framework's users run it: from microseconds in PyTorch to
    hundreds in eager TensorFlow, so one floor for all would misread them)."""
    records = _measured(records)
    first: dict[str, Record] = {}
    for r in sorted(records, key=lambda r: r.n):
        if r.mode != "primal":
            first.setdefault(r.label, r)
    rows = [(r.label, r.n, seconds(r.median_s),
             f"{r.median_s / r.floor_s:.3g}x" if r.floor_s else "-")
            for r in first.values()]  # fmt: skip
    floors = {floor_kind(r.backend): r.floor_s for r in first.values() if r.floor_s}
    notes = ["dispatch floor: " + "; ".join(f"{kind} {seconds(s)}" for kind, s in floors.items())]
    return Table.of(("series", "n", "time", "x dispatch floor"), rows,
                    notes=notes if floors else [])  # fmt: skip


# --------------------------------------------------------------------- warm-up
def warmup_table(records: Iterable[Record]) -> Table:
    """Compile time and first call against the steady-state call, per series and n.

    "calls to repay" is compile / steady: how many steady calls the compile
    costs. (When jit pays against running eagerly is ``frameworks.compiled_table``'s
    "calls to break even": compile / (eager - compiled).)
    """
    rows = []
    for r in _measured(records):
        if r.mode == "primal":
            continue
        repay = f"{r.compile_s / r.median_s:,.0f}" if r.compile_s else "-"
        rows.append((r.label, r.n, seconds(r.compile_s) if r.compile_s else "-",
                     seconds(r.first_call_s), seconds(r.median_s), repay))  # fmt: skip
    return Table.of(("series", "n", "compile", "first call", "steady call", "calls to repay"),
                    rows)  # fmt: skip


def ratio_table(records: Iterable[Record], numerator: str, denominator: str) -> Table:
    """Time of series ``numerator`` over series ``denominator`` at each n both have."""
    times = series_times(_measured(records))
    a, b = times.get(numerator, {}), times.get(denominator, {})
    rows = [(n, seconds(a[n]), seconds(b[n]), f"{a[n] / b[n]:.3g}x")
            for n in sorted(set(a) & set(b))]  # fmt: skip
    return Table.of(("n", numerator, denominator, "ratio"), rows)


# ------------------------------------------------------------------- Jacobians
def per_output_row(records: Iterable[Record], label: str = "reverse") -> Table:
    """A reverse-mode Jacobian's cost per output row (time / passes), against the primal.

    Reverse mode pulls one cotangent back per output: its ``f_evals`` are the
    number of outputs m, so time / m is the cost of one row, a vector-Jacobian
    product, and so are XLA's flops / m. The cheap-gradient principle says a
    row's arithmetic is a small multiple of f's; its time can be less than a
    call of f, because JAX batches the m rows into one program (one dispatch).
    """
    rows = []
    for r in _measured(records):
        if r.label != label or not r.f_evals:
            continue
        row_s = r.median_s / r.f_evals
        ratio = f"{row_s / r.primal_s:.3g}x" if r.primal_s else "-"
        flops = f"{r.flops_ratio / r.f_evals:.3g}x" if r.flops_ratio else "-"
        rows.append((r.n, r.f_evals, seconds(r.median_s), seconds(row_s), ratio, flops))
    return Table.of(
        ("n", "rows (outputs)", "Jacobian", "time per row", "time per row / f",
         "flops per row / f"), rows,
        notes=["time per row / f: the Jacobian's time / rows / the primal's time; "
               "flops the same from XLA's counts"],
    )  # fmt: skip


# -------------------------------------------------------------------- accuracy
def truncation_order(steps: Iterable[StepRecord], scheme: str, points: int = 4) -> float:
    """The slope of log(error) against log(h) over the ``points`` largest steps of ``scheme``.

    There truncation rules, so the slope is the scheme's order: 1 forward,
    2 central and complex step, 4 Richardson (when f has the derivatives that
    the leading error term needs; on a low-degree polynomial it is exact).
    """
    pts = sorted(((s.h, s.error) for s in steps if s.scheme == scheme), reverse=True)
    pts = [(h, e) for h, e in pts if e > 0 and math.isfinite(e)][:points]
    if len(pts) < 2:
        raise ValueError(f"need at least 2 steps of {scheme!r} with a positive error")
    x = np.log10([h for h, _ in pts])
    y = np.log10([e for _, e in pts])
    return float(np.polyfit(x, y, 1)[0])


#: the order theory gives each scheme
ORDERS = {"forward": 1, "central": 2, "richardson": 4, "complex-step": 2}


def orders_table(steps: Iterable[StepRecord]) -> Table:
    """Each scheme's measured order (rounded) beside the theory."""
    steps = list(steps)
    schemes = list(dict.fromkeys(s.scheme for s in steps))
    rows = [(s, round(truncation_order(steps, s)), ORDERS.get(s, "?")) for s in schemes]
    notes = ["order: slope of log error against log h, at the largest steps"]
    return Table.of(("scheme", "measured order", "theory"), rows, notes=notes)


# ------------------------------------------------------------------ four modes
def compare_modes(
    model: str | Model,
    n: int,
    modes: Sequence[str] = ("forward", "reverse", "numeric[central]", "complex-step"),
    *,
    tolerance: float = 1e-8,
    seed: int = 0,
) -> Table:
    """Each mode's derivative at one point: evaluations of f it took, and its error.

    The error is the max relative error against the float64 reference
    (reverse mode checked against forward mode, ``adlab.reference``);
    "within" says whether it is below ``tolerance``.
    """
    m = resolve_model(model)
    point = m.setup(n, seed)
    ref = reference(m, *point)
    rows = []
    for spec in modes:
        v = parse_variant(spec)
        value, info = derivative(m, *point, mode=v.mode, scheme=v.scheme or "central",
                                 precision=v.precision or "float64", full_output=True)  # fmt: skip
        error = max_relative_error(value, ref.value)
        rows.append((spec, info.f_evals, "0" if error == 0 else f"{error:.1e}",
                     "yes" if error < tolerance else "no"))  # fmt: skip
    return Table.of(("mode", "f evals", "error", f"within {tolerance:g}"), rows,
                    title=f"{m.name} at n = {n}")  # fmt: skip


def summary_table(summaries: Sequence[SchemeSummary]) -> Table:
    """Per scheme: the measured best step and error beside theory and adlab's default."""
    e = error_text  # steps and errors alike: "1.5e-08", "0", "-"
    rows = [(s.scheme, e(s.best_h), e(s.best_error), e(s.optimal_h), e(s.expected_error),
             e(s.default_h), e(s.default_error)) for s in summaries]  # fmt: skip
    return Table.of(("scheme", "best h", "best error", "optimal h (theory)",
                     "error (theory)", "default h", "error at default"), rows)  # fmt: skip


def precision_rows_table(rows: Sequence[PrecisionRow], near: float = 1.5) -> Table:
    """Each mode's error in float32 beside float64, and the decades lost against theory
    ("within" says whether the two are within ``near`` decades)."""
    return Table.of(
        (
            "mode",
            "float64 error",
            "float32 error",
            "decades lost",
            "theory",
            f"within {near:g} of theory",
        ),
        [
            (
                r.label,
                error_text(r.error_float64),
                error_text(r.error_float32),
                "-" if r.decades is None else f"{r.decades:.1f}",
                f"{r.expected_decades:.1f}",
                "-"
                if r.decades is None
                else ("yes" if abs(r.decades - r.expected_decades) <= near else "no"),
            )
            for r in rows
        ],  # fmt: skip
        notes=[
            "theory: (1 - p) log10(eps32 / eps64), p the step's power (0 for AD and "
            "complex step): the decades float32 should lose"
        ],
    )


def richardson_table(points: Sequence[RichardsonPoint]) -> Table:
    """Richardson's estimate beside the true errors of R and of D(h/2), per step."""
    return Table.of(
        ("h", "estimate |R - D(h/2)|", "error of R", "error of D(h/2)"),
        [
            (f"{p.h:.0e}", f"{p.estimate:.1e}", f"{p.error:.1e}", f"{p.error_central_half:.1e}")
            for p in points
        ],  # fmt: skip
    )


# ------------------------------------------------------------------ agreement
def agreement(
    variants: Sequence[str | Series], n: int, *, model: str | Model | None = None, seed: int = 0
) -> Table:
    """Do differently written series compute the same derivative? Each against the first.

    ``variants`` are sweep variants (a ``Series`` may name its own model and
    settings, as the per-sample case's do, and its framework); ``model`` is the
    model of those that name none. The per-sample, vmapped, batched and
    Python-loop losses of question 2 are one function written four ways, in
    JAX and in PyTorch: their gradients must agree to rounding.
    """
    rows, first = [], None
    for spec in variants:
        v = parse_variant(spec)
        source = v.model if v.model is not None else model
        if source is None:
            raise ValueError(f"variant {spec!r} names no model: pass model=...")
        m = resolve_model(source, **v.settings)
        value = derivative(m, *m.setup(n, seed), mode=v.mode, scheme=v.scheme or "central",
                           jit=v.jit, precision=v.precision or "float64",
                           backend=v.backend or DEFAULT)  # fmt: skip
        first = value if first is None else first
        diff = max_relative_error(value, first)
        rows.append((v.label or str(spec), f"{diff:.1e}", "yes" if diff < 1e-10 else "no"))
    return Table.of(("series", "difference to the first", "agrees to 1e-10"), rows,
                    title=f"n = {n}")  # fmt: skip


def fused_table(result: FusedDescent) -> Table:
    """Per-step time and steps per 16 ms frame, each way."""
    rows = [(way, seconds(s), f"{math.floor(FRAME_S / s):,}") for way, s in result.rows()]
    notes = [f"fused vs one call per step: {result.speedup:.3g}x faster per step"]
    if result.floor_s:
        notes.append(f"dispatch floor (a trivial jitted call): {seconds(result.floor_s)}")
    return Table.of(
        ("way", "per step", "steps per 16 ms frame"), rows,
        title=f"{result.steps} gradient-descent steps on {result.model}, n = {result.n}",
        notes=notes,
    )  # fmt: skip
