"""A fixed pool of series for the Lab's live figures, reused run after run.

Adding glyphs to a shown Bokeh document costs a full recount of its models
(about 0.1 s each) and a patch per change; a fixed pool costs nothing per
run: a new run only renames and recolors the slots it uses.
"""

from __future__ import annotations

import contextlib
from typing import Any

from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, LegendItem

from .rows import empty


class Slot:
    """One series' source, glyphs (by part: "time", "compile", ...) and legend items (by
    figure: "time", "memory", ...)."""

    def __init__(self, source: ColumnDataSource, glyphs: dict[str, list],
                 items: dict[str, LegendItem]):  # fmt: skip
        self.source = source
        self.glyphs = glyphs
        self.items = items
        self.label: str | None = None

    def assign(self, label: str, look: tuple[str, str, str], show_compile: bool) -> None:
        """Take series ``label``: its name in the legends, its look (color, marker, line
        dash: ``colors``); compile glyphs shown as asked, with a marker of their own."""
        self.label = label
        color, marker, dash = look
        for part, glyphs in self.glyphs.items():
            for g in glyphs:
                g.glyph.line_color = color
                if hasattr(g.glyph, "fill_color"):
                    g.glyph.fill_color = color
                if not hasattr(g.glyph, "marker"):
                    g.glyph.line_dash = dash
                elif part != "compile":
                    g.glyph.marker = marker
                g.visible = show_compile if part == "compile" else True
        for item in self.items.values():
            item.label = value(label)  # a plain string would name a data column
            item.visible = True

    def release(self) -> None:
        """Free the slot: no points, no legend entry."""
        self.label = None
        self.source.data = empty(list(self.source.data))
        for item in self.items.values():
            item.visible = False


def frozen(layout: Any):
    """Defer the document's model recount while several models are added."""
    doc = getattr(layout, "document", None)
    return doc.models.freeze() if doc is not None else contextlib.nullcontext()
