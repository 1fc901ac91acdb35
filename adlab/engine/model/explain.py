"""What a Python or library exception means in the terms of the model's own text.

``userline.translate`` finds the user's frame; the functions here read the
failing expression off that frame (Python 3.11 keeps the column span of every
instruction) and say what went wrong with what the user wrote: ``np.logaddexpp``
is a misspelling of ``np.logaddexp``, not an attribute missing from
``jax.numpy``; ``X.T @ w`` has shapes that do not line up, not contracting
dimensions of a ``dot_general``.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import linecache
import re
import types
from typing import Any

from ..backends.facts import FACTS, label_of
from ..backends.special import BESIDE_NP

#: operator symbols, for messages
_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@",
}  # fmt: skip
_MATMUL_CALLS = {"dot", "matmul", "inner"}
_SHAPE = re.compile(r"\(([\d, ]*)\)")


def failing_expression(tb: types.TracebackType) -> str | None:
    """The source text of the expression whose evaluation raised, in ``tb``'s frame."""
    code = tb.tb_frame.f_code
    try:
        start, end, col, end_col = list(code.co_positions())[tb.tb_lasti // 2]
    except (IndexError, ValueError):  # pragma: no cover - positions unavailable
        return None
    if None in (start, end, col, end_col):
        return None
    lines = [linecache.getline(code.co_filename, k) for k in range(start, end + 1)]
    if not all(lines):
        return None
    lines[-1] = lines[-1][:end_col]
    lines[0] = lines[0][col:]
    # an expression over several lines is quoted on one
    return re.sub(r"\s*\n\s*", " ", "".join(lines).strip()) or None


def _parse(expr: str | None) -> ast.expr | None:
    if not expr:
        return None
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None


def _suggest(name: str, choices: Any) -> str:
    names = [c for c in choices if isinstance(c, str) and not c.startswith("__")]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.7)
    return f"; did you mean '{close[0]}'?" if close else ""


# ------------------------------------------------------------------ names
def missing_attribute(exc: AttributeError, expr: str | None) -> str | None:
    """``np has no function 'logaddexpp'; did you mean 'logaddexp'?``, or None."""
    name, obj = getattr(exc, "name", None), getattr(exc, "obj", None)
    node = _parse(expr)
    if not name or obj is None:
        return None
    # the user's spelling of the object: `np` or `np.linalg`, not `jax.numpy`
    owner = None
    for sub in ast.walk(node) if node is not None else ():
        if isinstance(sub, ast.Attribute) and sub.attr == name:
            owner = ast.unparse(sub.value)
            break
    if isinstance(obj, types.ModuleType):
        owner = owner or obj.__name__
        if name in BESIDE_NP:  # np.logsumexp: SciPy's, which adlab puts beside np
            return f"{owner} has no function '{name}'; call {name}(...), provided beside np"
        return f"{owner} has no function '{name}'{_suggest(name, dir(obj))}"
    if owner is None:
        return None
    return f"`{owner}` has no attribute '{name}'{_suggest(name, dir(obj))}"


#: the frameworks whose np adlab builds as a namespace of its own (backends._namespace), by
#: the package their arrays come from
_NAMESPACED = tuple(f.package for f in FACTS.values() if f.own_namespace)
_NO_RULE = re.compile(r"\b(VJP|JVP) of (\w+) wrt argnums")  # autograd's
_NOT_TENSOR = re.compile(r"^(\w+)\(\): argument '\w+' \(position (\d+)\) must be Tensor, not (\w+)")
#: PyTorch's and TensorFlow's refusals of an operation on complex numbers (complex step)
_NO_COMPLEX = re.compile(
    r"not implemented for 'Complex(Float|Double)'|DataType complex(64|128) not in"
    r"|of complex(64|128) is not in the list of allowed values"  # TensorFlow, run eagerly
)


