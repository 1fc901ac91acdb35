"""The environment a measurement was taken in, carried by every record.

A timing means little without the machine and versions behind it; every
record carries them so that a CSV row read months later still says where it
came from.
"""

from __future__ import annotations

import functools
import os
import platform
from typing import Any


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # not Linux
        pass
    return platform.processor() or platform.machine()


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@functools.cache
def _static() -> dict[str, Any]:
    from importlib.metadata import version

    import jax
    import numpy as np

    dev = jax.devices()[0]
    return {
        "adlab": version("adlab"),
        jax.__name__: jax.__version__,
        "jaxlib": _jaxlib_version(),
        np.__name__: np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": _device_name(dev),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": _usable_cpus(),
    }


def _device_name(dev: Any) -> str:
    kind = str(getattr(dev, "device_kind", "") or "")
    return dev.platform if kind.lower() in ("", dev.platform) else f"{dev.platform}: {kind}"


def _jaxlib_version() -> str | None:
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):  # pragma: no cover
        return None


def environment(precision: str | None = None) -> dict[str, Any]:
    """Versions, device, CPU count, precision and XLA flags, as a plain dict.

    Returns:
        A dict of plain values (strings and numbers).

    Example:
        >>> env = adlab.environment()
        >>> sorted(k for k in ("adlab", "jax", "numpy") if k in env)
        ['adlab', 'jax', 'numpy']
    """
    env = dict(_static())
    env["precision"] = precision
    env["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    env["cpu_async_dispatch"] = cpu_async_dispatch()
    return env


#: JAX's CPU client runs a program inline on the calling thread when XLA's
#: estimate of its flops is below this, and on a worker thread otherwise
#: (``cheap_computation_`` in XLA's ``pjrt/cpu/cpu_client.cc``, jaxlib 0.10).
INLINE_FLOPS = 1000


def dispatch(flops: float | None, env: dict[str, Any]) -> str | None:
    """ "inline" or "async": how a jitted program with these XLA flops runs on CPU.

    None off the CPU or without a flop count. A worker-thread hand-off costs a
    thread wake-up per call: about 5 us on an idle machine, tens on a busy one.
    """
    if flops is None or not str(env.get("device", "")).startswith("cpu"):
        return None
    if env.get("cpu_async_dispatch") is False or flops < INLINE_FLOPS:
        return "inline"
    return "async"


def cpu_async_dispatch() -> bool | None:
    """Whether JAX's CPU client hands programs over 1000 XLA flops to a worker thread.

    True by default; ``jax.config.update("jax_cpu_enable_async_dispatch", False)``
    before JAX's first computation runs every program inline on the calling
    thread (no thread wake-up per call). None if this JAX has no such setting.
    """
    import jax

    return jax.config.values.get("jax_cpu_enable_async_dispatch")


def run_inline() -> None:
    """Run every JAX CPU program on the calling thread, for this process.

    Must come before JAX's first computation: the CPU client reads the setting
    once, when it starts. Raises RuntimeError when it is too late.
    """
    import jax

    if _backends_started():
        if cpu_async_dispatch() is False:
            return
        raise RuntimeError(
            "JAX has already started its CPU client: set "
            "jax.config.update('jax_cpu_enable_async_dispatch', False) before any computation"
        )
    # None (this JAX does not say) sets it too: in time, it takes effect; too late, it is ignored
    jax.config.update("jax_cpu_enable_async_dispatch", False)


def _backends_started() -> bool | None:
    """Whether JAX has started its backends; None where this JAX cannot say.

    There is no public way to ask: the private function is read guarded, so a
    JAX that moved it turns the check off instead of failing on import.
    """
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        return None


# ------------------------------------------------------------- a saved run's machine
#: what else a saved run names the version of, besides the frameworks (``FACTS``' packages)
OTHER_DISTRIBUTIONS = ("jaxlib", "scipy", "bokeh")


def _distributions() -> tuple[str, ...]:
    """The Python frameworks' packages (``FACTS``; read from their installed metadata, not
    imported: a run of JAX alone does not pay for TensorFlow's import) and the rest."""
    from ..engine.backends import FACTS

    return tuple(dict.fromkeys([*(f.package for f in FACTS.values()), *OTHER_DISTRIBUTIONS]))


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _run(*cmd: str) -> str | None:
    import subprocess

    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _gpus() -> list[str]:
    """Each NVIDIA GPU with its driver ("NVIDIA H100, driver 550.54"); none without one."""
    import shutil

    if not shutil.which("nvidia-smi"):
        return []
    text = _run("nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader")
    rows = (line.partition(",") for line in (text or "").splitlines())
    return [f"{name.strip()}, driver {driver.strip()}" for name, _, driver in rows]


def _git_commit() -> str | None:
    """adlab's git commit when it runs from a checkout ("+" when files differ from it)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    head = _run("git", "-C", str(root), "rev-parse", "--short=12", "HEAD")
    if head and _run("git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"):
        head += "+"
    return head


def machine_environment() -> dict[str, Any]:
    """Where a run was measured, as a saved run's ``env`` holds it (``adlab.save``).

    The machine (``host``, ``cpu``, ``cpu_count``, ``cpus_usable``, ``memory_bytes``,
    ``gpus`` with their drivers, JAX's ``device``), the system (``os``, ``python``),
    the ``versions`` of the installed frameworks, adlab's ``adlab`` version and
    ``adlab_commit`` (a checkout's git commit), ``node`` (Node's version, the runtime of
    the JavaScript series) and ``saved_at`` (UTC, ISO 8601).
    """
    import datetime
    import shutil
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in _distributions():
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            continue
    static = _static()
    return {
        "host": platform.node(),
        "cpu": static["cpu"],
        "cpu_count": static["cpu_count"],
        "cpus_usable": static["cpus_usable"],
        "memory_bytes": _memory_bytes(),
        "gpus": _gpus(),
        "device": static["device"],
        "os": static["platform"],
        "python": static["python"],
        "versions": versions,
        "adlab": static["adlab"],
        "adlab_commit": _git_commit(),
        "node": _run("node", "--version") if shutil.which("node") else None,
        "saved_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
