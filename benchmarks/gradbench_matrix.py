"""Every GradBench eval on every framework adlab runs, in reverse and forward mode: the table.

Each cell is one session of GradBench's own eval script (``python/gradbench/gradbench/evals``,
its validators judging each answer) against ``python -m adlab gradbench --backend B --mode M``,
through ``adlab.gradbench.harness.run_eval``, at the eval's small sizes (``gradbench.py``'s
``--quick`` ones), one run per function. A cell reads:

- ``valid``: every answer valid by the eval's validator;
- ``refused (...)``: the tool answered ``success: false`` with its reason (the first, shortened;
  the full text is in ``--log-dir``'s transcripts);
- ``INVALID`` / ``crash`` / ``timeout``: what must never happen;
- ``n/a``: the framework has no such mode (the tool's ``define`` says so);
- ``not run``: left out of this run (``--evals``, ``--backends``, ``--modes``).

particle's and saddle's functions name their own modes (``rr``, ``ff``, ``fr``, ``rf``: outer over
inner), so their reverse and forward sessions ask the same four things; on NumPy (no AD) they run
in numeric mode, the inner derivative by central differences.

Run: ``GRADBENCH_DIR=/work/gradbench python benchmarks/gradbench_matrix.py [--evals ...]
[--backends ...] [--log-dir DIR] [--markdown FILE]``. Rows are printed as they finish, then
the table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from adlab.gradbench.harness import run_eval

EVALS = ("llsq", "lse", "gmm", "ode", "kmeans", "det", "ht", "ba", "lstm", "particle", "saddle")
BACKENDS = ("jax", "torch", "tensorflow", "autograd", "js", "tfjs", "jaxjs", "numpy")
MODES = ("reverse", "forward")
#: small sizes: each session starts a framework and compiles, on a shared machine
SIZES = {
    "llsq": ["-n", "64"], "lse": ["-n", "2500"], "gmm": ["-d", "2", "-k", "5"],
    "ode": ["-n", "1000", "-s", "10"], "kmeans": ["-k", "10", "-n", "1000", "-d", "8"],
    "det": ["-l", "5"], "ht": ["--model", "small", "--min", "1", "--max", "1"],
    "ba": ["--min", "1", "--max", "1"], "lstm": ["-l", "2", "-c", "1024"],
    "particle": [], "saddle": [],
}  # fmt: skip
NESTED = ("particle", "saddle")


def cell(transcript) -> str:
    """One session's verdict, in a table cell's words."""
    summary = transcript.summary()
    problem = transcript.problem or ""
    responses = transcript.responses()
    if summary.undefined:
        why = next((r.get("error") for r in responses if r.get("error")), "")
        if any(w in why for w in ("does not have", "runs on", "has no", "cannot")):
            return "n/a: " + _short(why)
        return "refused: " + _short(why)
    if "ran past" in problem:
        return "timeout"
    if problem:
        return "crash: " + _short(problem)
    if summary.invalid:
        bad = next(o for o in summary.outcomes if o.valid is False)
        return f"INVALID ({bad.function}: {_short(bad.error)})"
    if summary.failed:
        failed = [o for o in summary.outcomes if not o.success]
        names = sorted({o.function for o in failed})
        valid = summary.valid
        head = f"valid {valid}/{len(summary.outcomes)}, " if valid else ""
        return f"{head}refused ({', '.join(names)}): {_short(failed[0].error)}"
    if not summary.outcomes:
        return "crash: no evaluate answered"
    return "valid"


def _short(text: str | None, n: int = 160) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return (line[:n] + ("..." if len(line) > n else "")).replace("|", "/")


def sessions(evals: Sequence[str], backends: Sequence[str], modes: Sequence[str]):
    """(eval, backend, mode) in the order they run: each eval's cheap sessions first."""
    for ev in evals:
        for b in backends:
            if b == "numpy":  # no AD: particle and saddle only, by differences
                if ev in NESTED:
                    yield ev, b, "numeric"
                continue
            for m in modes:
                yield ev, b, m


def run(args: argparse.Namespace) -> dict[tuple[str, str, str], str]:
    py = sys.executable
    out: dict[tuple[str, str, str], str] = {}
    for ev, b, m in sessions(args.evals, args.backends, args.modes):
        cmd = [py, "-m", "adlab", "gradbench", "--mode", m, "--backend", b]
        if ev in NESTED:
            cmd += ["--max-seconds", str(args.max_seconds)]
        log = Path(args.log_dir) / f"{ev}-{b}-{m}.jsonl" if args.log_dir else None
        t0 = time.perf_counter()
        tr = run_eval(ev, cmd, args.gradbench_dir, log, timeout_s=args.timeout,
                      eval_args=SIZES[ev] + ["--min-runs", "1", "--min-seconds", "0"])  # fmt: skip
        out[ev, b, m] = verdict = cell(tr)
        print(json.dumps({"eval": ev, "backend": b, "mode": m, "cell": verdict,
                          "seconds": round(time.perf_counter() - t0, 1)}), flush=True)  # fmt: skip
    return out


def table(cells: dict[tuple[str, str, str], str], evals: Sequence[str],
          backends: Sequence[str]) -> str:  # fmt: skip
    """eval x (framework, mode) as Markdown."""
    columns = [(b, m) for b in backends for m in (("numeric",) if b == "numpy" else MODES)]
    head = "| eval | " + " | ".join(f"{b} {m}" for b, m in columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]
    for ev in evals:
        row = []
        for b, m in columns:
            if b == "numpy" and ev not in NESTED:
                row.append("n/a: no AD")
            else:
                row.append(cells.get((ev, b, m), "not run"))
        lines.append(f"| {ev} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gradbench-dir", default=os.environ.get("GRADBENCH_DIR"))
    p.add_argument("--evals", default=",".join(EVALS))
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per session")
    p.add_argument("--max-seconds", type=float, default=120.0,
                   help="the tool's --max-seconds for particle and saddle")  # fmt: skip
    p.add_argument("--log-dir", default=None)
    p.add_argument("--markdown", default=None, help="write the table there too")
    p.add_argument("--from-json", default=None,
                   help="no sessions: the table of the JSON lines a run printed")  # fmt: skip
    args = p.parse_args(argv)
    args.evals, args.backends = args.evals.split(","), args.backends.split(",")
    args.modes = args.modes.split(",")
    if args.from_json:
        cells = {}
        for line in Path(args.from_json).read_text().splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                cells[r["eval"], r["backend"], r["mode"]] = r["cell"]
    else:
        if not args.gradbench_dir:
            p.error("give the GradBench checkout: --gradbench-dir DIR or GRADBENCH_DIR=DIR")
        if args.log_dir:
            Path(args.log_dir).mkdir(parents=True, exist_ok=True)
        cells = run(args)
    text = table(cells, args.evals, args.backends)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
