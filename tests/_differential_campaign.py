"""A long differential campaign (issue 23): many models, every run, counted by class.

    python tests/_differential_campaign.py --models 400 --seed 1 --out /tmp/campaign.jsonl
    python tests/_differential_campaign.py --summary /tmp/campaign.jsonl > findings.md

Each model runs every first-order run, the sparse Jacobians and, for scalar f, every
second-order run on PyTorch and autograd plus, taken in turn, ``--jax-second`` of
JAX's sixteen (Hessians, HVPs, sparse Hessians; an XLA compile each) and
``--tf-second`` of TensorFlow's ten (a graph each). One JSON line per model.
The summary groups failures into classes: a wrong value by its
run and the operation most often present where that run fails; a raw error by its
run's framework and mode and its message.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _differential import models  # noqa: E402
from _differential_oracle import (  # noqa: E402
    SPARSE_JACOBIANS,
    Worker,
    first_order_runs,
    second_order_runs,
)


def generate(count: int, seed: int) -> list:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    cases = []

    @hseed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(models())
    def collect(case):
        cases.append(case)

    collect()
    return cases


def runs_for(case, i: int, jax_second: int, tf_second: int) -> list[str]:
    """Every first-order run; for scalar f, second order on PyTorch and autograd (cheap),
    and in turn ``jax_second`` of JAX's and ``tf_second`` of TensorFlow's (each a compile
    or graph build: seconds)."""
    runs = first_order_runs() + SPARSE_JACOBIANS
    if case.vector:
        return runs
    second = second_order_runs()
    for framework, count in (("jax", jax_second), ("tensorflow", tf_second)):
        on = [r for r in second if r.startswith(framework + " ")]
        runs += [on[(i * count + k) % len(on)] for k in range(count)]
    return runs + [r for r in second if r.split(" ")[0] in ("torch", "autograd")]


def campaign(count: int, seed: int, out: Path, jax_second: int, tf_second: int,
             part: str, only: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Models ``part`` = "k/m" (the k-th of m interleaved shares) into ``out``;
    ``only``: the runs of these frameworks alone."""
    k, m = (int(s) for s in part.split("/"))
    cases = generate(count, seed)
    worker = Worker(timeout_s=600)
    with out.open("a") as fh:
        for i, case in enumerate(cases):
            if i % m != k:
                continue
            runs = [r for r in runs_for(case, i, jax_second, tf_second)
                    if not only or r.split(" ")[0] in only]  # fmt: skip
            start = time.perf_counter()
            verdicts = worker.evaluate(dict(asdict(case), runs=runs))
            fh.write(json.dumps(dict(asdict(case), index=i, seconds=time.perf_counter() - start,
                                     verdicts=[asdict(v) for v in verdicts])) + "\n")  # fmt: skip
            fh.flush()
    worker.close()


# ---------------------------------------------------------------------- summary
def _message_key(detail: str) -> str:
    text = detail.split(" (at ")[0]
    text = re.sub(r"0x[0-9a-f]+|-?\d+(\.\d+)?(e-?\d+)?", "#", text)
    return text[:110]


def _body(source: str) -> str:
    return source.split("def f(x):\n", 1)[1].rstrip()


#: words that belong to one framework: a refusal on another backend should not use them
FOREIGN = {
    "jax": ("jnp.", "jax.lax", "jax-ml/jax", "jax.vmap", "jax.numpy"),
    "torch": ("torch.func", "torch.", "vmap"),
    "tensorflow": ("tf.", "tf.function", "symbolic `tf.Tensor`"),
    "autograd": ("autograd.numpy",),
}


def _foreign_words(rows: list[dict]) -> list[str]:
    """Refusals on one backend that speak another framework's words (issue 23's hints)."""
    found = collections.defaultdict(list)
    for row in rows:
        for v in row["verdicts"]:
            backend = v["run"].split(" ")[0]
            if v["status"] != "refused":
                continue
            for other, words in FOREIGN.items():
                hits = [w for w in words if w in v["detail"]]
                if other != backend and hits and not (other == "torch" and backend == "jax"):
                    found[backend, other, hits[0]].append((row, v))
    lines = ["Refusals in another framework's words (backend: words of, word, count, example):", ""]
    for (backend, other, word), items in sorted(found.items(), key=lambda kv: -len(kv[1])):
        row, v = min(items, key=lambda rv: len(rv[0]["source"]))
        first = v["detail"].replace("\n", " ").replace("|", "/")[:200]
        lines.append(f"- {backend}: {other}'s `{word}`, {len(items)} runs; "
                     f"e.g. {v['run']}: {first}")  # fmt: skip
    return lines


def _family(run: str) -> str:
    """A run's framework and kind: second order's compositions and sparse kinds merged."""
    backend, kind, *_ = run.split(" ")
    return f"{backend} {kind}"


def _symptom(detail: str) -> str:
    got = detail.split(" vs ")[0]
    if "nan" in got:
        return "NaN"
    if re.fullmatch(r"[\s\[\]0.-]*", got.replace("got", "")):
        return "zeros"
    return "value"


