"""Turn exceptions raised inside a user's model into messages about their line.

A model is compiled from text under a synthetic file name. Registering the text
with ``linecache`` makes ordinary tracebacks show the user's code, and lets us
find the deepest frame that belongs to the model: that is the line to name.
"""

from __future__ import annotations

import linecache
import types

import jax

from .._vocab import ModelError

_TRACER_ERRORS = (
    jax.errors.TracerBoolConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)


def register_source(filename: str, text: str) -> None:
    """Make ``text`` the contents of ``filename`` for tracebacks and inspect."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (len(text), None, lines, filename)


def source_line(filename: str, lineno: int | None) -> str | None:
    if lineno is None:
        return None
    return linecache.getline(filename, lineno).rstrip("\n") or None


def _frames(tb: types.TracebackType | None):
    while tb is not None:
        yield tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next


def user_lineno(exc: BaseException, files: frozenset[str]) -> tuple[str, int] | None:
    """The deepest (file, line) of ``exc``'s traceback that lies in ``files``.

    Follows ``__cause__``/``__context__`` because JAX re-raises some errors
    from inside its own machinery.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        hits = [(f, n) for f, n in _frames(exc.__traceback__) if f in files]
        if hits:
            return hits[-1]
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def translate(
    exc: BaseException, files: frozenset[str], where: str, jit: bool = True
) -> ModelError | None:
    """A ``ModelError`` for an exception raised by model code, else None.

    ``where`` says what adlab was doing, e.g. "f, mode 'reverse', n=10".
    Exceptions with no frame in the model are adlab's or the caller's own
    and are left alone (None).
    """
    if isinstance(exc, ModelError):
        return None
    hit = user_lineno(exc, files)
    if hit is None:
        return None
    filename, lineno = hit
    line = source_line(filename, lineno)
    if isinstance(exc, _TRACER_ERRORS):
        if jit:
            hint = (
                "Python `if`/`while`/`int()` on a value that depends on the input "
                "cannot be decided while JAX traces the function for compilation. "
                "Use np.where(cond, a, b) (or jax.lax.cond) instead, or pass "
                "jit=False to run eagerly."
            )
        else:
            hint = (
                "this mode batches its evaluations with jax.vmap, so Python "
                "`if`/`while` on input values cannot be decided. Use "
                "np.where(cond, a, b), or backend='numpy' for finite differences."
            )
        message = f"control flow on a traced value in {where}"
    else:
        hint = f"fix line {lineno} of the model and run again"
        message = f"{_first_line(exc)} (in {where})"
    return ModelError(message, lineno=lineno, line=line, hint=hint)
