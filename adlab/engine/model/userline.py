"""Turn exceptions raised inside a user's model into messages about their line.

A model is compiled from text under a synthetic file name. Registering the text
with ``linecache`` makes ordinary tracebacks show the user's code, and lets us
find the deepest frame that belongs to the model: that is the line to name.

``translate`` is the one home of that translation; ``user_errors`` is the one
home of "translate it, or let it through". Advice names the interface the user
is in (``speaking_to``): ``jit=False`` in Python, ``--no-jit`` on the command
line, the "jit" toggle in the Lab.
"""

from __future__ import annotations

import contextlib
import contextvars
import linecache
import re
import types
from collections.abc import Iterator

import jax

from ..._vocab import ModelError
from ..backends.facts import BASELINE, DEFAULT, FACTS, REFERENCE
from . import explain

TRACER_ERRORS = (
    jax.errors.TracerBoolConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)

# ------------------------------------------------------------- interfaces
#: What to do, in each interface's own terms. None: that interface has no such option.
REMEDIES: dict[str, dict[str, str | None]] = {
    "python": {
        "eager": "pass jit=False to run eagerly",
        BASELINE: "mode='numeric', backend='numpy' for finite differences in plain NumPy",
        "framework": "backend='{backend}' (a sweep's variant: 'reverse({backend})')",
        "composition": "scheme='forward-over-reverse' with jit=False, which runs f eagerly",
    },
    "cli": {
        "eager": "add --no-jit to run eagerly",
        BASELINE: "--modes 'numeric(numpy)' for finite differences in plain NumPy",
        "framework": "a variant such as --modes 'reverse({backend})'",
        "composition": "--modes '{mode}[forward-over-reverse]' with --no-jit, which runs f eagerly",
    },
    # adlab accuracy traces every scheme (its step sweeps run under jax.jit) on JAX
    "accuracy": {"eager": None, BASELINE: None, "framework": None, "composition": None},
    "lab": {
        "eager": 'untick "jit" to run eagerly',
        BASELINE: 'tick "numpy" for finite differences in plain NumPy',
        "framework": 'its tick ("{label}")',
        "composition": 'tick "forward-over-reverse" and untick "jit", which runs f eagerly',
    },
}
_interface: contextvars.ContextVar[str] = contextvars.ContextVar("adlab_interface",
                                                                 default="python")  # fmt: skip


@contextlib.contextmanager
def speaking_to(interface: str) -> Iterator[None]:
    """Word the advice of errors raised inside this block for ``interface`` (see REMEDIES).

    A context variable: a thread started inside the block does not inherit it,
    so the Lab's worker says it itself.
    """
    if interface not in REMEDIES:
        raise ValueError(f"interface must be one of {sorted(REMEDIES)}, got {interface!r}")
    token = _interface.set(interface)
    try:
        yield
    finally:
        _interface.reset(token)


def remedy(kind: str) -> str | None:
    """The advice of ``kind`` ("eager", "numpy", "framework", "composition") in the current
    interface's terms; "framework" is a template of ``{backend}`` and ``{label}``,
    "composition" of ``{mode}``."""
    return REMEDIES[_interface.get()][kind]


# ---------------------------------------------------------------- backend
#: the backend, mode and order a derivative was asked of (None: not known; the backend is
#: then the failing line's own)
_running: contextvars.ContextVar[tuple[str, str | None, int] | None] = contextvars.ContextVar(
    "adlab_running", default=None
)


@contextlib.contextmanager
def running_on(backend: str, mode: str | None = None, order: int = 1) -> Iterator[None]:
    """Errors raised inside this block are said in ``backend``'s terms: where adlab
    traces f with JAX for another backend (complex step's check), a JAX message is
    not the user's framework's. ``mode`` and its ``order`` (the mode's ``Rule.order``,
    given by the caller, which knows the mode): what advice fits (a Hessian's is not a
    gradient's)."""
    token = _running.set((backend, mode, order))
    try:
        yield
    finally:
        _running.reset(token)


