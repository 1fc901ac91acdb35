"""``adlab accuracy``: the step sweep of one model as a table (or JSON records).

Registered in ``adlab.cli`` by ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence

from .._format import jsonable
from .._vocab import ModelError, StepRecord
from ..accuracy.precision_table import PrecisionRow, precision_table
from ..accuracy.reference import Reference, reference
from ..accuracy.steps import (
    SchemeSummary,
    default_steps,
    step_errors,
    step_summary,
)
from ..catalog import resolve_model
from ..engine.model.userline import speaking_to
from ..report.table import Table
from ._args import add_model_arguments

SCHEMES_DEFAULT = "forward,central,richardson,complex-step"
#: the column names: "forward" alone would be a difference in one table and AD in the next
SCHEME_NAMES = {"forward": "forward-diff", "central": "central-diff",
                "richardson": "richardson", "complex-step": "complex-step"}  # fmt: skip
MODE_NAMES = {"forward": "forward AD", "reverse": "reverse AD"}
NAMES_LEGEND = (
    "forward-diff, central-diff, richardson: finite differences (adlab bench's numeric[forward],\n"
    "  numeric[central], numeric[richardson]); forward AD, reverse AD: automatic differentiation"
)


def scheme_name(scheme: str) -> str:
    """The name the tables show for a step-sweep scheme ("forward" -> "forward-diff")."""
    return SCHEME_NAMES.get(scheme, scheme)


def mode_name(label: str) -> str:
    """The name the tables show for a mode label ("forward" -> "forward AD",
    "numeric[forward]" -> "forward-diff")."""
    if label.startswith("numeric"):
        return scheme_name(label[len("numeric") :].strip("[]") or "central")
    return MODE_NAMES.get(label, label)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "accuracy",
        help="error against step size for each finite-difference scheme and complex step",
        description="Sweep the step h of forward, central and Richardson differences and "
        "complex step on one model; print the error at each h against the float64 "
        "reverse-mode reference (checked against forward mode), where adlab's default "
        "step sits, the theoretical optimum, and every mode in float32 beside float64.",
    )
    add_model_arguments(p, model="normal_logpdf", n=10, seed=True,
                        precision_help="of the differences (the reference is float64)")  # fmt: skip
    p.add_argument("--schemes", default=SCHEMES_DEFAULT,
                   help=f"comma-separated schemes (default {SCHEMES_DEFAULT})")  # fmt: skip
    p.add_argument("--per-decade", type=int, default=2, help="steps per decade (default 2)")
    p.add_argument("--json", action="store_true", help="print the records as a JSON list")
    p.set_defaults(run=run)


def _sweep(args: argparse.Namespace, ref: Reference) -> tuple[list[StepRecord], list[str]]:
    model = resolve_model(args.model)
    schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    records: list[StepRecord] = []
    notes: list[str] = []
    for scheme in schemes:
        steps = default_steps(scheme, args.precision, args.per_decade)
        try:
            records += step_errors(model, args.n, (scheme,), steps, args.precision, args.seed,
                                  ref=ref)  # fmt: skip
        except ModelError as exc:
            if scheme != "complex-step":
                raise
            line = f" (line {exc.lineno})" if exc.lineno else ""
            notes.append(f"complex-step refused{line}: {exc.reason}")
    return records, notes


def _e(x: float | None, width: int = 10) -> str:
    if x is None:
        return f"{'-':>{width}}"
    return f"{x:>{width}.1e}" if math.isfinite(x) else f"{'inf':>{width}}"


def sweep_table(records: Sequence[StepRecord]) -> str:
    """Rows h (largest first), a column of errors per scheme, '*' at each default step;
    Richardson's own estimate in a column beside its error."""
    schemes = list(dict.fromkeys(r.scheme for r in records))
    cells: dict[tuple[float, str], StepRecord] = {(r.h, r.scheme): r for r in records}
    columns: list[tuple[str, str]] = []
    for s in schemes:
        columns.append((s, "error"))
        if s == "richardson":
            columns.append((s, "estimate"))
    head = ["h", *("(estimate)" if k == "estimate" else scheme_name(s) for s, k in columns)]
    rows = []
    for h in sorted({r.h for r in records}, reverse=True):
        row = [f"{h:.1e}"]
        for s, k in columns:
            r = cells.get((h, s))
            if r is None:
                row.append("")
            elif k == "estimate":
                row.append(_e(r.error_estimate, 0) + " ")
            else:  # the mark in a column of its own, so that the numbers stay aligned
                row.append(_e(r.error, 0) + ("*" if r.is_default else " "))
        rows.append(row)
    return str(Table.of(head, rows, align="r" * len(head)))


