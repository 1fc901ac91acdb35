"""adlab's cache of compiled programs: a second run loads them without tracing.

JAX's persistent cache (``adlab.engine.cache``) is keyed by the lowered
program, so every run still traces and lowers each program before it can
look one up: about 30 ms a program here, a second or more of a default
sweep. This cache is keyed by what determines the program instead, known
before tracing: the model's source and settings, the options (mode, scheme,
precision, backend, jit, wrt, step), the arguments' shapes and dtypes, the
values of the small arguments the program holds as constants, and the
software and machine it was compiled by (JAX's and jaxlib's versions, JAX's
configuration that changes a program, ``XLA_FLAGS``, the device and CPU,
adlab's version and the source of its engine, which writes the program). A
hit loads the executable (``jax.experimental.serialize_executable``) with
XLA's cost analysis stored beside it.

What a hit does not skip: ``prepare``'s checks of the model (its output's
shape is found by tracing f once, abstractly) and the mode's build.

A model wrapped from a Python callable has no source to key on, and one that
imports modules other than Python's own has code outside it: their programs are
compiled every time. So are eager runs and the frameworks other than JAX.

Entries are pickles, trusted as JAX trusts its own cache, in a private
directory; the directory is bounded (``MAX_BYTES``, least recently used out)
under a file lock, which also keeps two processes from reading a half-written
entry. ``ADLAB_CACHE=0`` (or ``adlab bench --no-cache``) leaves it off.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import math
import os
import pickle
import platform
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .cache import MAX_BYTES as _JAX_MAX_BYTES
from .cache import programs_dir

#: the bound on this cache's directory (a program takes 8-40 kB), beside JAX's own
MAX_BYTES = _JAX_MAX_BYTES // 4
#: seconds to wait for another process's lock before going on without the cache
LOCK_TIMEOUT_S = 5.0
_SUFFIX = ".program"

# what prepare says about the program being built: set around Backend.program
_identity: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("identity", default=None)


@dataclass(frozen=True)
class Hit:
    """A program loaded from the cache.

    Attributes:
        compiled: the ``jax.stages.Compiled`` program.
        load_s: seconds to read and load it (what ``compile_s`` reports on a hit).
        compile_s: what compiling it took when it was compiled (trace, lower, XLA).
        biggest: (bytes, words) of its largest intermediate array, for the memory check.
        xla: XLA's cost and memory analysis of the compiled program.
        cost: ``Prepared.cost()``'s dict, or None when not computed before.
    """

    compiled: Any
    load_s: float
    compile_s: float
    biggest: tuple[int, str]
    xla: dict[str, float]
    cost: dict[str, float] | None


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


#: programs loaded in this process, by key: a Lab's runs after its first load none again
_loaded: collections.OrderedDict[tuple[str, str], Hit] = collections.OrderedDict()
LOADED_MAX = 256
_loaded_lock = threading.Lock()


def load(key: str) -> Hit | None:
    """The program stored under ``key``, loaded (once per process); None on a miss (or an
    unreadable entry)."""
    start = time.perf_counter()
    memo = (str(programs_dir()), key)
    with _loaded_lock:
        hit = _loaded.get(memo)
        if hit is not None:
            _loaded.move_to_end(memo)
            return dataclasses.replace(hit, load_s=time.perf_counter() - start)
    hit = _read(key, start)
    if hit is not None:
        with _loaded_lock:
            _loaded[memo] = hit
            while len(_loaded) > LOADED_MAX:
                _loaded.popitem(last=False)
    return hit


def _read(key: str, start: float) -> Hit | None:
    path = _path(key)
    if path is None or not path.exists():
        return None
    try:
        with _locked(path.parent):
            data = path.read_bytes()
            os.utime(path)  # recently used: evicted last
        entry = pickle.loads(data)
        from jax.experimental.serialize_executable import deserialize_and_load

        compiled = deserialize_and_load(entry["blob"], entry["in_tree"], entry["out_tree"])
    except Exception:  # a stale or broken entry (another JAX, a torn disk): compile instead
        return None
    return Hit(compiled, time.perf_counter() - start, entry["compile_s"], entry["biggest"],
               entry["xla"], entry["cost"])  # fmt: skip


def store(key: str, compiled: Any, *, compile_s: float, biggest: tuple[int, str],
          xla: dict[str, float], cost: dict[str, float] | None = None) -> None:  # fmt: skip
    """Keep ``compiled`` under ``key``; quietly nothing where it cannot be serialized or
    written (the cache only ever saves time)."""
    path = _path(key)
    if path is None:
        return
    try:
        from jax.experimental.serialize_executable import serialize

        blob, in_tree, out_tree = serialize(compiled)
        entry = dict(blob=blob, in_tree=in_tree, out_tree=out_tree, compile_s=compile_s,
                     biggest=biggest, xla=xla, cost=cost)  # fmt: skip
        data = pickle.dumps(entry)
        with _locked(path.parent):
            _evict(path.parent, len(data))
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
    except Exception:
        return


@contextlib.contextmanager
def fresh(key: str | None) -> Iterator[Callable[[], bool]]:
    """Around the compile of a program to store under ``key``; yields ``storable()``:
    whether the program compiled within may be stored.

    An executable JAX loaded from its own cache serializes into one that loads but
    does not run ("Function ... not found", jax 0.10 on CPU). So JAX's cache is
    kept from writing these programs (this thread only: they are adlab's to
    keep, even with adlab's cache off), and one JAX did load from its cache
    (written before adlab kept its own, or by a JAX that could not be kept from
    it) is not stored.
    """
    if not kept():  # not a program adlab keeps: JAX's cache keeps it
        yield lambda: False
        return
    _listening()
    before = _jax_hits()
    unwritten: Any = contextlib.nullcontext()
    with contextlib.suppress(ImportError, AttributeError, TypeError):  # another JAX: as usual
        from jax._src import config as jax_config

        unwritten = jax_config.persistent_cache_min_compile_time_secs(math.inf)
    with unwritten:
        yield lambda: key is not None and _jax_hits() == before


_hits = threading.local()  # JAX's cache hits on this thread (its events come on the compiling one)


def _jax_hits() -> int:
    return getattr(_hits, "n", 0)


@functools.cache
def _listening() -> None:
    import jax

    def on(event: str, **kwargs: Any) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            _hits.n = _jax_hits() + 1

    jax.monitoring.register_event_listener(on)


def drop(key: str) -> None:
    """Remove the entry under ``key`` (one that loaded but did not run)."""
    with _loaded_lock:
        _loaded.pop((str(programs_dir()), key), None)
    path = _path(key)
    if path is not None:
        with contextlib.suppress(Exception), _locked(path.parent):
            path.unlink(missing_ok=True)


def remember_cost(key: str, cost: dict[str, float]) -> None:
    """Add ``Prepared.cost()``'s dict to the entry under ``key`` (computed on first use)."""
    memo = (str(programs_dir()), key)
    with _loaded_lock:
        if memo in _loaded:
            _loaded[memo] = dataclasses.replace(_loaded[memo], cost=dict(cost))
    path = _path(key)
    if path is None:
        return
    try:
        with _locked(path.parent):
            entry = pickle.loads(path.read_bytes())
            entry["cost"] = cost
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(entry))
            os.replace(tmp, path)
    except Exception:
        return


