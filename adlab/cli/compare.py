"""``adlab compare base.json new.json``: two saved runs side by side, and a CI's guard.

Prints ``adlab.compare_runs``'s table (each series x n: base, new, new/base and the
verdict, the largest changes first) under what differs between the machines and
versions. ``--fail-slower 10%`` exits 1 when a series got slower beyond the noise by
more than that (pytest-benchmark's ``--benchmark-compare-fail``), so a CI job can guard a
model's gradient against a framework upgrade.
"""

from __future__ import annotations

import argparse
import sys


def fraction(text: str) -> float:
    """A percentage ("10%", "10" or "0.1") as a fraction (0.1); a number over 1 is percent."""
    value = text.strip().removesuffix("%")
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a percentage such as 10%, got {text!r}") from None
    if x < 0:
        raise argparse.ArgumentTypeError(f"a percentage of at least 0, got {text!r}")
    return x / 100 if text.strip().endswith("%") or x > 1 else x


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``compare`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "compare",
        help="compare two saved runs (adlab bench --save, the Lab's Export)",
        description=(
            "For each series x n of two saved runs: both median times, new/base, and "
            "whether they differ beyond the noise each run measured (the test adlab's "
            "findings use). Says what differs between the machines and versions."
        ),
    )
    p.add_argument("base", help="the saved run to compare against (JSON)")
    p.add_argument("new", help="the saved run compared with it (JSON)")
    p.add_argument("--fail-slower", type=fraction, metavar="PCT",
                   help="exit 1 when a series is slower beyond the noise by more than PCT "
                   "(e.g. 10%%)")  # fmt: skip
    p.add_argument("--html", metavar="FILE", help="also write the comparison as HTML")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report.comparison import compare_runs

    result = compare_runs(args.base, args.new)
    print(result)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(f"<!DOCTYPE html><meta charset='utf-8'>{result._repr_html_()}")
    if args.fail_slower is None:
        return 0
    slower = result.slower(args.fail_slower)
    for p in slower:
        print(f"adlab: {p.label} at n = {p.n} is {p.verdict} (over {args.fail_slower:.0%})",
              file=sys.stderr)  # fmt: skip
    return 1 if slower else 0
