"""A warm cache never crashes a process: programs calling LAPACK (np.linalg) load safely.

jaxlib binds its LAPACK kernels on the first trace of an np.linalg operation; a
program loaded from adlab's cache calls them without tracing, so before the
fix a second process died with a segmentation fault (issue 22). Each case runs
in two fresh processes sharing one cache directory: both must exit 0 with the
same derivatives, and the second must have loaded its programs (else the test
would prove nothing about loading).

Internals: reads adlab's store of compiled programs (store) to tell a program loaded from it
from one compiled again: the proof that the second process loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from adlab.engine.programs import store as program_cache

# f's body for each np.linalg operation; A is a 3 x 3 matrix made well conditioned
OPS = {
    "inv": "np.sum(np.linalg.inv(A))",
    "solve": "np.sum(np.linalg.solve(A, np.arange(1.0, A.shape[0] + 1)))",
    "cholesky": "np.sum(np.linalg.cholesky(A @ A.T))",
    "eigh": "np.sum(np.linalg.eigh(A + A.T)[0] ** 3)",
    "slogdet": "np.linalg.slogdet(A)[1]",
    "det": "np.linalg.det(A)",
    "qr": "np.sum(np.linalg.qr(A)[1] ** 2)",
    "svd": "np.sum(np.linalg.svd(A, compute_uv=False))",
    "lstsq": "np.sum(np.linalg.lstsq(A, np.ones(A.shape[0]))[0])",
}

# the kinds of program whose LAPACK calls differ: reverse and forward each differentiate the
# factorisations their own way, and the Hessian nests them (differences and complex step
# call only f's own kernels, which every kind calls; the sparse Jacobian is forward's
# program, coloured); refusals are fine, as long as both processes give the same answer
CHILD = r"""
import json, sys
import numpy as np
import adlab
ops = json.loads(sys.argv[1])
out = {}
for name, body in ops.items():
    # x is the matrix flattened (a Hessian differentiates a vector)
    src = ("def setup(n, rng):\n    return (rng.normal(size=(n, n)) / n + 3 * np.eye(n)).ravel(),\n"
           f"def f(x):\n    A = np.reshape(x, (3, 3))\n    return {body}\n")
    m = adlab.Model.from_source(src, name)
    (x,) = m.setup(3, 0)
    got = {}
    for kind in ("reverse", "forward", "hessian"):
        try:
            if kind == "hessian":
                p = adlab.prepare_hessian(m, x)
            else:
                p = adlab.prepare(m, x, mode=kind)
            value = p(x)
            value = value.toarray() if hasattr(value, "toarray") else np.asarray(value)
            got[kind] = [value.ravel().tolist(), bool(getattr(p, "compile_loaded", False))]
        except adlab.ModelError as e:
            got[kind] = ["refused", str(e).splitlines()[0]]
    out[name] = got
print(json.dumps(out))
"""


def _run(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(OPS)], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_linalg_programs_load_from_a_warm_cache_in_a_new_process(tmp_path):
    theirs = ("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "ADLAB_CACHE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(theirs)}
    env.update(ADLAB_CACHE_DIR=str(tmp_path / "cache"), JAX_PLATFORMS="cpu")
    first = _run(env)
    second = _run(env)  # a segmentation fault here was issue 22's crash
    loaded = 0
    for name in OPS:
        for kind, (value, _) in first[name].items():
            again, was_loaded = second[name][kind]
            if value == "refused":
                assert again == "refused", (name, kind)
                continue
            np.testing.assert_allclose(
                again, value, rtol=1e-12, atol=1e-12, err_msg=f"{name} {kind}"
            )
            loaded += was_loaded
    assert loaded >= len(OPS) * 2  # the second process did load (reverse, forward)


def test_only_programs_whose_custom_calls_can_be_made_ready_are_kept():
    assert program_cache.readiable("lapack_dgetrf_ffi")
    assert program_cache.readiable("__cublas$gemm")  # XLA's own
    # a Python callback's target points into the process that compiled it
    assert not program_cache.readiable("xla_ffi_python_cpu_callback")


@pytest.mark.parametrize("stale", [True, False])
def test_an_entry_without_its_targets_is_compiled_afresh(tmp_path, monkeypatch, stale):
    """An entry written before the targets were listed may call unbound code: never loaded."""
    import pickle

    import adlab

    monkeypatch.setenv("ADLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ADLAB_CACHE", raising=False)
    m = adlab.Model.from_source("def setup(n, rng):\n    return rng.normal(size=n),\n"
                                "def f(x):\n    return np.sum(np.sin(x) ** 2)\n")  # fmt: skip
    (x,) = m.setup(4, 0)
    adlab.prepare(m, x, mode="reverse")
    (entry,) = (tmp_path / "programs").glob("*.program")
    data = pickle.loads(entry.read_bytes())
    assert data["targets"] == ()
    if stale:
        del data["targets"]
    entry.write_bytes(pickle.dumps(data))
    program_cache._loaded.clear()  # as in a new process
    assert (program_cache.load(entry.stem) is None) == stale
