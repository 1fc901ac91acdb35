"""The Lab: an interactive bench in a notebook (``adlab.Lab()``).

``state.py`` holds the logic (traitlets, no widgets); ``view.py`` is the
ipywidgets skin. ``Lab`` is imported lazily so that the state can be used
(and tested) without importing ipywidgets, Bokeh or jupyter_bokeh.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Lab", "LabState"]


def __getattr__(name: str) -> Any:
    if name == "Lab":
        from .view import Lab

        return Lab
    if name == "LabState":
        from .state import LabState

        return LabState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
