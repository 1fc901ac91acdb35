"""``adlab bench``: a sweep from the command line, a table on stdout, progress on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._vocab import SCHEMES
from ..measure.sweep import BUDGET_S, DEFAULT_MODES, DEFAULT_SIZES, default_modes
from ._args import add_backend_argument, add_precision_argument, add_settings_argument


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"sizes are comma-separated integers, got {text!r}"
        ) from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be positive integers, got {text!r}")
    return sizes


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``bench`` on the ``adlab`` command's subparsers."""
    from ..measure.cases import CASES

    p = sub.add_parser(
        "bench",
        help="time derivatives over sizes and modes; print a table",
        description=(
            "Measure each mode at each size: compile time apart, warm-up, autorange, "
            "median and IQR over repeats, XLA's flops, the error against float64 reverse "
            "mode, and each point's peak memory (and a reverse pass's residuals), measured "
            "once after its repeats by the framework's own counter. Prints a table (or "
            "--json / --csv) on stdout and a progress bar on stderr."
        ),
        epilog=(
            "modes: mode[scheme](options), e.g. forward, reverse, numeric[richardson], "
            "reverse(eager), numeric[central](numpy), complex-step(float32), reverse(torch), "
            "reverse(torch,checkpoint=sqrt), "
            "forward(tensorflow), reverse(autograd), reverse(torch,jit). "
            "cases: " + "; ".join(f"{c.name}: {c.title}" for c in CASES.values())
        ),
    )
    p.add_argument(
        "--model", help="catalog name or path to a model .py file (default normal_logpdf)"
    )
    p.add_argument(
        "--case", choices=sorted(CASES), help="run a case study (fixed model, sizes, modes)"
    )
    p.add_argument("--quick", action="store_true", help="with --case: its smaller set of sizes")
    p.add_argument(
        "--sizes",
        type=_sizes,
        help=f"comma-separated sizes (default {','.join(map(str, DEFAULT_SIZES))})",
    )
    p.add_argument("--modes", help=f"comma-separated modes (default {','.join(DEFAULT_MODES)})")
    p.add_argument("--scheme", default="central", choices=SCHEMES,
                   help="finite-difference scheme for plain 'numeric'")  # fmt: skip
    add_precision_argument(p, "precision of variants that name none (default float64)")
    add_backend_argument(p, "the framework of variants that name none (default jax); a "
                         "variant names its own: reverse(torch)")  # fmt: skip
    jit = p.add_mutually_exclusive_group()
    jit.add_argument("--jit", dest="jit", action="store_true", default=None,
                     help="compile every variant with its framework's compiler (jax.jit, "
                     "torch.compile, tf.function(jit_compile=True))")  # fmt: skip
    jit.add_argument("--no-jit", dest="jit", action="store_false", default=None,
                     help="run every variant eagerly (default: each framework as its users "
                     "run it, JAX jitted, the others eagerly)")  # fmt: skip
    p.add_argument("--inline", action="store_true",
                   help="run every JAX program on the calling thread (JAX's CPU client "
                   "otherwise hands programs over 1000 XLA flops to a worker thread)")  # fmt: skip
    p.add_argument("--budget", type=float, default=None, metavar="S",
                   help=f"seconds one point may take, compile included ({BUDGET_S})")  # fmt: skip
    p.add_argument("--repeats", type=int, default=None, help="timing repeats per point")
    add_settings_argument(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print only a JSON list of the records")
    out.add_argument("--csv", action="store_true", help="print only CSV, one row per record")
    out.add_argument("--long", action="store_true", help="also print every record in full")
    p.add_argument("--save", metavar="RUN.json",
                   help="also save the run (records, machine, versions, model source) as "
                   "adlab.save does, for adlab compare and adlab report")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="compile every program afresh: leave JAX's compilation cache on disk "
                   "off (as ADLAB_CACHE=0; where it is: ADLAB_CACHE_DIR)")  # fmt: skip
    p.set_defaults(run=run)


def _sweep(args: argparse.Namespace):
    from ..measure.cases import get_case
    from ..measure.sweep import bench

    # warn=False: a noisy machine is said under the table (report.format_table), not on stderr
    options: dict[str, Any] = dict(scheme=args.scheme, precision=args.precision,
                                   backend=args.backend, jit=args.jit, warn=False)  # fmt: skip
    if args.budget is not None:
        options["budget_s"] = args.budget
    if args.repeats is not None:
        options["repeats"] = args.repeats
    if args.case:
        if args.model or args.modes:
            raise ValueError("--case fixes the model and modes: drop --model and --modes")
        case = get_case(args.case)
        return case, case.run(quick=args.quick, sizes=args.sizes, **options)
    if args.quick:
        raise ValueError("--quick goes with --case")
    settings = dict(args.settings)
    modes = args.modes or default_modes(args.backend)
    sweep = bench(args.model or "normal_logpdf", args.sizes or DEFAULT_SIZES, modes,
                  settings=settings, **options)  # fmt: skip
    return None, sweep


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .. import report
    from ..measure.cases import findings
    from ..measure.floor import noisy

    if args.inline:
        from ..measure.env import run_inline

        run_inline()
    if not args.cache:
        from ..engine.programs import disable

        disable()
    case, sweep = _sweep(args)
    interrupted = False
    title = f"case {case.name}" if case else "bench"
    with tqdm(total=sweep.total, file=sys.stderr, disable=args.quiet, desc=title,
              unit="point", leave=False) as bar:  # fmt: skip
        try:
            for rec in sweep:
                bar.set_postfix_str(f"{rec.label} n={rec.n}", refresh=False)
                bar.update(1)
        except KeyboardInterrupt:
            interrupted = True
    records = sweep.records
    if args.save:
        from ..report.runs import save

        source = None
        if args.model and args.model.endswith(".py"):
            from pathlib import Path

            source = Path(args.model).read_text(encoding="utf-8")
        print(f"adlab: saved {len(records)} records to {save(records, args.save, source)}",
              file=sys.stderr)  # fmt: skip
    if args.json:
        print(report.to_json(records))
    elif args.csv:
        sys.stdout.write(report.to_csv(records))
    else:
        if case:
            print(f"Case {case.name} (question {case.question}): {case.title}\n")
        print(report.format_table(records))
        if args.long:
            print("\n" + report.format_records(records))
        if case:
            print("\nWhat this run shows:")
            for line in findings(records):
                print(f"  {line}")
            print(f"\nThe question: {case.look_for}")
    noise = noisy(records)
    if noise and (args.json or args.csv):  # the table says it under itself
        print(f"adlab: note: {noise}", file=sys.stderr)
    if interrupted:
        print(f"adlab: interrupted after {len(records)} of {sweep.total} records", file=sys.stderr)
        return 130
    return _nothing_measured(records, listed=not (args.json or args.csv))


def _nothing_measured(records, listed: bool) -> int:
    """2, with the reasons on stderr, when no derivative was measured (as ``adlab
    accuracy`` exits on a model error); else 0. The primal alone does not count."""
    from ..report import skip_reasons

    wanted = [r for r in records if r.mode != "primal"] or records
    if not wanted or any(not r.skipped for r in wanted):
        return 0
    if listed:  # the table lists them already
        print("adlab: error: no point was measured; the reasons are under the table",
              file=sys.stderr)  # fmt: skip
    else:
        print("adlab: error: no point was measured:", file=sys.stderr)
        for points, reason in skip_reasons(wanted):
            print(f"{points}: {reason}", file=sys.stderr)
    return 2
