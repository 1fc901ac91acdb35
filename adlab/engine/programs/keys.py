"""The key of a compiled program in adlab's cache (``program_cache``): what determines the
program, known before tracing it.

``prepare`` names the model and options around the build (``identity``); the JAX backend
then keys the program by them, its arguments' shapes and dtypes (and the values of those
it holds as constants), and the software and machine that compile it (``key``). A model
with no source, or importing code of its own, has nothing complete to key on: ``kept()``
is False and its programs are compiled every time.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
import hashlib
import os
import platform
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .disk import programs_dir

# what prepare says about the program being built: set around Backend.program
_identity: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("identity", default=None)


@functools.lru_cache(maxsize=64)
def _imports_own_code(source: str) -> bool:
    """Whether the model imports modules beyond Python's standard library: their code is
    part of the program but not of the source the key is made of."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or "."] if node.level == 0 else ["."]
        if any(name.split(".")[0] not in sys.stdlib_module_names for name in names):
            return True
    return False


@contextlib.contextmanager
def identity(model: Any, **options: Any) -> Iterator[None]:
    """Within: the programs built are those of ``model`` with ``options``; keyed by them.
    A model without source, or importing code of its own, is not kept."""
    own = model.source is None or _imports_own_code(model.source)
    token = _identity.set(None if own else (
        model.source, sorted(model.settings.items(), key=str),
        sorted((k, _leaf(v, True)) for k, v in options.items()),
    ))  # fmt: skip
    try:
        yield
    finally:
        _identity.reset(token)


def kept() -> bool:
    """Whether the program being built is one adlab keeps (its model has a source), and
    so one JAX's cache does not write (``fresh``)."""
    return _identity.get() is not None


def key(inputs: tuple, held: set[int]) -> str | None:
    """The key of the program about to be built from ``inputs`` (f's arguments as the
    backend holds them; ``held``: the indices held in the program as constants, keyed by
    value), or None: nothing to key on (no model source) or the cache is off."""
    ident = _identity.get()
    if ident is None or programs_dir() is None:
        return None
    import jax

    leaves = [
        (i, str(jax.tree_util.tree_structure(a)),
         [_leaf(v, i in held) for v in jax.tree_util.tree_leaves(a)])
        for i, a in enumerate(inputs)
    ]  # fmt: skip
    text = repr((ident, leaves, _software()))
    return hashlib.sha256(text.encode()).hexdigest()


def _leaf(value: Any, by_value: bool) -> tuple:
    """How one argument (or option) enters the key: its shape and dtype, and where the
    program holds it (``by_value``), a digest of its value."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        kind = (type(value).__name__, tuple(value.shape), str(value.dtype))
        if not by_value:
            return kind
        data = np.ascontiguousarray(np.asarray(value)).tobytes()
        return (*kind, hashlib.sha256(data).hexdigest())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_leaf(v, by_value) for v in value))
    return (type(value).__name__, repr(value) if by_value else None)


@functools.cache
def _software() -> tuple:
    """What compiled the program: versions, configuration, device, CPU, adlab's engine."""
    from importlib.metadata import version

    import jax
    import jaxlib

    dev = jax.devices()[0]
    config = tuple((name, str(getattr(jax.config, name, None))) for name in (
        "jax_default_matmul_precision", "jax_numpy_rank_promotion",
        "jax_numpy_dtype_promotion", "jax_enable_checks", "jax_default_prng_impl",
    ))  # fmt: skip
    return (
        jax.__version__, jaxlib.__version__, config, os.environ.get("XLA_FLAGS", ""),
        dev.platform, str(getattr(dev, "device_kind", "")),
        str(getattr(dev.client, "platform_version", "")), platform.machine(), _cpu(),
        version("adlab"), _engine_digest(),
    )  # fmt: skip


def _cpu() -> str:
    """The CPU's model and features: XLA compiles for the host's instructions, and a cache
    on a shared home may be read from another machine."""
    try:
        with open("/proc/cpuinfo") as fh:
            lines = [ln for ln in fh if ln.startswith(("model name", "flags"))]
        return hashlib.sha256("".join(sorted(set(lines))).encode()).hexdigest()
    except OSError:
        return platform.processor()


def _engine_digest() -> str:
    """A digest of adlab's engine source: the code that writes each program (a changed
    mode or call path must not load programs written by the old one)."""
    root = Path(__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()
