"""JAX's persistent compilation cache, in adlab's directory of compiled programs.

JAX can keep compiled programs on disk, keyed by the program and the
compiler's options (not by source line numbers), so a second run loads them
instead of compiling them. The cache is a JAX setting, process-wide by
nature. adlab turns it on once, at the first ``prepare`` (``use_cache``), in
``adlab.engine.programs.disk.cache_dir()``, and only where the user has not
configured one of their own (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)``): theirs is left as
it is. The switch (``ADLAB_CACHE=0``, ``disable()``) is ``programs.disk``'s.

A program loaded from JAX's cache reports the loading time as its compile
time (``Record.compile_s``): the time a user waits there and then. JAX's
cache still traces and lowers each program (the lowered program is its key);
adlab's own store (``adlab.engine.programs.store``) skips that too, and says
so (``Record.compile_loaded``).

JAX bounds its directory (``MAX_BYTES``) with a file lock around each read and
write, which also keeps two processes sharing the cache from reading a
half-written entry.

References:
    JAX documentation, "Persistent compilation cache"
    (docs.jax.dev/en/latest/persistent_compilation_cache.html).
"""

from __future__ import annotations

import importlib.util
import os
import threading

from ...programs import disk

#: JAX writes only programs that took this long to compile; adlab's take 20-60 ms
_JAX_DEFAULT_MIN_COMPILE_S = 1.0
#: where earlier versions of adlab kept the cache (under the user's cache directory)
_OLD_FOLDER = ("adlab", "jax")

_lock = threading.Lock()
_decided = False
_directory: str | None = None


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
    if not disk.enabled() or not jax.config.jax_enable_compilation_cache:
        return None
    _move_old_folder()
    path = disk.private_dir(disk.cache_dir())
    if path is None:  # a read-only home: compile every time, as without the cache
        return None
    if jax.config.jax_persistent_cache_min_compile_time_secs == _JAX_DEFAULT_MIN_COMPILE_S:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    # JAX bounds its cache only with the filelock package (it raises without it)
    if jax.config.jax_compilation_cache_max_size == -1 and importlib.util.find_spec("filelock"):
        jax.config.update("jax_compilation_cache_max_size", disk.MAX_BYTES)
    jax.config.update("jax_compilation_cache_dir", str(path))
    return str(path)


def _move_old_folder() -> None:
    """A cache kept where earlier versions kept it moves to the new place, once: a user's
    compiled programs are neither compiled again nor left behind."""
    if os.environ.get("ADLAB_CACHE_DIR"):
        return
    old, new = disk.user_cache().joinpath(*_OLD_FOLDER), disk.cache_dir()
    if old.is_dir() and not new.exists():
        try:
            os.replace(old, new)
        except OSError:  # another process moved it first, or it cannot be moved: start anew
            pass
