"""The backends: which frameworks adlab knows, whether they are installed, and loading one.

A framework's folder (``adlab/engine/backends/<name>/``) is imported the first
time it is used, so ``import adlab`` imports no framework but JAX and NumPy,
and a framework that is not installed costs nothing until a variant names it.
Adding a framework is its folder, its entry in ``facts.FACTS`` and its name in
``adlab._vocab.BACKENDS``.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
from typing import TYPE_CHECKING

from ..._vocab import BACKENDS
from .facts import FACTS, Facts, facts_of

if TYPE_CHECKING:
    from .base import Backend


#: the facts of each framework (``facts.FACTS``), by their first name
Known = Facts
KNOWN: dict[str, Facts] = FACTS
assert tuple(KNOWN) == BACKENDS, "adlab._vocab.BACKENDS and KNOWN list the same frameworks"


class MissingFramework(ImportError):
    """A backend whose framework is not installed; the message says how to install it."""


def default_jit(name: str) -> bool:
    """Whether backend ``name`` compiles when ``jit`` is left unset (without importing it)."""
    return facts_of(name).default_jit


def has_compiler(name: str) -> bool:
    """Whether backend ``name`` has a compiler for ``jit=True`` (without importing it)."""
    return facts_of(name).compiler is not None


def installed(name: str) -> bool:
    """Whether backend ``name``'s framework can be imported (without importing it), and
    the program it runs in (Node) is on PATH."""
    known = facts_of(name)
    if known.executable is not None and shutil.which(known.executable) is None:
        return False
    return importlib.util.find_spec(known.package) is not None


def pip_command(name: str) -> str | None:
    """The command that installs backend ``name``'s framework, or None (always installed)."""
    known = facts_of(name)
    if known.install is not None:
        return known.install
    return None if known.extra is None else f"pip install 'adlab[{known.extra}]'"


_LOADED: dict[str, Backend] = {}


def get_backend(name: str) -> Backend:
    """The backend ``name``, its framework imported on first use.

    Raises:
        ValueError: no such backend.
        MissingFramework: its framework is not installed (the message says how to).
    """
    backend = _LOADED.get(name)
    if backend is not None:
        return backend
    known = facts_of(name)
    if not installed(name) and known.executable is not None:
        raise MissingFramework(f"backend={name!r} needs {known.executable}, which is not "
                               f"installed here: {pip_command(name)}")  # fmt: skip
    if not installed(name):
        raise MissingFramework(
            f"backend={name!r} needs {known.label}, which is not installed here: "
            f"{pip_command(name)} (or pip install 'adlab[frameworks]' for all of them)"
        )
    module = importlib.import_module(f"{__package__}.{name}")
    backend = _LOADED[name] = module.BACKEND
    return backend
