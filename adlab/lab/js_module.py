"""The Lab's Export JS: the gradient of the model being edited, as the ticked ``js`` series
takes it, written as one standalone JavaScript module (``adlab.export_js``) for a web page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from ..engine.backends import JAVASCRIPT
from ..engine.backends.js.export_programs import EXPORTS
from ..engine.model.source import Model
from ..report.export_js import export_js


def js_mode(modes: Sequence[str], frameworks: Sequence[str]) -> str | None:
    """The mode of the ticked ``js`` series a module is written for (reverse where it is
    ticked), or None where ``js`` or both modes are unticked."""
    if JAVASCRIPT not in frameworks:
        return None
    return next((m for m in EXPORTS if m in modes), None)  # reverse first


def write_module(model: Model | None, name: str, n: int, modes: Sequence[str],
                 frameworks: Sequence[str], folder: Path) -> Path:  # fmt: skip
    """``<folder>/<name>.grad.mjs``: the model's f and gradient at n, in the ticked js
    series' mode.

    Raises:
        ValueError: no js series in reverse or forward mode is ticked.
        ModelError: the model cannot be exported (at its line).
    """
    if model is None:
        raise ValueError("the model does not run yet: fix the line the editor marks first")
    mode = js_mode(modes, frameworks)
    if mode is None:
        raise ValueError("tick JavaScript (js) and reverse or forward mode: Export JS writes "
                         "the gradient that series runs")  # fmt: skip
    source = export_js(model, mode, n=n, command=f"the Lab's Export JS: {name}, {mode}, n={n}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.grad.mjs"
    path.write_text(source, encoding="utf-8")
    return path


def said(future: Future) -> str:
    """The Lab's status once ``write_module`` has run: where the module went, or why not."""
    exc = future.exception()
    if exc is not None:
        return f"Export JS failed: {exc}"
    path = future.result()
    here = Path.cwd()
    shown = path.relative_to(here) if path.is_relative_to(here) else path
    least = re.search(r"^// Any size: n >= (\d+)", path.read_text(encoding="utf-8"), re.M)
    sizes = f"any n from {least[1]}" if least else "this n only (see its header)"
    return (f"Wrote {shown}: f and its gradient as one JavaScript module for a web page, "
            f"for {sizes} (serve its folder, e.g. python -m http.server).")  # fmt: skip
