"""Each engine entry point and folder imports first, in a fresh interpreter.

``adlab/__init__`` imports the engine in one order; an import cycle hidden behind that
order (the backends and the model's source imported each other: importing
``adlab.engine.derivative`` first failed) shows when another order is tried. The package
``adlab`` is stood in for by an empty one, so that its ``__init__``'s order is not used:
that is the internal this test checks.

Internals: each engine module in FIRST is imported by its name in a fresh interpreter: the
entry points and folders themselves, not what adlab's __init__ exports, are what this test
imports first.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import adlab

PACKAGE = Path(adlab.__file__).parent
FIRST = (
    "adlab.engine.derivative", "adlab.engine.second", "adlab.engine.sparse",
    "adlab.engine.crosscheck", "adlab.engine.compare", "adlab.engine.prepared",
    "adlab.engine.model", "adlab.engine.model.source", "adlab.engine.backends",
    "adlab.engine.backends.inner_grad", "adlab.engine.modes", "adlab.engine.sparsity",
    "adlab.engine.programs",
)  # fmt: skip
CODE = """
import importlib, sys, types
package = types.ModuleType("adlab")
package.__path__ = [{path!r}]
sys.modules["adlab"] = package
importlib.import_module({module!r})
"""


@pytest.mark.slow  # a Python start-up (and JAX's import) per module
@pytest.mark.parametrize("module", FIRST)
def test_imports_first(module, tmp_path):
    run = subprocess.run([sys.executable, "-c", CODE.format(path=str(PACKAGE), module=module)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
