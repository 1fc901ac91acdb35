"""Buffers that only carry a value from one element of a loop to the next, made variables.

A joined loop (``code.Code.loop``) may write a buffer at element i and read it back at
i - 1 only, nothing else reading it (ode's stages: each reads the one before at i - 1).
As a careful person writes it, that value lives in a variable handed from one iteration
to the next, not in memory: no store, no bounds-checked load, no buffer. This pass finds
such buffers in the emitted body and rewrites them so (``emit``), and drops them from the
count of the program's buffers (``code.Code.forget``), which stays what it allocates.
"""

from __future__ import annotations

import re

#: a piece of a joined loop, one line: its head, its statements, its closing brace
_PIECE = re.compile(r"^(\s*)(for \(let i = \d+; i < \d+; i\+\+\) \{|\{ const i = \d+;)(.*) \}$")


def registers(body: list[str], names: list[str]) -> list[str]:
    """The buffers among ``names`` that ``body`` writes at i and reads at i - 1 only,
    in the pieces of one ascending loop, each in every piece; ``body`` is rewritten in
    place: the buffer B becomes ``Bc`` (this element's) and ``Bp`` (the one before's)."""
    done = []
    for name in names:
        at = [k for k, line in enumerate(body) if re.search(rf"\b{name}\b", line)]
        if not at or at != list(range(at[0], at[-1] + 1)):
            continue
        pieces = [_PIECE.match(body[k]) for k in at]
        if not all(pieces) or not _whole(body, at):
            continue
        store, load = f"{name}[i] = ", f"{name}[i - 1]"
        rest = [m.group(3).replace(store, "").replace(load, "") for m in pieces]
        if any(m.group(3).count(store) != 1 or re.search(rf"\b{name}\b", r)
               for m, r in zip(pieces, rest, strict=True)):  # fmt: skip
            continue
        for k, m in zip(at, pieces, strict=True):
            text = m.group(3).replace(store, f"const {name}c = ").replace(load, f"{name}p")
            body[k] = f"{m.group(1)}{m.group(2)}{text} {name}p = {name}c; }}"
        body.insert(at[0], f"let {name}p = 0;")
        done.append(name)
    return done


def _whole(body: list[str], at: list[int]) -> bool:
    """Whether the lines ``at`` are all the pieces of their loop (the lines around are
    not pieces too: a piece without the buffer's store would break the hand-over)."""
    before, after = at[0] - 1, at[-1] + 1
    return not (before >= 0 and _PIECE.match(body[before])) and not (
        after < len(body) and _PIECE.match(body[after]))  # fmt: skip
