"""One color per series, the same in the Lab and in every tutorial figure.

A series is colored by its mode (reverse is always red), read from its label
with the series syntax (``adlab.measure.series``); the NumPy baseline has its
own color whatever its scheme. Labels that do not spell a variant exactly (a
series on another model, "mlp: reverse"; "reverse (jit)") take palette colors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bokeh.palettes import Category10_10

from ..measure.series import Series, parse_variant

_MODE_COLORS = {
    "forward": Category10_10[0],
    "reverse": Category10_10[3],
    "numeric": Category10_10[2],
    "complex-step": Category10_10[4],
}
_NUMPY_COLOR = Category10_10[1]
#: the step-size curves, one per scheme (complex step as in the series)
STEP_COLORS = {
    "forward": Category10_10[0],
    "central": Category10_10[2],
    "richardson": Category10_10[3],
    "complex-step": Category10_10[4],
}


def _series(label: str) -> Series | None:
    """The variant a label spells exactly ("reverse(eager)"), or None ("reverse (jit)")."""
    try:
        v = parse_variant(label)
    except ValueError:
        return None  # not a variant: a series on another model, a label of the user's own
    return v if v.spelled() == label else None


def mode_color(label: str) -> str | None:
    """The color of a plain variant's mode (the NumPy baseline's own), else None."""
    v = _series(label)
    if v is None:
        return None
    return _NUMPY_COLOR if v.backend == "numpy" else _MODE_COLORS.get(v.mode)


def series_color(label: str, index: int) -> str:
    """A stable color: by mode for a plain variant, else palette entry ``index`` (past the
    mode colors)."""
    return mode_color(label) or Category10_10[(5 + index) % 10]


def assign_colors(labels: Sequence[str], given: Mapping[str, str] | None = None) -> dict[str, str]:
    """A distinct color per label: the mode's color for a plain variant ("reverse",
    "numeric[central]", "reverse(eager)"), else the next unused palette color."""
    out = dict(given or {})
    used = set(out.values())
    for label in labels:  # first the plain variants, so that they keep their mode's color
        color = mode_color(label)
        if label not in out and color is not None and color not in used:
            out[label] = color
            used.add(color)
    for label in labels:
        if label not in out:
            color = next((c for c in Category10_10 if c not in used), Category10_10[0])
            out[label] = color
            used.add(color)
    return out
