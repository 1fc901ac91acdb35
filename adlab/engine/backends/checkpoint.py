"""``checkpoint=``: the values the model's loops take, and what refuses them.

The loops themselves are ``_loops``'s; their docstring says what each value does.
``prepare(..., checkpoint=)`` makes its value the default of every loop in the model
that does not say (``defaulting``); a framework without checkpointing refuses True
and "sqrt" at the model's line (``NoCheckpointing``, worded by ``facts``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from .facts import checkpoint_refusal

#: the values ``checkpoint=`` takes
CHECKPOINTS = (False, True, "sqrt")


def check_checkpoint(value: Any) -> bool | str:
    """``value`` as one of ``CHECKPOINTS`` (None: False); anything else is refused."""
    if value is None or value is False or value is True or value == "sqrt":
        return value or False
    raise ValueError(f"checkpoint must be False (store every step), True (recompute each "
                     f"step in the backward pass) or 'sqrt' (keep every ~sqrt(T)-th carry, "
                     f"recompute in between), got {value!r}")  # fmt: skip


class NoCheckpointing(ValueError):
    """``checkpoint=True`` or ``"sqrt"`` on a framework that cannot recompute a step."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why

    def adlab_gap(self, expr: str | None) -> tuple[str, str]:
        """(message, hint) for the model's error at its line (``explain.framework_gap``)."""
        what = f"`{expr}`" if expr else "this loop"
        reason, _, remedy = self.why.partition(": use ")
        return f"{what}: {reason}", f"use {remedy}"


def refuse(backend: str, checkpoint: Any) -> None:
    """Raise ``NoCheckpointing`` where ``backend`` cannot honour ``checkpoint`` (a bad
    value: ValueError)."""
    why = checkpoint_refusal(backend) if check_checkpoint(checkpoint) else None
    if why:
        raise NoCheckpointing(why)


#: the loops a model gets that take ``checkpoint=``
LOOPS = ("fori_loop", "scan")
_CALLS_LOOP = re.compile(r"\b(?:fori_loop|scan)\s*\(")


def checkpoint_matters(source: str | None, checkpoint: Any) -> bool:
    """Whether ``prepare``'s ``checkpoint`` changes the f of a model of ``source``: it asks
    for recomputation (True, "sqrt"; None and False leave the loops as the source says)
    and the source calls a loop. Otherwise f, its programs and their keys are the
    default's."""
    return bool(check_checkpoint(checkpoint)) and bool(source and _CALLS_LOOP.search(source))


def defaulting(namespace: dict[str, Any], checkpoint: Any) -> dict[str, Any]:
    """``namespace`` with loops whose ``checkpoint=`` defaults to ``checkpoint`` where a
    call does not say (``prepare``'s option); itself where that is the default."""
    if not check_checkpoint(checkpoint):
        return namespace

    def bind(loop: Callable) -> Callable:
        @functools.wraps(loop)
        def with_default(*args: Any, checkpoint: Any = checkpoint, **kwargs: Any) -> Any:
            return loop(*args, checkpoint=checkpoint, **kwargs)

        return with_default

    return {**namespace, **{name: bind(namespace[name]) for name in LOOPS}}


def segment_size(n: int) -> int:
    """Steps per segment of ``"sqrt"``: ceil(sqrt(n)), so that n // size segments and a
    remainder of fewer steps cover n."""
    return math.isqrt(n - 1) + 1 if n > 1 else 1
