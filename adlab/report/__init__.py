"""Records as tables: the gist-style pivot for people, CSV and JSON for programs.

``format_table`` prints what the Julia gist printed (one row per method, one
column per n, the time per derivative and its ratio to f) from any records of
a sweep; ``format_records`` prints every record in full; ``to_json`` /
``from_json`` and ``to_csv`` keep every field, the environment included.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Iterable, Sequence

from .._format import error_text, human_bytes, jsonable, seconds
from .._vocab import Record
from ..engine.backends import always_installed
from ..engine.model.userline import without_where
from ..measure import stream as _stream
from ..measure.floor import AT_FLOOR, FLOOR_BAND, floor_kind, noisy, ratio_text
from .memory import MEMORY_CAPTION, has_memory, memory_details, memory_text
from .table import Table, TableText

FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Record))
_FLOAT_FIELDS = {
    f.name for f in dataclasses.fields(Record) if "float" in str(f.type) and f.name != "n"
}


# ------------------------------------------------------------------ JSON / CSV
def to_json(records: Iterable[Record], indent: int | None = 1) -> str:
    """Returns a JSON list of the records, one object per record with every field.

    >>> adlab.to_json([])
    '[]'
    """
    return json.dumps([jsonable(r.to_dict()) for r in records], indent=indent)


def from_json(text: str) -> list[Record]:
    """Records from ``to_json``'s text (unknown keys are an error, missing ones default),
    or the records of a saved run's text (``adlab.save``; ``adlab.load`` also reads its
    machine and checks its format). Returns a list of ``Record``.

    >>> adlab.from_json(adlab.to_json([]))
    []
    """
    out = []
    data = json.loads(text)
    for item in data.get("records", []) if isinstance(data, dict) else data:
        unknown = set(item) - set(FIELDS)
        if unknown:
            raise ValueError(f"not record fields: {sorted(unknown)}")
        for key in _FLOAT_FIELDS & set(item):
            if isinstance(item[key], str):
                item[key] = float(item[key])
        out.append(Record(**item))
    return out


def to_csv(records: Iterable[Record]) -> str:
    """Returns CSV text, one row per record; ``settings`` as JSON, ``env`` as ``env.<key>``
    columns.

    Example:
        >>> adlab.to_csv([]).split(",")[:4]
        ['model', 'mode', 'n', 'label']
    """
    rows = [r.to_dict() for r in records]
    env_keys = sorted({k for r in rows for k in r["env"]})
    header = [f for f in FIELDS if f not in ("env",)] + [f"env.{k}" for k in env_keys]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        row = []
        for f in header:
            if f.startswith("env."):
                value = r["env"].get(f[4:])
            elif f == "settings":
                value = json.dumps(r["settings"], sort_keys=True) if r["settings"] else ""
            else:
                value = r[f]
            row.append("" if value is None else value)
        writer.writerow(row)
    return buf.getvalue()


# ---------------------------------------------------------------- for people
def _interval(r: Record) -> str:
    if r.median_lo_s is None or r.median_hi_s is None:
        return "-"
    return f"{seconds(r.median_lo_s)} - {seconds(r.median_hi_s)}"


def _flops(r: Record) -> str:
    """The count; "not counted" where a counter ran and counted nothing it knows (PyTorch's,
    on a model with no matrix product): a 0 there would read as free."""
    if r.flops is not None:
        return f"{r.flops:.3g}"
    return "not counted" if r.flops_counter else "-"


def _labels(records: Sequence[Record]) -> list[str]:
    seen: dict[str, None] = {}
    for r in records:
        seen.setdefault(r.label, None)
    primal = [lab for lab in seen if _is_primal(records, lab)]
    return primal + [lab for lab in seen if lab not in primal]


def _is_primal(records: Sequence[Record], label: str) -> bool:
    return any(r.label == label and r.mode == "primal" for r in records)


def skip_reasons(records: Sequence[Record]) -> list[tuple[str, str]]:
    """Each distinct reason a point was skipped, once, with the points it hit.

    Returns (points, reason) pairs in order of first appearance, ``points`` as
    "every point" or e.g. "forward, reverse at n = 2, 3". A model error names
    the mode and n it was met at; one mistake met at ten points reads as one.
    """
    hits: dict[str, list[Record]] = {}
    for r in records:
        if r.skipped:
            hits.setdefault(without_where(r.skipped), []).append(r)
    out = []
    for reason, hit in hits.items():
        if len(hit) == len(records):
            points = "every point"
        else:
            labels = ", ".join(dict.fromkeys(r.label for r in hit))
            sizes = ", ".join(str(n) for n in sorted({r.n for r in hit}))
            points = f"{labels} at n = {sizes}"
        out.append((points, reason))
    return out


#: what each mark after a time means; printed under any table that uses it
MARKS = {
    "^": "async dispatch: XLA counts >= 1000 flops, so JAX's CPU client runs it on a "
    "worker thread (a wake-up per call; adlab bench --inline turns this off)",
    "~": "unstable: IQR over 25% of the median, or fewer than 3 repeats",
    "*": "has a note (see --long or the JSON)",
    "floor": f"{AT_FLOOR}: within {FLOOR_BAND:g}x of the dispatch floor measured beside it "
    "(for ^, of a trivial program run on a worker thread): the cost of a call, not of its "
    "arithmetic (no ratio to f is shown)",
}


def legend(records: Sequence[Record], marks: Sequence[str]) -> list[str]:
    measured = [r for r in records if not r.skipped]
    used = {
        "^": any(r.dispatch == "async" for r in records),
        "~": any(r.unstable for r in measured),
        "*": any(r.note for r in measured),
        "floor": any(r.at_floor and r.mode != "primal" for r in measured),
    }
    return [MARKS[m] if m == "floor" else f"{m} {MARKS[m]}" for m in marks if used[m]]


def floor_lines(records: Sequence[Record]) -> list[str]:
    """The dispatch floor per framework (its range over the sizes: it is measured at
    each) and, on a noisy machine, what that means for the findings."""
    out = []
    floors: dict[str, set[float]] = {}
    for r in records:
        if r.floor_s:
            floors.setdefault(floor_kind(r.backend), set()).add(r.floor_s)
    if floors:
        spans = []
        for kind, values in floors.items():
            low, high = seconds(min(values)), seconds(max(values))
            spans.append(f"{kind} {low if low == high else f'{low} to {high}'}")
        out.append("dispatch floor (x + 1 on a scalar, as each framework's users run it, "
                   f"beside each size): {'; '.join(spans)}")  # fmt: skip
    text = noisy(records)
    if text:
        out.append(f"noise: {text}")
    return out


def describe_environment(records: Sequence[Record]) -> str:
    """One line: model(s), precision(s), device, CPU count, versions."""
    if not records:
        return "no records"
    env = records[0].env or {}
    models = ", ".join(dict.fromkeys(r.model for r in records))
    precisions = ", ".join(dict.fromkeys(r.precision for r in records))
    device = env.get("device", "?")
    cpu = env.get("cpu")
    cpus = env.get("cpus_usable", env.get("cpu_count"))
    where = f"{device} ({cpu}, {cpus} CPUs)" if cpu else str(device)
    versions = ", ".join(f"{k} {env[k]}" for k in ("adlab", *always_installed()) if k in env)
    others = {(r.env or {}).get("framework"): (r.env or {}).get("framework_version")
              for r in records}  # fmt: skip
    versions += "".join(f", {name} {version}" for name, version in others.items()
                        if name not in (None, *always_installed()) and version)  # fmt: skip
    flags = f", XLA_FLAGS={env['xla_flags']!r}" if env.get("xla_flags") else ""
    inline = (
        " | every program inline (no async dispatch)"
        if env.get("cpu_async_dispatch") is False
        else ""
    )
    return f"{models} | {precisions} | {where} | {versions}{flags}{inline}"


#: how wide ``format_table``'s text may be before its columns go into blocks: JupyterLab
#: wraps its output at the window's edge, at 107 characters in a 1280-pixel window with
#: the file browser open (measured in Chromium), and a wrapped row reads as two
TEXT_WIDTH = 100


def time_marks(r: Record) -> str:
    """The marks after a time ('^~'), each explained under the table (``MARKS``)."""
    return (
        ("^" if r.dispatch == "async" else "")
        + ("~" if r.unstable else "")
        + ("*" if r.note else "")
    )


def ratio_cell(r: Record) -> str:
    """A cell's ratio to f ("1.4x", "at the floor"); "" for f itself or none."""
    if r.mode == "primal" or (r.ratio_to_primal is None and not r.at_floor):
        return ""
    return ratio_text(r)


