"""The Lab's model editor: CodeMirror 6 in an anywidget; line numbers, the error's line marked.

The JavaScript is ``static/editor.js``, built from ``js/editor/`` and committed, so the
Lab needs no network and installing adlab needs no npm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

#: the built bundle (js/editor/build.mjs writes it)
BUNDLE = Path(__file__).parent / "static" / "editor.js"


class CodeEditor(anywidget.AnyWidget):
    """A Python code editor; ``value`` reaches the kernel when the editor loses focus.

    ``error_line`` (1-based; 0 for none) gets a tinted background and a marker
    in the gutter. Setting ``value`` from Python replaces the text, keeping the
    cursor where the change allows; undo history starts afresh (the text is a
    new document: Reset, another model).
    """

    _esm = BUNDLE
    value = traitlets.Unicode("", help="the text").tag(sync=True)
    error_line = traitlets.Int(0, min=0, help="the line to mark as wrong, 1-based; 0 = none").tag(
        sync=True
    )
    height = traitlets.Unicode("300px", help="CSS height of the editor").tag(sync=True)

    def __init__(self, value: str = "", **kwargs: Any) -> None:
        super().__init__(value=value, **kwargs)
