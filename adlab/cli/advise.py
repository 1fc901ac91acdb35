"""``adlab advise``: the fastest way to take the derivative at one n, in one sentence,
then the evidence.

Registered in ``adlab.cli`` by ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from .._format import jsonable, parse_bytes
from ..measure.sweep import BUDGET_S, DEFAULT_MODES
from ._args import add_backend_argument, add_model_arguments


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``advise`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "advise",
        help="which mode is fastest at one n, beyond the noise, and at what error",
        description=(
            "Measure each mode at n (their repeats taken in turn) and say which is fastest "
            "beyond the noise, by how much over the runner-up, at what error; modes within "
            "noise of each other are said to be tied. A mode too costly to run at n is "
            "measured at a few smaller sizes and its time at n predicted (and said so). "
            "Prints the verdict, then the measurements it rests on."
        ),
    )
    add_model_arguments(p, model="normal_logpdf", n=None)
    p.add_argument("--modes", help=f"comma-separated modes (default {','.join(DEFAULT_MODES)})")
    add_backend_argument(p, "the framework (default jax)")
    p.add_argument("--budget", type=float, default=BUDGET_S, metavar="S",
                   help=f"seconds one point may take, compile included ({BUDGET_S})")  # fmt: skip
    p.add_argument("--memory-limit", type=_size, default=None, metavar="SIZE",
                   help="rule out a mode whose peak memory at n, measured or predicted, "
                   "is past SIZE: bytes, or 4GB, 512MB, '1.5 GB' (1 KB = 1000 B)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print only JSON: the advice and its records")  # fmt: skip
    p.set_defaults(run=run)


def _size(text: str) -> float:
    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def advice_json(advice: Any) -> str:
    """The advice as JSON: its fields, the sentence, and the records in full."""
    fields = {k: v for k, v in asdict(advice).items() if k != "records"}
    fields["describe"] = advice.describe()
    fields["records"] = [r.to_dict() for r in advice.records]
    return json.dumps(jsonable(fields), indent=1)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..measure.advisor import advise
    from ..measure.floor import noisy

    if args.n < 1:
        raise ValueError(f"--n must be a positive integer, got {args.n}")
    advice = advise(args.model, args.n, args.modes, precision=args.precision,
                    backend=args.backend, budget_s=args.budget, warn=False,
                    settings=dict(args.settings), memory_limit=args.memory_limit)  # fmt: skip
    if args.json:
        print(advice_json(advice))
    else:
        print(advice.describe() + "\n")
        print(report.format_table(advice.records))
    noise = noisy(advice.records)
    if noise and args.json:  # the table says it under itself
        print(f"adlab: note: {noise}", file=sys.stderr)
    return 0 if advice.best is not None else 2