def pivot(records: Sequence[Record]) -> tuple[list[int], list[str], dict, dict[str, int]]:
    """The sizes, the series, the record at (series, n) and each skip reason's number."""
    ns = sorted({r.n for r in records})
    cell: dict[tuple[str, int], Record] = {}
    for r in records:
        cell.setdefault((r.label, r.n), r)
    reasons = {reason: k for k, (_, reason) in enumerate(skip_reasons(records), 1)}
    return ns, _labels(records), cell, reasons


def skip_lines(records: Sequence[Record]) -> list[str]:
    return [f"[{k}] {points}: {reason}"
            for k, (points, reason) in enumerate(skip_reasons(records), 1)]  # fmt: skip


def format_table(records: Iterable[Record], width: int | None = TEXT_WIDTH) -> TableText:
    """The gist's table: one row per series, one column per n.

    Each cell is the median time per call and, for derivatives, its ratio to
    the primal at the same n and options ("8.6x"; "at the floor" where the
    derivative is within noise of the dispatch floor). "^" marks a program JAX ran
    on a worker thread (async dispatch), "~" an unstable timing (large
    spread), "*" a note (each mark used is explained under the table); skipped
    points show "skipped [k]", each distinct reason listed once below with the
    points it hit (``skip_reasons``). Where memory was measured, a second grid of the
    same rows and columns gives each point's peak and, for a reverse pass, its
    residuals ("3.2 MB (1.1 MB)"; ``report.memory``).

    Returns the text (a ``str``: ``print`` it), whose columns go into blocks one under
    the other past ``width`` characters (None: one block, however wide). In a notebook
    it shows as an HTML table instead: the same cells, the ratio under each time, the
    notes and the crossovers (``measure.findings.crossover_lines``) under the table,
    and each record in full on hovering its cell.

    Example:
        >>> records = list(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False))
        >>> "reverse" in str(adlab.format_table(records))
        True
    """
    records = list(records)
    if not records:
        return TableText("(no records)", lambda: "<p>(no records)</p>")
    ns, labels, cell, reasons = pivot(records)
    rows = []
    for label in labels:
        row = [label]
        for n in ns:
            r = cell.get((label, n))
            if r is None:
                row.append("")
            elif r.skipped:
                row.append(f"skipped [{reasons[without_where(r.skipped)]}]")
            else:
                ratio = ratio_cell(r)
                row.append(seconds(r.median_s) + (f" ({ratio})" if ratio else "") + time_marks(r))
        rows.append(row)
    head = ["", *[f"n = {n}" for n in ns]]
    out = [
        describe_environment(records),
        "time per call: median over repeats (ratio to the primal f at the same n)",
        "",
        Table.of(head, rows).text(width),
    ]
    if has_memory(records):  # beside the time: the same rows and columns (report.memory)
        grid = [[label, *[memory_text(cell[label, n]) if (label, n) in cell else ""
                          for n in ns]] for label in labels]  # fmt: skip
        out += ["", MEMORY_CAPTION, "", Table.of(head, grid).text(width)]
    lines = floor_lines(records)
    if lines:
        out += ["", *lines]
    out += legend(records, ["^", "~", "*", "floor"]) + skip_lines(records)

    def as_html() -> str:
        from .html import table_html

        return table_html(records)

    return TableText("\n".join(out), as_html)


