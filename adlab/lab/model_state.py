"""The model the Lab edits, as state: choosing a model, its source, Reset, a broken edit.

``ModelEditing`` is the part of ``LabState`` that knows the editor's text and the
model that runs; ``LabState`` adds the runs. It needs ``LabState.__init__``'s
attributes (``lock``, ``edits``, ``_originals``, ``_quiet``), so it is not used
on its own.
"""

from __future__ import annotations

from traitlets import observe

from ..catalog import source_of
from .sources import compile_model
from .traits import LabTraits


class ModelEditing(LabTraits):
    """The model being edited: its saved edit restored, each edit checked as typed."""

    def original(self, name: str | None = None) -> str:
        """The source a model started from (the catalog's, or the one given)."""
        name = name or self.model_name
        if name not in self._originals:
            self._originals[name] = source_of(name)
        return self._originals[name]

    def _select(self, name: str) -> None:
        """Load model ``name`` into the editor: its saved edit if there is one."""
        original = self.original(name)
        saved = self.edits.load(name)
        restored = saved is not None and saved != original
        with self.lock:
            self.model_name = name
            self._set_source(saved if restored else original)
            if restored:
                where = self.edits.path(name)
                self.status = (
                    f"Restored your edit of {name} from {where.parent.name}/{where.name} "
                    "(Reset to go back to the original)."
                )
                if self.error is not None:  # a broken saved edit: run the original meanwhile
                    try:
                        self.model = compile_model(original, name)
                    except Exception:  # noqa: BLE001 - the edit's own error is what to show
                        return
                    self.status += " It does not run yet, so the original model runs meanwhile."
            elif self.error is None:
                self.status = f"Model {name}: press Run to measure."

    @observe("model_name")
    def _model_name_changed(self, change: dict) -> None:
        if self._quiet or change["new"] == change["old"]:
            return
        self._select(change["new"])

    def set_source(self, text: str) -> None:
        """Replace the model source, as if typed into the editor."""
        self.source = text

    def reset_source(self) -> None:
        """Go back to the original source and forget the saved edit."""
        with self.lock:
            self.edits.drop(self.model_name)
            self.source = self.original()
            self.status = f"Back to the original {self.model_name}."

    @observe("source")
    def _source_changed(self, change: dict) -> None:
        if self._quiet:
            return
        with self.lock:
            note = ""
            try:
                self.edits.save(self.model_name, change["new"], self.original())
            except OSError as exc:
                note = f" (Your edit could not be saved: {exc})"
            self._set_source(change["new"], note)

    def _set_source(self, text: str, note: str = "") -> None:
        """Compile ``text``; on success it becomes the model, else the error is shown."""
        if self.source != text:
            quiet, self._quiet = self._quiet, True
            try:
                self.source = text
            finally:
                self._quiet = quiet
        try:
            model = compile_model(text, self.model_name)
        except Exception as exc:  # ModelError mostly; anything else is shown too
            self.error = exc
            where = f"line {exc.lineno}" if getattr(exc, "lineno", None) else "the model"
            kept = " The last good model still runs." if self.model is not None else ""
            self.status = f"Error in {where}.{kept}{note}"
            return
        self.error = None
        self.model = model
        if not self._quiet and not self.running:
            self.status = "Model updated: press Run to measure it." + note
