"""GradBench's ``manual`` and ``jax`` tools as ``benchmarks/gradbench.py`` runs them.

Run from the GradBench checkout's root, with ``python/gradbench`` on ``PYTHONPATH``:
``python benchmarks/_gradbench_tools.py manual|finite|jax``. ``finite`` is GradBench's C++
finite-differences tool, the one C++ tool with particle and saddle that builds here.

- ``manual``: GradBench's ``cpp.py manual`` (how its Dockerfile runs the C++ reference),
  except that ``define`` checks the binary is built instead of ``make -B``-ing it: the
  evals validate every answer with those same binaries, and rebuilding them under a
  running eval would pull them from under it.
- ``jax``: GradBench's JAX tool (``tools/jax/run.py``) and its programs, each evaluate
  timed twice. First by GradBench's own timer (``gradbench/wrap.py``), as its figures are
  published: the first call, compile included, counts as a run and no result is waited
  for (no ``block_until_ready``); those timings are renamed ``published``. Then honestly:
  after that warm-up, each run waits for its result before the clock is read; reported as
  ``evaluate``. The honest runs honour ``min_runs`` and ``min_seconds`` as GradBench's do.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def serve_manual(tool: str = "manual") -> None:
    """GradBench's cpp.py tool for ``manual`` (or another C++ tool built here: ``finite``);
    ``define`` checks the binary, never rebuilds it."""
    from gradbench import cpp

    def define(*, args: argparse.Namespace, module: str) -> dict:
        binary = Path("tools") / args.tool / "bin" / module
        if binary.exists():
            return {"success": True}
        return {"success": False, "error": f"{binary} is not built: make -C tools/{tool} NATIVE=no"}

    cpp.define = define
    sys.argv = [sys.argv[0], tool]
    cpp.main()


def serve_jax() -> None:
    """GradBench's JAX tool, each evaluate timed by GradBench's timer and then honestly."""
    import runpy

    import jax
    from gradbench import wrap

    gradbench_timer = wrap.multiple_runs

    def multiple_runs(*, pre, post, **limits):
        def decorator(function):
            # post=identity keeps the output a JAX array, so that it can be waited for
            published = gradbench_timer(pre=pre, post=lambda y: y, **limits)(function).wrapped

            def wrapped(input_raw):
                result = published(input_raw)  # compile in its first run, nothing awaited
                timings = [{**t, "name": "published"} for t in result["timings"]]
                jax.block_until_ready(result["output"])  # its last call may still be running
                x = pre(input_raw)
                elapsed, runs = 0.0, 0
                while runs < input_raw["min_runs"] or elapsed < input_raw["min_seconds"]:
                    start = time.perf_counter_ns()
                    output = jax.block_until_ready(function(x))
                    ns = time.perf_counter_ns() - start
                    timings.append(wrap.Timing(name="evaluate", nanoseconds=ns))
                    elapsed, runs = elapsed + ns / 1e9, runs + 1
                return wrap.OutputAndTimings(success=True, output=post(output), timings=timings)

            return wrap.Wrapped(function=function, wrapped=wrapped)

        return decorator

    wrap.multiple_runs = multiple_runs  # before the tool imports its modules, which use it
    script = "python/gradbench/gradbench/tools/jax/run.py"
    # --multithreaded only stops it pinning itself to CPU 0: gradbench.py pins every tool alike
    sys.argv = [script, "--multithreaded"]
    sys.path.insert(0, str(Path(script).parent))  # as python puts a script's folder first
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    here = Path(__file__).resolve().parent
    # This folder holds gradbench.py, which would shadow GradBench's own package.
    sys.path = [d for d in sys.path if Path(d or ".").resolve() != here]
    tool = sys.argv[1] if len(sys.argv) == 2 else ""
    if tool not in ("manual", "finite", "jax"):
        sys.exit("usage: python benchmarks/_gradbench_tools.py manual|finite|jax (from GradBench's "
                 "root)")  # fmt: skip
    try:
        serve_jax() if tool == "jax" else serve_manual(tool)
    except (EOFError, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
