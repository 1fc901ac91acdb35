"""``adlab gradbench``: adlab as a GradBench tool, speaking its protocol on stdin/stdout."""

from __future__ import annotations

import argparse
import sys

from .._vocab import BACKENDS, MODES, SCHEMES
from ..engine.backends import DEFAULT


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``gradbench`` on the ``adlab`` command's subparsers."""
    p = sub.add_parser(
        "gradbench",
        help="a GradBench tool on stdin/stdout (github.com/gradbench/gradbench)",
        description="Answer a GradBench eval's messages (one JSON object a line on stdin, "
        "one response a line on stdout), taking every derivative in one mode. Each "
        "(function, shapes) is compiled once, its costs reported apart ('prepare', "
        "'compile', 'warmup', and 'bind' for a new input); each 'evaluate' timing is one "
        "call with its result awaited. Run GradBench's evals against it with "
        "python -m adlab.gradbench.harness.",
    )
    p.add_argument("--mode", required=True, choices=MODES, help="how derivatives are taken")
    p.add_argument("--scheme", default="central", choices=SCHEMES,
                   help="finite differences' scheme, --mode numeric (default central)")  # fmt: skip
    p.add_argument("--backend", default=DEFAULT, choices=BACKENDS,
                   help=f"framework (default {DEFAULT})")  # fmt: skip
    jit = p.add_mutually_exclusive_group()
    jit.add_argument("--jit", dest="jit", action="store_true", default=None,
                     help="compile with the framework's compiler")  # fmt: skip
    jit.add_argument("--no-jit", dest="jit", action="store_false", default=None,
                     help="run eagerly (default: as the framework's users run it, "
                     "JAX jitted, the others eagerly)")  # fmt: skip
    p.add_argument("--max-seconds", type=float, default=120.0,
                   help="particle, saddle: refuse a descent estimated (from its first value and "
                   "derivative) to take longer than this (default 120)")  # fmt: skip
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from .jobs import Options
    from .tool import serve

    if args.scheme != "central" and args.mode != "numeric":
        raise ValueError(f"--scheme is for --mode numeric; --mode {args.mode} takes none")
    options = Options(mode=args.mode, scheme=args.scheme, backend=args.backend, jit=args.jit,
                      max_seconds=args.max_seconds)  # fmt: skip
    return serve(sys.stdin, sys.stdout, options)
