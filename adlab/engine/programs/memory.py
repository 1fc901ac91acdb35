"""Refuse derivatives that would not fit in memory, before they kill the kernel.

A dense Jacobian or a batch of n perturbed copies of x grows as n^2; at
n = 100,000 in float64 that is 80 GB. We estimate the largest array a
computation needs, from the traced program (exact shapes, no allocation), and
from XLA's own memory analysis once compiled, and refuse above a fraction of
the memory that is actually available.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..._format import human_bytes
from .jaxpr import equations

#: refuse computations needing more than this fraction of available memory
FRACTION = 0.5


class SizeError(ValueError):
    """A derivative too large for this machine; the message gives the estimate.

    Example:
        >>> issubclass(adlab.SizeError, ValueError)
        True
    """


#: what ``available_bytes`` assumes where the system says nothing (no /proc, no
#: sysconf page counts): enough for moderate sizes, small enough to refuse the huge
DEFAULT_AVAILABLE = 4 << 30
MEMINFO = "/proc/meminfo"
#: (limit, usage) files of the process's cgroup, v2 then v1
CGROUP_FILES = (
    ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
)


def _read_int(path: str) -> int:
    with open(path) as fh:
        return int(fh.read().strip())


def _meminfo_available() -> int | None:
    """Linux's MemAvailable: free memory plus what the kernel can reclaim."""
    try:
        with open(MEMINFO) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):  # not Linux, or an unexpected format
        pass
    return None


def _sysconf_available() -> int | None:
    """Free physical pages x page size: glibc's names, absent on macOS and Windows."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf, or no such name
        return None


def available_bytes() -> int:
    """Memory available to this process now: MemAvailable (else free pages, else
    ``DEFAULT_AVAILABLE``), capped by the cgroup's limit."""
    avail = _meminfo_available()
    if avail is None:
        avail = _sysconf_available()
    if avail is None:
        avail = DEFAULT_AVAILABLE
    for limit, usage in CGROUP_FILES:
        try:
            cap = _read_int(limit) - _read_int(usage)
        except (OSError, ValueError):  # no such cgroup file, or "max"
            continue
        avail = min(avail, cap)
    return avail


def check(nbytes: float, what: str) -> None:
    """Raise ``SizeError`` if ``nbytes`` exceeds the allowed share of memory."""
    limit = FRACTION * available_bytes()
    if nbytes > limit:
        raise SizeError(
            f"{what} needs about {human_bytes(nbytes)}, more than half of the "
            f"{human_bytes(limit / FRACTION)} of memory available; refused so the kernel "
            "survives. Use a smaller n, mode='reverse' for a scalar f (no n x n "
            "batch), or a vector-Jacobian product instead of the dense Jacobian."
        )


def _aval_bytes(aval) -> int:
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    try:
        return math.prod(shape) * np.dtype(dtype).itemsize
    except TypeError:  # extended dtypes (PRNG keys)
        return 0


def largest_array(jaxpr) -> tuple[int, object]:
    """(bytes, aval) of the largest value anywhere in a jaxpr, sub-jaxprs included."""
    best, which = 0, None
    for eqn in equations(jaxpr):
        for v in eqn.outvars:
            size = _aval_bytes(v.aval)
            if size > best:
                best, which = size, v.aval
    return best, which


#: bytes a chunked computation may hold per chunk; None: a share of available memory
CHUNK_BUDGET: int | None = None
#: the share of available memory one chunk may take (FRACTION bounds the whole)
CHUNK_SHARE = 0.125


def chunk_columns(n: int, bytes_per_column: float) -> int:
    """How many of n columns (tangents, perturbed points) to compute at once: as many as
    ``CHUNK_BUDGET`` (else ``CHUNK_SHARE`` of available memory) holds, at least one."""
    budget = CHUNK_BUDGET if CHUNK_BUDGET is not None else CHUNK_SHARE * available_bytes()
    return int(max(1, min(n, budget // max(bytes_per_column, 1.0))))


#: evaluations x inputs (f_evals * n) above which a chunked batch is refused: at
#: about 1e9 input-evaluations a second on a CPU, longer than a session waits
WORK_LIMIT = 1e10


def check_work(work: float, nbytes: float, what: str) -> None:
    """Raise ``SizeError`` if a batch computed in chunks would take too long (``WORK_LIMIT``)."""
    if work > WORK_LIMIT:
        raise SizeError(
            f"{what} needs about {human_bytes(nbytes)} if held at once; adlab computes it "
            f"in chunks, but its {work:.2g} input-evaluations (copies x n) are more than the "
            f"{WORK_LIMIT:.0e} a session allows (minutes or more); refused. Use a smaller n, "
            "mode='reverse' for a scalar f (no n x n batch), or a vector-Jacobian product "
            "instead of the dense Jacobian."
        )
