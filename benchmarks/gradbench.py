"""GradBench's evals against adlab in each mode, GradBench's JAX tool and its C++ ``manual`` tool.

GradBench (github.com/gradbench/gradbench) drives a *tool* through an *eval*: the eval
sends inputs, the tool answers with outputs and its own timings, and the eval checks
each answer against GradBench's hand-written C++ reference. This script runs each eval,
through ``adlab.gradbench.harness.run_eval``, against:

- ``adlab-MODE``: ``python -m adlab gradbench --mode MODE`` (``--backend`` passed on);
- ``pytorch``: GradBench's PyTorch tool (``tools/pytorch/run.py``) as its Dockerfile runs
  it, timed by GradBench's own timer (its first run, set-up included, among the runs);
- ``manual``: the C++ reference, as GradBench's ``cpp.py manual`` runs it, and ``jax``:
  GradBench's own JAX tool, each evaluate timed both by GradBench's timer, as published
  (compile in its first run, no ``block_until_ready``), and honestly (warmed up, each
  result awaited). Both are served by ``_gradbench_tools.py``, which says how.
- ``tensorflow-js`` (with ``--tfjs DIR``): GradBench's TF.js tool (llsq, lse) run by node
  and tsx from DIR (``tool_commands`` says what DIR holds), timed by its own timer.

Per eval and size it prints the median time per call of the primal and the
derivative, their ratio and the eval's verdict, as GradBench's own scorer pairs
them (``crates/gradbench/src/stats.rs``: ``primal``/``gradient``, ``objective``/
``jacobian``, ``cost``/``dir``); then the goal (adlab's best mode has a
derivative/primal ratio no worse than ``manual``'s in the same run) and the JAX
tool's published figure (GradBench's scorer: the mean of a message's timings) beside
its honest one.

Every tool is pinned to one CPU (``taskset``; GradBench runs its tools single-threaded
and its JAX tool pins itself to CPU 0), unless ``--cpu none``. adlab runs with its JAX
compile cache off (``ADLAB_CACHE=0``) unless ``--cache``: its compile timing is then a
compile, as a first-time user meets it.

``--rounds N`` runs every session N times, in turn, and takes each ratio as the median of
the rounds' (GradBench times a primal and its derivative in separate messages, so load
between them moves one session's ratio by about 20%).

particle and saddle have no primal: each of their functions (rr, ff, fr, rf: outer mode over
inner) is a whole descent, one row each; ``--nested`` instead times each combination's
derivative against f's value per call on each framework (``_gradbench_nested.py``).

Run: ``GRADBENCH_DIR=/work/gradbench python benchmarks/gradbench.py [--quick]
[--evals llsq,lse] [--modes reverse,forward] [--tools manual,jax,adlab]
[--backend jax] [--log-dir DIR] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adlab._format import ratio, seconds
from adlab._vocab import MODES
from adlab.gradbench.harness import Outcome, run_eval, summarize

#: GradBench's scorer's pairs (``stats.rs``); hello has none: it is only checked.
PAIRS = {
    "llsq": ("primal", "gradient"), "lse": ("primal", "gradient"),
    "ode": ("primal", "gradient"), "det": ("primal", "gradient"),
    "gmm": ("objective", "jacobian"), "ht": ("objective", "jacobian"),
    "ba": ("objective", "jacobian"), "kmeans": ("cost", "dir"),
    "lstm": ("objective", "jacobian"),
}  # fmt: skip

#: The eval's arguments (sizes) in the default run and with --quick. The default run took
#: 6 minutes on 2 shared cores at load 3, 15 at load 8; GradBench's own defaults go far larger.
SIZES = {
    "hello": ([], []),
    "llsq": (["-n", "256", "4096"], ["-n", "64"]),
    "lse": (["-n", "2500", "10000"], ["-n", "2500"]),
    "gmm": (["-d", "2", "10", "-k", "5"], ["-d", "2", "-k", "5"]),
    "ode": (["-n", "1000", "-s", "10", "100"], ["-n", "1000", "-s", "10"]),
    "kmeans": (["-k", "10", "50", "-n", "1000", "-d", "8"], ["-k", "10", "-n", "1000", "-d", "8"]),
    "det": (["-l", "6", "8"], ["-l", "5"]),
    "ht": (["--variant", "simple", "--min", "1", "--max", "1"],
           ["--variant", "simple", "--model", "small", "--min", "1", "--max", "1"]),
    "ba": (["--min", "1", "--max", "1"], ["--min", "1", "--max", "1"]),
    "lstm": (["-l", "2", "4", "-c", "1024"], ["-l", "2", "-c", "1024"]),
    "particle": ([], []), "saddle": ([], []),
}  # fmt: skip
#: evals whose functions are GradBench's argmin in four combinations, outer mode over inner
#: (rr, ff, fr, rf): no primal to pair with; each is a row of its own, timed whole
NESTED = ("particle", "saddle")

#: (eval, adlab mode) pairs the default run leaves out, and why: name the mode to run one.
#: None now: ba in reverse mode, once 1,300 passes (a camera's columns share 1,300 rows),
#: takes 2 through the selection front (``adlab.engine.sparsity.front``), ~24 ms a Jacobian on ba1.
SLOW: dict[tuple[str, str], str] = {}

#: GradBench's manual and JAX tools as this script runs them.
TOOLS = Path(__file__).resolve().with_name("_gradbench_tools.py")


@dataclass(frozen=True)
class Row:
    """One eval, size and tool: median seconds per call and the eval's verdict.

    ``primal_s``/``derivative_s`` are medians of the tool's ``evaluate`` timings (None
    when there are none); ``setup_s`` sums the derivative's other timings (adlab's
    prepare and compile, manual's prepare). ``published_s`` is GradBench's scorer's
    figure for the derivative, the mean of the timings GradBench's timer took (the
    ``published`` ones where the tool reports them apart, as ``jax`` does; else its
    ``evaluate`` ones); ``published_median_s`` their median, ``first_s`` the first.
    ``verdict`` is ``valid`` or what went wrong.
    """

    eval: str
    tool: str
    verdict: str
    size: str = ""
    primal_s: float | None = None
    derivative_s: float | None = None
    runs: int = 0
    setup_s: float = 0.0
    published_s: float | None = None
    published_median_s: float | None = None
    first_s: float | None = None
    ratios: tuple[float, ...] = ()

    @property
    def ratio(self) -> float | None:
        """derivative / primal; over several rounds (``ratios``), the median of each
        round's, whose primal and derivative were timed in one session."""
        if self.ratios:
            return statistics.median(self.ratios)
        if self.primal_s and self.derivative_s is not None:
            return self.derivative_s / self.primal_s
        return None


