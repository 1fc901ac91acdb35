"""TensorFlow's memory counter: its CPU (or GPU) allocator's own bytes in use and peak.

TensorFlow's default CPU allocator keeps no statistics: ``get_memory_info("CPU:0")``
reports 0 unless ``TF_CPU_ALLOCATOR_USE_BFC=true`` was set before TensorFlow was
imported, which adlab does when it imports TensorFlow (``model.framework_imports``)
unless the user chose otherwise. The residuals are what the allocator still holds
after a taped forward pass while the tape lives, less the output: every tensor the
tape keeps for the backward pass, each once (the allocator counts buffers).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from .._startup import BFC_VARIABLE

ALLOCATOR_COUNTER = "TensorFlow's BFC allocator (get_memory_info)"
TAPE_COUNTER = "TensorFlow's BFC allocator: held by the tape after the forward pass"


def _device() -> str:
    return "GPU:0" if tf.config.list_logical_devices("GPU") else "CPU:0"


def _info(device: str) -> dict[str, int] | None:
    try:
        info = tf.config.experimental.get_memory_info(device)
    except (ValueError, RuntimeError):  # no allocator statistics on this device
        return None
    return info


def _off() -> str:
    return (f"TensorFlow's CPU allocator keeps no statistics: set {BFC_VARIABLE}=true "
            "before TensorFlow is imported (adlab does, unless it was set otherwise)")  # fmt: skip


def _nbytes(tree: Any) -> int:
    if isinstance(tree, (list, tuple)):
        return sum(_nbytes(t) for t in tree)
    if isinstance(tree, dict):
        return sum(_nbytes(t) for t in tree.values())
    shape, dtype = getattr(tree, "shape", None), getattr(tree, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return int(tf.TensorShape(shape).num_elements() or 0) * tf.as_dtype(dtype).size


def counting() -> bool:
    """Whether the allocator keeps statistics (the variable was true at TF's import)."""
    return os.environ.get(BFC_VARIABLE, "").lower() in ("true", "1") or bool(
        tf.config.list_logical_devices("GPU")
    )


def peak(call: Callable[[Any], Any], x: Any) -> tuple[float | None, str]:
    device = _device()
    before = _info(device)
    if before is None or not counting():
        return None, _off()
    tf.config.experimental.reset_memory_stats(device)
    before = _info(device)["current"]
    out = call(x)
    after = _info(device)
    del out
    return float(max(after["peak"] - before, 0)), ALLOCATOR_COUNTER


def residuals(f: Callable, inputs: tuple, wrt: tuple[int, ...]) -> tuple[float | None, str]:
    device = _device()
    if _info(device) is None or not counting():
        return None, _off()
    before = _info(device)["current"]
    with tf.GradientTape() as tape:
        tape.watch([inputs[i] for i in wrt])
        out = f(*inputs)
        held = _info(device)["current"] - before - _nbytes(out)
    del tape, out
    return float(max(held, 0)), TAPE_COUNTER
