"""Two runs side by side: ``compare_runs(base, new)``, what ``adlab compare`` prints.

Each series x n measured in both runs is judged by the test the findings use
(``adlab.measure.findings.compare``): the intervals of the two medians, apart by more
than the noise each run measured before it began (``env["noise"]``) times how much the
machine's own speed moved between them (the ratio of the dispatch floors measured
beside each point). A burst of load that spans one size's round robin of one run moves
that size alone, so, as a crossover's verdict must hold at the next size, a verdict here
must be confirmed by a neighbouring size of the same series (the one below or above). A
series measured at one size has nothing to confirm with, and its verdict stands. (An A/A
pair of tiny sweeps on a loaded machine found "slower 2.1x" at the largest size alone, with
f there 2.7x slower: the findings, which let a verdict at the largest size stand, would keep
it. The series' own f, measured beside it, was tried as a confirmation and dropped: on a
quiet machine an A/A pair read "slower 1.3x" at reverse's largest size, f unmoved, the size
below faster: a JAX program's own swing between runs, its hand-off to a worker thread, is
not the machine's, and f does not share it.)

A row never silently compares unlike points: where the precision, framework,
compilation, device or runtime of the two differs, the row says so, and so does the
comparison's header. It compares call times; compile times are not compared, and where
one run compiled a program cold and the other loaded it from adlab's cache the header
says that too. Machines and versions that differ are named (as pytest-benchmark warns).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._format import human_bytes, ratio, seconds
from .._vocab import Record
from ..engine.backends import always_installed
from ..measure.findings import compare
from .runs import Run, load
from .table import Table, TableText

SAME = "same within noise"
ONLY = "only in one run"
#: the groups of the table, the largest changes first
GROUPS = ("slower", "faster", SAME, ONLY)


@dataclass(frozen=True)
class ComparedPoint:
    """One series at one n in two runs.

    Attributes:
        label, n: the series and the size.
        base_s, new_s: the median seconds per call in each run (None: not measured there).
        ratio: ``new_s / base_s`` (None unless both were measured).
        significant: whether the two differ beyond the noise, confirmed by a neighbouring
            size of the series or by its f (see the module docstring).
        verdict: "faster 1.8x", "slower 1.3x", "same within noise" or "only in one run".
        note: how the two points differ besides their time ("float32 vs float64"), or
            why a point is in one run only ("skipped in new"); "" for none.

    Example:
        >>> a = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> point = adlab.compare_runs(a, a)[0]
        >>> point.verdict, point.ratio
        ('same within noise', 1.0)
    """

    label: str
    n: int
    base_s: float | None
    new_s: float | None
    ratio: float | None
    significant: bool
    verdict: str
    note: str = ""

    @property
    def group(self) -> str:
        """The row's group: "slower", "faster", "same within noise" or "only in one run"."""
        return self.verdict.split(" ")[0] if self.significant else self.verdict


class RunComparison(list):
    """The rows of ``compare_runs`` (``ComparedPoint``), the largest changes first, with:

    Attributes:
        base, new: the two runs (``adlab.Run``).
        differences: lines naming what differs between the machines, the versions and
            the points' options, each "what: base -> new"; [] when nothing does.

    Example:
        >>> a = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> result = adlab.compare_runs(a, a)
        >>> result.differences, result.slower(0.1), result.summary()
        ([], [], '2 same within noise')
    """

    def __init__(self, rows: Iterable[ComparedPoint], base: Run, new: Run,
                 differences: Sequence[str]) -> None:  # fmt: skip
        super().__init__(rows)
        self.base, self.new, self.differences = base, new, list(differences)

    def slower(self, threshold: float = 0.0) -> list[ComparedPoint]:
        """The rows significantly slower in ``new`` by more than ``threshold`` (0.1: 10%)."""
        return [p for p in self if p.significant and p.ratio and p.ratio > 1 + threshold]

    def table(self) -> Table:
        rows = [(p.label, p.n, seconds(p.base_s), seconds(p.new_s),
                 ratio(p.ratio) if p.ratio else "-", p.verdict, p.note) for p in self]  # fmt: skip
        return Table.of(["series", "n", "base", "new", "new/base", "verdict", "note"], rows,
                        align="lrrrrll")  # fmt: skip

    def header(self) -> list[str]:
        out = [f"base: {_describe(self.base)}", f"new:  {_describe(self.new)}"]
        out += [f"differs: {d}" for d in self.differences] or ["same machine and versions"]
        return out

    def summary(self) -> str:
        counts = {g: sum(1 for p in self if p.group == g) for g in GROUPS}
        return ", ".join(f"{k} {g}" for g, k in counts.items() if k) or "no points"

    def __str__(self) -> str:
        return "\n".join([*self.header(), "", self.table().text(), "", self.summary()])

    def text(self) -> TableText:
        """The comparison as text, shown as HTML in a notebook."""
        return TableText(str(self), self._repr_html_)

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<div>{html.escape(line)}</div>" for line in self.header())
        return (f"<div>{head}</div>{self.table()._repr_html_()}"
                f"<p>{html.escape(self.summary())}</p>")  # fmt: skip


