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

from .backends._special import BESIDE_NP

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


#: how people name each framework, in messages
_LABELS = {"torch": "PyTorch", "tensorflow": "TensorFlow", "autograd": "autograd"}
_NO_RULE = re.compile(r"\b(VJP|JVP) of (\w+) wrt argnums")  # autograd's
_NOT_TENSOR = re.compile(r"^(\w+)\(\): argument '\w+' \(position \d+\) must be Tensor, not (\w+)")
#: PyTorch's and TensorFlow's refusals of an operation on complex numbers (complex step)
_NO_COMPLEX = re.compile(
    r"not implemented for 'Complex(Float|Double)'|DataType complex(64|128) not in"
)


def framework_gap(exc: BaseException, expr: str | None) -> tuple[str, str] | None:
    """(message, hint) where a framework's ``np`` falls short of NumPy, else None.

    ``torch has no np.interp here``: a NumPy function its namespace lacks (an
    ``AttributeError`` from ``backends._namespace``); an array method NumPy has
    and the framework's arrays lack (``TensorFlow's arrays have no .sum``);
    ``autograd has no reverse-mode rule for np.interp``; ``PyTorch's np.log
    takes tensors, not Python numbers``.
    """
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    framework = getattr(obj, "__adlab_framework__", None)
    if isinstance(exc, AttributeError) and framework and name:
        import numpy

        if not hasattr(numpy, name):
            return None  # not NumPy's either: a misspelling (``missing_attribute``)
        label = _LABELS.get(framework, framework)
        other = "backend='jax'" if _jax_has(name) else "backend='numpy'"
        return (f"{framework} has no np.{name} here: {label}'s NumPy-like namespace lacks it",
                f"write it with functions {framework} has, or run this model on {other}, "
                f"which has np.{name}")  # fmt: skip
    if isinstance(exc, AttributeError) and name and obj is not None:
        import numpy

        owner = type(obj).__module__.split(".")[0]
        if owner in _LABELS and hasattr(numpy.ndarray, name):
            use = f"np.{name}(...)" if hasattr(numpy, name) else "a function of np"
            return (f"{_LABELS[owner]}'s arrays have no .{name} (NumPy's do)",
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
        return (f"{label} cannot do {what} on complex numbers, and under complex step x is "
                f"complex (x + ih)",
                "compare or clip the real part (np.real(x) > 0), or run complex step on "
                "backend='jax' or 'numpy', which compare real parts")  # fmt: skip
    m = _NOT_TENSOR.match(str(exc)) if isinstance(exc, TypeError) else None
    if m:
        what = f"`{expr}`: " if expr else ""
        return (f"{what}PyTorch's np.{m.group(1)} takes tensors, not a Python {m.group(2)}",
                f"for a number, use Python's math: import math, then math.{m.group(1)}(...) "
                "(numbers written in the source, as in np.log(2 * np.pi), are computed once "
                "when the model is built, so those work)")  # fmt: skip
    return None


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


# ---------------------------------------------------------------- imports
def np_imports(tree: ast.Module) -> list[int]:
    """Line numbers of imports that bind the name ``np``, which adlab provides."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == "np" for a in node.names):
                lines.append(node.lineno)
    return lines
