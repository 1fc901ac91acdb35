"""What adlab's docs generate from its source at build time, so that no page can drift from it.

- ``framework_rows()``: the frameworks table, one row per entry of
  ``adlab.engine.backends.FACTS`` (the ``adlab-frameworks`` directive draws it).
- ``known_bugs()``: each framework's known wrong derivatives, read from the same entries
  (``adlab-known-bugs`` lists them).
- ``api_source()``: the API reference's reStructuredText, an autodoc entry for every name in
  ``adlab.__all__``, grouped; a name no group lists goes under "Other", so a new export shows
  up (and must have a docstring: autodoc warns on none, and the build turns warnings into errors).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Mapping
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

ADLAB = Path(__file__).resolve().parents[2] / "adlab"

COLUMNS = ("backend", "framework", "eager", "compiled", "nests", "precisions", "sparse",
           "profiler", "checkpoint", "install")  # fmt: skip


def _install(name: str, facts) -> str:
    if facts.extra:
        return f'pip install -e ".[{facts.extra}]"'
    if facts.executable:
        return f"{facts.install} ({facts.executable})"
    return "always (pip install -e .)"


def framework_rows(facts: Mapping | None = None) -> list[tuple[str, ...]]:
    """One row of ``COLUMNS`` per framework, read from its entry of facts."""
    if facts is None:
        from adlab.engine.backends import FACTS as facts
    rows = []
    for name, f in facts.items():
        nests = ", ".join(f.nests) if f.nests else f"none: {f.why_no_nesting}"
        rows.append((
            name, f.label, f.how_eager or "no", f.how_jit or "no", nests, ", ".join(f.precisions),
            "yes" if f.sparse else f"no: {f.sparse_refusal}",
            f.profiler or f"no: {f.profile_refusal}",
            f.checkpoint or f"no: {f.why_no_checkpoint}", _install(name, f),
        ))  # fmt: skip
    return rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> nodes.table:
    table = nodes.table(classes=["adlab-frameworks"])
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in header)

    def row(cells: tuple[str, ...]) -> nodes.row:
        r = nodes.row()
        for text in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=text)
            r += entry
        return r

    head = nodes.thead()
    head += row(header)
    body = nodes.tbody()
    body.extend(row(cells) for cells in rows)
    group += head
    group += body
    return table


class FrameworksTable(Directive):
    """``adlab-frameworks``: the table of ``framework_rows()``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [_table(COLUMNS, framework_rows())]


def known_bugs(facts: Mapping | None = None) -> list[str]:
    """One sentence per derivative a framework gets wrong itself (its ``known_bugs``)."""
    if facts is None:
        from adlab.engine.backends import FACTS as facts
    items = []
    for f in facts.values():
        for bug in f.known_bugs:
            ops = ", ".join(f"np.{op}" for op in bug.operations)
            items.append(f"{f.label}: {ops}, {bug.what} ({', '.join(bug.issues)}). adlab's "
                         f"check flags each such result and names the issue; meanwhile, "
                         f"{bug.instead}.")  # fmt: skip
    return items


