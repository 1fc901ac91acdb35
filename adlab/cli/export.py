"""``adlab export``: a model's gradient as one standalone JavaScript ES module.

Registered in ``adlab.cli`` by ``add_parser(subparsers)``; the module is written by
``adlab.export_js`` (``adlab.report.export_js``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from ..report.export_js import DEFAULT_N, export_dts, export_js
from ._args import add_settings_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``export`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "export",
        help="write f and its gradient as one standalone JavaScript module (no imports)",
        description=(
            "Write the model's f, its gradient and f with its gradient (valueAndGrad) as one "
            "JavaScript ES module that imports nothing: for Node, a bundler or a web page's "
            '<script type="module">. Where JAX traces the model at a symbolic size, the module '
            "takes any n (its header says from which n); else, or with --fixed, it is built "
            "for the shapes at --n."
        ),
    )
    p.add_argument("--model", required=True, help="catalog name or path to a model file")
    p.add_argument("--mode", default="reverse",
                   help="reverse (default: one pass) or forward (a pass per input)")  # fmt: skip
    p.add_argument("--n", type=int, default=DEFAULT_N,
                   help=f"the size passed to the model's setup (default {DEFAULT_N})")  # fmt: skip
    p.add_argument("--fixed", action="store_true",
                   help="build for --n alone, even where the model traces at any n")  # fmt: skip
    add_settings_argument(p)
    p.add_argument("--hvp", action="store_true", help="also export hvp: the Hessian times v")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the module's file, e.g. grad.mjs (default: print it)")  # fmt: skip
    p.add_argument("--dts", action="store_true",
                   help="also write TypeScript declarations beside it (grad.d.ts)")  # fmt: skip
    p.set_defaults(run=run)


def command(args: argparse.Namespace) -> str:
    """The command, as the module's header names it (without where it was written)."""
    words = ["adlab", "export", "--model", args.model, "--mode", args.mode, "--n", str(args.n)]
    for key, value in args.settings:
        words += ["--set", f"{key}={value}"]
    if args.fixed:
        words.append("--fixed")
    if args.hvp:
        words.append("--hvp")
    return shlex.join(words)


def run(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise ValueError(f"--n must be a positive integer, got {args.n}")
    if args.dts and not args.output:
        raise ValueError("--dts writes the declarations beside the module: give -o FILE.mjs")
    said = dict(model=args.model, mode=args.mode, n=args.n, hvp=args.hvp, fixed=args.fixed,
                command=command(args), **dict(args.settings))  # fmt: skip
    source = export_js(**said)
    if not args.output:
        sys.stdout.write(source)
        return 0
    out = Path(args.output)
    out.write_text(source)
    written = [out]
    if args.dts:
        dts = out.with_name(out.name.removesuffix(out.suffix) + ".d.ts")
        dts.write_text(export_dts(**said))
        written.append(dts)
    print(f"wrote {', '.join(map(str, written))}", file=sys.stderr)
    return 0
