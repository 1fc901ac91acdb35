"""JAX's memory counters: XLA's buffer assignment, and the residuals of ``jax.vjp``.

A jitted derivative's peak is what XLA assigned it: its temporaries and its
outputs (``compiled.memory_analysis()``); XLA may fuse a tape away and recompute
in the fused kernel, so that figure can be far below the residuals. Those are
what ``jax.vjp`` keeps from the forward pass at the prepared shapes (what
``jax.ad_checkpoint.print_saved_residuals`` lists): the tape an unfused reverse
pass holds. On a GPU the device's own peak (``memory_stats()``) is added to the
counter where the device keeps one; eager JAX on a CPU has only the process's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from .._memory_count import RSS_COUNTER, of_wrt, rss_peak

XLA_COUNTER = "XLA's buffer assignment (temporaries + outputs)"
DEVICE_COUNTER = "the device's peak_bytes_in_use (memory_stats)"
RESIDUALS_COUNTER = "jax.vjp's saved residuals (print_saved_residuals)"


def _device_peak(run: Callable[[], Any]) -> float | None:
    """The device's peak over ``run()`` above its use before, where it keeps one (GPUs)."""
    dev = jax.devices()[0]
    stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
    if not stats or "peak_bytes_in_use" not in stats:
        return None
    # the peak is the process's since it started: it says something only where this
    # call raised it, so the call's own is read as the growth over what was in use
    before = stats["bytes_in_use"]
    jax.block_until_ready(run())
    after = dev.memory_stats()
    if after["peak_bytes_in_use"] <= stats["peak_bytes_in_use"]:
        return None  # an earlier peak was higher: this call's is not visible
    return float(after["peak_bytes_in_use"] - before)


def peak(call: Callable[[Any], Any], x: Any, compiled: Any) -> tuple[float | None, str]:
    if compiled is not None:
        m = compiled.memory_analysis()
        if m is not None:
            xla = float(m.temp_size_in_bytes + m.output_size_in_bytes)
            device = _device_peak(lambda: call(x))
            if device is not None:
                return max(xla, device), f"{XLA_COUNTER}; {DEVICE_COUNTER}"
            return xla, XLA_COUNTER
    device = _device_peak(lambda: call(x))
    if device is not None:
        return device, DEVICE_COUNTER
    return rss_peak(lambda: jax.block_until_ready(call(x))), RSS_COUNTER


def residuals(f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> tuple[float, str]:
    from jax._src.ad_checkpoint import saved_residuals  # print_saved_residuals' own list

    total = 0
    for aval, source in saved_residuals(of_wrt(f, inputs, wrt), *(inputs[i] for i in wrt)):
        if source.startswith("from the argument"):  # f's own arguments: not kept by it
            continue
        total += aval.size * aval.dtype.itemsize
    return float(total), RESIDUALS_COUNTER
