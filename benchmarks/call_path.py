"""The prepared call's path, named once: what the overhead benchmarks measure.

``engine_overhead.py`` and ``framework_overhead.py`` print ``digest()`` under their tables,
and the README's overhead figures quote it (``call path <digest>``). A test
(``tests/engine/test_call_path_figures.py``) fails when these files' code no longer has the
digest the README's figures were measured at: a change to the call path re-runs the two
benchmarks, and their figures go into the README with the new digest.

The digest is of each file's syntax tree (``ast.dump``) without its docstrings, so comments,
layout and documentation do not count: they do not run.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the code every ``p(x)`` runs, on JAX and on the eager frameworks
FILES = (
    "adlab/engine/prepared.py",
    "adlab/engine/backends/base.py",
    "adlab/engine/backends/_detach.py",
    "adlab/engine/backends/jax/__init__.py",
    "adlab/engine/backends/jax/call.py",
    "adlab/engine/backends/torch/__init__.py",
    "adlab/engine/backends/tensorflow/__init__.py",
    "adlab/engine/backends/autograd/__init__.py",
    "adlab/engine/model/precision.py",
)


def _code(tree: ast.Module) -> ast.Module:
    """``tree`` without the docstrings of its module, classes and functions."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):  # fmt: skip
            node.body = body[1:] or [ast.Pass()]
    return tree


def digest() -> str:
    """12 hex digits of the call path's code (comments, layout and docstrings aside)."""
    h = hashlib.sha256()
    for name in FILES:
        h.update(name.encode())
        h.update(ast.dump(_code(ast.parse((ROOT / name).read_text()))).encode())
    return h.hexdigest()[:12]


if __name__ == "__main__":
    print(digest())
