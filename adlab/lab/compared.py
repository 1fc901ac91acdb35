"""Another run beside the Lab's: ``Lab(..., compare_to="gpu-box.json")``.

The saved run (``adlab.load``; the Lab's Export or ``adlab bench --save`` of another
machine, browser or version) is drawn over the Lab's plots, each series in the colour
the same series has in this run, dashed, with a legend entry naming its machine
(``adlab.plots.overlay``). Under the plots, a table of both times and their ratio for
each series x n the two runs share (``adlab.compare_runs``, the other run as the base),
updated as points arrive.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import ipywidgets as w

from .._vocab import Record
from ..plots import LabPlots
from ..plots.overlay import overlay
from ..report.comparison import compare_runs
from ..report.runs import Run, load


class Compared:
    """The other run, drawn over ``plots``, and the table comparing it with this run's.

    Attributes:
        run: the other run (``adlab.Run``).
        widget: the table, an HTML widget (empty until this run has a point to compare).
    """

    def __init__(self, plots: LabPlots, other: str | Path | Run) -> None:
        self.run = other if isinstance(other, Run) else load(other)
        overlay(plots, self.run, self.run.name)
        self.widget = w.HTML(layout=w.Layout(width="100%"))
        self.widget.add_class("adlab-compared")
        self._shown = -1

    def update(self, records: Sequence[Record]) -> None:
        """The table for this run's ``records`` so far (redrawn when there are more)."""
        if len(records) == self._shown:
            return
        self._shown = len(records)
        if not records:
            self.widget.value = f"<p>Dashed: {self.run.name}. Run to compare with it.</p>"
            return
        result = compare_runs(self.run, Run(records, dict(records[0].env)))
        self.widget.value = (f"<p><b>This run against {self.run.name}</b> (dashed in the "
                             f"plots)</p>{result._repr_html_()}")  # fmt: skip