def _describe(run: Run) -> str:
    env = run.env
    cpu = env.get("cpu", "?")
    cpus = env.get("cpus_usable", env.get("cpu_count", "?"))
    when = env.get("saved_at", "")
    where = str(run.path) if run.path else "(in memory)"
    return f"{where}, {env.get('host', '?')} ({cpu}, {cpus} CPUs){', ' + when if when else ''}"


def facts(run: Run) -> dict[str, str]:
    """What a run's machine and versions are, flat, for ``differences``: the machine's
    (host, cpu, cpus, memory, gpus, device), the system's, every framework's version, adlab's
    and each JavaScript runtime the records ran in."""
    env = dict(run.env)
    first = (run[0].env if run else {}) or {}
    versions = dict(env.get("versions") or {})
    for r in run:  # each framework's version as its records say it (format 0 has no others)
        e = r.env or {}
        version = e.get("framework_version")
        if e.get("framework") and version and version != e.get("js_runtime_version"):
            versions.setdefault(e["framework"], str(version))  # not plain JS's: its runtime's
        if e.get("js_runtime"):  # Node's version, or the browser's user agent
            versions.setdefault("js runtime", f"{e['js_runtime']} {e.get('js_runtime_version')}")
    for key in (*always_installed(), "jaxlib"):  # format 0's env: the records' own
        if key in first:
            versions.setdefault(key, str(first[key]))
    out = {
        "host": env.get("host"),
        "cpu": env.get("cpu", first.get("cpu")),
        "cpus": env.get("cpus_usable", first.get("cpus_usable")),
        "memory": human_bytes(env["memory_bytes"]) if env.get("memory_bytes") else None,
        "gpus": ", ".join(env["gpus"]) if env.get("gpus") else None,
        "device": env.get("device", first.get("device")),
        "os": env.get("os", first.get("platform")),
        "python": env.get("python", first.get("python")),
        "adlab": env.get("adlab", first.get("adlab")),
        "adlab commit": env.get("adlab_commit"),
        "node": env.get("node"),
        **versions,
    }
    return {k: str(v) for k, v in out.items() if v not in (None, "")}


def differences(base: Run, new: Run) -> list[str]:
    """What differs between two runs' machines and versions, each "what: base -> new"."""
    a, b = facts(base), facts(new)
    return [f"{k}: {a.get(k, '-')} -> {b.get(k, '-')}" for k in dict.fromkeys([*a, *b])
            if a.get(k) != b.get(k) and k in a and k in b]  # fmt: skip


def _unlike(a: Record, b: Record) -> str:
    """How two points of one series differ besides their time ("float32 vs float64")."""
    out = []
    for field in ("mode", "precision", "scheme", "backend", "device", "where"):
        x, y = getattr(a, field), getattr(b, field)
        if x != y:
            out.append(f"{x} vs {y}")
    if a.jit != b.jit:
        out.append(f"{'jit' if a.jit else 'eager'} vs {'jit' if b.jit else 'eager'}")
    if a.model != b.model or a.settings != b.settings:
        out.append("other model or settings")
    return ", ".join(out)


def _measured(run: Iterable[Record]) -> dict[tuple[str, int], Record]:
    return {(r.label, r.n): r for r in run
            if not r.skipped and r.median_s and math.isfinite(r.median_s)}  # fmt: skip


def _noise(r: Record) -> float:
    x = (r.env or {}).get("noise")
    return float(x) if isinstance(x, int | float) and math.isfinite(x) and x > 0 else 0.0