def _path(key: str) -> Path | None:
    where = programs_dir()
    return None if where is None else where / f"{key}{_SUFFIX}"


@contextlib.contextmanager
def _locked(where: Path) -> Iterator[None]:
    import filelock

    with filelock.FileLock(where / ".lock", timeout=LOCK_TIMEOUT_S):
        yield


def _evict(where: Path, incoming: int) -> None:
    """Make room for ``incoming`` bytes: least recently used entries out.

    The bytes held are kept in a running count (``.bytes``), so that a store
    does not list the directory (thousands of entries: a tenth of a second
    each time); the directory is counted afresh only when the count says
    the bound is reached (or it is missing), which also corrects any drift.
    """
    count = where / ".bytes"
    with contextlib.suppress(OSError, ValueError):
        held = int(count.read_text())
        if held + incoming <= MAX_BYTES:
            count.write_text(str(held + incoming))
            return
    entries = []
    with os.scandir(where) as listing:
        for entry in listing:
            if entry.name.endswith(_SUFFIX):
                st = entry.stat()
                entries.append((st.st_mtime, st.st_size, entry.path))
    total = sum(size for _, size, _ in entries) + incoming
    for _, size, path in sorted(entries):
        if total <= MAX_BYTES:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
    count.write_text(str(total))


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
