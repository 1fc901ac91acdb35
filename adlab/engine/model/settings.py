"""A model's settings: the UPPERCASE top-level constants a caller may change.

A setting is an UPPERCASE name that the model's top level assigns a literal:
``N = 3``, ``BEND = 0.1``, ``STYLE = "map"``. A constant computed from others
(``W = 2 * N``) is not a setting: it follows them. So a new value replaces the
literal *before* the module runs, in its syntax tree (line numbers stay the
user's), rather than being assigned after it, which would leave ``W`` computed
from the old ``N``. ``write_values`` does the same to the text, for an editor.
"""

from __future__ import annotations

import ast
import copy
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the types a setting holds, and that ``literal`` can write back as source
SETTING_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class Found:
    """The UPPERCASE names a model's top level binds.

    Attributes:
        literals: name -> the value nodes of its literal assignments (``N = 3``).
        computed: name -> the line of its first assignment that is not a literal.
    """

    literals: dict[str, list[ast.expr]]
    computed: dict[str, int]

    def settable(self) -> list[str]:
        """The names a caller may set, in the order the source assigns them."""
        return [k for k in self.literals if k not in self.computed]


def _is_literal(node: ast.expr) -> bool:
    """``3``, ``-0.5``, ``"map"``, ``True``, or ``float("inf")`` (how ``literal`` writes inf)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return True
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(value, SETTING_TYPES)


def _top_level(nodes: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node in the module's own scope: not inside a def, class, lambda or comprehension."""
    stack: list[ast.AST] = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # their decorators, defaults and bases run at the top level; their bodies do not
            inner = [*node.decorator_list, *getattr(node, "bases", [])]
            if not isinstance(node, ast.ClassDef):
                inner += [*node.args.defaults, *[d for d in node.args.kw_defaults if d]]
            stack.extend(reversed(inner))
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):  # fmt: skip
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def find_settings(tree: ast.Module) -> Found:
    """The literal and the computed UPPERCASE names of a model's top level."""
    literals: dict[str, list[ast.expr]] = {}
    computed: dict[str, int] = {}
    plain: set[int] = set()  # the targets of `NAME = literal`, not counted as computed
    for node in _top_level(tree.body):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and _is_literal(node.value):
                if targets[0].id.isupper():
                    literals.setdefault(targets[0].id, []).append(node.value)
                    plain.add(id(targets[0]))
        names: list[str] = []
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in plain:
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
        for name in names:
            if name.isupper():
                computed.setdefault(name, getattr(node, "lineno", 0))
    return Found(literals, computed)


def check_settings(given: Mapping[str, Any], found: Found, model: str, lines: list[str]) -> None:
    """Raise ``ValueError`` for a name in ``given`` that is not a setting, saying why."""
    settable = found.settable()
    unknown = [k for k in given if k not in settable]
    if not unknown:
        return
    why = []
    for k in unknown:
        if k in found.computed:
            lineno = found.computed[k]
            line = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
            why.append(f"{k} is computed on line {lineno} (`{line}`), not set: "
                       "change the settings it is computed from")  # fmt: skip
    raise ValueError(
        f"model {model!r} has no setting(s) {sorted(unknown)}; its settings are {settable}"
        + ("; " + "; ".join(why) if why else "")
    )


def _hidden(name: str) -> str:
    return f"__adlab_setting_{name}__"


def _where(node: ast.AST) -> tuple[int, int, int | None, int | None]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def with_values(tree: ast.Module, found: Found, values: Mapping[str, Any]):
    """A copy of ``tree`` with each literal of a setting in ``values`` replaced by its value.

    Returns (the new tree, the names to bind when it runs): the values are
    bound to hidden names, so a value with no literal (an array) runs too.
    """
    if not values:
        return tree, {}
    # nodes are matched by position: the copy's nodes are not the ones `found` holds
    targets = {_where(node): name for name, nodes in found.literals.items() if name in values
               for node in nodes}  # fmt: skip

    class Replace(ast.NodeTransformer):
        def visit_Assign(self, node: ast.Assign) -> ast.AST:
            return self._replace(node)

        def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
            return self._replace(node)

        def _replace(self, node: ast.Assign | ast.AnnAssign) -> ast.AST:
            self.generic_visit(node)
            name = targets.get(_where(node.value)) if node.value is not None else None
            if name is not None:
                node.value = ast.copy_location(ast.Name(_hidden(name), ast.Load()), node.value)
            return node

    new = Replace().visit(copy.deepcopy(tree))
    return new, {_hidden(k): values[k] for k in values}


def literal(name: str, value: Any) -> str:
    """``value`` as Python source that evaluates back to it."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"  # nan and inf have no literal
    if isinstance(value, SETTING_TYPES):
        return repr(value)
    raise ValueError(
        f"setting {name}={value!r} cannot be written into model source; "
        "use a bool, int, float or str"
    )


def changed(defaults: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The ``values`` that differ from ``defaults`` (a NaN setting left as NaN is unchanged)."""

    def same(a: Any, b: Any) -> bool:
        both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
        return both_nan or (type(a) is type(b) and a == b)

    return {k: v for k, v in values.items() if not same(defaults.get(k), v)}


def write_values(text: str, found: Found, values: Mapping[str, Any]) -> str:
    """``text`` with the literal of each setting in ``values`` rewritten in place."""
    spans = sorted(
        ((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, literal(k, values[k]))
         for k, nodes in found.literals.items() if k in values for node in nodes),
        reverse=True,
    )  # fmt: skip
    lines = [line.encode() for line in text.splitlines(keepends=True)]
    for lineno, col, end_lineno, end_col, new in spans:  # from the end: offsets stay valid
        head = lines[lineno - 1][:col]
        tail = lines[end_lineno - 1][end_col:]
        lines[lineno - 1 : end_lineno] = [head + new.encode() + tail]
    return b"".join(lines).decode()