def _median(xs: Sequence[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return statistics.median(got) if got else None


def merge_rounds(rounds: Sequence[Sequence[Row]]) -> list[Row]:
    """One row per eval, tool and size from several rounds of the same runs: medians of
    the times, the median of each round's ratio, the runs added up; valid only where
    every round was (else the first other verdict)."""
    by_key: dict[tuple[str, str, str], list[Row]] = {}
    for rows in rounds:
        for r in rows:
            by_key.setdefault((r.eval, r.tool, r.size), []).append(r)
    merged = []
    for same in by_key.values():
        bad = [r.verdict for r in same if r.verdict != "valid"]
        merged.append(dataclasses.replace(
            same[0], verdict=bad[0] if bad else "valid",
            primal_s=_median([r.primal_s for r in same]),
            derivative_s=_median([r.derivative_s for r in same]),
            runs=sum(r.runs for r in same), setup_s=_median([r.setup_s for r in same]) or 0.0,
            published_s=_median([r.published_s for r in same]),
            published_median_s=_median([r.published_median_s for r in same]),
            first_s=_median([r.first_s for r in same]),
            ratios=tuple(r.ratio for r in same if r.ratio is not None) if len(same) > 1 else (),
        ))  # fmt: skip
    return merged


def _named_s(timings: Sequence[dict], name: str) -> list[float]:
    return [t["nanoseconds"] / 1e9 for t in timings if t.get("name") == name]


def _last_line(text: str | None) -> str:
    """The line that says what went wrong (a traceback's last), short enough for a cell."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[:120].replace("|", "/")


def _verdict(outcomes: Sequence[Outcome]) -> str:
    bad = [f"{o.function} failed: {_last_line(o.error)}" for o in outcomes if not o.success]
    bad += [f"{o.function} invalid: {_last_line(o.error)}" for o in outcomes if o.valid is False]
    counts = Counter(bad)  # hello asks the same thing four times
    return "; ".join(f"{k} (x{c})" if c > 1 else k for k, c in counts.items()) or "valid"


def rows_from(entries: Sequence[dict], eval_name: str, tool: str) -> list[Row]:
    """Rows of one session's transcript (log entries in GradBench's intermediary format)."""
    summary = summarize(entries)
    if summary.undefined:
        errors = [e["response"].get("error") for e in entries if "response" in e]
        reason = next((_last_line(x) for x in errors if x), "")
        return [Row(eval_name, tool, "no model" + (f": {reason}" if reason else ""))]
    rows = []
    if eval_name in NESTED:  # one row per combination: its descent's median time
        for o in summary.outcomes:
            ds = _named_s(o.timings, "evaluate")
            rows.append(
                Row(
                    eval_name,
                    tool,
                    _verdict([o]),
                    o.function,
                    derivative_s=statistics.median(ds) if ds else None,
                    runs=len(ds),
                )
            )
        return rows
    if eval_name not in PAIRS:  # hello: only the verdicts
        rows.append(Row(eval_name, tool, _verdict(summary.outcomes), runs=len(summary.outcomes)))
    sizes: dict[str, dict[str, Outcome]] = {}
    for o in summary.outcomes if eval_name in PAIRS else ():
        sizes.setdefault(o.description or "", {})[o.function] = o
    for size, by_fn in sizes.items():
        p, d = (by_fn.get(f) for f in PAIRS[eval_name])
        ps, ds = (_named_s(o.timings, "evaluate") if o else [] for o in (p, d))
        pub = (_named_s(d.timings, "published") if d else []) or ds
        other = [t["nanoseconds"] for t in (d.timings if d else [])
                 if t.get("name") not in ("evaluate", "published")]  # fmt: skip
        verdict = _verdict([o for o in (p, d) if o]) if d else "no derivative answered"
        rows.append(Row(
            eval_name, tool, verdict, size,
            primal_s=statistics.median(ps) if ps else None,
            derivative_s=statistics.median(ds) if ds else None,
            runs=len(ds), setup_s=sum(other) / 1e9,
            published_s=statistics.fmean(pub) if pub else None,
            published_median_s=statistics.median(pub) if pub else None,
            first_s=pub[0] if pub else None,
        ))  # fmt: skip
    if summary.problem:
        rows.append(Row(eval_name, tool, f"stopped: {_last_line(summary.problem)}"))
    return rows


def _x(r: float | None) -> str:
    return ratio(r) or "-"


def _md(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def main_table(rows: Sequence[Row]) -> str:
    """Per eval, size and tool: primal, derivative, ratio, runs, setup and verdict."""
    header = [
        "eval",
        "size",
        "tool",
        "primal",
        "derivative",
        "ratio",
        "runs",
        "setup",
        "verdict",
    ]
    body = [[r.eval, r.size, r.tool, seconds(r.primal_s), seconds(r.derivative_s), _spread(r),
             str(r.runs), seconds(r.setup_s or None), r.verdict] for r in rows]  # fmt: skip
    return _md(header, body)


def _spread(r: Row) -> str:
    """The ratio, and over several rounds the range of theirs."""
    if len(r.ratios) < 2:
        return _x(r.ratio)
    return f"{_x(r.ratio)} ({_x(min(r.ratios))}-{_x(max(r.ratios))})"


def _by_size(rows: Sequence[Row]) -> dict[tuple[str, str], dict[str, Row]]:
    out: dict[tuple[str, str], dict[str, Row]] = {}
    for r in rows:
        if r.size:
            out.setdefault((r.eval, r.size), {})[r.tool] = r
    return out


def _valid_ratio(r: Row | None) -> float | None:
    return r.ratio if r is not None and r.verdict == "valid" else None


def goal_table(rows: Sequence[Row]) -> str:
    """adlab's best valid mode against manual's ratio, size by size (the issue's goal)."""
    body = []
    for (ev, size), tools in _by_size(rows).items():
        if ev in NESTED:  # no primal: their table is nested_table's
            continue
        ours = [r for t, r in tools.items() if t.startswith("adlab-") and _valid_ratio(r)]
        best = min(ours, key=lambda r: r.ratio, default=None)
        m, b = _valid_ratio(tools.get("manual")), _valid_ratio(best)
        holds = "-" if b is None or m is None else ("yes" if b <= m else "no")
        body.append([ev, size, _x(m), best.tool if best else "none valid", _x(b),
                     _x(_valid_ratio(tools.get("jax"))), holds])  # fmt: skip
    header = [
        "eval",
        "size",
        "manual",
        "adlab's best",
        "its ratio",
        "JAX tool (honest)",
        "holds",
    ]
    return _md(header, body)


def jax_table(rows: Sequence[Row]) -> str:
    """GradBench's JAX tool timed by GradBench's timer (as published) and honestly."""
    body = []
    for (ev, size), tools in _by_size(rows).items():
        r = tools.get("jax")
        if r is None or r.published_s is None:
            continue
        h = r.derivative_s
        body.append([ev, size, seconds(r.first_s), seconds(r.published_median_s),
                     seconds(r.published_s), seconds(h),
                     _x(r.published_median_s / h if h else None),
                     _x(r.published_s / h if h else None)])  # fmt: skip
    header = ["eval", "size", "first run", "median run", "published (mean)", "honest median",
              "median / honest", "published / honest"]  # fmt: skip
    return _md(header, body)


def nested_table(rows: Sequence[Row]) -> str:
    """particle's and saddle's combinations per tool: the descent's time, the fastest marked."""
    body = []
    for ev in NESTED:
        for tool in dict.fromkeys(r.tool for r in rows if r.eval == ev):
            mine = [r for r in rows if r.eval == ev and r.tool == tool]
            timed = [r for r in mine if r.verdict == "valid" and r.derivative_s]
            fastest = min(timed, key=lambda r: r.derivative_s, default=None)
            cells = [seconds(r.derivative_s) if r in timed else r.verdict[:60] for r in mine]
            body.append([ev, tool, *cells, fastest.size if fastest else "-"])
    if not body:
        return ""
    return _md(["eval", "tool", "rr", "ff", "fr", "rf", "fastest"], body)


def tool_commands(
    modes: Sequence[str], backend: str | None, scheme: str | None, tfjs_dir: str | None = None
) -> dict[str, list[str]]:
    """The command of each tool, run from the GradBench checkout; ``tfjs_dir``: a copy of
    GradBench's ``js/common`` and ``js/tensorflow`` with ``npm install @tensorflow/tfjs tsx``
    done and ``node_modules/@gradbench/common`` linked to ``common``."""
    py = sys.executable
    tools = {
        "manual": [py, str(TOOLS), "manual"],
        # GradBench's C++ finite differences: the one C++ tool with particle and saddle
        # that builds here (Enzyme needs its LLVM plugin; ad-hpp's header is downloaded)
        "finite": [py, str(TOOLS), "finite"],
        "jax": [py, str(TOOLS), "jax"],
        # GradBench's PyTorch tool as its Dockerfile runs it (its own timer: first run in)
        "pytorch": [py, "python/gradbench/gradbench/tools/pytorch/run.py"],
    }
    if tfjs_dir:  # GradBench's tensorflow-js tool (llsq, lse), its TypeScript run by tsx
        root = Path(tfjs_dir).resolve()  # tsx by path: the tool runs from GradBench's root
        tsx = (root / "node_modules" / "tsx" / "dist" / "loader.mjs").as_uri()
        tools["tensorflow-js"] = ["node", "--import", tsx, str(root / "tensorflow" / "run.ts")]
    for mode in modes:
        cmd = [py, "-m", "adlab", "gradbench", "--mode", mode]
        cmd += ["--backend", backend] if backend else []
        cmd += ["--scheme", scheme] if scheme and mode == "numeric" else []
        tools[f"adlab-{mode}"] = cmd
    return tools


def run_all(args: argparse.Namespace) -> list[Row]:
    tools = tool_commands(args.modes, args.backend, args.scheme, args.tfjs)
    tools = {k: v for k, v in tools.items()
             if k in args.tools or k == "tensorflow-js"
             or ("adlab" in args.tools and k.startswith("adlab-"))}  # fmt: skip
    pin = [] if args.cpu == "none" else ["taskset", "-c", args.cpu]
    if not args.cache:  # compile time as a first-time user meets it, not a cache read
        os.environ["ADLAB_CACHE"] = "0"
    runs = ["--min-runs", str(args.min_runs), "--min-seconds", str(args.min_seconds)]
    rows: list[Row] = []
    for ev in args.evals:
        eval_args = SIZES[ev][args.quick] + (runs if ev != "hello" else [])
        for name, cmd in tools.items():
            if name == "finite" and ev not in NESTED:  # differences: a reference here only
                continue
            if name == "tensorflow-js" and ev not in ("llsq", "lse"):  # all it covers
                continue
            if (ev, name.removeprefix("adlab-")) in args.skip:
                print(f"{ev:7} {name:20} left out: {SLOW[ev, name.removeprefix('adlab-')]}; "
                      f"ask for it with --modes", file=sys.stderr)  # fmt: skip
                continue
            log = Path(args.log_dir) / f"{ev}-{name}.jsonl" if args.log_dir else None
            t0 = time.perf_counter()
            tr = run_eval(ev, pin + cmd, args.gradbench_dir, log, eval_args=eval_args,
                          timeout_s=args.timeout)  # fmt: skip
            took = time.perf_counter() - t0
            print(f"{ev:7} {name:20} {took:6.1f} s  {tr.summary()}", file=sys.stderr)
            if (
                not tr.messages()
            ):  # the eval died before its first message: no tool will fare better
                why = _last_line(tr.eval_stderr or tr.problem)
                if why.startswith("ModuleNotFoundError"):  # a package its Dockerfile installs
                    why += f": pip install it, or leave {ev} out"
                rows.append(Row(ev, "every tool", f"the eval cannot start: {why}"))
                break
            rows += rows_from(tr, ev, name)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--gradbench-dir",
        default=os.environ.get("GRADBENCH_DIR"),
        help="the GradBench checkout (default: $GRADBENCH_DIR)",
    )
    p.add_argument(
        "--evals",
        default="llsq,lse,gmm,ode,kmeans,det,ht,ba",
        help="GradBench's evals (hello, the protocol's check, is not timed: ask for it)",
    )
    p.add_argument("--min-runs", type=int, default=3, help="the evals' --min-runs (GradBench: 1)")
    p.add_argument(
        "--min-seconds",
        type=float,
        default=0.3,
        help="the evals' --min-seconds (GradBench: 1); --quick: 0",
    )
    p.add_argument("--modes", default=None,
                   help="adlab's modes (default: all, but the pairs in SLOW)")  # fmt: skip
    p.add_argument("--tools", default="manual,finite,jax,pytorch,adlab",
                   help="which tools ('adlab' = every mode)")  # fmt: skip
    p.add_argument("--tfjs", default=None, metavar="DIR",
                   help="also run GradBench's tensorflow-js tool (llsq, lse) from DIR "
                        "(see tool_commands)")  # fmt: skip
    p.add_argument("--backend", default=None, help="adlab's backend (default: the tool's)")
    p.add_argument("--scheme", default=None, help="adlab's scheme in numeric mode")
    p.add_argument("--quick", action="store_true", help="one small size per eval, min-seconds 0")
    p.add_argument("--cpu", default="0", help="the CPU every tool is pinned to, or 'none'")
    p.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds per session (eval and tool)",
    )
    p.add_argument("--cache", action="store_true", help="let adlab use its JAX compile cache")
    p.add_argument("--log-dir", default=None, help="keep each session's transcript there")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every session this many times, in turn; each ratio is then "
                        "the median of the rounds' (load between a primal's message and "
                        "its derivative's moves one round's by +-20%%)")  # fmt: skip
    p.add_argument("--nested", action="store_true",
                   help="no sessions: particle's and saddle's four combinations per framework, "
                   "derivative/primal per call (benchmarks/_gradbench_nested.py)")  # fmt: skip
    p.add_argument("--backends", default="jax,torch,autograd,tensorflow",
                   help="--nested: the frameworks")  # fmt: skip
    args = p.parse_args(argv)
    if args.nested:
        from _gradbench_nested import run as nested_run

        print(nested_run(args.backends.split(","), repeats=max(args.min_runs, 3)))
        print(f"\nload average at the end {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        return 0
    if args.quick:
        args.min_seconds = 0.0
    if not args.gradbench_dir:
        p.error("give the GradBench checkout: --gradbench-dir DIR or GRADBENCH_DIR=DIR")
    args.evals = args.evals.split(",")
    args.skip = set(SLOW) if args.modes is None else set()
    args.modes = args.modes.split(",") if args.modes else list(MODES)
    args.tools = args.tools.split(",")
    unknown = [e for e in args.evals if e not in SIZES] + [m for m in args.modes if m not in MODES]
    if unknown:
        p.error(f"unknown {unknown}: evals are {', '.join(SIZES)}; modes {', '.join(MODES)}")
    # On kill, unwind: run_eval's cleanup then stops the eval and the tool it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.log_dir:
        Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = merge_rounds([run_all(args) for _ in range(max(args.rounds, 1))])
    load = os.getloadavg()
    print(main_table(rows))
    print("\nThe goal: adlab's best mode's derivative/primal ratio no worse than manual's.\n")
    print(goal_table(rows))
    print(
        "\nGradBench's JAX tool: as published (first run in, no block_until_ready) and honest,"
        f" at --min-runs {args.min_runs} --min-seconds {args.min_seconds} (GradBench's: 1, 1).\n"
    )
    print(jax_table(rows))
    nested = nested_table(rows)
    if nested:
        print("\nparticle and saddle: each combination's descent (median); the fastest.\n")
        print(nested)
    loads = " ".join(f"{x:.2f}" for x in load)
    print(
        f"\n{time.perf_counter() - t0:.0f} s in all; load average at the end {loads} "
        f"on {os.cpu_count()} CPUs; tools pinned to CPU {args.cpu}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
