"""The tests keep a compile cache of their own: a run never reads or fills the user's.

Internals: reads ``adlab.engine.programs.disk.cache_dir``, where adlab's caches are, to
check the tests' run points it away from the user's cache directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from adlab.engine.programs.disk import cache_dir

ROOT = Path(__file__).resolve().parents[2]
#: one quick test that compiles and keeps a JAX program (a model with a source)
COMPILING = "tests/engine/test_engine_prepare.py::test_xla_flops_grow_as_theory_says"


def test_this_run_uses_the_tests_own_cache_not_the_users():
    here = cache_dir().resolve()
    assert here == Path(os.environ["ADLAB_TESTS_CACHE_DIR"]).resolve()
    assert not here.is_relative_to(Path.home() / ".cache")
    assert not here.is_relative_to(Path.home()) or here.is_relative_to(ROOT)


def _pytest(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("ADLAB_CACHE", "ADLAB_TESTS_CACHE", "XDG_CACHE"))}  # fmt: skip
    clean.update(HOME=str(home), **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", *args, COMPILING],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_run_of_the_tests_leaves_the_users_cache_as_it_was(tmp_path):
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    mine = home / ".cache" / "adlab" / "compiled"
    mine.mkdir(parents=True)
    (mine / "theirs").write_text("the user's own entry")
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    tmp.mkdir()

    # by default in pytest's own cache folder (here in tmp_path: cache_dir), kept for the
    # next run ...
    folder = tmp_path / "pytest-cache"
    run = _pytest(home, "-o", f"cache_dir={folder}", TMPDIR=str(tmp))
    assert run.returncode == 0, run.stdout + run.stderr
    kept = folder / "d" / "adlab-compiled"
    assert any((kept / "programs").iterdir()), "the run compiled nothing into its cache"
    # ... where ADLAB_TESTS_CACHE_DIR says ...
    named = tmp_path / "named"
    run = _pytest(home, "-p", "no:cacheprovider", ADLAB_TESTS_CACHE_DIR=str(named),
                  TMPDIR=str(tmp))  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert any((named / "programs").iterdir()), "the run compiled nothing into its cache"
    # ... and without pytest's cache, in a directory of its own that the run removes
    run = _pytest(home, "-p", "no:cacheprovider", TMPDIR=str(tmp))
    assert run.returncode == 0, run.stdout + run.stderr
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("adlab-tests-cache-")]

    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    assert (mine / "theirs").read_text() == "the user's own entry"
