"""Where compiled programs are kept on disk, and the switch that leaves them unkept.

The default sweep compiles some forty small programs, 20-60 ms each on two
cores: about half its time. They are the same programs from one run to the
next, so two caches keep them on disk, in one private directory
(``cache_dir()``): the framework's own compilation cache, which the JAX
backend turns on at the first ``prepare`` (``adlab.engine.backends.jax.disk_cache``),
and adlab's store of programs in ``programs/`` beside its entries
(``adlab.engine.programs.store``). Both are on or off together.

``ADLAB_CACHE=0`` (or ``adlab bench --no-cache``, ``disable()``) leaves them
off; ``ADLAB_CACHE_DIR`` puts them elsewhere than
``$XDG_CACHE_HOME/adlab/compiled`` (``~/.cache/adlab/compiled``).

Whoever can write to the directory can make this process run their code (a
cache's entries are trusted), so it is created private (mode 0700), and its
size is bounded (``MAX_BYTES``, least recently used first out).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the directory's size bound, in bytes (a small program takes 5-20 kB)
MAX_BYTES = 512 * 2**20
#: the folder under the user's cache directory
FOLDER = ("adlab", "compiled")
_OFF = ("0", "false", "no", "off")

_disabled = False  # disable() called: both caches stay off from then on


def cache_dir() -> Path:
    """Where adlab keeps compiled programs: ``ADLAB_CACHE_DIR``, else the user's cache
    directory (``$XDG_CACHE_HOME``, else ``~/.cache``) under ``adlab/compiled``."""
    if os.environ.get("ADLAB_CACHE_DIR"):
        return Path(os.environ["ADLAB_CACHE_DIR"]).expanduser()
    return user_cache() / Path(*FOLDER)


def user_cache() -> Path:
    """The user's cache directory: ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()


def disable() -> None:
    """Leave the caches off in this process (before the first ``prepare``; after it, the
    cache the framework has opened stays open)."""
    global _disabled
    _disabled = True


def enabled() -> bool:
    """Whether adlab caches compiled programs in this process: not ``ADLAB_CACHE=0``,
    nor ``disable()`` (``adlab bench --no-cache``)."""
    return not _disabled and os.environ.get("ADLAB_CACHE", "1").strip().lower() not in _OFF


def private_dir(path: Path) -> Path | None:
    """``path``, made private (mode 0700) where missing; None where it cannot be made (a
    read-only home: compile every time)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def programs_dir() -> Path | None:
    """Where adlab's own cache keeps compiled programs (``programs/`` in ``cache_dir()``,
    made private), or None when caching is off or the directory cannot be made."""
    return private_dir(cache_dir() / "programs") if enabled() else None
