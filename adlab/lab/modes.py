"""The Lab's modes as sweep variants, and which of them the ticked frameworks cannot run.

Each ticked mode runs on each ticked framework. A second-order mode (Hessian,
HVP) runs once per ticked composition ("forward-over-reverse", ...); the
sparse choice runs the modes that have a sparse form (forward, reverse,
Hessian) from their sparsity pattern instead of densely, or both ways, on the
frameworks whose programs a pattern is read from (JAX); the others run them
densely whatever the choice. The variants are spelled as a sweep spells them
(``hessian[reverse-over-forward]``, ``forward(sparse)``), so they are the series'
labels too.

What the ticked frameworks cannot run at all is said here from what is known
without importing a framework (a mode's registered ``backends``, sparse's
``SPARSE_BACKENDS``): its checkbox is greyed out with the reason. A pair that fails
only once the framework is loaded is left out at run time (``plan``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ..engine.backends import DEFAULT, KNOWN, REFERENCE
from ..engine.model.source import Model
from ..engine.modes import get_rule
from ..engine.modes.hessian import NAMES
from ..engine.sparse import SPARSE_BACKENDS
from ..engine.sparse import sparse_refusal as engine_sparse_refusal
from ..measure.series import SPARSE_MODES, Series, parse_variant

#: the first-order modes a Lab measures by default
FIRST_ORDER: tuple[str, ...] = ("forward", "reverse", "numeric", "complex-step")
#: the second-order modes: each runs once per ticked composition
SECOND_ORDER: tuple[str, ...] = ("hessian", "hvp")
#: the compositions of a second-order mode, "outer-over-inner" (the engine's names)
COMPOSITION_CHOICES: tuple[str, ...] = NAMES
#: dense: as usual; sparse: forward, reverse and Hessian from their pattern; both: each way
SPARSE_CHOICES: tuple[str, ...] = ("dense", "sparse", "both")
#: reverse mode's checkpointing of a model's loops, as the series syntax writes it
#: (``reverse(checkpoint=sqrt)``; ``prepare(..., checkpoint=)``'s False, True, "sqrt"): each
#: ticked one is a reverse series of its own, so memory and time are seen side by side
CHECKPOINT_CHOICES: tuple[str, ...] = ("false", "true", "sqrt")
_CHECKPOINT_VALUES = {"false": False, "true": True, "sqrt": "sqrt"}


def variants(modes: Sequence[str], frameworks: Sequence[str], scheme: str,
             compositions: Sequence[str], sparse: str = "dense",
             checkpoints: Sequence[str] = ()) -> list[str]:  # fmt: skip
    """The bench variants (= series labels) of the Lab's choices, framework by framework;
    dense reverse once per ticked ``checkpoints`` choice (none ticked: as usual)."""
    out = []
    for framework in frameworks:
        for mode in modes:
            if mode in SECOND_ORDER:
                brackets: Sequence[str | None] = compositions
            else:
                brackets = [scheme if mode == "numeric" else None]
            ways = [False]
            if mode in SPARSE_MODES and framework in SPARSE_BACKENDS and sparse != "dense":
                ways = [True] if sparse == "sparse" else [False, True]
            for bracket in brackets:
                for way in ways:
                    if not _pairs(mode, bracket, way):
                        continue
                    for checkpoint in (checkpoints or ["false"]) if _keeps(mode, way) else [None]:
                        out.append(variant(mode, bracket, framework, sparse=way,
                                           checkpoint=checkpoint))  # fmt: skip
    return out


def _keeps(mode: str, sparse: bool) -> bool:
    """Whether the mode keeps a tape that checkpointing can shrink: dense reverse."""
    return mode == "reverse" and not sparse


def nested(chosen: Sequence[str]) -> list[str]:
    """For a model that takes its own derivative (``grad``: particle, saddle): each forward
    or reverse variant over each inner mode, GradBench's four combinations as series
    ("reverse" is rr, "reverse(inner-forward)" rf, "forward" fr, "forward(inner-forward)" ff)."""
    out = []
    for spec in chosen:
        out.append(spec)
        s = parse_variant(spec)
        # a checkpointed reverse is compared with plain reverse, not nested once more
        plain = not s.sparse and not s.checkpoint
        if s.mode in ("forward", "reverse") and plain and s.inner in (None, "reverse"):
            out.append(dataclasses.replace(s, inner="forward").spelled({"backend": DEFAULT}))
    return out


def variant(mode: str, bracket: str | None = None, framework: str = DEFAULT, *,
            sparse: bool = False, checkpoint: str | None = None) -> str:  # fmt: skip
    """The bench variant (and series label) of a mode on a framework, spelled by ``Series``
    ("reverse", "numeric[central](numpy)", "hessian[forward-over-reverse]",
    "forward(sparse)", "reverse(checkpoint=sqrt)"); ``bracket``: numeric's scheme or a
    second-order composition, ignored by the other modes; ``checkpoint``: one of
    ``CHECKPOINT_CHOICES`` ("false" or None: none)."""
    bracket = bracket if mode == "numeric" or mode in SECOND_ORDER else None
    series = Series(mode, bracket, backend=framework, sparse=sparse or None,
                    checkpoint=_CHECKPOINT_VALUES[checkpoint or "false"] or None)  # fmt: skip
    return series.spelled({"backend": DEFAULT})


def checkpoint_refusal(model: Model | None, modes: Iterable[str]) -> Refusal | None:
    """Why the checkpoint choice does nothing for ``model`` with ``modes`` ticked; None
    if it does: it trades a loop's tape for recomputing it, in reverse mode."""
    if model is None or not model.uses_loops:
        return Refusal("models with loops", "Checkpointing recomputes a loop's steps in "
                       "the reverse pass instead of keeping them all: this model has no "
                       "fori_loop or scan (ode, lstm and particle have)")  # fmt: skip
    if "reverse" not in modes:
        return Refusal("tick reverse", "Checkpointing is reverse mode's: tick reverse to "
                       "measure it")  # fmt: skip
    return None