def record_fields(r: Record) -> list[tuple[str, str]]:
    """A record in full, as people read it: (what, value) for each field that applies.

    The Lab shows these on hovering a row of its table, a notebook's table on
    hovering a cell.
    """
    how = f"{r.backend}, {'jit' if r.jit else 'eager'}, {r.precision}"
    out = [("series", r.label), ("model", r.model), ("framework", how), ("n", str(r.n))]
    if r.skipped:
        return [*out, ("skipped", r.skipped)]
    out += [
        ("time", f"{seconds(r.median_s)} median, 95% interval {_interval(r)}"),
        ("IQR", seconds(r.iqr_s)),
        ("fastest", seconds(r.min_s)),
        ("loops x repeats", f"{r.loops} x {r.repeats}" if r.loops else "-"),
    ]
    if r.mode != "primal":
        out += [("primal f", seconds(r.primal_s)), ("ratio to f", ratio_text(r) or "-")]
    out += [("compile", seconds(r.compile_s) if r.compile_s else "-"),
            ("f evals", str(r.f_evals) if r.f_evals is not None else "-")]  # fmt: skip
    if r.colors is not None:
        out += [("colors", str(r.colors)), ("nonzeros", str(r.nnz))]
    out += [("flops", _flops(r)), *memory_details(r), ("error", error_text(r.error))]
    if r.floor_s:
        out.append(("dispatch floor", seconds(r.floor_s)))
    if r.dispatch == "async":
        out.append(("async", MARKS["^"].split(": ", 1)[1]))
    if r.unstable:
        out.append(("unstable", MARKS["~"].split(": ", 1)[1]))
    if r.note:
        out.append(("note", r.note))
    return out


