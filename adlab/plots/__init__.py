"""The plotting layer: Bokeh figures built from records. No widgets here.

- ``adlab.plots.live``: the Lab's four figures and table, streamed point by point
  (``rows``: records as plot columns; ``colors``: one color per series; ``slots``,
  ``axes``, ``table``: its parts).
- ``adlab.plots.figures``: static figures of finished results for the tutorials,
  and ``show`` to draw one inline (offline) in a notebook.

Only this package and ``adlab.lab`` import Bokeh; the engine and the
measurement layer never do.
"""

from . import figures as figures
from .colors import assign_colors as assign_colors
from .colors import series_color as series_color
from .live import LabPlots as LabPlots
from .rows import ERROR_FLOOR as ERROR_FLOOR
from .rows import MIN_STEP_DRAWN as MIN_STEP_DRAWN
