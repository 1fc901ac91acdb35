"""BokehJS for the Lab's plots: loaded inline, from the kernel, with no internet.

jupyter_bokeh's ``BokehModel`` view calls ``window.Bokeh`` as soon as it
renders and does not load BokehJS itself; users are expected to run
``output_notebook()`` first, whose default resources come from a CDN. Without
internet (or without that boilerplate) the plots show "javascript error". So
the Lab publishes BokehJS inline itself, in the same output as the widget and
before it: jupyter_bokeh's JupyterLab extension runs the
``application/vnd.bokehjs_load.v0+json`` output as a script, synchronously,
before the widget's view is created.

It is published on every display of a Lab, not once per kernel: after a
browser reload the page has no BokehJS, and a Lab displayed again in a fresh
cell must still render. The bundle (about 2 MB) holds only what the Lab uses:
BokehJS itself, its widgets and its tables (not MathJax or WebGL).
"""

from __future__ import annotations

from bokeh.io.notebook import load_notebook
from bokeh.resources import Resources

#: the BokehJS parts the Lab's plots need, inline (no CDN)
COMPONENTS = ["bokeh", "bokeh-widgets", "bokeh-tables"]


def inline_resources() -> Resources:
    """``bokeh.resources.INLINE``, trimmed to ``COMPONENTS``."""
    return Resources(mode="inline", components=list(COMPONENTS))


def in_kernel() -> bool:
    """True inside an IPython kernel (a notebook), where outputs reach a browser."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def publish_bokehjs() -> bool:
    """Publish inline BokehJS as a cell output; False when not in a kernel."""
    if not in_kernel():
        return False
    load_notebook(resources=inline_resources(), hide_banner=True)
    return True
