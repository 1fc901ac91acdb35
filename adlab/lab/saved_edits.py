"""The user's edits of a model, kept in ``.adlab/<model>.py`` beside the notebook.

A kernel restart or a closed browser tab then loses nothing: the next Lab for
that model starts from the saved text. Writes are atomic (a temporary file
renamed over the old one), so a crash never leaves half a model behind.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

DIRNAME = ".adlab"


def _safe(name: str) -> str:
    return re.sub(r"[^\w\-]", "_", name) or "model"


class Edits:
    """Saved edits under one folder (``.adlab`` in the working directory by default)."""

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.folder = Path(folder) if folder is not None else Path.cwd() / DIRNAME

    def path(self, name: str) -> Path:
        """Where the edit of model ``name`` is kept."""
        return self.folder / f"{_safe(name)}.py"

    def load(self, name: str) -> str | None:
        """The saved edit of ``name``, or None."""
        try:
            return self.path(name).read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            return None

    def save(self, name: str, text: str, original: str | None) -> Path | None:
        """Keep ``text`` for ``name``; an edit equal to ``original`` is dropped instead.

        Returns the file written, or None when there is nothing to keep.
        Raises OSError when the folder cannot be written.
        """
        if original is not None and text == original:
            self.drop(name)
            return None
        target = self.path(name)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{target.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the file from a shared notebook
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def drop(self, name: str) -> None:
        """Forget the saved edit of ``name``."""
        self.path(name).unlink(missing_ok=True)
