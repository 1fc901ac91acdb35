"""JAX's persistent compilation cache, in the user's cache directory.

The default sweep compiles some forty small programs, 20-60 ms each on two
cores: about half its time. They are the same programs from one run to the
next, and JAX can keep compiled programs on disk, keyed by the program and
the compiler's options (not by source line numbers), so a second run loads
them instead of compiling them.

The cache is a JAX setting, process-wide by nature. adlab turns it on once,
at the first ``prepare`` (``use_cache``), and only where the user has not
configured one of their own (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)``): theirs is left as
it is. ``ADLAB_CACHE=0`` (or ``adlab bench --no-cache``, ``disable()``)
leaves it off; ``ADLAB_CACHE_DIR`` puts it elsewhere than
``$XDG_CACHE_HOME/adlab/jax`` (``~/.cache/adlab/jax``).

A program loaded from JAX's cache reports the loading time as its compile
time (``Record.compile_s``): the time a user waits there and then. JAX's
cache still traces and lowers each program (the lowered program is its key);
adlab's own cache of compiled programs, in ``programs/`` beside JAX's
entries (``adlab.engine.programs.store``), skips that too, and says so
(``Record.compile_loaded``). Both are on or off together.

JAX trusts its cache: whoever can write to the directory can make this
process run their code. So the directory is created private (mode 0700).
Its size is bounded (``MAX_BYTES``, least recently used first out); the
bound takes a file lock around each read and write, which also keeps two
processes sharing the cache from reading a half-written entry.

References:
    JAX documentation, "Persistent compilation cache"
    (docs.jax.dev/en/latest/persistent_compilation_cache.html).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

#: the cache's size bound, in bytes (a small program takes 5-20 kB)
MAX_BYTES = 512 * 2**20
#: JAX writes only programs that took this long to compile; adlab's take 20-60 ms
_JAX_DEFAULT_MIN_COMPILE_S = 1.0
_OFF = ("0", "false", "no", "off")

_lock = threading.Lock()
_decided = False
_directory: str | None = None
_disabled = False  # disable() called: adlab's own cache is off from then on too


def cache_dir() -> Path:
    """Where adlab keeps compiled programs: ``ADLAB_CACHE_DIR``, else the user's cache
    directory (``$XDG_CACHE_HOME``, else ``~/.cache``) under ``adlab/jax``."""
    if os.environ.get("ADLAB_CACHE_DIR"):
        return Path(os.environ["ADLAB_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "adlab" / "jax"


def disable() -> None:
    """Leave the cache off in this process (before the first ``prepare``; after it, the
    cache JAX has opened stays open)."""
    global _decided, _directory, _disabled
    with _lock:
        _disabled = True
        if not _decided:
            _decided, _directory = True, None


def enabled() -> bool:
    """Whether adlab caches compiled programs in this process: not ``ADLAB_CACHE=0``,
    nor ``disable()`` (``adlab bench --no-cache``)."""
    return not _disabled and os.environ.get("ADLAB_CACHE", "1").strip().lower() not in _OFF


def programs_dir() -> Path | None:
    """Where adlab's own cache keeps compiled programs (``programs/`` in ``cache_dir()``,
    made private), or None when caching is off or the directory cannot be made."""
    if not enabled():
        return None
    path = cache_dir() / "programs"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile every time
        return None
    return path


def use_cache() -> str | None:
    """Turn the cache on, once per process; the directory in use, or None when off.

    A cache the user configured is used as it is; with ``ADLAB_CACHE=0``, or
    where JAX's cache is switched off (``jax_enable_compilation_cache``), or
    the directory cannot be made, none is.
    """
    global _decided, _directory
    if _decided:  # the fast path of every prepare after the first
        return _directory
    with _lock:
        if not _decided:
            _directory = _turn_on()
            _decided = True
    return _directory


def _turn_on() -> str | None:
    import jax

    if jax.config.jax_compilation_cache_dir:  # the user's own: not ours to change
        return str(jax.config.jax_compilation_cache_dir)
    if not enabled():
        return None
    if not jax.config.jax_enable_compilation_cache:
        return None
    path = cache_dir()
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile every time, as without the cache
        return None
    if jax.config.jax_persistent_cache_min_compile_time_secs == _JAX_DEFAULT_MIN_COMPILE_S:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    # JAX bounds its cache only with the filelock package (it raises without it)
    if jax.config.jax_compilation_cache_max_size == -1 and importlib.util.find_spec("filelock"):
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    jax.config.update("jax_compilation_cache_dir", str(path))
    return str(path)