# --------------------------------------------------------------- locating
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


def _user_frame(exc: BaseException, files: frozenset[str]) -> types.TracebackType | None:
    """The deepest traceback entry of ``exc`` whose code lies in ``files``.

    Follows ``__cause__``/``__context__`` because JAX re-raises some errors
    from inside its own machinery.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        hit = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename in files:
                hit = tb
            tb = tb.tb_next
        if hit is not None:
            return hit
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None


# ------------------------------------------------------------ translating
_WHERE = re.compile(r" \(in (?:(?! \(in ).)*\)$", re.MULTILINE)  # the last " (in ...)"


def eqn_frames(eqn) -> tuple:
    """The traceback JAX recorded for a jaxpr equation (empty where JAX keeps none)."""
    try:
        return eqn.source_info.traceback.frames
    except AttributeError:  # pragma: no cover - JAX internals moved
        return ()


def eqn_line(eqn, files) -> tuple[str, int] | None:
    """(file, line) of the model's line that made a jaxpr equation, or None."""
    for frame in eqn_frames(eqn):
        if frame.file_name in files:
            return frame.file_name, frame.line_num
    return None


def without_where(text: str) -> str:
    """A message from ``translate`` without its "(in f, mode 'reverse', n=10)" part, so
    that one mistake met at many points reads as one."""
    return _WHERE.sub("", text, count=1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


#: a framework's own refusal of Python control flow on a value it traces or batches,
#: and how that framework does it, in words
_FRAMEWORK_TRACES = tuple((f.traces_with[0], name, f.traces_with[1])
                          for name, f in FACTS.items() if f.traces_with)  # fmt: skip


def _checked_with_jax(running: str) -> str:
    """Why a JAX message reaches a user of another framework, in words."""
    label = explain.framework_label(running)
    return f"adlab checks f by tracing it with JAX before running it on {label}"


def _other_modes(running: str) -> str:
    """The modes, in words, that need neither JAX's trace nor complex numbers on ``running``."""
    return "mode numeric (finite differences)" if running == BASELINE else explain.OTHER_MODES


def _control_flow(exc: BaseException, expr: str | None, jit: bool, running: str,
                  ran: str | None, mode: str | None, order: int
                  ) -> tuple[str, str] | None:  # fmt: skip
    """(message, hint) for Python control flow, or NumPy, on a value a framework traces,
    in the terms of the framework the user runs (``running``); None for other errors."""
    where_np = "Use np.where(cond, a, b) instead"
    eager, numpy = remedy("eager"), remedy(BASELINE)
    if order == 2:  # NumPy takes no Hessians, and a batched composition stays so
        composition = remedy("composition")
        eager = numpy = composition and composition.format(mode=mode)
    or_numpy = f", or {numpy}." if numpy else "."
    if not isinstance(exc, TRACER_ERRORS):
        text = str(exc)
        for words, framework, how in _FRAMEWORK_TRACES:
            if words in text and ran == framework:
                return ("control flow on a traced value",
                        f"{how}, so Python `if`/`while` on input values cannot be decided. "
                        f"{where_np}{or_numpy}")  # fmt: skip
        return None
    checking = running != REFERENCE  # adlab traces f with JAX for another backend
    why = f" ({_checked_with_jax(running)})"
    if isinstance(exc, jax.errors.TracerArrayConversionError):
        # numpy.asarray(x), or an `import numpy` that shadowed adlab's np
        what = f"`{expr}` passes" if expr else "this line passes"
        return (
            f"{what} a value JAX is tracing to a NumPy function" + (why if checking else ""),
            "call adlab's np instead (it is jax.numpy under JAX, numpy for backend='numpy'), "
            "and do not import numpy in the model",
        )
    if checking:
        hint = (f"{_checked_with_jax(running)}, and there Python `if`/`while` on input values "
                f"cannot be decided. {where_np}{or_numpy}")  # fmt: skip
    elif jit:
        hint = (
            "Python `if`/`while`/`int()` on a value that depends on the input cannot be "
            f"decided while JAX traces the function for compilation. {where_np}"
            + (f", or {eager}." if eager else ".")
        )
    else:
        hint = (
            "this mode batches its evaluations with jax.vmap, so Python `if`/`while` on "
            f"input values cannot be decided. {where_np}" + (f", or {numpy}." if numpy else ".")
        )
    return "control flow on a traced value", hint


def translate(
    exc: BaseException, files: frozenset[str], where: str, jit: bool = True
) -> ModelError | None:
    """A ``ModelError`` for an exception raised by model code, else None.

    ``where`` says what adlab was doing, e.g. "f, mode 'reverse', n=10".
    ``jit``: the call was compiled, so running eagerly would avoid an error of
    Python control flow on traced values (not so for vmap-batched modes).
    Exceptions with no frame in the model are adlab's or the caller's own
    and are left alone (None). The message is in the terms of the backend the
    user runs (``running_on``): where adlab traced f with JAX to check it for
    another backend, JAX's own words are left out.
    """
    if isinstance(exc, ModelError):
        return None
    if isinstance(exc, SyntaxError) and exc.filename in files:
        lineno = exc.lineno
        line = exc.text or source_line(exc.filename, lineno)
        return ModelError(f"SyntaxError: {exc.msg}", lineno=lineno, line=line,
                          hint=f"fix the syntax on line {lineno}")  # fmt: skip
    tb = _user_frame(exc, files)
    if tb is None:
        return None
    lineno = tb.tb_lineno
    line = source_line(tb.tb_frame.f_code.co_filename, lineno)
    expr = explain.failing_expression(tb)
    ran = explain.frame_framework(tb.tb_frame)
    running, mode, order = _running.get() or (None, None, 1)
    running = running or ran or DEFAULT
    hint = f"fix line {lineno} of the model and run again"
    reason = None
    gap = explain.framework_gap(exc, expr)
    flow = None if gap else _control_flow(exc, expr, jit, running, ran, mode, order)
    said = None if gap or flow else explain.jax_refusal(exc, expr, "use " + _other_modes(running))
    if gap or flow or said:
        reason, hint = gap or flow or said
    elif isinstance(exc, AttributeError):
        reason = explain.missing_attribute(exc, expr)
    elif isinstance(exc, NameError):
        reason = explain.missing_name(exc, tb.tb_frame)
        reason = reason and f"NameError: {reason}"
    elif isinstance(exc, (TypeError, ValueError)):
        reason = explain.shape_mismatch(exc, expr, tb.tb_frame)
    reason = reason or _first_line(exc)
    if running != REFERENCE and ran == REFERENCE and not flow:
        # JAX refused f while adlab checked it for another backend: say so, in NumPy's words
        reason = f"{explain.in_numpy_words(reason)} ({_checked_with_jax(running)})"
        if not (gap or said):
            hint = (
                f"write line {lineno} so that JAX can run it too, or "
                f"use {_other_modes(running)}, which run f on "
                f"{explain.framework_label(running)} alone"
            )
    message = f"{reason} (in {where})"
    return ModelError(message, lineno=lineno, line=line, hint=hint)


class _UserErrors:
    """The context manager of ``user_errors`` (a class: cheap to enter)."""

    __slots__ = ("files", "where", "jit")

    def __init__(self, files: frozenset[str], where: str, jit: bool) -> None:
        self.files, self.where, self.jit = files, where, jit

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if not isinstance(exc, Exception):
            return False
        err = translate(exc, self.files, self.where, jit=self.jit)
        if err is None:
            return False  # adlab's or the caller's own: raised as it is
        raise err from exc


def user_errors(files: frozenset[str], where: str, jit: bool = False) -> _UserErrors:
    """``with user_errors(files, where):`` raises what model code raises as a ``ModelError``
    naming its line (see ``translate``); anything else passes through unchanged."""
    return _UserErrors(files, where, jit)
