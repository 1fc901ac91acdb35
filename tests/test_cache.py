"""JAX's persistent compilation cache (adlab.engine.cache): on by default, off on request,
and a user's own cache left alone.

Each case runs in a fresh process, since the cache is a process-wide JAX setting
turned on once. Whether a program came from the cache is read from JAX's own event
counter ("/jax/compilation_cache/cache_hits"), never from a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json, jax
HIT = "/jax/compilation_cache/cache_hits"
hits = []
jax.monitoring.register_event_listener(lambda e, **kw: hits.append(e) if e == HIT else None)
import adlab
from adlab.engine import cache
m = adlab.load_model("normal_logpdf")
p = adlab.prepare(m, *m.setup(7, 0), mode="reverse")
print(json.dumps({"dir": cache.use_cache(), "hits": len(hits),
                  "jax_dir": jax.config.jax_compilation_cache_dir,
                  "min_compile_s": jax.config.jax_persistent_cache_min_compile_time_secs}))
"""


def _env(tmp_path, **extra: str) -> dict[str, str]:
    theirs = ("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "ADLAB_CACHE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(theirs)}
    env.update(ADLAB_CACHE_DIR=str(tmp_path / "adlab-cache"), JAX_PLATFORMS="cpu", **extra)
    return env


def _child(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                         check=True, timeout=300)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(path) -> list[str]:
    return sorted(p.name for p in path.glob("*-cache")) if path.exists() else []


def test_a_second_process_loads_the_programs_the_first_compiled(tmp_path):
    env = _env(tmp_path)
    where = tmp_path / "adlab-cache"
    first = _child(env)
    assert first["dir"] == first["jax_dir"] == str(where)
    assert first["min_compile_s"] == 0.0  # adlab's programs compile in well under JAX's 1 s
    written = _entries(where)
    assert written and first["hits"] == 0
    second = _child(env)
    assert second["hits"] >= 1  # the same program, loaded instead of compiled
    assert _entries(where) == written  # nothing new to write


def test_adlab_cache_0_leaves_it_off(tmp_path):
    got = _child(_env(tmp_path, ADLAB_CACHE="0"))
    assert got["dir"] is None and got["jax_dir"] is None
    assert _entries(tmp_path / "adlab-cache") == []


def test_a_users_own_cache_is_left_as_they_configured_it(tmp_path):
    theirs = tmp_path / "theirs"
    got = _child(_env(tmp_path, JAX_COMPILATION_CACHE_DIR=str(theirs)))
    assert got["dir"] == got["jax_dir"] == str(theirs)
    assert got["min_compile_s"] == 1.0  # JAX's default, not adlab's
    assert _entries(tmp_path / "adlab-cache") == []


def test_bench_no_cache_compiles_afresh(tmp_path):
    where = tmp_path / "adlab-cache"
    command = [sys.executable, "-m", "adlab", "bench", "--sizes", "3", "--modes", "reverse",
               "--repeats", "1", "--quiet", "--json"]  # fmt: skip
    subprocess.run([*command, "--no-cache"], env=_env(tmp_path), capture_output=True,
                   check=True, timeout=300)  # fmt: skip
    assert _entries(where) == []
    subprocess.run(command, env=_env(tmp_path), capture_output=True, check=True, timeout=300)
    assert _entries(where)