def framework_gap(exc: BaseException, expr: str | None) -> tuple[str, str] | None:
    """(message, hint) where a framework's ``np`` falls short of NumPy, else None.

    ``torch has no np.interp here``: a NumPy function its namespace lacks (an
    ``AttributeError`` from ``backends._namespace``); an array method NumPy has
    and the framework's arrays lack (``TensorFlow's arrays have no .sum``);
    ``autograd has no reverse-mode rule for np.interp``; ``PyTorch's np.log
    takes tensors, not Python numbers``.
    """
    words = getattr(exc, "adlab_gap", None)  # a refusal that words itself (backends._detach)
    if words is not None:
        return words(expr)
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    framework = getattr(obj, "__adlab_framework__", None)
    if isinstance(exc, AttributeError) and framework and name:
        import numpy

        if not hasattr(numpy, name):
            return None  # not NumPy's either: a misspelling (``missing_attribute``)
        label = framework_label(framework)
        other = "backend='jax'" if _jax_has(name) else "backend='numpy'"
        return (f"{framework} has no np.{name} here: {label}'s NumPy-like namespace lacks it",
                f"write it with functions {framework} has, or run this model on {other}, "
                f"which has np.{name}")  # fmt: skip
    if isinstance(exc, AttributeError) and name and obj is not None:
        import numpy

        owner = type(obj).__module__.split(".")[0]
        if owner in _NAMESPACED and hasattr(numpy.ndarray, name):
            use = f"np.{name}(...)" if hasattr(numpy, name) else "a function of np"
            return (f"{framework_label(owner)}'s arrays have no .{name} (NumPy's do)",
                    f"call {use} instead of the method; it works on every backend")  # fmt: skip
    m = _NO_RULE.search(str(exc)) if isinstance(exc, NotImplementedError) else None
    if m:
        direction = "reverse" if m.group(1) == "VJP" else "forward"
        return (f"autograd has no {direction}-mode rule ({m.group(1)}) for np.{m.group(2)}",
                "take this derivative another way: mode='numeric', the other AD mode if "
                "autograd has a rule there, or backend='jax'")  # fmt: skip
    if _NO_COMPLEX.search(str(exc)):
        label = "PyTorch" if "not implemented for" in str(exc) else "TensorFlow"
        what = f"`{expr}`" if expr else "this line"
        message = (f"{label} cannot do {what} on complex numbers, and under complex step x "
                   f"is complex (x + ih)")  # fmt: skip
        node = _parse(expr)
        if node is not None and any(isinstance(n, ast.Compare) for n in ast.walk(node)):
            return (message, "compare or clip the real part (np.real(x) > 0), or run complex "
                    "step on backend='jax' or 'numpy', which compare real parts")  # fmt: skip
        return message, f"use {OTHER_MODES}, which need no complex numbers"
    m = _NOT_TENSOR.match(str(exc)) if isinstance(exc, TypeError) else None
    if m:
        name, position, kind = m.group(1), int(m.group(2)), m.group(3)
        what = f"`{expr}`: " if expr else ""
        wrapped = _as_array(expr, name, position)
        hint = (f"make the Python {kind} an array: {wrapped}" if wrapped else
                f"make the Python {kind} an array with np.asarray(...)")  # fmt: skip
        python = _python_twin(name, kind)
        if python:
            every = "a Python list" if kind in ("list", "tuple") else "a Python number"
            hint += f"; or, where every argument is {every}, compute it in Python: {python}"
        return (f"{what}PyTorch's np.{name} takes tensors, not a Python {kind}",
                hint + " (numbers written in the source, as in np.log(2 * np.pi), are "
                "computed once when the model is built, so those work)")  # fmt: skip
    return None


#: the other modes, for an operation complex step cannot take (on a backend with AD)
OTHER_MODES = "the forward or reverse mode (exact), or numeric (finite differences)"


def framework_label(framework: str) -> str:
    """How people name ``framework`` ("PyTorch"); the name itself for one adlab lacks."""
    return label_of(framework)


def _as_array(expr: str | None, name: str, position: int) -> str | None:
    """The user's call of np.``name`` with its argument at ``position`` (from 1) made an
    array, ``np.arctan2(x, np.asarray(2.0))``; None where it cannot be found."""
    node = _parse(expr)
    for sub in ast.walk(node) if node is not None else ():
        if (isinstance(sub, ast.Call) and ast.unparse(sub.func).endswith(f".{name}")
                and len(sub.args) >= position):  # fmt: skip
            made = ast.Call(ast.Attribute(ast.Name("np"), "asarray"), [sub.args[position - 1]], [])
            call = ast.Call(sub.func, [*sub.args[: position - 1], made,
                                       *sub.args[position:]], sub.keywords)  # fmt: skip
            return ast.unparse(call)
    return None