def _refused_elsewhere(rows: list[dict]) -> list[str]:
    """Refusals of models that JAX's reverse mode runs, by framework and reason: the
    refusals issue 23 asks to turn into NumPy's meaning where they are avoidable."""
    found = collections.defaultdict(list)
    for row in rows:
        runs_on_jax = any(v["run"] == "jax reverse" and v["status"] == "agree"
                          for v in row["verdicts"])  # fmt: skip
        for v in row["verdicts"]:
            if v["status"] == "refused" and runs_on_jax:
                reason = re.sub(r"^line \d+: ", "", v["detail"].split("\n")[0])
                reason = re.sub(r" \(in f, mode .*\)$", "", reason)
                found[v["run"].split(" ")[0], _message_key(reason)[:90]].append((row, v))
    lines = ["Refused although JAX runs the model (framework, reason, runs, models, example):", ""]
    for (backend, reason), items in sorted(found.items(), key=lambda kv: -len(kv[1])):
        row, v = min(items, key=lambda rv: len(rv[0]["source"]))
        body = _body(row["source"]).replace("\n", " ⏎ ")
        lines.append(
            f"- {backend}: {reason} — {len(items)} runs, "
            f"{len({r['index'] for r, _ in items})} models; e.g. {v['run']} on `{body}`"
        )
    return lines


def summary(paths: list[Path]) -> str:
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line]
    status = collections.Counter()
    by_run = collections.defaultdict(collections.Counter)
    with_op = collections.Counter()  # (family, op): runs of family on models with op
    fail_op = collections.Counter()  # (family, op): of those, the wrong ones
    classes = collections.defaultdict(list)
    invalid = [row for row in rows if any(v["run"] == "oracle" for v in row["verdicts"])]
    rows = [row for row in rows if row not in invalid]  # the grammar's own holes
    for row in rows:
        for v in row["verdicts"]:
            status[v["status"]] += 1
            by_run[v["run"]][v["status"]] += 1
            wrong = v["status"] in ("wrong", "flagged")
            for op in row["ops"]:
                with_op[_family(v["run"]), op] += 1
                fail_op[_family(v["run"]), op] += wrong
            if wrong:
                key = (v["status"], _family(v["run"]), _symptom(v["detail"]))
            elif v["status"] not in ("agree", "refused", "unchecked"):
                key = (v["status"], _family(v["run"]), _message_key(v["detail"]))
            else:
                continue
            classes[key].append((row, v))

    def suspects(family: str, items: list) -> str:
        """The operations most often present where the family fails, by how much more."""
        ops = collections.Counter(op for row, _ in items for op in row["ops"])
        rate = {op: fail_op[family, op] / with_op[family, op] for op in ops}
        return ", ".join(f"{op} ({rate[op]:.0%})" for op in
                         sorted(ops, key=lambda o: (-rate[o], -ops[o]))[:3])  # fmt: skip

    models_n = len(rows)
    out = [
        f"models: {models_n}; runs: {sum(status.values())}; "
        + ", ".join(f"{s}: {c}" for s, c in status.most_common())
        + f" (and {len(invalid)} models NumPy itself rejects, left out: the grammar's holes)",
        "",
        "| status | runs of | symptom or message | runs | models | suspects (share of their "
        "models failing) | shortest repro | detail |",
        "|---|---|---|---|---|---|---|---|",
    ]
    order = {"crash": 0, "wrong": 1, "flagged": 2, "raw": 3, "no line": 4}
    for key, items in sorted(classes.items(), key=lambda kv: (order.get(kv[0][0], 9),
                                                             -len(kv[1]))):  # fmt: skip
        st, family, what = key
        row, v = min(items, key=lambda rv: len(rv[0]["source"]))
        body = _body(row["source"]).replace("\n", " ⏎ ").replace("|", "\\|")
        detail = v["detail"][:160].replace("\n", " ").replace("|", "\\|")
        runs = sorted({v["run"].split(" ", 2)[-1] for _, v in items})
        who = suspects(family, items) if st in ("wrong", "flagged") else ""
        out.append(
            f"| {st} | {family} ({', '.join(runs)}) | {what.replace('|', '/')} | "
            f"{len(items)} | {len({r['index'] for r, _ in items})} | {who} | "
            f"`{body}` (n={row['n']}, seed={row['seed']}) | {v['run']}: {detail} |"
        )
    out += ["", "Per run (agree / refused / failing):", ""]
    for run, c in sorted(by_run.items()):
        bad = sum(n for s, n in c.items() if s not in ("agree", "refused", "unchecked"))
        out.append(f"- {run}: {c['agree']} / {c['refused']} / {bad}"
                   + (f" (unchecked {c['unchecked']})" if c["unchecked"] else ""))  # fmt: skip
    out += ["", *_refused_elsewhere(rows), "", *_foreign_words(rows)]
    secs = sum(r["seconds"] for r in rows)
    out += ["", f"worker seconds: {secs:.0f} ({secs / max(models_n, 1):.1f} per model)"]
    return "\n".join(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--part", default="0/1", help="k/m: the k-th of m interleaved shares")
    ap.add_argument("--jax-second", type=int, default=2)
    ap.add_argument("--tf-second", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated frameworks: their runs alone")
    ap.add_argument("--summary", type=Path, nargs="*")
    a = ap.parse_args()
    if a.summary:
        print(summary(a.summary))
    else:
        only = tuple(b for b in a.only.split(",") if b)
        campaign(a.models, a.seed, a.out, a.jax_second, a.tf_second, a.part, only)
