"""The plotting layer: Bokeh figures built from records. No widgets here.

- ``adlab.plots.live``: the Lab's four figures and table, streamed point by point.
- ``adlab.plots.figures``: static figures of finished results for the tutorials,
  and ``show`` to draw one inline (offline) in a notebook.

Only this package and ``adlab.lab`` import Bokeh; the engine and the
measurement layer never do.
"""

from .live import ERROR_FLOOR as ERROR_FLOOR
from .live import MIN_STEP_DRAWN as MIN_STEP_DRAWN
from .live import LabPlots as LabPlots
from .live import series_color as series_color