def _verdicts(base: dict, new: dict) -> dict[tuple[str, int], int]:
    """Each common point's verdict, new against base (-1 faster, +1 slower, 0 tied), kept
    where a neighbouring size of the series (the one below or above) has it too; a series
    measured at one size has nothing to confirm with, and its verdict stands."""
    raw = {key: compare(new[key], base[key]) for key in base if key in new}
    out = {}
    for label in dict.fromkeys(k[0] for k in raw):
        ns = sorted(n for lab, n in raw if lab == label)
        for i, n in enumerate(ns):
            v = raw[label, n]
            near = [raw[label, m] for m in ns[max(i - 1, 0) : i + 2] if m != n]
            lone = near and v not in near
            out[label, n] = 0 if lone else v
    return out


def _notes(base: Run, new: Run, points: dict) -> list[str]:
    """The header's lines on the points: unlike options, cold compiles against loaded ones."""
    out = []
    unlike = dict.fromkeys(note for note in points.values() if note)
    out += [f"points: {note} (said on each row)" for note in unlike]
    loaded = {(r.label, r.n): r.compile_loaded for r in base if r.compile_loaded is not None}
    mixed = [
        k
        for k, r in _measured(new).items()
        if loaded.get(k) is not None and r.compile_loaded not in (None, loaded[k])
    ]
    if mixed:
        out.append(f"compile: {len(mixed)} points compiled cold in one run and loaded from "
                   "adlab's cache in the other: compile times are not compared (call times "
                   "are)")  # fmt: skip
    return out


def as_run(x: Iterable[Record] | str | Path) -> Run:
    """A ``Run`` from a path (``load``), a ``Run`` itself, or records (the machine from
    their first's ``env``)."""
    if isinstance(x, Run):
        return x
    if isinstance(x, str | Path):
        return load(x)
    records = list(x)
    return Run(records, dict(records[0].env) if records else {})


def compare_runs(
    base: Iterable[Record] | str | Path, new: Iterable[Record] | str | Path
) -> RunComparison:
    """Compare two runs (records, ``adlab.Run`` objects or paths of saved runs): one row per
    series x n, new against base.

    Returns a ``RunComparison``, a list of ``ComparedPoint`` (``label``, ``n``, ``ratio``
    new/base from the medians, ``significant``, ``verdict``: "faster 1.8x", "slower
    1.3x", "same within noise" or "only in one run"), grouped by the largest change
    (slower, faster, same, one run only); ``print`` it for a table, or show it in a
    notebook for HTML; ``.differences`` names what differs between the machines and
    versions, and ``.slower(0.1)`` the rows slower beyond noise by more than 10%.
    ``adlab compare base.json new.json`` prints the same.

    Example:
        >>> base = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> new = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> result = adlab.compare_runs(base, new)  # or two paths: "base.json", "new.json"
        >>> sorted((p.label, p.n) for p in result)
        [('primal', 3), ('reverse', 3)]
        >>> print(result)  # doctest: +ELLIPSIS
        base: (in memory), ...
        <BLANKLINE>
        series   n ...
    """
    base_run, new_run = as_run(base), as_run(new)
    a, b = _measured(base_run), _measured(new_run)
    verdict = _verdicts(a, b)
    keys = list(dict.fromkeys([*((r.label, r.n) for r in base_run),
                               *((r.label, r.n) for r in new_run)]))  # fmt: skip
    rows, unlike = [], {}
    for key in keys:
        ra, rb = a.get(key), b.get(key)
        if ra is None or rb is None:
            where = "base" if ra is None else "new"
            seen = any((r.label, r.n) == key for r in (base_run if ra is None else new_run))
            note = f"skipped in {where}" if seen else f"not in {where}"
            rows.append(ComparedPoint(*key, ra and ra.median_s, rb and rb.median_s, None,
                                      False, ONLY, note))  # fmt: skip
            continue
        x = rb.median_s / ra.median_s
        v = verdict[key]
        unlike[key] = _unlike(ra, rb)
        text = SAME if v == 0 else f"{'slower' if v > 0 else 'faster'} {ratio(max(x, 1 / x))}"
        rows.append(ComparedPoint(*key, ra.median_s, rb.median_s, x, v != 0, text, unlike[key]))
    order = {g: i for i, g in enumerate(GROUPS)}
    rows.sort(key=lambda p: (order[p.group], -abs(math.log(p.ratio)) if p.ratio else 0,
                             p.label, p.n))  # fmt: skip
    diffs = differences(base_run, new_run) + _notes(base_run, new_run, unlike)
    return RunComparison(rows, base_run, new_run, diffs)
