"""The shared vocabulary of adlab: the words every other module uses.

Kept in one place (as optax's ``base.py`` does) so that a reader meets each
concept once, before anything uses it.
"""

from __future__ import annotations

from typing import Literal

#: How a derivative is taken. ``numeric`` is finite differences.
Mode = Literal["forward", "reverse", "numeric", "complex-step"]
MODES: tuple[str, ...] = ("forward", "reverse", "numeric", "complex-step")

#: Finite-difference schemes for ``mode="numeric"``.
Scheme = Literal["forward", "central", "richardson"]
SCHEMES: tuple[str, ...] = ("forward", "central", "richardson")

#: Floating-point precision of one call. Set per call, never globally.
Precision = Literal["float32", "float64"]
PRECISIONS: tuple[str, ...] = ("float32", "float64")

#: Where the arithmetic runs. ``numpy`` is the framework-free baseline.
Backend = Literal["jax", "numpy"]
BACKENDS: tuple[str, ...] = ("jax", "numpy")


class ModelError(ValueError):
    """A problem in the user's model, pointing at the user's own line.

    Attributes:
        lineno: line number in the model source, or None when unknown.
        line: the text of that line, or None.
        hint: what to do next.
    """

    def __init__(
        self,
        message: str,
        *,
        lineno: int | None = None,
        line: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.lineno = lineno
        self.line = line
        self.hint = hint
        self.reason = message
        text = message
        if lineno is not None:
            text = f"line {lineno}: {message}"
            if line:
                text += f"\n    {lineno} | {line.strip()}"
        if hint:
            text += f"\n  What to do: {hint}"
        super().__init__(text)
