"""Buffers of one element, kept in variables: a scalar as a careful person writes it.

A jaxpr's scalars (a sum's result, a loop's step size, each value of a scalar model such
as particle's) are one-element buffers in the emitted code: every operation on them a
bounds-checked store and a load from a typed array, which V8 cannot keep in a register
(another array may share the bytes). Where the body reads and writes such a buffer only
at its element 0 (``B7[0]``, ``B7[i]`` in a one-element piece ``{ const i = 0; ... }``,
``B7.fill(e)``), this pass rewrites it as a variable ``B7v`` (``emit`` declares it) and
drops the buffer from the count (``code.Code.forget``). A buffer read otherwise (a row
read in place, a copy with ``set``, a scan's trade of buffers) stays a buffer.
"""

from __future__ import annotations

import re


def scalars(body: list[str], names: list[str]) -> list[str]:
    """The buffers among ``names`` (each of one element) that ``body`` uses only at element
    0; ``body`` is rewritten in place, each such ``B`` read and written as ``Bv``."""
    done = []
    for name in names:
        new = [_rewritten(line, name) for line in body]
        if any(line is None for line in new):
            continue
        body[:] = new
        done.append(name)
    return done


def _rewritten(line: str, name: str) -> str | None:
    """``line`` with the one-element buffer ``name`` as the variable ``{name}v``; None where
    it uses it otherwise (a comment, the model's line, is left as it is)."""
    if line.lstrip().startswith("//") or not re.search(rf"\b{name}\b", line):
        return line
    text = _fills(line, name)
    text = re.sub(rf"\b{name}\[0\]", f"{name}v", text)
    if re.search(rf"\b{name}\[i\]", text):  # only in a piece of one element, at 0
        if not re.match(r"\s*\{ const i = 0; ", text) or "for (" in text:
            return None
        text = re.sub(rf"\b{name}\[i\]", f"{name}v", text)
    return None if re.search(rf"\b{name}\b", text) else text


def _fills(line: str, name: str) -> str:
    """``name.fill(e);`` as ``{name}v = e;`` (``e`` up to its matching parenthesis)."""
    head = f"{name}.fill("
    at = line.find(head)
    while at >= 0 and (at == 0 or not (line[at - 1].isalnum() or line[at - 1] in "_$")):
        depth, k = 1, at + len(head)
        while k < len(line) and depth:
            depth += {"(": 1, ")": -1}.get(line[k], 0)
            k += 1
        if depth or line[k : k + 1] != ";":
            return line  # not a statement of its own: left for the caller to refuse
        line = f"{line[:at]}{name}v = {line[at + len(head) : k - 1]}{line[k:]}"
        at = line.find(head)
    return line
