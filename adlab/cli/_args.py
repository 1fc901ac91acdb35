"""The arguments several ``adlab`` subcommands share: which model, at what size, in what
precision, on which framework. One home each, so that ``--precision`` or ``--set`` accepts
the same values and reads the same in every subcommand's ``--help``.

``adlab gradbench`` (``adlab.gradbench.cli``) sits in a layer below this package and
keeps its own ``--backend`` and ``--jit``; see that module.
"""

from __future__ import annotations

import argparse
import ast
from typing import Any

from .._vocab import BACKENDS, PRECISIONS
from ..engine.backends import DEFAULT


def setting(text: str) -> tuple[str, Any]:
    """``--set KEY=VALUE`` read as (key, value): a Python literal where it parses as one
    (``N1=100`` -> 100), else the text itself."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"a setting is KEY=VALUE, got {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value  # a plain string


def add_model_arguments(
    p: argparse.ArgumentParser,
    *,
    model: str,
    n: int | None,
    seed: bool = False,
    precision_help: str = "precision of the computation (default float64)",
) -> None:
    """Add ``--model``, ``--n`` (required where ``n`` is None, else its default),
    ``--precision``, ``--set`` and, with ``seed``, ``--seed``."""
    p.add_argument("--model", default=model,
                   help=f"catalog name or path to a model file (default {model})")  # fmt: skip
    if n is None:
        p.add_argument("--n", type=int, required=True, help="the size passed to the model's setup")
    else:
        p.add_argument("--n", type=int, default=n,
                       help=f"the size passed to the model's setup (default {n})")  # fmt: skip
    add_precision_argument(p, precision_help)
    add_settings_argument(p)
    if seed:
        p.add_argument("--seed", type=int, default=0, help="seed for the model's setup (default 0)")


def add_precision_argument(p: argparse.ArgumentParser, help_text: str) -> None:
    """``--precision``: float32 or float64 (default)."""
    p.add_argument("--precision", choices=PRECISIONS, default="float64", help=help_text)


def add_settings_argument(p: argparse.ArgumentParser) -> None:
    """``--set KEY=VALUE``, repeatable: the model's settings, in ``args.settings``."""
    p.add_argument("--set", dest="settings", type=setting, action="append", default=[],
                   metavar="KEY=VALUE", help="a model setting, e.g. --set N1=100")  # fmt: skip


def add_backend_argument(
    p: argparse.ArgumentParser, help_text: str, choices: tuple[str, ...] = BACKENDS
) -> None:
    """``--backend``: one of ``choices``, default jax."""
    p.add_argument("--backend", default=DEFAULT, choices=list(choices), help=help_text)