#: NumPy's names that Python's math spells otherwise
_MATH_SPELLING = {"power": "pow", "absolute": "fabs", "arctan2": "atan2"}
#: NumPy's reductions that Python computes of a list, and how
_REDUCTIONS = {"sum": "sum", "max": "max", "min": "min", "amax": "max", "amin": "min",
               "prod": "math.prod"}  # fmt: skip


def _python_twin(name: str, kind: str) -> str | None:
    """How plain Python computes np.``name`` of a Python ``kind`` ("float", "list"):
    ``math.atan2(...)`` of numbers, ``sum(...)`` of a list; None where it has no twin."""
    import math

    if kind in ("list", "tuple"):
        twin = _REDUCTIONS.get(name)
        return twin and (f"import math, then {twin}(...)" if twin.startswith("math.")
                         else f"Python's own {twin}(...)")  # fmt: skip
    for candidate in (name, _MATH_SPELLING.get(name, ""), name.replace("arc", "a", 1)):
        if candidate and callable(getattr(math, candidate, None)):
            return f"import math, then math.{candidate}(...)"
    return None


#: JAX's own words in a message, and what a user of another framework reads instead
_JAX_WORDS = (
    (re.compile(r"\s*See https://\S*jax\S* for more information\.?"), ""),
    (re.compile(r"\s*\(?https://\S*jax\S*\)?"), ""),
    (re.compile(r"\bjax\.numpy\.|\bjnp\."), "np."),
    (re.compile(r"\b\w*(?:Jaxpr|JVP|Batch)Tracer\b"), "traced value"),
)


def in_numpy_words(text: str) -> str:
    """``text`` (a JAX message) without JAX's own words: jnp.hypot is np.hypot to a user
    whose model runs on another framework, and JAX's issue links are not for them."""
    for pattern, words in _JAX_WORDS:
        text = pattern.sub(words, text)
    return text


_LIST_INDEX = "non-tuple sequence for multidimensional indexing"
_NO_COMPLEX_JAX = re.compile(r"jnp\.(\w+) is not well defined for complex")


def jax_refusal(exc: BaseException, expr: str | None, other_modes: str) -> tuple[str, str] | None:
    """(message, hint) for what JAX refuses that NumPy would run, else None.

    ``x[[[0, 1, 2]]]``: JAX refuses a list of lists as an index, which NumPy reads
    as an array; ``np.hypot`` of complex numbers, under complex step.
    ``other_modes``: the modes that would take f as it is, in words.
    """
    text = str(exc)
    what = f"`{expr}`: " if expr else ""
    if _LIST_INDEX in text:
        node = _parse(expr)
        index = "x[np.asarray(seq)]"
        for sub in ast.walk(node) if node is not None else ():
            if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.List):
                made = ast.Call(ast.Attribute(ast.Name("np"), "asarray"), [sub.slice], [])
                index = ast.unparse(ast.Subscript(sub.value, made))
                break
        return (f"{what}a list of lists as an index: JAX refuses it, as it could mean an "
                f"array or a tuple of indices",
                f"write the index as an array, as NumPy reads it: {index} (or x[tuple(seq)] "
                "for one index per axis)")  # fmt: skip
    m = _NO_COMPLEX_JAX.search(text)
    if m:
        name = m.group(1)
        hint = other_modes
        if name == "hypot":
            hint += "; or write np.hypot(a, b) as np.sqrt(a**2 + b**2), which is analytic"
        return (f"{what}np.{name} is not defined for complex numbers, and under complex step "
                f"x is complex (x + ih)", hint)  # fmt: skip
    return None


def frame_framework(frame: types.FrameType) -> str | None:
    """The framework whose ``np`` the model's code in ``frame`` runs with."""
    return getattr(frame.f_globals.get("np"), "__adlab_framework__", None)


def _jax_has(name: str) -> bool:
    import jax.numpy as jnp

    return hasattr(jnp, name)


def missing_name(exc: NameError, frame: types.FrameType) -> str | None:
    """``name 'totl' is not defined; did you mean 'total'?``, or None."""
    name = getattr(exc, "name", None)
    if not name:
        return None
    known = [*frame.f_locals, *frame.f_globals, *dir(builtins)]
    return f"name '{name}' is not defined{_suggest(name, known)}"


