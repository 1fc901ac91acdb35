"""Shared settings for the Lab tests: small sizes and a short budget, so runs take seconds."""

from __future__ import annotations

import math

#: bench options that keep a point to a fraction of a second
FAST = {"budget_s": 0.5, "repeats": 3, "target_s": 0.002}


def series_points(lab) -> dict[str, list[int]]:
    """label -> the n of each point drawn in that series' plot source."""
    return {label: list(src.data["n"]) for label, src in lab.plots.series.items()}


def measured(lab) -> dict[str, list[int]]:
    """label -> the n of each measured (not skipped) derivative record, in order."""
    out: dict[str, list[int]] = {}
    for r in lab.results:
        if r.mode != "primal" and not r.skipped:
            out.setdefault(r.label, []).append(r.n)
    return out


def same_float(a: float, b: float | None) -> bool:
    """``a`` from a plot column, ``b`` from a record: a record's None (a ratio at the
    floor, say) is drawn as NaN, a gap (``plots.rows``)."""
    if b is None:
        return math.isnan(a)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
