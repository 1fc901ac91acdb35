"""The ``adlab`` command line: ``adlab demo``, ``adlab bench``, ``adlab accuracy``.

Each subcommand lives beside the code it drives and registers itself here
through ``add_parser(subparsers)``; this file only assembles them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the four modes on one catalog model, headless")
    p.add_argument("--model", default="normal_logpdf", help="catalog model name")
    p.add_argument("--n", type=int, default=100, help="size (default 100)")
    p.set_defaults(run=_demo)


def _demo(args: argparse.Namespace) -> int:
    import timeit

    import numpy as np

    import adlab
    from adlab._reference import max_relative_error, reference

    model = adlab.load_model(args.model)
    point = model.setup(args.n)
    ref = reference(model, *point)
    print(f"{model.name} at n={args.n}: {model.doc.splitlines()[0]}")
    print(f"reference: float64 reverse mode, forward/reverse agree to {ref.mismatch:.1e}")
    print(f"{'mode':<22}{'time/derivative':>16}{'f evals':>9}{'max rel error':>15}")
    for mode, scheme in [("forward", None), ("reverse", None), ("numeric", "central"),
                         ("numeric", "richardson"), ("complex-step", None)]:  # fmt: skip
        p = adlab.prepare(model, *point, mode=mode, scheme=scheme or "central")
        timer = timeit.Timer(lambda p=p: np.asarray(p(*point)))
        loops, _ = timer.autorange()
        secs = min(timer.repeat(5, loops)) / loops
        err = max_relative_error(np.asarray(p(*point)), ref.value)
        label = mode if scheme is None else f"{mode}[{scheme}]"
        print(f"{label:<22}{secs * 1e6:>13.1f} us{p.f_evals:>9}{err:>15.1e}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adlab", description="See how derivatives are computed and what they cost."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _demo_parser(sub)
    from ._cli_accuracy import add_parser as add_accuracy

    add_accuracy(sub)
    from .measure._cli import add_parser as add_bench

    add_bench(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (ValueError, TypeError) as exc:  # ModelError, SizeError and bad options
        print(f"adlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("adlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
