"""The ``adlab`` command line: ``adlab demo``, ``bench``, ``accuracy``, ``profile``, ``compare``,
``report``, ``advise``, ``export``, ``gradbench``.

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
    from ..catalog import load_model
    from ..measure import bench
    from ..report import format_records

    model = load_model(args.model)
    print(f"{model.name} at n={args.n}: {model.doc.splitlines()[0]}\n")
    modes = ["forward", "reverse", "numeric", "numeric[richardson]", "complex-step"]
    records = list(bench(model, sizes=[args.n], modes=modes, warn=False))  # noise: in the listing
    print(format_records(records))
    print(
        "\nTry: adlab bench --case backends, adlab accuracy --model rosenbrock --n 10, "
        "or the Lab and tutorials, from adlab's folder:\n  JUPYTER_CONFIG_PATH=$PWD/jupyter-config "
        "jupyter lab --allow-root notebooks/00_quickstart.ipynb"
        "\n(--allow-root lets it start as root; it changes nothing for other users; "
        "jupyter-config/ holds the project's JupyterLab defaults)"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adlab", description="See how derivatives are computed and what they cost."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _demo_parser(sub)
    from .accuracy import add_parser as add_accuracy

    add_accuracy(sub)
    from .bench import add_parser as add_bench

    add_bench(sub)
    from .profile import add_parser as add_profile

    add_profile(sub)
    from .compare import add_parser as add_compare

    add_compare(sub)
    from .report import add_parser as add_report

    add_report(sub)
    from .advise import add_parser as add_advise

    add_advise(sub)
    from .export import add_parser as add_export

    add_export(sub)
    from ..gradbench.cli import add_parser as add_gradbench

    add_gradbench(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ..engine.model.userline import speaking_to

    args = build_parser().parse_args(argv)
    try:
        with speaking_to("cli"):  # advice in the command line's terms: --no-jit, not jit=False
            return int(args.run(args) or 0)
    except (ValueError, TypeError) as exc:  # ModelError, SizeError and bad options
        print(f"adlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("adlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
