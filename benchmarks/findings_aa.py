"""Do adlab's findings hold up under noise? An A/A test and a real crossover, 3 runs.

Each run makes two sweeps of the same thing, back to back: ``normal_logpdf``
at n = 1 to 1000 with the default modes. Then:

- **A/A**: the second sweep's series are relabelled ("reverse (again)") and
  compared with the first's as if they were different methods. Any crossover
  between a series and itself is noise: there must be no significant one.
  The table also counts the sizes where ``compare`` judged a series and its
  copy apart (wrong verdicts; one alone, not confirmed by the next size, makes
  no crossover), and the crossings of the medians alone, which is what adlab
  reported before crossovers were judged against the noise.
- **Real**: in each sweep, reverse mode overtakes forward mode (forward costs n
  passes of f, reverse a few). It must be found, once (as significant), in
  every sweep, at an n that moves by less than 4x between sweeps.

    python benchmarks/findings_aa.py [--runs 3] [--repeats 5] [--fixed] [--target-s 0.005]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import time
import warnings

import adlab
from adlab.measure.findings import series_records, series_times
from adlab.measure.floor import NoisyMachineWarning
from adlab.measure.intervals import INTERVAL_WIDTH, MAX_REPEATS
from adlab.measure.sweep import TARGET_S

MODEL = "normal_logpdf"
AGAIN = " (again)"


def median_crossings(ta: dict[int, float], tb: dict[int, float]) -> int:
    """How often the medians alone change order (ties at a size skipped)."""
    ns = sorted(set(ta) & set(tb))
    signs = [math.copysign(1, ta[n] - tb[n]) for n in ns if ta[n] != tb[n]]
    return sum(1 for x, y in zip(signs, signs[1:], strict=False) if x != y)


def sweep(repeats: int, width: float | None, target_s: float) -> list[adlab.Record]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoisyMachineWarning)  # the noise is in the table
        return list(adlab.bench(MODEL, adlab.measure.DEFAULT_SIZES, repeats=repeats,
                                interval_width=width, reference=None,
                                target_s=target_s))  # fmt: skip


def aa(first: list[adlab.Record], second: list[adlab.Record]) -> tuple[int, int, int, list[str]]:
    """(significant crossovers, sizes judged apart, crossings of the medians, the
    significant ones in words). A size judged apart is a wrong verdict of ``compare``
    between a series and its copy: one alone, unconfirmed by the next size, is no
    crossover (``adlab.measure.findings``)."""
    again = [dataclasses.replace(r, label=r.label + AGAIN) for r in second]
    found = adlab.crossovers(first + again, primal=True)
    same = [c for c in found if c.faster.removesuffix(AGAIN) == c.slower.removesuffix(AGAIN)]
    real = [c.describe() for c in same if c.significant]
    times = series_times(first + again)
    labels = [lab for lab in {r.label for r in first} if lab + AGAIN in times]
    raw = sum(median_crossings(times[lab], times[lab + AGAIN]) for lab in labels)
    by_label = series_records(first + again)
    apart = sum(adlab.compare(by_label[lab][n], by_label[lab + AGAIN][n]) != 0
                for lab in labels for n in by_label[lab] if n in by_label[lab + AGAIN])  # fmt: skip
    return len(real), apart, raw, real


def forward_reverse(records: list[adlab.Record]) -> list[adlab.Crossover]:
    return [c for c in adlab.crossovers(records) if c.significant
            and {c.faster, c.slower} == {"forward", "reverse"}]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=adlab.measure.timing.REPEATS,
                    help="the fewest repeats per point")  # fmt: skip
    ap.add_argument("--fixed", action="store_true",
                    help="exactly --repeats per point (no stopping rule)")  # fmt: skip
    ap.add_argument("--target-s", type=float, default=TARGET_S,
                    help=f"seconds per repeat (default {TARGET_S:g}, a sweep's)")  # fmt: skip
    args = ap.parse_args()
    width = None if args.fixed else INTERVAL_WIDTH
    rule = ("exactly" if args.fixed else
            f"until the median's interval is within {INTERVAL_WIDTH:.0%}, at least")  # fmt: skip
    env = adlab.environment()
    print(f"# {MODEL}, n = {', '.join(map(str, adlab.measure.DEFAULT_SIZES))}, modes "
          f"{', '.join(adlab.measure.DEFAULT_MODES)}; repeats of {args.target_s * 1e3:g} ms, "
          f"{rule} {args.repeats} "
          f"(at most {MAX_REPEATS}); "
          f"{env['device']} ({env['cpu']}, {env['cpus_usable']} CPUs)")  # fmt: skip
    print(
        "| run | load | noise | A/A: significant | A/A: sizes judged apart "
        "| A/A: crossings of the medians "
        "| reverse overtakes forward (sweep 1; sweep 2) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|")
    total_aa, total_raw, total_apart, found_n, once = 0, 0, 0, [], True
    for run in range(1, args.runs + 1):
        t0 = time.perf_counter()
        first, second = (sweep(args.repeats, width, args.target_s) for _ in "12")
        n_sig, n_apart, n_raw, words = aa(first, second)
        total_aa, total_raw, total_apart = (
            total_aa + n_sig,
            total_raw + n_raw,
            total_apart + n_apart,
        )
        cells = []
        for records in (first, second):
            fr = forward_reverse(records)
            once = once and len(fr) == 1 and fr[0].faster == "reverse"
            found_n += [c.n for c in fr]
            cells.append("; ".join(c.describe() for c in fr) or "not found")
        noise = max(r.env.get("noise") or 0 for r in first + second)
        print(f"| {run} | {os.getloadavg()[0]:.2f} | {noise:.0%} | {n_sig} | {n_apart} | {n_raw} "
              f"| {' / '.join(cells)} |")  # fmt: skip
        for w in words:
            print(f"|  |  |  | {w} |  |  |  |")
        taken = [r.repeats for r in first + second if r.repeats]
        print(f"<!-- run {run}: {time.perf_counter() - t0:.0f} s; repeats a point: median "
              f"{statistics.median(taken):g}, max {max(taken)} -->")  # fmt: skip
    spread = max(found_n) / min(found_n) if found_n else math.inf
    print(f"\nA/A: {total_aa} significant crossovers in {args.runs} runs "
          f"(sizes judged apart, each unconfirmed by the next size: {total_apart}; the medians "
          f"alone crossed {total_raw} times). Reverse over forward: found once "
          f"in every sweep: {'yes' if once else 'NO'}; its n moved by {spread:.2g}x "
          f"(< 4x: {'yes' if spread < 4 else 'NO'}).")  # fmt: skip


if __name__ == "__main__":
    main()
