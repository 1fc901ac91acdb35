"""Readings of XLA's cost analysis (``measure.costs.CostRow``): flops and memory per mode,
whether a gradient stays within the cheap-gradient bound, which mode counts the fewest flops.

Apart from ``readings``: these read what the compiler counts, not what a sweep timed;
a count XLA did not make (NaN) is unknown, never zero or "within".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .._format import human_bytes
from ..measure.costs import CostRow
from ..report.table import Table


def bound_table(rows: Sequence[CostRow], bound: float = 6.0) -> Table:
    """Per mode: the largest flops / f over the sizes, and whether it stays within ``bound``.

    The cheap-gradient principle (Griewank & Walther 2008): reverse mode's
    gradient costs a small constant times f, at most about 4-6x in flops,
    whatever n; forward mode and differences cost about n times f.

    A size whose ratio XLA did not count (NaN) is unknown, not zero: a mode with
    no count reads "no data", and one with a count missing reads "unknown"
    unless a counted size already exceeds the bound.
    """
    known: dict[str, list[float]] = {}
    missing: dict[str, list[int]] = {}
    for r in rows:
        known.setdefault(r.label, [])
        if math.isfinite(r.flops_ratio):
            known[r.label].append(r.flops_ratio)
        else:
            missing.setdefault(r.label, []).append(r.n)
    out = []
    for label, ratios in known.items():
        worst = max(ratios, default=math.nan)
        if not ratios:
            within = "no data"
        elif worst > bound:
            within = "no"
        else:
            within = "unknown" if label in missing else "yes"
        out.append((label, f"{worst:.3g}" if ratios else "-", within))
    ns = sorted({r.n for r in rows})
    notes = [f"sizes n = {', '.join(map(str, ns))}"]
    notes += [f"{label}: no flop count at n = {', '.join(map(str, sorted(set(where))))}"
              for label, where in missing.items()]  # fmt: skip
    return Table.of(("mode", "largest flops / f", f"within {bound:g}x f"), out, notes=notes)


def cheapest_table(rows: Sequence[CostRow], modes: Sequence[str] = ("forward", "reverse")) -> Table:
    """Per model and n: which of ``modes`` XLA counts the fewest flops for, and by how much.

    A mode whose flops XLA did not count (NaN) is never named, and the gap is
    then "-" (a note says which); with no mode counted the row reads "no data".
    """
    groups: dict[tuple[str, int], dict[str, float]] = {}
    for r in rows:
        if r.label in modes:
            groups.setdefault((r.model, r.n), {})[r.label] = r.flops
    out, notes = [], []
    for (model, n), flops in groups.items():
        # counted modes only, by flops (ties keep the order given); NaN is not "fewest"
        ranked = sorted(((f, label) for label, f in flops.items() if math.isfinite(f)),
                        key=lambda item: item[0])  # fmt: skip
        uncounted = [label for label, f in flops.items() if not math.isfinite(f)]
        if uncounted:
            notes.append(f"{model} at n = {n}: no flop count for {', '.join(uncounted)}")
        if not ranked:
            out.append((model, n, "no data", "-"))
            continue
        ratio = ranked[-1][0] / ranked[0][0]
        gap = f"{ratio:,.3g}x" if ratio < 1000 else f"{ratio:,.0f}x"
        out.append((model, n, ranked[0][1], "-" if uncounted else gap))
    return Table.of(("model", "n", "fewest flops", "gap"), out, notes=notes)


def costs_table(rows: Sequence[CostRow]) -> Table:
    """One line per (mode, n): f evals, flops and their ratio to f, and memory
    (with a model column when the rows hold several models)."""
    models = list(dict.fromkeys(r.model for r in rows))
    several = len(models) > 1
    columns = ("mode", "n", "f evals", "flops", "flops / f", "temp memory", "arguments",
               "output")  # fmt: skip
    body = [((r.model,) if several else ()) + (
        r.label, r.n, r.f_evals, f"{r.flops:.3g}", f"{r.flops_ratio:.3g}",
        human_bytes(r.temp_bytes), human_bytes(r.argument_bytes), human_bytes(r.output_bytes),
    ) for r in rows]  # fmt: skip
    precisions = ", ".join(dict.fromkeys(r.precision for r in rows))
    return Table.of(
        (("model",) if several else ()) + columns,
        body,
        title=f"XLA's analysis of the compiled programs ({', '.join(models)}; {precisions})"
        if rows
        else "",
    )
