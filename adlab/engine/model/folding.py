"""A model's constant NumPy expressions, computed once when it is built.

``np.log(2 * np.pi)`` in a model is a number, but an eager framework computes
it on every call: PyTorch as tensor operations (a product, a log and a cast,
about a tenth of ``normal_logpdf``'s gradient at n = 10, where the same model
written for PyTorch says ``math.log(2 * math.pi)``), and NumPy, autograd and
TensorFlow's NumPy as a float64 scalar, which turns a float32 model's result
into float64. A compiler (``jax.jit``, XLA) folds such constants; the eager
frameworks do not, so adlab does, once, in the model's syntax tree: ``np.pi``
and ``np.e`` become Python's numbers, and a call of one of NumPy's real math
functions (``FOLDABLE``) on numbers written in the source becomes its value,
a Python float (which every framework treats as weakly typed: it takes the
precision of the arrays it meets). Nothing else changes, and nothing runs per
operation.
"""

from __future__ import annotations

import ast
import copy
import math
import operator
from typing import Any

import numpy

#: NumPy's names of numbers, as Python floats
CONSTANTS = {"pi": math.pi, "e": math.e}
#: NumPy's real functions of numbers that are folded when every argument is a number
FOLDABLE = frozenset({
    "sqrt", "cbrt", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "power", "deg2rad", "rad2deg", "radians", "degrees",
})  # fmt: skip
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow}  # fmt: skip


def fold_constants(tree: ast.Module) -> ast.Module:
    """A copy of ``tree`` with ``np.pi``, ``np.e`` and ``np.<FOLDABLE>(numbers)`` replaced
    by Python floats; line numbers kept. A call that NumPy cannot compute to a finite
    float (``np.log(-1.0)``) is left as written, to fail or warn where it runs."""
    return _Fold().visit(copy.deepcopy(tree))


class _Fold(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _np_name(node) in CONSTANTS and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(CONSTANTS[node.attr]), node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)  # arguments first: np.sqrt(np.log(2.0))
        name = _np_name(node.func)
        if name not in FOLDABLE or node.keywords:
            return node
        values = [_number(a) for a in node.args]
        if not values or any(v is None for v in values):
            return node
        with numpy.errstate(all="raise"):
            try:
                out = getattr(numpy, name)(*values)
            except (ArithmeticError, TypeError, ValueError):
                return node
        if not (isinstance(out, numpy.floating) and math.isfinite(out)):
            return node
        return ast.copy_location(ast.Constant(float(out)), node)


def _np_name(node: ast.AST) -> str | None:
    """``name`` for ``np.name``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "np" else None
    return None


def _number(node: ast.AST) -> float | int | None:
    """The value of a number written in the source (``2``, ``-0.5``, ``2 * 3.14``), else None."""
    if isinstance(node, ast.Constant):
        ok = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return node.value if ok else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _number(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _number(node.left), _number(node.right)
        if a is None or b is None:
            return None
        try:
            out: Any = _OPS[type(node.op)](a, b)
            return out if isinstance(out, (int, float)) and math.isfinite(out) else None
        except (ArithmeticError, ValueError):  # 1 / 0, 10.0 ** 400, a huge int
            return None
    return None