def summary_table(summaries: Sequence[SchemeSummary]) -> str:
    """Theory beside measurement, one line per scheme."""
    head = ("scheme", "theory h*", "its error", "default h", "error there", "best h", "best error")
    lines = [f"{head[0]:<14}" + "".join(f"{c:>13}" for c in head[1:])]
    for s in summaries:
        below = f"any < {math.sqrt(s.expected_error):.0e}"  # complex step: any h below ~sqrt(eps)
        opt = _e(s.optimal_h, 13) if s.optimal_h is not None else f"{below:>13}"
        lines.append(
            f"{scheme_name(s.scheme):<14}{opt}{_e(s.expected_error, 13)}{_e(s.default_h, 13)}"
            f"{_e(s.default_error, 13)}{_e(s.best_h, 13)}{_e(s.best_error, 13)}"
        )
    return "\n".join(lines)


def precision_lines(rows: Sequence[PrecisionRow]) -> str:
    """float32 beside float64 for every mode at its default step."""
    lines = [f"{'mode':<22}{'float32':>10}{'float64':>10}{'decades lost':>14}{'theory':>8}"]
    for r in rows:
        if r.skipped:
            lines.append(f"{mode_name(r.label):<22}  skipped: {r.skipped.splitlines()[0]}")
            continue
        d = r.decades
        lines.append(
            f"{mode_name(r.label):<22}{_e(r.error_float32)}{_e(r.error_float64)}"
            f"{(f'{d:.1f}' if d is not None else '-'):>14}{r.expected_decades:>8.1f}"
        )
    return "\n".join(lines)


def _reference_line(ref: Reference) -> str:
    if ref.trusted:
        return (f"reference: float64 reverse mode; forward mode agrees to {ref.mismatch:.1e} "
                "(normwise): trusted")  # fmt: skip
    if ref.trusted is None:
        return f"reference: float64 reverse mode, UNCHECKED: {ref.note}"
    return f"reference: float64 reverse mode, UNTRUSTED: {ref.note}"


def run(args: argparse.Namespace) -> int:
    # every scheme is traced by JAX (the step sweeps run under jax.jit), so a model's
    # error has no eager run to suggest: its advice says what to write instead
    with speaking_to("accuracy"):
        return _report(args)


def _report(args: argparse.Namespace) -> int:
    model = resolve_model(args.model, **dict(args.settings))
    args.model = model
    point = model.setup(args.n, args.seed)
    ref = reference(model, *point)
    records, notes = _sweep(args, ref)
    if args.json:
        print(json.dumps([jsonable(r.to_dict()) for r in records]))
        return 0
    print(f"{model.name}, n={args.n}, {args.precision}: max componentwise relative error "
          "against the reference, at each step h")  # fmt: skip
    print(_reference_line(ref))
    print("h is relative (h * max(|x_i|, 1)) for differences, absolute for complex step")
    print()
    print(sweep_table(records))
    print("* adlab's default step for that scheme (for differences, also the theoretical")
    print("  optimum eps**(1/2, 1/3, 1/5)); (estimate): Richardson's own error estimate;")
    print("  inf: the step vanished (x + h == x)")
    print(NAMES_LEGEND)
    for note in notes:
        print(note)
    print()
    print(summary_table(step_summary(records)))
    print()
    print("every mode at its default step, float32 beside float64:")
    print(precision_lines(precision_table(model, args.n, seed=args.seed, ref=ref)))
    return 0
