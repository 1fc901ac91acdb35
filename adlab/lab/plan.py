"""Which of a run's variants can run, and in words why the others cannot.

The Lab runs each ticked mode on each ticked framework. Some of those
pairs cannot run: NumPy has no AD, a framework may lack a direction of AD, a
framework may not be installed. Such a pair is left out of the sweep and the
engine's own reason is shown (``Series.resolve`` is where a sweep refuses it
too); nothing is emulated. Resolving imports the framework, so this runs on
the worker thread, at the start of a run that uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..measure.series import parse_variant


@dataclass(frozen=True)
class Plan:
    """The variants to measure, and those left out: (variant, framework, reason)."""

    variants: tuple[str, ...]
    left_out: tuple[tuple[str, str, str], ...]

    def note(self) -> str:
        """The left-out variants in one note, one reason per framework (the first met:
        e.g. NumPy's forward and reverse are left out for the same lack of AD)."""
        if not self.left_out:
            return ""
        by_framework: dict[str, list[tuple[str, str]]] = {}
        for spec, framework, why in self.left_out:
            by_framework.setdefault(framework, []).append((spec, why))
        parts = []
        for pairs in by_framework.values():
            specs = [spec for spec, _ in pairs]
            names = specs[0] if len(specs) == 1 else f"{', '.join(specs[:-1])} and {specs[-1]}"
            parts.append(f"{names}: {pairs[0][1]}")
        return "Not run: " + "; ".join(parts) + "."


def plan(variants: Sequence[str], **defaults: object) -> Plan:
    """Split ``variants`` into those a sweep with ``defaults`` (``scheme``, ``jit``,
    ``precision``, ``backend``) can run and those it refuses, each with its reason."""
    keep, left_out = [], []
    for spec in variants:
        v = parse_variant(spec)
        try:
            v.resolve(**defaults)
        except (ValueError, ImportError) as exc:  # ImportError: a framework not installed
            framework = str(v.backend or defaults.get("backend"))
            left_out.append((spec, framework, _reason(exc)))
            continue
        keep.append(spec)
    return Plan(tuple(keep), tuple(left_out))


def _reason(exc: BaseException) -> str:
    """The error's first line, without the advice in parentheses that speaks to a caller of
    ``prepare`` ("use backend='jax' ... for 'forward'"): in the Lab a tick does that."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    head, _, advice = text.rpartition(" (")
    return head if head and advice.startswith(("use ", "or ")) else text.rstrip(".")
