"""One look per series, the same in the Lab and in every tutorial figure.

A series' color is its mode's (reverse is always red), its marker and line dash
its framework's (JAX circles on solid lines, PyTorch triangles on dash-dots,
...), both read from its label with the series syntax
(``adlab.measure.series``) or from its records. Labels that do not spell a
variant exactly (a series on another model, "mlp: reverse"; "reverse (jit)")
take palette colors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bokeh.palettes import Category10_10

from ..engine.backends import DEFAULT, FACTS
from ..measure.series import Series, parse_variant

_MODE_COLORS = {
    "forward": Category10_10[0],
    "reverse": Category10_10[3],
    "numeric": Category10_10[2],
    "complex-step": Category10_10[4],
}
#: one marker and one line dash per framework: with the mode's color they name a series
FRAMEWORK_LOOKS: dict[str, tuple[str, str]] = {
    name: (f.marker, f.dash) for name, f in FACTS.items()
}
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
    """The color of a plain variant's mode, else None (a sparse or checkpointed one is
    drawn beside its plain mode, on the same framework: it takes a color of its own)."""
    v = _series(label)
    plain = v is not None and not v.sparse and not v.checkpoint
    return _MODE_COLORS.get(v.mode) if plain else None


def framework_of(label: str) -> str:
    """The framework a label names ("reverse(torch)": "torch"); JAX when it names none."""
    v = _series(label)
    return (v.backend if v is not None else None) or DEFAULT


def framework_look(framework: str | None) -> tuple[str, str]:
    """(marker, line dash) of a framework's series; JAX's for one it does not know."""
    return FRAMEWORK_LOOKS.get(framework or DEFAULT, FRAMEWORK_LOOKS[DEFAULT])


def series_color(label: str, index: int) -> str:
    """A stable color: by mode for a plain variant, else palette entry ``index`` (past the
    mode colors)."""
    return mode_color(label) or Category10_10[(5 + index) % 10]


def assign_colors(
    labels: Sequence[str],
    given: Mapping[str, str] | None = None,
    frameworks: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A color per label such that no two labels share both color and framework: the mode's
    color for a plain variant ("reverse", "numeric[central]", "reverse(torch)"), else the
    next unused palette color. ``frameworks``: label -> framework (default: read from
    the label)."""
    out = dict(given or {})

    def framework(label: str) -> str:
        return (frameworks or {}).get(label) or framework_of(label)

    used = {(c, framework(lab)) for lab, c in out.items()}
    for label in labels:  # first the plain variants, so that they keep their mode's color
        color = mode_color(label)
        if label not in out and color is not None and (color, framework(label)) not in used:
            out[label] = color
            used.add((color, framework(label)))
    taken = {c for c, _ in used}
    for label in labels:
        if label not in out:
            color = next((c for c in Category10_10 if c not in taken), Category10_10[0])
            out[label] = color
            taken.add(color)
    return out