class KnownBugs(Directive):
    """``adlab-known-bugs``: the list of ``known_bugs()``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        items = nodes.bullet_list()
        for text in known_bugs():
            item = nodes.list_item()
            item += nodes.paragraph(text=text)
            items += item
        return [items]


# ------------------------------------------------------------------------ the API reference
#: the API page's sections, in order: a name in adlab.__all__ that none lists goes in "Other"
GROUPS: dict[str, tuple[str, ...]] = {
    "Models": ("Model", "load_model", "list_models", "ModelError"),
    "Derivatives": ("derivative", "prepare", "Prepared", "DerivativeInfo", "SparsePrepared",
                    "hessian", "hvp", "prepare_hessian", "prepare_hvp", "UntrustedWarning",
                    "SizeError"),
    "Modes, schemes and frameworks": ("MODES", "ALL_MODES", "SCHEMES", "BACKENDS",
                                      "registered_modes"),
    "Measuring": ("bench", "Sweep", "Series", "Record", "Timing", "time_call", "dispatch_floor",
                  "environment", "NoisyMachineWarning", "crossovers", "Crossover", "compare",
                  "advise", "Advice", "profile", "Profile", "OpCost"),
    "Accuracy": ("reference", "Reference", "hessian_reference", "max_relative_error",
                 "normwise_relative_error", "step_errors", "StepRecord", "step_summary",
                 "SchemeSummary", "optimal_step", "richardson_check", "RichardsonPoint",
                 "precision_table", "PrecisionRow"),
    "Reports": ("format_records", "format_table", "to_json", "from_json", "to_csv"),
    "The Lab": ("Lab",),
}  # fmt: skip


def homes() -> dict[str, str]:
    """Each name ``adlab/__init__.py`` imports -> the module it comes from."""
    found = {}
    for node in ast.parse((ADLAB / "__init__.py").read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"adlab.{node.module}"
    found.setdefault("Lab", "adlab.lab")
    found.setdefault("SparsePrepared", "adlab.engine.sparse")
    return found


def _data_doc(name: str, module: str) -> str:
    """The ``#:`` comment over ``name``'s assignment in its module, or over the type alias
    assigned just before it (``Mode`` over ``MODES``): the block of lines above, to a blank."""
    path = ADLAB.parent / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = path.with_suffix("") / "__init__.py"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith((f"{name}:", f"{name} =")))
    block = []
    for line in reversed(lines[:at]):
        if not line.strip():
            break
        block.append(line)
    said = [line.strip()[2:].strip() for line in reversed(block) if line.strip().startswith("#:")]
    return " ".join(said)


def _entry(name: str) -> list[str]:
    import adlab

    obj = getattr(adlab, name)
    if isinstance(obj, type):
        members = "   :members:\n" if name in ("Prepared", "Model", "Lab", "Sweep") else ""
        return [f".. autoclass:: adlab.{name}", members.rstrip("\n"), ""]
    if callable(obj):
        return [f".. autofunction:: adlab.{name}", ""]
    doc = _data_doc(name, homes()[name])
    if not doc:
        raise ValueError(f"adlab.{name} has no '#:' comment in {homes()[name]}")
    return [f".. py:data:: adlab.{name}", f"   :value: {obj!r}", "", f"   {doc}", ""]


def api_source() -> str:
    """The reStructuredText of the API reference: every name in ``adlab.__all__``."""
    import adlab

    names = list(adlab.__all__)
    listed = [n for group in GROUPS.values() for n in group]
    groups = {title: [n for n in group if n in names] for title, group in GROUPS.items()}
    groups["Other"] = [n for n in names if n not in listed]
    out: list[str] = []
    for title, members in groups.items():
        if not members:
            continue
        out += [title, "-" * len(title), ""]
        for name in members:
            out += [line for line in _entry(name) if line is not None]
    return "\n".join(out) + "\n"


def _inject_api(app, docname: str, source: list[str]) -> None:
    if docname == "api":
        source[0] = source[0].replace(".. adlab-api-entries::", api_source())


_LITERAL = re.compile(r"(``.*?``)")


def _plain(text: str) -> str:
    """Text of a docstring written for people: ``|x|`` is an absolute value, not a
    substitution, and ``x, *args`` names arguments, not emphasis."""
    text = text.replace("|", "\\|")
    return re.sub(r"(^|[\s(,])\*(\*?[a-z])", r"\1\\*\2", text)


def _docstring_for_rst(app, what, name, obj, options, lines: list[str]) -> None:
    """Escapes what reStructuredText would misread in adlab's docstrings, outside literals
    and examples (``autodoc-process-docstring``)."""
    example = False
    for i, line in enumerate(lines):
        example = line.lstrip().startswith(">>>") or (example and bool(line.strip()))
        if not example:
            parts = _LITERAL.split(line)
            lines[i] = "".join(p if p.startswith("``") else _plain(p) for p in parts)


# ------------------------------------------------------------------------ the tutorials' plots
#: BokehJS, which the stored tutorials leave out (docs/render_tutorials.py): copied from the
#: installed Bokeh, the version that drew the figures' scripts, and loaded on their pages only
BOKEH_JS = ("bokeh.min.js", "bokeh-gl.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js")


def _bokeh_on_tutorials(app, pagename, templatename, context, doctree) -> None:
    if pagename.startswith("tutorials/") and pagename != "tutorials/index":
        for name in BOKEH_JS:
            app.add_js_file(f"bokeh/{name}", priority=200)


def _copy_bokeh(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import shutil

    import bokeh

    source = Path(bokeh.__file__).parent / "server" / "static" / "js"
    target = Path(app.outdir) / "_static" / "bokeh"
    target.mkdir(parents=True, exist_ok=True)
    for name in BOKEH_JS:
        shutil.copyfile(source / name, target / name)


def setup(app):
    importlib.import_module("adlab")
    app.add_directive("adlab-frameworks", FrameworksTable)
    app.add_directive("adlab-known-bugs", KnownBugs)
    app.connect("source-read", _inject_api)
    app.connect("autodoc-process-docstring", _docstring_for_rst)
    app.connect("html-page-context", _bokeh_on_tutorials)
    app.connect("build-finished", _copy_bokeh)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
