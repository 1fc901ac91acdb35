"""Constant NumPy expressions in a model are computed once, when it is built (``folding``)."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import adlab
from adlab.engine.model import fold_constants

SRC = """
def f(x, c):
    a = np.log(2 * np.pi) + np.sqrt(-(-2))
    b = np.log(-1.0) + np.log(x) + np.zeros(3) + np.log(c) + np.arctan2(1, 2.5)
    return a * np.e + b
"""


def _folded() -> dict[str, ast.AST]:
    tree = fold_constants(ast.parse(SRC))
    body = tree.body[0].body
    return {"a": body[0].value, "b": body[1].value, "ret": body[2].value}


def test_numbers_through_numpy_math_become_python_floats_on_their_line():
    a = _folded()["a"]
    assert isinstance(a.left, ast.Constant) and a.left.value == np.log(2 * np.pi)
    assert isinstance(a.right, ast.Constant) and a.right.value == np.sqrt(2.0)
    assert type(a.left.value) is float and a.left.lineno == 3
    ret = _folded()["ret"]
    assert ret.left.right.value == np.e  # np.e itself


def test_what_is_not_a_number_or_not_finite_is_left_as_written():
    b = ast.unparse(_folded()["b"])
    # np.log(-1.0) is NaN (left to warn where it runs); x, c and arrays are not numbers
    assert "np.log(-1.0)" in b and "np.log(x)" in b and "np.zeros(3)" in b and "np.log(c)" in b
    assert repr(float(np.arctan2(1, 2.5))) in b


def test_the_tree_given_is_not_changed():
    tree = ast.parse(SRC)
    before = ast.dump(tree)
    fold_constants(tree)
    assert ast.dump(tree) == before


def test_pytorch_runs_no_tensor_operation_for_a_constant():
    """normal_logpdf's np.log(2 * np.pi) was a product, a log and a cast on every call."""
    from torch.overrides import TorchFunctionMode

    called = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            called.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    model = adlab.load_model("normal_logpdf")
    theta, data = model.setup(4)
    p = adlab.prepare(model, theta, data, mode="primal", backend="torch")
    with Record():
        value = p(p.inputs[0])
    assert "log" not in called and called  # the model's other operations are seen
    assert float(value) == pytest.approx(adlab.derivative(model, theta, data, mode="primal"))
