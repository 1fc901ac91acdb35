"""The Lab's plots as a widget: a ``BokehModel`` that a late view sees up to date."""

from __future__ import annotations

from typing import Any

from bokeh.core.json_encoder import serialize_json
from jupyter_bokeh import BokehModel

#: the Bokeh attributes a person changes in the browser, which the kernel takes back
_FROM_BROWSER = frozenset({"start", "end", "visible", "muted", "indices", "line_indices", "active"})


class LivePlot(BokehModel):
    """A ``BokehModel`` whose state, when a frontend asks for it, is the current one.

    ``BokehModel`` sends its document once and then only patches. A view
    created later (the same Lab displayed again, or a browser tab reopened on
    a running kernel) would start from the first snapshot, without the points
    streamed since. Serialising the document afresh in ``get_state`` fixes that.
    """

    _stale = False

    def _sync_model(self, model: Any, content: dict, buffers: list) -> None:
        # jupyter_bokeh 4.1's view sends back every change that applying our own patch
        # caused. Applied here again, each streamed point was doubled, and an echo of an
        # older value (a source emptied at a run's start) overwrote newer data. So only
        # what a person changes in the browser comes back: ranges (pan, zoom), legend
        # clicks (visible, muted), selections, active tools.
        if content.get("kind") == "ModelChanged" and content.get("attr") in _FROM_BROWSER:
            super()._sync_model(model, content, buffers)
        elif content.get("kind") == "MessageSent":  # Bokeh UI events (e.g. reset, tap)
            super()._sync_model(model, content, buffers)

    def _document_patched(self, event: Any) -> None:
        self._stale = True
        super()._document_patched(event)

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict:
        state = super().get_state(key, drop_defaults)
        if self._stale and "render_bundle" in state:  # a frontend asks: give it the document now
            state["render_bundle"] = serialize_json(self._model_to_traits(self._model))
        return state

    @property
    def stale(self) -> bool:
        """Patched since the whole document was last sent: a new view needs ``refresh``."""
        return self._stale

    def refresh(self) -> None:
        """Send the whole document again (views re-render from it)."""
        self._stale = False
        self.render_bundle = self._model_to_traits(self._model)