# ----------------------------------------------------------------- shapes
def _shape_in(node: ast.expr, frame: types.FrameType) -> tuple[int, ...] | None:
    """The shape of a name (or ``name.T``) in the frame, read without computing."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        inner = _shape_in(node.value, frame)
        return None if inner is None else tuple(reversed(inner))
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return ()
    if isinstance(node, ast.Name):
        value = frame.f_locals.get(node.id, frame.f_globals.get(node.id))
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(s, int) for s in shape):
            return shape
    return None


def _shapes_in_message(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(s) for s in m.split(",") if s.strip()) for m in _SHAPE.findall(text)]


def _fmt(shape: tuple[int, ...]) -> str:
    return str(tuple(shape))


def _axis_names(left: tuple | None, right: tuple | None) -> tuple[str, str]:
    a = "only axis" if left is not None and len(left) == 1 else "last axis"
    if right is not None and len(right) == 1:
        b = "only axis"
    elif right is not None and len(right) > 2:
        b = "second-to-last axis"
    else:
        b = "first axis"
    return a, b


def _operands(node: ast.expr) -> tuple[str, ast.expr, ast.expr] | None:
    """(symbol or function, left, right) of a binary operation or two-argument call."""
    if isinstance(node, ast.BinOp):
        return _SYMBOLS.get(type(node.op), "this operation"), node.left, node.right
    if isinstance(node, ast.Call) and len(node.args) >= 2:
        return ast.unparse(node.func), node.args[0], node.args[1]
    return None


def shape_mismatch(exc: BaseException, expr: str | None, frame: types.FrameType) -> str | None:
    """``X.T @ w: the shapes (10, 200) and (10,) do not line up for @ ...``, or None."""
    text = str(exc)
    node = _parse(expr)
    parts = _operands(node) if node is not None else None
    what = f"`{expr}`: " if expr else ""
    if (
        "dot_general requires contracting" in text
        or "not aligned" in text
        or ("matmul" in text and "mismatch in its core dimension" in text)
    ):
        return what + _matmul(text, parts, frame)
    if "broadcast" in text.lower() and "shape" in text.lower():
        return what + _broadcast(text, parts if isinstance(node, ast.BinOp) else None, frame)
    return None


def _matmul(text: str, parts: tuple | None, frame: types.FrameType) -> str:
    op, left, right = "@", None, None
    if parts is not None:
        name, left_node, right_node = parts
        op = name if name == "@" or name.split(".")[-1] in _MATMUL_CALLS else "@"
        left, right = _shape_in(left_node, frame), _shape_in(right_node, frame)
    sizes = _contracted_sizes(text, left, right)
    a, b = _axis_names(left, right)
    rule = ""
    if sizes is not None:
        rule = f" (the {a} of the left, {sizes[0]}, must equal the {b} of the right, {sizes[1]})"
    if left is not None and right is not None:
        return f"the shapes {_fmt(left)} and {_fmt(right)} do not line up for {op}{rule}"
    return f"the shapes do not line up for {op}{rule}"


def _broadcast(text: str, parts: tuple | None, frame: types.FrameType) -> str:
    shapes: list = []
    if parts is not None:
        both = [_shape_in(n, frame) for n in parts[1:]]
        shapes = both if None not in both else []
    shapes = shapes or _shapes_in_message(text)
    op = f" for {parts[0]}" if parts is not None else ""
    listed = " and ".join(_fmt(s) for s in shapes) if shapes else "of the operands"
    return (
        f"the shapes {listed} do not broadcast{op} (axes are matched from the right; "
        "each pair must be equal, or one of them 1)"
    )


def _contracted_sizes(text: str, left: tuple | None, right: tuple | None) -> tuple | None:
    if left is not None and right is not None and left and right:
        return left[-1], right[-2] if len(right) >= 2 else right[0]
    m = re.search(r"got \((\d+),?\) and \((\d+),?\)", text)  # JAX's dot_general
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"(\d+) \(dim \d+\) != (\d+) \(dim \d+\)", text)  # numpy.dot
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"size (\d+) is different from (\d+)", text)  # numpy.matmul: right, left
    if m:
        return int(m.group(2)), int(m.group(1))
    return None