def record_text(r: Record) -> str:
    """``record_fields`` as lines of text, one 'what: value' a line."""
    return "\n".join(f"{what}: {value}" for what, value in record_fields(r))


_LONG = (
    ("series", lambda r: r.label),
    ("n", lambda r: str(r.n)),
    ("median", lambda r: seconds(r.median_s)),
    ("95% of median", _interval),
    ("iqr", lambda r: seconds(r.iqr_s)),
    ("min", lambda r: seconds(r.min_s)),
    ("loops x rep", lambda r: f"{r.loops} x {r.repeats}" if r.loops else "-"),
    ("x primal", lambda r: ratio_text(r) or "-"),
    ("compile", lambda r: seconds(r.compile_s) if r.compile_s else "-"),
    ("f evals", lambda r: str(r.f_evals) if r.f_evals is not None else "-"),
    ("flops", _flops),
    ("flops x f", lambda r: f"{r.flops_ratio:.3g}" if r.flops_ratio is not None else "-"),
    ("peak", lambda r: human_bytes(r.peak_bytes)),
    ("residuals", lambda r: human_bytes(r.residual_bytes)),
    ("error", lambda r: error_text(r.error)),
)


def format_records(records: Iterable[Record]) -> str:
    """Returns every record on its own line: timing, spread, compile, cost, error; skips, notes.

    Example:
        >>> adlab.format_records([])
        '(no records)'
    """
    records = list(records)
    if not records:
        return "(no records)"
    rows = [[name for name, _ in _LONG]]
    notes = []
    skips = {reason: k for k, (_, reason) in enumerate(skip_reasons(records), 1)}
    for r in records:
        if r.skipped:
            k = skips[without_where(r.skipped)]
            rows.append([r.label, str(r.n), f"skipped [{k}]", *[""] * (len(_LONG) - 3)])
            continue
        rows.append([get(r) + ("~" if name == "median" and r.unstable else "")
                     for name, get in _LONG])  # fmt: skip
        if r.note:
            notes.append(f"{r.label} at n={r.n}: {r.note}")
    notes += legend(records, ["~", "floor"])
    notes += floor_lines(records)
    notes += skip_lines(records)
    text = str(Table.of(rows[0], rows[1:]))
    return text + ("\n" + "\n".join(notes) if notes else "")


# a Sweep shown in a notebook shows this table (measure, below, does not import report)
_stream.table_html = lambda records: format_table(records)._repr_html_()
