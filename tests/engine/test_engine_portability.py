"""Graceful degradation where the platform or a JAX upgrade takes something away.

Internals: what the platform takes away is simulated where adlab reads it: the memory
check's sysconf (programs.memory), JAX's private x64 state (model.precision's _swap_x64,
_restore_x64, _private_x64_state) and whether backends started (measure.env); no public
function reaches them.
"""

from __future__ import annotations

import sys
import types

import jax
import pytest

from adlab.engine.model import precision
from adlab.engine.programs import memory
from adlab.measure import env


def test_available_memory_falls_back_to_sysconf_then_to_a_default(monkeypatch):
    monkeypatch.setattr(memory, "MEMINFO", "/nonexistent/meminfo")
    monkeypatch.setattr(memory, "CGROUP_FILES", ())
    pages = {"SC_PAGE_SIZE": 4096, "SC_AVPHYS_PAGES": 1000}
    monkeypatch.setattr(memory.os, "sysconf", pages.__getitem__)
    assert memory.available_bytes() == 4096 * 1000

    def no_such_name(name):  # macOS: sysconf has no SC_AVPHYS_PAGES
        raise ValueError(f"unrecognized configuration name {name!r}")

    monkeypatch.setattr(memory.os, "sysconf", no_such_name)
    assert memory.available_bytes() == memory.DEFAULT_AVAILABLE
    monkeypatch.delattr(memory.os, "sysconf")  # Windows: no sysconf at all
    assert memory.available_bytes() == memory.DEFAULT_AVAILABLE


def test_available_memory_reads_meminfo_and_the_cgroup_cap(monkeypatch, tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  16000000 kB\nMemAvailable:   8000000 kB\n")
    limit, usage = tmp_path / "max", tmp_path / "current"
    limit.write_text("3000000000\n")
    usage.write_text("1000000000\n")
    monkeypatch.setattr(memory, "MEMINFO", str(meminfo))
    monkeypatch.setattr(memory, "CGROUP_FILES", ())
    assert memory.available_bytes() == 8000000 * 1024
    monkeypatch.setattr(memory, "CGROUP_FILES", ((str(limit), str(usage)),))
    assert memory.available_bytes() == 2000000000


def test_a_jax_without_the_private_x64_state_uses_the_public_context(monkeypatch):
    moved = types.ModuleType("jax._src.config")  # a JAX where the state moved elsewhere
    monkeypatch.setitem(sys.modules, "jax._src.config", moved)
    assert precision._private_x64_state() is None
    monkeypatch.undo()
    assert precision._private_x64_state() is not None
    # the fallback pair does what the fast one does
    before = bool(jax.config.jax_enable_x64)
    token = precision._swap_x64(not before)
    assert bool(jax.config.jax_enable_x64) == (not before)
    precision._restore_x64(token)
    assert bool(jax.config.jax_enable_x64) == before


def test_run_inline_without_jaxs_private_check_sets_the_flag(monkeypatch):
    from jax._src import xla_bridge

    jax.numpy.zeros(1).block_until_ready()
    assert env._backends_started() is True
    monkeypatch.delattr(xla_bridge, "backends_are_initialized")
    assert env._backends_started() is None
    updates = []
    monkeypatch.setattr(jax.config, "update", lambda name, value: updates.append((name, value)))
    env.run_inline()  # cannot tell whether it is in time: sets it, raises nothing
    assert updates == [("jax_cpu_enable_async_dispatch", False)]


def test_run_inline_refuses_once_jax_has_started(monkeypatch):
    jax.numpy.zeros(1).block_until_ready()
    monkeypatch.setattr(env, "cpu_async_dispatch", lambda: True)
    with pytest.raises(RuntimeError, match="before any computation"):
        env.run_inline()