def nothing_chosen(modes: Iterable[str]) -> str:
    """What to do when the ticks make no variant at all."""
    text = "Choose at least one mode and one framework to measure"
    if set(modes) & set(SECOND_ORDER):
        text += ", and a composition that Hessian or HVP takes (complex step: Hessian only)"
    return text + "."


def _pairs(mode: str, composition: str | None, sparse: bool) -> bool:
    """Whether a composition goes with this mode: complex step gives no HVP, so neither an
    HVP nor a sparse Hessian (taken in HVPs). Said on the composition's checkbox, so
    such a pair is not offered; a framework's lacks are said when the run starts."""
    if mode not in SECOND_ORDER:
        return True
    if composition not in get_rule(mode).schemes:
        return False
    return not (sparse and engine_sparse_refusal(mode, composition, REFERENCE))


class Refusal(NamedTuple):
    """Why a choice does nothing with the others as they are: ``hint`` in a few words for
    its label ("tick JAX"), ``why`` in full for its tooltip."""

    hint: str
    why: str


def mode_refusal(mode: str, frameworks: Iterable[str]) -> Refusal | None:
    """Why none of ``frameworks`` can run ``mode``; None if one can, or if only a run can
    tell (a framework's lack of a direction of AD is known once it is loaded)."""
    what = {"hessian": "The Hessian", "hvp": "The Hessian-vector product"}.get(mode, mode)
    return _refusal(get_rule(mode).backends, frameworks, what)


def sparse_refusal(frameworks: Iterable[str]) -> Refusal | None:
    """Why none of ``frameworks`` runs a sparse derivative; None if one does."""
    return _refusal(SPARSE_BACKENDS, frameworks, "A sparse derivative (its pattern is read "
                    "from a JAX program)")  # fmt: skip


def composition_refusal(composition: str, modes: Iterable[str]) -> Refusal | None:
    """Why ``composition`` does nothing with the ticked ``modes``; None if it does."""
    second = set(modes) & set(SECOND_ORDER)
    if not second:
        return Refusal("tick Hessian or HVP", "A composition is how a second derivative "
                       "nests two modes: tick Hessian or HVP to measure it")  # fmt: skip
    if composition not in get_rule("hvp").schemes and second == {"hvp"}:
        return Refusal("Hessian only", f"{composition} gives the full Hessian only, "
                       "not a Hessian-vector product: tick Hessian to measure it")  # fmt: skip
    return None


def _refusal(only: Sequence[str] | None, frameworks: Iterable[str], what: str
             ) -> Refusal | None:  # fmt: skip
    ticked = list(frameworks)
    if only is None or set(ticked) & set(only):
        return None
    labels = [KNOWN[b].label for b in only]
    names = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} or {labels[-1]}"
    # the label's hint is short: what to tick, or, of many, which ticked ones cannot
    if not ticked:
        hint = "tick a framework"
    elif len(labels) <= 2:
        hint = f"tick {names}"
    else:
        hint = f"not on {' or '.join(KNOWN[f].label for f in ticked)}"
    which = names if len(labels) == 1 else "one of them"
    return Refusal(hint, f"{what} runs on {names} only yet: tick {which} to measure it")


def on_device(variant: str, devices: Mapping[str, str]) -> str:
    """A variant of a framework in ``devices`` on the device chosen for it
    (``reverse(tfjs,wasm)``, ``reverse(jaxjs,webgpu)``); on its default device (its facts'
    first), and others, as they are."""
    for framework, device in devices.items():
        default = KNOWN[framework].devices[0]
        if device != default and f"({framework}" in variant and variant.endswith(")"):
            return f"{variant[:-1]},{device})"
    return variant
