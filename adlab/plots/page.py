"""A report that opens anywhere: one self-contained HTML file of a saved run (or two).

``report_html(run)`` is what ``adlab report run.json -o report.html`` writes: BokehJS
inlined (the Lab's own bundle, ``bokehjs.inline_resources``: no CDN, no server, no
kernel), the Lab's plots of the run (time, memory once measured, ratio to f, error), its
table (``format_table``'s HTML), the findings and crossovers in words, the machine and
versions, and each model's source. Given a second run, the plots draw it dashed over
the first (``overlay``), and the comparison (``compare_runs``) sits above the table.
It can be attached to an issue or a paper, and opened from ``file://``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from bokeh.embed import components

from .._format import for_browser
from ..measure.cases import findings
from ..report import format_table
from ..report.comparison import compare_runs, facts
from ..report.runs import Run
from .bokehjs import inline_resources
from .live import LabPlots
from .memory import has_memory
from .overlay import overlay

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.5em; }
pre { background: #f6f6f6; padding: 0.8em; overflow: auto; font-size: 85%; }
table { border-collapse: collapse; } td, th { padding: 0.15em 0.6em; }
.adlab-facts td:first-child { color: #555; }
"""


def _esc(text: str) -> str:
    return html.escape(for_browser(str(text)))


def _facts_table(runs: Sequence[Run]) -> str:
    rows = [facts(run) for run in runs]
    keys = list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{_esc(run.name)}</th>" for run in runs)
    cells = {k: "".join(f"<td>{_esc(r.get(k, '-'))}</td>" for r in rows) for k in keys}
    body = "".join(f"<tr><td>{_esc(k)}</td>{cells[k]}</tr>" for k in keys)
    when = " ".join(_esc(run.env.get("saved_at", "")) for run in runs)
    return (f"<table class='adlab-facts'><tr><th></th>{head}</tr>{body}</table>"
            f"<p><small>saved {when}</small></p>")  # fmt: skip


def _plots(run: Run, other: Run | None) -> tuple[str, str]:
    """The Lab's figures of ``run`` (``other`` dashed over them): (script, div)."""
    plots = LabPlots(width=520, height=380)
    if other is not None:
        overlay(plots, other, other.name)
    plots.add_records(run)
    plots.steps.figure.visible = False  # a saved run keeps no step-size sweep
    plots.table.visible = False  # the table is format_table's, below
    for panel in plots.patterns.values():
        panel.figure.visible = False
    if not any(has_memory(s) for s in plots.series.values()):
        plots.figures["memory"].visible = False
    plots.figures["error"].visible = any(r.error is not None for r in run)
    return components(plots.layout)


def report_html(run: Run, other: Run | None = None, title: str | None = None) -> str:
    """One self-contained HTML page of ``run`` (and ``other`` over it, compared).

    Returns the page's text: write it to a file and open it anywhere, offline.
    """
    title = title or f"adlab report: {run.name}" + (f" against {other.name}" if other else "")
    script, div = _plots(run, other)
    res = inline_resources()
    parts = [f"<h1>{_esc(title)}</h1>"]
    if other is not None:
        parts += [f"<p>Solid: {_esc(run.name)}. Dashed: {_esc(other.name)}.</p>"]
    parts += [f"<div class='adlab-plots'>{div}</div>"]
    if other is not None:
        result = compare_runs(other, run)
        parts += [f"<h2>{_esc(run.name)} against {_esc(other.name)}</h2>",
                  result._repr_html_()]  # fmt: skip
    parts += ["<h2>Table</h2>", format_table(run)._repr_html_()]
    words = findings(run)
    if words:
        items = "".join(f"<li>{_esc(line)}</li>" for line in words)
        parts += ["<h2>Findings</h2>", f"<ul>{items}</ul>"]
    parts += ["<h2>Machine and versions</h2>",
              _facts_table([run] if other is None else [run, other])]  # fmt: skip
    sources = {**(other.source if other is not None else {}), **run.source}
    for name, text in sources.items():
        parts += [f"<h2>Model: {_esc(name)}</h2>", f"<pre>{html.escape(text)}</pre>"]
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_esc(title)}</title><style>{_STYLE}</style>{res.render_js()}"
            f"{res.render_css()}</head><body>{''.join(parts)}{script}</body></html>\n")  # fmt: skip


def write_report(run: Run, path: str | Path, other: Run | None = None) -> Path:
    """Write ``report_html`` to ``path``; returns the path."""
    path = Path(path)
    path.write_text(report_html(run, other), encoding="utf-8")
    return path
