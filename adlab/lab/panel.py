"""The Lab's controls beside the editor: the choices in tabs, Run and the status outside.

As one column, seven frameworks, six second-order boxes, sparse, checkpoint, TF.js's
device and the options ran past the bottom of a 1400x1000 window, and Run and the plots
with them. So the choices a person sets once per question are grouped in tabs (each
tab's title counts what is ticked in it, so a hidden tick is not forgotten), and the
model, n, Run and the status line stay in view. Layout only: ``view.Lab`` builds the
widgets and links them.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from .choices import row
from .modes import FIRST_ORDER, SECOND_ORDER

#: the tabs' titles, in order
TABS = ("Modes", "Second order", "Frameworks", "Options")


def controls(lab: Any) -> w.VBox:
    """The controls column of ``lab`` (a ``view.Lab`` whose widgets are built)."""
    modes = lab.mode_checkboxes
    pages = [
        w.VBox([
            row([modes[m] for m in FIRST_ORDER]),
            w.HBox([w.HTML("<b>Sparse</b>&nbsp;"), lab.sparse_toggle]),
            lab.checkpoint_row,
        ]),
        w.VBox([
            row([modes[m] for m in SECOND_ORDER]),
            w.HTML("in each ticked composition:"),
            row(lab.composition_checkboxes.values()),
        ]),
        w.VBox([row(lab.framework_checkboxes.values()), lab.device_toggle,
                lab.jaxjs_device_toggle, lab.page_runner]),  # fmt: skip
        w.VBox([lab.scheme_dropdown, lab.jit_toggle, lab.precision_toggle, lab.compile_toggle]),
    ]  # fmt: skip
    tabs = w.Tab(children=pages, titles=TABS, layout=w.Layout(width="100%"))
    tabs.add_class("adlab-tabs")
    lab.tabs = tabs
    _count_ticks(lab, tabs)
    return w.VBox(
        [
            w.HBox([lab.model_dropdown, lab.reset_button]),
            lab.n_slider,
            tabs,
            _buttons(lab.run_button, lab.stop_button, lab.export_button, lab.export_js_button),
            lab.progress_bar,
            lab.status_label,
        ],
        layout=w.Layout(width="40%", min_width="360px", padding="0 0 0 10px"),
    )


def _buttons(*buttons: w.Button) -> w.HBox:
    """The buttons in a row, each as wide as its label: four fit the column whole, where
    ipywidgets' fixed width would cut the last one's label short."""
    for b in buttons:
        b.layout.width, b.layout.flex = "auto", "0 0 auto"
    return w.HBox(list(buttons))


def tab_titles(modes: list[str], compositions: list[str], frameworks: list[str]) -> tuple:
    """The tabs' titles, each with how many of its choices are ticked."""
    first = [m for m in modes if m in FIRST_ORDER]
    second = [m for m in modes if m in SECOND_ORDER]
    counts = (len(first), len(second) * len(compositions), len(frameworks), None)
    return tuple(t if c is None else f"{t} ({c})" for t, c in zip(TABS, counts, strict=True))


def _count_ticks(lab: Any, tabs: w.Tab) -> None:
    s = lab.state

    def update(_change: dict | None = None) -> None:
        tabs.titles = tab_titles(s.modes, s.compositions, s.frameworks)

    s.observe(update, ["modes", "compositions", "frameworks"])
    update()
