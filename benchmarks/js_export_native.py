"""The exported JavaScript gradient module against GradBench's hand-written C++ (``manual``).

GradBench's ``manual`` tool is each eval's derivative written by hand in C++ and compiled
with -O3: the native limit on this CPU. For the evals llsq, lse, gmm, det and ode this
script:

1. runs GradBench's own eval against the manual tool (``adlab.gradbench.harness.run_eval``,
   the tool served by ``_gradbench_tools.py``), which sends the eval's inputs and checks the
   manual tool's answers: the transcript holds each input and the manual gradient;
2. exports adlab's model of the eval (``adlab.catalog.gradbench``'s adapter) at that
   input's shapes as the standalone ES module ``adlab export`` writes, and checks in Node
   that its ``grad`` equals the manual gradient (relative 1e-10) before timing anything;
3. times, in rounds taken in turn, the manual binary on that input (its own per-run
   ``evaluate`` timings, printed by ``cpp/gradbench/main.hpp``: the median) and the module's
   ``grad`` in a Node of its own (warmed up for 0.5 s, then ``performance.now()`` around
   loops of ``--loop-ms``, 0.25 ms: the median of 201, each result read so that no call is
   optimised away); the ratio is each round's, the table its median over the rounds.

The manual tool times each call alone, so on a loaded machine its median dodges the
preemptions; loops of 2-20 ms in Node seldom did (at load 4-5 on 2 cores the ratios swung up
to 3x between rounds), loops of 0.25 ms mostly do (Node's clock ticks in microseconds): the
rounds then agree within 5%.

The manual binaries are built as GradBench's ``cpp.py`` builds a tool before running it:
``cpp/common.mk``'s flags, ``-O3 -march=native`` (NATIVE=yes, its default), single-threaded,
into a folder of their own (the checkout's ``bin/`` is the evals' validator: not touched).

The module is exported at the eval's arguments, not at ``setup(n)``'s: the model is given a
``setup`` that returns them (``at_arguments``).

Run: ``GRADBENCH_DIR=/tmp/gradbench python benchmarks/js_export_native.py [--evals llsq,lse]
[--rounds 3] [--cpu 0]``. On a loaded machine the figures swing: compare the ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import numpy as np

from adlab.catalog.gradbench import GMM_PARTS, gradbench_eval
from adlab.engine.backends.js.export import module
from adlab.engine.backends.js.node import node_path
from adlab.gradbench.harness import run_eval

#: the eval's arguments: GradBench's small sizes (its defaults go far larger)
SIZES = {
    "llsq": ["-n", "256", "1024", "-m", "128"],
    "lse": ["-n", "2500", "10000"],
    "gmm": ["-d", "2", "10", "-k", "5", "-n", "1000"],
    "det": ["-l", "5", "6", "7"],
    "ode": ["-n", "1000", "-s", "1", "10"],
}
#: the function that asks for the gradient, per eval
GRADIENT = {"llsq": "gradient", "lse": "gradient", "gmm": "jacobian", "det": "gradient",
            "ode": "gradient"}  # fmt: skip
GOAL = 3.0  # exported / C++ on llsq, lse, gmm, det
TOOLS = Path(__file__).resolve().with_name("_gradbench_tools.py")

HARNESS = r"""
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
// one case per process: a call site shared by several modules' grads would be
// megamorphic, and slow all of them
const c = JSON.parse(readFileSync(process.argv[2], "utf8"));
const REPEATS = Number(process.argv[3]), LOOP_MS = Number(process.argv[4]);
let sink = 0;
const { grad } = await import(pathToFileURL(c.module).href);
const ins = c.inputs.map((a) => Float64Array.from(a));
const g = grad(...ins);
let diff = 0, scale = 0;
for (let i = 0; i < c.expected.length; i++) {
  diff = Math.max(diff, Math.abs(g[i] - c.expected[i]));
  scale = Math.max(scale, Math.abs(c.expected[i]));
}
const relative = g.length === c.expected.length ? diff / Math.max(scale, 1e-300) : Infinity;
const row = { relative, version: process.version };
if (!(relative <= 1e-10)) {  // no time for a wrong gradient
  row.error = `gradient differs: ${relative}`;
} else {
  const loop = (k) => {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) sink += grad(...ins)[i % g.length];  // read: kept
    return performance.now() - t0;
  };
  // warm up for 0.5 s first: a big gradient's function is optimised only after tens of
  // calls, later still where its compiler thread shares the one CPU
  for (let t0 = performance.now(), k = 1; performance.now() - t0 < 500; k *= 2) loop(k);
  let k = 1, t = loop(k);
  while (t < LOOP_MS) {
    k = Math.max(k + 1, Math.ceil(k * (t > LOOP_MS / 10 ? (1.1 * LOOP_MS) / t : 10)));
    t = loop(k);
  }
  const samples = [];
  for (let r = 0; r < REPEATS; r++) samples.push(loop(k) / 1e3 / k);
  samples.sort((a, b) => a - b);
  Object.assign(row, { median_s: samples[samples.length >> 1], least_s: samples[0], calls: k });
}
console.log(JSON.stringify({ ...row, sink: Number.isFinite(sink) }));
"""


def at_arguments(model, args: tuple):
    """The model with a ``setup`` that returns ``args`` whatever n: an export at them."""
    return dataclasses.replace(model, _setup=lambda n, rng: args)


def native_binaries(gradbench: Path, names: list[str], folder: Path) -> dict[str, Path]:
    """The manual tool's binaries built with GradBench's own flags (cpp/common.mk, NATIVE=yes,
    MULTITHREADED=no), into ``folder``; built once, kept while their source is older."""
    folder.mkdir(parents=True, exist_ok=True)
    src = gradbench / "tools" / "manual"
    flags = ["-lm", "-std=c++17", "-O3", "-Wall", "-I../../cpp", "-march=native",
             "-Wno-unknown-pragmas"]  # fmt: skip
    if Path("/usr/include/nlohmann/json.hpp").exists():  # json.hpp where Debian puts it
        flags.append("-I/usr/include/nlohmann")
    out = {}
    for name in names:
        binary = folder / name
        cpp = src / f"{name}.cpp"
        if not binary.exists() or binary.stat().st_mtime < cpp.stat().st_mtime:
            subprocess.run(["c++", "-o", str(binary), cpp.name, *flags], cwd=src, check=True)
        out[name] = binary
    return out


def manual_case(gradbench: Path, ev: str, eval_args: list[str]) -> list[dict]:
    """The eval run against the manual tool: per gradient message, its input, the manual
    gradient (the eval's verdict on it) and its size's description."""
    tr = run_eval(ev, [sys.executable, str(TOOLS), "manual"], gradbench,
                  eval_args=[*eval_args, "--min-runs", "1", "--min-seconds", "0"],
                  timeout_s=600)  # fmt: skip
    messages = {m["id"]: m for m in tr.messages()}
    valid = {m["of"]: m.get("valid") for m in messages.values() if m.get("kind") == "analysis"}
    out = []
    for r in tr.responses():
        m = messages.get(r["id"], {})
        if m.get("kind") == "evaluate" and m.get("function") == GRADIENT[ev]:
            out.append({"input": m["input"], "output": r.get("output"),
                        "valid": valid.get(m["id"]), "size": m.get("description", "")})  # fmt: skip
    if not out:
        raise RuntimeError(f"{ev}: no gradient from the manual tool: {tr.summary()}")
    return out


def flat_gradient(ev: str, output) -> np.ndarray:
    if ev == "gmm":  # a dict of the parts, in the order of x's
        return np.concatenate([np.ravel(output[k]) for k in GMM_PARTS])
    return np.ravel(np.asarray(output, dtype=np.float64))


def exported_case(ev: str, case: dict, folder: Path) -> dict:
    """The module for one input, written to ``folder``, and what Node needs to check it."""
    adapter = gradbench_eval(ev)
    model, args = adapter.inputs(case["input"], GRADIENT[ev])
    label = f"{ev} {case['size']}"
    path = folder / f"{ev}-{len(os.listdir(folder))}.mjs"
    path.write_text(module(at_arguments(model, args), "reverse", command=f"({label})"))
    leaves = jax.tree_util.tree_leaves(args)
    return {"label": label, "module": str(path), "bytes": path.stat().st_size,
            "inputs": [np.ravel(np.asarray(a, np.float64)).tolist() for a in leaves],
            "expected": flat_gradient(ev, case["output"]).tolist()}  # fmt: skip


def time_manual(binary: Path, case: dict, folder: Path, pin: list[str]) -> float:
    """The manual binary's median ``evaluate`` time on the input, ~0.3 s of runs."""
    data = folder / "input.json"
    data.write_text(json.dumps({**case["input"], "min_runs": 5, "min_seconds": 0.3}))
    done = subprocess.run([*pin, str(binary), str(data), GRADIENT[case["ev"]]],
                          capture_output=True, text=True, check=True)  # fmt: skip
    lines = done.stdout.splitlines()[1:]
    ns = [t["nanoseconds"] for t in map(json.loads, lines) if t.get("name") == "evaluate"]
    return statistics.median(ns) / 1e9


def time_node(case: dict, folder: Path, pin: list[str], repeats: int, loop_ms: float) -> dict:
    """The module's grad in a Node of its own: checked, then timed (``HARNESS``)."""
    data, script = folder / "case.json", folder / "harness.mjs"
    data.write_text(json.dumps(case))
    script.write_text(HARNESS)
    done = subprocess.run([*pin, node_path() or "node", str(script), str(data), str(repeats),
                           str(loop_ms)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gradbench-dir", default=os.environ.get("GRADBENCH_DIR", "/tmp/gradbench"))
    p.add_argument("--evals", default="llsq,lse,gmm,det,ode")
    p.add_argument("--rounds", type=int, default=3, help="manual and Node in turn, N times")
    p.add_argument("--repeats", type=int, default=201, help="Node's timed loops per round")
    p.add_argument(
        "--loop-ms",
        type=float,
        default=0.25,
        help="Node's loop length: on a loaded machine a loop of 2-20 ms is mostly "
        "preempted somewhere, where the manual tool times each call alone",
    )
    p.add_argument("--cpu", default="none", help="pin both to this CPU (taskset), or 'none'")
    p.add_argument("--build-dir", default=str(Path(tempfile.gettempdir()) / "adlab-manual-native"))
    a = p.parse_args()
    gb = Path(a.gradbench_dir).resolve()
    evals = a.evals.split(",")
    pin = [] if a.cpu == "none" or not shutil.which("taskset") else ["taskset", "-c", a.cpu]
    bins = native_binaries(gb, evals, Path(a.build_dir))
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases, nodes = [], []
        for ev in evals:
            for case in manual_case(gb, ev, SIZES[ev]):
                case["ev"] = ev
                cases.append(case)
                nodes.append(exported_case(ev, case, folder))
        times: dict[str, dict[str, list[float]]] = {c["label"]: {"manual": [], "js": []}
                                                    for c in nodes}  # fmt: skip
        errors, version = {}, ""
        for _ in range(a.rounds):
            for case, c in zip(cases, nodes, strict=True):
                t = times[c["label"]]
                t["manual"].append(time_manual(bins[case["ev"]], case, folder, pin))
                r = time_node(c, folder, pin, a.repeats, a.loop_ms)
                version = r["version"]
                if "error" in r:
                    errors[c["label"]] = r["error"]
                else:
                    t["js"].append(r["median_s"])
                    t["least"] = min(t.get("least", 1.0), r["least_s"])
                    t["relative"] = r["relative"]
    load1 = os.getloadavg()
    print(
        f"GradBench's manual C++ (-O3 -march=native) against the exported module's grad in "
        f"Node {version}; {a.rounds} rounds in turn, pinned to CPU: {a.cpu}; load "
        f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end, on {os.cpu_count()} cores"
    )
    print(
        "\n| eval | size | manual C++ | exported JS (least) | JS / C++ (rounds) | "
        "|grad diff| | module | goal |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for case, c in zip(cases, nodes, strict=True):
        t = times[c["label"]]
        if c["label"] in errors or not t["js"]:
            print(
                f"| {case['ev']} | {case['size']} | - | - | {errors.get(c['label'], 'none')} "
                "| | | |"
            )
            continue
        ratios = [j / m for j, m in zip(t["js"], t["manual"], strict=False)]
        x = statistics.median(ratios)
        goal = "(reported)" if case["ev"] == "ode" else ("met" if x <= GOAL else "NOT met")
        print(f"| {case['ev']} | {case['size']} | {statistics.median(t['manual']) * 1e6:.3g} us "
              f"| {statistics.median(t['js']) * 1e6:.3g} us ({t['least'] * 1e6:.3g}) | {x:.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f}) | {t['relative']:.0e} | "
              f"{c['bytes'] / 1024:.0f} KB | {goal} |")  # fmt: skip
    bad = [c["size"] for c in cases if c["valid"] is False]
    if bad:
        print(f"\nthe eval found the manual tool's answer invalid at {bad}")


if __name__ == "__main__":
    main()
