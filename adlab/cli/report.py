"""``adlab report run.json -o report.html``: one self-contained HTML file of a saved run.

BokehJS is inlined, so the file opens from ``file://`` without a kernel, a server or a
network: the plots (time, memory once measured, ratio to f, error), the table, the
findings and crossovers, the machine and versions, the model's source
(``adlab.plots.page``). Given a second run (``--against base.json``), its series are
drawn dashed over the first's and the two are compared (``adlab compare``'s table).
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``report`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "report",
        help="write a saved run (or two) as one HTML file that opens anywhere",
        description=(
            "Write one self-contained HTML file of a saved run (adlab bench --save, the "
            "Lab's Export): its plots, table, findings, machine, versions and model source; "
            "BokehJS inlined, so it opens offline from a file."
        ),
    )
    p.add_argument("saved", metavar="run.json", help="the saved run (JSON)")
    p.add_argument("--against", metavar="BASE.json",
                   help="another saved run: drawn dashed over this one, and compared")  # fmt: skip
    p.add_argument("-o", "--output", default="report.html", help="the HTML file (report.html)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..plots.page import write_report
    from ..report.runs import load

    other = load(args.against) if args.against else None
    path = write_report(load(args.saved), args.output, other)
    print(f"adlab: wrote {path} ({path.stat().st_size / 1e6:.1f} MB, opens offline)",
          file=sys.stderr)  # fmt: skip
    return 0
