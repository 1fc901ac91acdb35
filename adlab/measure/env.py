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
    """Versions, device, CPU count, precision and XLA flags, as a plain dict."""
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
