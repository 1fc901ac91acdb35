"""adlab's cache of compiled programs: a second run loads them without tracing.

JAX's persistent cache (``adlab.engine.backends.jax.disk_cache``) is keyed by the lowered
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

The key is made in ``program_key`` (``identity``, ``kept`` and ``key`` are re-exported
here); this module stores, loads and evicts the programs.

What a hit does not skip: ``prepare``'s checks of the model (its output's
shape is found by tracing f once, abstractly) and the mode's build.

A model wrapped from a Python callable has no source to key on, and one that
imports modules other than Python's own has code outside it: their programs are
compiled every time. So are eager runs and the frameworks other than JAX.

A program that calls code outside XLA (a custom call) is loaded only where that
code is known to be ready, or made ready first: jaxlib's LAPACK kernels
(``np.linalg``'s inv, solve, eigh, svd, ...) are bound on the first trace of
such an operation, and a loaded program that calls them before that dies with a
segmentation fault (jax 0.10, CPU). So each entry lists its custom-call targets;
LAPACK's are bound before loading (0.12 s, once a process), and a program
calling any other target outside XLA is not stored (``readiable``).

Entries are pickles, trusted as JAX trusts its own cache, in a private
directory; the directory is bounded (``MAX_BYTES``, least recently used out)
under a file lock, which also keeps two processes from reading a half-written
entry. ``ADLAB_CACHE=0`` (or ``adlab bench --no-cache``) leaves it off.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import math
import os
import pickle
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .disk import MAX_BYTES as _DISK_MAX_BYTES
from .disk import programs_dir
from .keys import identity as identity
from .keys import kept as kept
from .keys import key as key

#: the bound on this cache's directory (a program takes 8-40 kB), beside JAX's own
MAX_BYTES = _DISK_MAX_BYTES // 4
#: a full directory is emptied down to this share of ``MAX_BYTES``, so that the stores
#: after it fit the running count again instead of each listing the directory
LOW_WATER = 0.8
#: seconds to wait for another process's lock before going on without the cache
LOCK_TIMEOUT_S = 5.0
_SUFFIX = ".program"


@dataclass(frozen=True)
class Hit:
    """A program loaded from the cache.

    Attributes:
        compiled: the ``jax.stages.Compiled`` program.
        load_s: seconds to read and load it (what ``compile_s`` reports on a hit).
        compile_s: what compiling it took when it was compiled (trace, lower, XLA): its
            CPU seconds, at most its wall seconds (``backends.jax.compile_clock``).
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
        # an entry from before the targets were listed may call code not bound yet
        if "targets" not in entry or not _make_ready(entry["targets"]):
            return None
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
        targets = custom_calls(compiled)
        if not all(map(readiable, targets)):
            return
        from jax.experimental.serialize_executable import serialize

        blob, in_tree, out_tree = serialize(compiled)
        entry = dict(blob=blob, in_tree=in_tree, out_tree=out_tree, compile_s=compile_s,
                     biggest=biggest, xla=xla, cost=cost, targets=targets)  # fmt: skip
        data = pickle.dumps(entry)
        with _locked(path.parent):
            _evict(path.parent, len(data))
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
    except Exception:
        return


#: custom-call targets XLA itself provides (its own library calls start with "__", as
#: ``__cublas$gemm``): nothing outside the executable needs to be ready for them
_XLA_TARGETS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})
_LAPACK = "lapack_"


def custom_calls(compiled: Any) -> tuple[str, ...]:
    """The custom-call targets the compiled program calls, from its HLO text."""
    return tuple(sorted(set(re.findall(r'custom_call_target="([^"]+)"', compiled.as_text()))))


def readiable(target: str) -> bool:
    """Whether a loaded program may call ``target``: XLA's own, or one adlab makes ready."""
    return target.startswith(("__", _LAPACK)) or target in _XLA_TARGETS


def _make_ready(targets: tuple[str, ...]) -> bool:
    """Bind what ``targets`` call before a program calling them is loaded; False where
    that cannot be done (another jaxlib): the program is compiled instead."""
    if not all(map(readiable, targets)):
        return False
    if any(t.startswith(_LAPACK) for t in targets):
        try:  # what tracing an np.linalg operation does first (jax._src.lax.linalg)
            from jax._src.lax.linalg import initialize_lapack

            initialize_lapack()
        except Exception:
            return False
    return True


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
    Then the oldest entries go until ``LOW_WATER`` of the bound is held: emptied
    only to the bound, a full directory was listed again at every store after.
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
    if total > MAX_BYTES:
        for _, size, path in sorted(entries):
            if total <= LOW_WATER * MAX_BYTES:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
    count.write_text(str(total))
