"""A grammar of common NumPy usage, as hypothesis strategies: random models for the
differential test (tests/engine/test_differential.py, issue 23).

A model is source text as users write it::

    def setup(n, rng):
        return rng.normal(size=n),

    def f(x):
        t1 = np.linalg.norm(np.diag(x), 2)
        return np.sum(np.arctan2(x, 2.0)) * t1

Expressions are built with concrete shapes (n is drawn first), so every operation
gets operands it accepts: vectors of the length it needs, positive arguments for
log and sqrt, well-conditioned matrices for det, inv and solve. Each node carries a
rough bound on |value| for |x| <= 4 (x is standard normal, n <= 5), and arguments of
exp and the like are scaled into [-1, 1] with it: the test is about frameworks
agreeing, not about overflow. ``smooth`` is False once a kink (abs, max, sort, ...)
is used; the point is random, so f is still smooth there almost surely, but
differences near a kink are not held to 1e-5.

Alternatives are listed simplest first: hypothesis shrinks a failure towards them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from hypothesis import strategies as st

X_BOUND = 4.0  # |x_i| for x ~ N(0, 1), n <= 5, with overwhelming probability


@dataclass(frozen=True)
class Node:
    """An expression: its text, concrete shape, a bound on |value|, and what it uses."""

    text: str
    shape: tuple[int, ...]
    bound: float = 1.0
    low: float | None = None  # a positive lower bound on the value, when it is positive
    smooth: bool = True
    spd: bool = False  # a symmetric positive definite matrix, eigenvalues >= low
    leaf: bool = False


@dataclass
class Context:
    """What a model's generation collects: its n, its lines, the operations used."""

    n: int
    lines: list[str] = field(default_factory=list)
    ops: set[str] = field(default_factory=set)

    def name(self, node: Node) -> Node:
        """``node`` assigned to a new local on its own line (errors must name that line)."""
        local = f"t{len(self.lines) + 1}"
        self.lines.append(f"    {local} = {node.text}")
        return replace(node, text=local, leaf=True)


@dataclass(frozen=True)
class Case:
    """One generated model: its source, size, setup seed and whether f is smooth."""

    source: str
    n: int
    seed: int
    smooth: bool
    vector: bool
    ops: tuple[str, ...]


def atom(a: Node) -> str:
    """a's text, parenthesized unless a leaf: safe before [..], .T, ** and @."""
    return a.text if a.leaf else f"({a.text})"


def squash(a: Node) -> str:
    """a's text scaled into [-1, 1] by its bound."""
    return a.text if a.bound <= 1.0 else f"(({a.text}) / {a.bound:.4g})"


def _un(
    a: Node,
    text: str,
    op: str,
    cx: Context,
    bound: float,
    smooth: bool = True,
    low: float | None = None,
) -> Node:
    """An elementwise function of a: op's name, its text and a bound."""
    cx.ops.add(op)
    return Node(text, a.shape, bound, low=low, smooth=a.smooth and smooth)


# ------------------------------------------------------------------ elementwise
def positive(draw, a: Node, cx: Context) -> Node:
    """A positive expression of a, with a lower bound."""
    b = a.bound
    k = draw(st.integers(0, 5))
    if k == 0:
        return _un(a, f"(1.0 + {atom(a)} ** 2)", "1+t**2", cx, 1 + b * b, low=1.0)
    if k == 1:
        return _un(a, f"np.exp({squash(a)})", "exp", cx, math.e, low=1 / math.e)
    if k == 2:
        return _un(a, f"np.hypot({a.text}, 1.0)", "hypot", cx, b + 1, low=1.0)
    if k == 3:
        return _un(a, f"(np.abs({a.text}) + 0.5)", "abs", cx, b + 0.5, low=0.5, smooth=False)
    if k == 4:
        return _un(a, f"np.cosh({squash(a)})", "cosh", cx, math.cosh(1), low=1.0)
    return _un(a, f"np.sqrt(1.0 + {atom(a)} ** 2)", "sqrt", cx, math.sqrt(1 + b * b), low=1.0)


def unary(draw, a: Node, cx: Context) -> Node:
    """An elementwise function of a (any shape)."""
    b = a.bound
    k = draw(st.integers(0, 17))
    if k == 0:
        return _un(a, f"np.sin({a.text})", "sin", cx, min(b, 1.0))
    if k == 1:
        return _un(a, f"np.tanh({a.text})", "tanh", cx, min(b, 1.0))
    if k == 2:
        return _un(a, f"np.exp({squash(a)})", "exp", cx, math.e, low=1 / math.e)
    if k == 3:
        p = positive(draw, a, cx)
        return _un(p, f"np.log({p.text})", "log", cx, max(math.log(p.bound), -math.log(p.low)))
    if k == 4:
        p = positive(draw, a, cx)
        return _un(p, f"np.sqrt({p.text})", "sqrt", cx, math.sqrt(p.bound), low=math.sqrt(p.low))
    if k == 5:
        return _un(a, f"np.cos({a.text})", "cos", cx, 1.0)
    if k == 6:
        return _un(a, f"np.arctan({a.text})", "arctan", cx, min(b, math.pi / 2))
    if k == 7:
        return _un(a, f"({atom(a)} ** 2)", "**2", cx, b * b) if b < 100 else unary(draw, a, cx)
    if k == 8:
        return _un(a, f"np.abs({a.text})", "abs", cx, b, smooth=False)
    if k == 9:
        return _un(a, f"np.sinc({a.text})", "sinc", cx, 1.0)
    if k == 10:
        return _un(a, f"np.log1p({atom(a)} ** 2)", "log1p", cx, math.log1p(b * b))
    if k == 11:
        return _un(a, f"np.expm1({squash(a)})", "expm1", cx, math.e - 1)
    if k == 12:
        p = positive(draw, a, cx)
        return _un(p, f"(1.0 / {p.text})", "1/p", cx, 1 / p.low, low=1 / p.bound)
    if k == 13:
        return _un(a, f"np.maximum({a.text}, 0.0)", "maximum", cx, b, smooth=False)
    if k == 14:
        return _un(a, f"np.clip({a.text}, -1.0, 1.0)", "clip", cx, min(b, 1.0), smooth=False)
    if k == 15:
        return _un(a, f"np.square({squash(a)})", "square", cx, 1.0)
    if k == 16:
        p = positive(draw, a, cx)
        return _un(p, f"({atom(p)} ** 1.5)", "**1.5", cx, p.bound**1.5, low=p.low**1.5)
    return _un(a, f"(np.sign({a.text}) * {a.text})", "sign", cx, b, smooth=False)


def binary(draw, a: Node, c: Node, cx: Context) -> Node:
    """An elementwise function of a and c (same shape, or c a scalar)."""
    ab, cb, smooth = a.bound, c.bound, a.smooth and c.smooth
    k = draw(st.integers(0, 15))
    ops = ["+", "*", "-", "/", "arctan2", "arctan2", "hypot", "hypot", "fmax", "fmin",
           "logaddexp", "logaddexp", "maximum", "where", "where", "power"]  # fmt: skip
    cx.ops.add(ops[k])
    if k == 0:
        return Node(f"({a.text} + {c.text})", a.shape, ab + cb, smooth=smooth)
    if k == 1:
        return Node(f"({a.text} * {c.text})", a.shape, ab * cb, smooth=smooth)
    if k == 2:
        return Node(f"({a.text} - {c.text})", a.shape, ab + cb, smooth=smooth)
    if k == 3:
        p = positive(draw, c, cx)
        return Node(f"({a.text} / {p.text})", a.shape, ab / p.low, smooth=smooth and p.smooth)
    if k == 4:
        return Node(f"np.arctan2({a.text}, {c.text})", a.shape, math.pi, smooth=smooth)
    if k == 5:
        return Node(f"np.arctan2({a.text}, 2.0)", a.shape, math.pi / 2, smooth=a.smooth)
    if k == 6:
        return Node(f"np.hypot({a.text}, {c.text})", a.shape, ab + cb, low=None, smooth=smooth)
    if k == 7:
        return Node(f"np.hypot({a.text}, 2.0)", a.shape, ab + 2, low=2.0, smooth=a.smooth)
    if k == 8:
        return Node(f"np.fmax({a.text}, {c.text})", a.shape, max(ab, cb), smooth=False)
    if k == 9:
        return Node(f"np.fmin({a.text}, 0.5)", a.shape, max(ab, 0.5), smooth=False)
    if k == 10:
        return Node(f"np.logaddexp({a.text}, {c.text})", a.shape, max(ab, cb) + 1, smooth=smooth)
    if k == 11:
        return Node(f"np.logaddexp({a.text}, 0.0)", a.shape, ab + 1, smooth=a.smooth)
    if k == 12:
        return Node(f"np.maximum({a.text}, {c.text})", a.shape, max(ab, cb), smooth=False)
    if k == 13:
        return Node(f"np.where({a.text} > {c.text}, {a.text}, {c.text})", a.shape, max(ab, cb),
                    smooth=False)  # fmt: skip
    if k == 14:  # the branch never taken (issue 23, A9)
        return Node(f"np.where({a.text} > 100, {a.text}, 0.0)", a.shape, ab, smooth=False)
    p = positive(draw, a, cx)
    return Node(f"np.power({p.text}, 1.5)", a.shape, p.bound**1.5, low=p.low**1.5,
                smooth=p.smooth)  # fmt: skip


# ---------------------------------------------------------------------- vectors
def leaf(draw, length: int, cx: Context) -> Node:
    """A vector of ``length`` read from x directly."""
    n = cx.n
    if length == n:
        k = draw(st.integers(0, 3))
        text = ["x", "x[::-1]", "x * np.arange(x.shape[0])", "np.cumsum(x)"][k]
        cx.ops.add(["x", "[::-1]", "arange", "cumsum"][k])
        bound = [X_BOUND, X_BOUND, X_BOUND * (n - 1), X_BOUND * n][k]
        return Node(text, (n,), bound, leaf=k < 2)
    if length < n:
        k = draw(st.integers(0, 2))
        text = [f"x[:{length}]", f"x[{n - length}:]", f"x[::-1][:{length}]"][k]
        cx.ops.add("slice")
        return Node(text, (length,), X_BOUND)
    cx.ops.add("concatenate")
    whole, rest = divmod(length, n)
    parts = ["x"] * whole + ([f"x[:{rest}]"] if rest else [])
    return Node(f"np.concatenate([{', '.join(parts)}])", (length,), X_BOUND)


def vector(draw, depth: int, cx: Context, length: int | None = None) -> Node:
    """A vector expression (of ``length``, or of a length it chooses, at most 2n)."""
    n = cx.n
    length = length or draw(st.sampled_from([n, n, n, max(n - 1, 1), n + 1]))
    if depth <= 0:
        return leaf(draw, length, cx)
    k = draw(st.integers(0, 11))
    if k == 0:
        return leaf(draw, length, cx)
    if k == 1:
        node = unary(draw, vector(draw, depth - 1, cx, length), cx)
    elif k == 2:
        a = vector(draw, depth - 1, cx, length)
        c = scalar(draw, depth - 1, cx) if draw(st.booleans()) else vector(draw, depth - 1, cx,
                                                                             length)  # fmt: skip
        node = binary(draw, a, c, cx)
    elif k == 3:
        node = reshaped(draw, depth, cx, length)
    elif k == 4:
        node = cumulative(draw, vector(draw, depth - 1, cx, length), cx)
    elif k == 5:
        a = matrix(draw, depth - 1, cx, length)
        node = matrix_vector(draw, a, vector(draw, depth - 1, cx, length), cx)
    elif k == 6 and length <= 3:
        parts = [scalar(draw, depth - 1, cx) for _ in range(length)]
        if len({p.text for p in parts}) < length:  # equal entries: std, norm and sort at a
            parts = [Node(f"x[{i}]" if i < cx.n else f"(x[{i % cx.n}] + 1.0)", (), X_BOUND + 1)
                     for i in range(length)]  # kink  # fmt: skip
        cx.ops.add("np.array([...])")
        node = Node(f"np.array([{', '.join(p.text for p in parts)}])", (length,),
                    max(p.bound for p in parts), smooth=all(p.smooth for p in parts))  # fmt: skip
    elif k == 7 and length >= 2:
        a = vector(draw, depth - 1, cx, length - 1)
        cx.ops.add("convolve")
        node = Node(f"np.convolve({a.text}, np.array([1.0, -1.0]))", (length,), 2 * a.bound,
                    smooth=a.smooth)  # fmt: skip
    elif k == 8 and length >= 2:
        j = draw(st.integers(1, length - 1))
        a, c = vector(draw, depth - 1, cx, j), vector(draw, depth - 1, cx, length - j)
        cx.ops.add("concatenate")
        node = Node(f"np.concatenate([{a.text}, {c.text}])", (length,), max(a.bound, c.bound),
                    smooth=a.smooth and c.smooth)  # fmt: skip
    elif k == 9:
        a = vector(draw, depth - 1, cx, length)
        cx.ops.add("sort")
        node = Node(f"np.sort({a.text})", (length,), a.bound, smooth=False)
    elif k == 10:
        a = matrix(draw, depth - 1, cx, length)
        node = from_matrix(draw, a, cx)
    else:
        node = unary(draw, vector(draw, depth - 1, cx, length), cx)
    assert node.shape == (length,), (node, length)
    return cx.name(node) if draw(st.integers(0, 3)) == 0 else node


def reshaped(draw, depth: int, cx: Context, length: int) -> Node:
    """A vector of ``length`` sliced, indexed or differenced from a longer one."""
    k = draw(st.integers(0, 7))
    if k == 0:
        a = vector(draw, depth - 1, cx, length + 1)
        text, op = f"{atom(a)}[1:]", "[1:]"
    elif k == 1:
        a = vector(draw, depth - 1, cx, length + 1)
        text, op = f"{atom(a)}[-2::-1]", "[-2::-1]"
    elif k == 2:
        a = vector(draw, depth - 1, cx, 2 * length - 1)
        text, op = f"{atom(a)}[::-2]", "[::-2]"
    elif k == 3:
        a = vector(draw, depth - 1, cx, 2 * length)
        text, op = f"{atom(a)}[::2]", "[::2]"
    elif k == 4:
        a = vector(draw, depth - 1, cx, length + 1)
        cx.ops.add("diff")
        return Node(f"np.diff({a.text})", (length,), 2 * a.bound, smooth=a.smooth)
    elif k == 5:
        a = vector(draw, depth - 1, cx, length)
        text, op = f"np.roll({a.text}, 1)", "roll"
    elif k == 6:
        a = vector(draw, depth - 1, cx, length + 1)
        idx = list(range(length))[::-1]
        text, op = f"np.take({a.text}, {idx})", "take"
    else:
        a = vector(draw, depth - 1, cx, length + 1)
        text, op = f"np.sort({a.text})[1:]", "sort"
        cx.ops.add(op)
        return Node(text, (length,), a.bound, smooth=False)
    cx.ops.add(op)
    return Node(text, (length,), a.bound, smooth=a.smooth)


def cumulative(draw, a: Node, cx: Context) -> Node:
    if draw(st.booleans()):
        cx.ops.add("cumsum")
        return Node(f"np.cumsum({a.text})", a.shape, a.bound * a.shape[0], smooth=a.smooth)
    cx.ops.add("cumprod")
    return Node(f"np.cumprod({squash(a)})", a.shape, 1.0, smooth=a.smooth)


# --------------------------------------------------------------------- matrices
def matrix(draw, depth: int, cx: Context, k: int, spd: bool = False) -> Node:
    """A k x k matrix; with ``spd``, symmetric positive definite (eigenvalues >= low)."""
    a = vector(draw, max(depth - 1, 0), cx, k)
    choice = draw(st.integers(0, 3 if spd else 8))
    if choice == 0:
        cx.ops.add("outer+eye")
        node = Node(f"(np.outer({a.text}, {a.text}) + np.eye({k}))", (k, k), a.bound**2 + 1,
                    low=1.0, spd=True, smooth=a.smooth)  # fmt: skip
    elif choice == 1:
        cx.ops.add("diag(exp)")
        node = Node(f"np.diag(np.exp({squash(a)}))", (k, k), math.e, low=1 / math.e, spd=True,
                    smooth=a.smooth)  # fmt: skip
    elif choice == 2:
        if depth > 0:
            m = matrix(draw, depth - 1, cx, k)
        else:
            m = Node(f"np.outer({a.text}, {a.text})", (k, k), a.bound**2, smooth=a.smooth)
        s = squash(m) if m.leaf else f"({squash(m)})"
        cx.ops.add("@")
        node = Node(f"({s} @ {s}.T + np.eye({k}))", (k, k), k + 1, low=1.0, spd=True,
                    smooth=m.smooth and a.smooth)  # fmt: skip
    elif choice == 3:
        cx.ops.add("diag+eye")
        node = Node(f"(np.diag({squash(a)}) + 2 * np.eye({k}))", (k, k), 3.0, low=1.0, spd=True,
                    smooth=a.smooth)  # fmt: skip
    else:
        c = vector(draw, max(depth - 1, 0), cx, k)
        smooth = a.smooth and c.smooth
        text = [
            f"np.outer({a.text}, {c.text})",
            f"np.diag({a.text})",
            f"({atom(a)}[:, None] * {atom(c)}[None, :])",
            f"(np.eye({k}) + 0.1 * np.outer(np.sin({a.text}), np.cos({c.text})))",
            f"np.einsum('i,j->ij', {a.text}, {c.text})",
        ][choice - 4]
        cx.ops.add(["outer", "diag", "broadcast", "eye+outer", "einsum"][choice - 4])
        bound = [a.bound * c.bound, a.bound, a.bound * c.bound, 1.5, a.bound * c.bound][choice - 4]
        node = Node(text, (k, k), bound, smooth=smooth)
    if depth > 1 and not spd and draw(st.integers(0, 2)) == 0:  # one more step on top
        step = draw(st.integers(0, 3))
        cx.ops.add(["T", "sin(M)", "M@M", "inv"][step])
        if step == 0:
            node = Node(f"{atom(node)}.T", (k, k), node.bound, smooth=node.smooth)
        elif step == 1:
            node = Node(f"np.sin({node.text})", (k, k), 1.0, smooth=node.smooth)
        elif step == 2:
            m = squash(node)
            node = Node(f"(({m}) @ ({m}))", (k, k), float(k), smooth=node.smooth)
        else:
            s = matrix(draw, depth - 1, cx, k, spd=True)
            node = Node(f"np.linalg.inv({s.text})", (k, k), 1 / s.low, smooth=s.smooth)
    return cx.name(node) if draw(st.integers(0, 3)) == 0 else node


def matrix_vector(draw, a: Node, v: Node, cx: Context) -> Node:
    """A matrix times (or solved against) a vector."""
    k = draw(st.integers(0, 4))
    smooth = a.smooth and v.smooth
    bound = a.shape[0] * a.bound * v.bound
    if k == 3:
        s = matrix(draw, 0, cx, v.shape[0], spd=True)
        cx.ops.add("solve")
        return Node(f"np.linalg.solve({s.text}, {v.text})", v.shape, v.bound * v.shape[0] / s.low,
                    smooth=smooth and s.smooth)  # fmt: skip
    text = [f"({atom(a)} @ {atom(v)})", f"np.dot({a.text}, {v.text})",
            f"np.einsum('ij,j->i', {a.text}, {v.text})", "",
            f"({atom(v)} @ {atom(a)})"][k]  # fmt: skip
    cx.ops.add(["@", "dot", "einsum", "", "@"][k])
    return Node(text, v.shape, bound, smooth=smooth)


def from_matrix(draw, a: Node, cx: Context) -> Node:
    """A vector read from a k x k matrix."""
    k = draw(st.integers(0, 6))
    n = a.shape[0]
    if k == 5 and a.spd:  # partial sums: an eigenvalue repeated (outer + eye) has no
        cx.ops.add("eigvalsh")  # derivative of its own, but these sums do
        return Node(f"np.cumsum(np.linalg.eigvalsh({a.text}))", (n,), n * n * a.bound,
                    smooth=a.smooth)  # fmt: skip
    if k == 6:
        cx.ops.add("norm(axis)")
        return Node(f"np.linalg.norm({a.text}, axis=1)", (n,), n * a.bound, smooth=False)
    text = [f"np.diag({a.text})", f"np.sum({a.text}, axis=0)", f"np.max({a.text}, axis=1)",
            f"{atom(a)}[0]", f"{atom(a)}[:, -1]", f"np.diag({a.text})"][k]  # fmt: skip
    cx.ops.add(["diag", "sum(axis)", "max(axis)", "M[0]", "M[:, -1]", "diag"][k])
    return Node(text, (n,), n * a.bound, smooth=a.smooth and k != 2)


# ---------------------------------------------------------------------- scalars
def reduce(draw, a: Node, cx: Context) -> Node:
    """A scalar reduction of a vector."""
    b, m = a.bound, a.shape[0]
    k = draw(st.integers(0, 16))
    if k == 0:
        cx.ops.add("sum")
        return Node(f"np.sum({a.text})", (), m * b, smooth=a.smooth)
    if k == 1:
        cx.ops.add("mean")
        return Node(f"np.mean({a.text})", (), b, smooth=a.smooth)
    if k == 2:
        cx.ops.add("prod")
        text = a.text if b**m < 1e6 else squash(a)
        return Node(f"np.prod({text})", (), max(b, 1.0) ** m if b**m < 1e6 else 1, smooth=a.smooth)
    if k in (3, 4) and m >= 2:
        fn = ["std", "var"][k - 3]
        cx.ops.add(fn)
        return Node(f"np.{fn}({a.text})", (), b * b, smooth=False)
    if k in (5, 6, 7):
        fn = ["max", "min", "median"][k - 5]
        cx.ops.add(fn)
        return Node(f"np.{fn}({a.text})", (), b, smooth=False)
    if k == 8:
        ordinal = draw(st.sampled_from(["", ", 2", ", 1", ", np.inf", ", -np.inf", ", 3"]))
        cx.ops.add(f"norm(v{ordinal})")
        return Node(f"np.linalg.norm({a.text}{ordinal})", (), m * b,
                    smooth=ordinal in ("", ", 2", ", 3"))  # fmt: skip
    if k == 9:
        cx.ops.add("logaddexp.reduce")
        return Node(f"np.logaddexp.reduce({a.text})", (), b + math.log(m), smooth=a.smooth)
    if k == 10:
        cx.ops.add("v.sum()")
        return Node(f"{atom(a)}.sum()", (), m * b,
                    smooth=a.smooth)  # fmt: skip
    if k == 11:
        cx.ops.add("v.max()")
        return Node(f"{atom(a)}.max()", (), b, smooth=False)
    if k == 12:
        cx.ops.add("max(v)")
        return Node(f"max({a.text})", (), b, smooth=False)
    if k == 13:
        cx.ops.add("v[0]")
        return Node(f"{atom(a)}[0]", (), b, smooth=a.smooth)
    if k == 14:
        cx.ops.add("v[-1]")
        return Node(f"{atom(a)}[-1]", (), b, smooth=a.smooth)
    if k == 15:
        cx.ops.add("sum(v)")
        return Node(f"sum({a.text})", (), m * b, smooth=a.smooth)
    cx.ops.add("len")
    return Node(f"(np.sum({a.text}) / len({a.text}))", (), b, smooth=a.smooth)


def products(draw, a: Node, c: Node, cx: Context) -> Node:
    """A scalar product of two vectors of one length."""
    k = draw(st.integers(0, 4))
    text = [f"({atom(a)} @ {atom(c)})", f"np.dot({a.text}, {c.text})",
            f"np.inner({a.text}, {c.text})", f"np.vdot({a.text}, {c.text})",
            f"np.einsum('i,i->', {a.text}, {c.text})"][k]  # fmt: skip
    cx.ops.add(["@", "dot", "inner", "vdot", "einsum"][k])
    return Node(text, (), a.shape[0] * a.bound * c.bound, smooth=a.smooth and c.smooth)


def matrix_scalar(draw, depth: int, cx: Context) -> Node:
    """A scalar of a matrix: trace, det, norms, spectra."""
    k = draw(st.integers(0, 12))
    size = draw(st.integers(1, cx.n)) if cx.n > 1 else 1
    spd = k in (1, 2, 10)
    a = matrix(draw, depth - 1, cx, size, spd=spd)
    s = a.smooth
    if k == 0:
        cx.ops.add("trace")
        return Node(f"np.trace({a.text})", (), size * a.bound, smooth=s)
    if k == 1:
        cx.ops.add("det")
        return Node(f"np.linalg.det({a.text})", (), (size * a.bound) ** size
                    if (size * a.bound) ** size < 1e8 else 1e8, smooth=s)  # fmt: skip
    if k == 2:
        cx.ops.add("slogdet")
        return Node(f"np.linalg.slogdet({a.text})[1]", (), size * math.log(size * a.bound + 2),
                    smooth=s)  # fmt: skip
    if k == 3:
        cx.ops.add("sum(M)")
        return Node(f"np.sum({a.text})", (), size * size * a.bound, smooth=s)
    if k in (4, 5, 6, 7, 8, 9):
        ordinal = ["", ", 'fro'", ", 2", ", 'nuc'", ", 1", ", np.inf"][k - 4]
        cx.ops.add(f"norm(M{ordinal})")
        return Node(f"np.linalg.norm({a.text}{ordinal})", (), size * size * a.bound,
                    smooth=s and ordinal in ("", ", 'fro'"))  # fmt: skip
    if k == 10:
        cx.ops.add("eigvalsh")
        return Node(f"np.sum(np.linalg.eigvalsh({a.text}))", (), size * a.bound, smooth=s)
    if k == 11:
        cx.ops.add("svd")
        return Node(f"np.sum(np.linalg.svd({a.text}, compute_uv=False))", (), size * size * a.bound,
                    smooth=False)  # fmt: skip
    cx.ops.add("einsum")
    return Node(f"np.einsum('ij,ij->', {a.text}, {a.text})", (), size**2 * a.bound**2, smooth=s)


def scalar(draw, depth: int, cx: Context) -> Node:
    """A scalar expression."""
    if depth <= 0:
        k = draw(st.integers(0, 2))
        cx.ops.add(["x[0]", "x[-1]", "np.sum(x)"][k])
        text = ["x[0]", "x[-1]", "np.sum(x)"][k]
        return Node(text, (), X_BOUND * (cx.n if k == 2 else 1), leaf=k < 2)
    k = draw(st.integers(0, 9))
    if k == 0:
        return scalar(draw, 0, cx)
    if k in (1, 2, 8, 9):  # reductions: the richest family
        node = reduce(draw, vector(draw, depth - 1, cx), cx)
    elif k == 3:
        a = vector(draw, depth - 1, cx)
        node = products(draw, a, vector(draw, depth - 1, cx, a.shape[0]), cx)
    elif k == 4:
        node = matrix_scalar(draw, depth, cx)
    elif k == 5:
        node = unary(draw, scalar(draw, depth - 1, cx), cx)
    elif k == 6:
        node = binary(draw, scalar(draw, depth - 1, cx), scalar(draw, depth - 1, cx), cx)
    else:  # k == 7: a traced value made a Python float (issue 23, A8), on its own line
        inner = scalar(draw, depth - 1, cx)
        cx.ops.add("float")
        return cx.name(Node(f"float({inner.text})", (), inner.bound, smooth=inner.smooth))
    return cx.name(node) if draw(st.integers(0, 3)) == 0 else node


# ------------------------------------------------------------------------ models
SETUP = "def setup(n, rng):\n    return rng.normal(size=n),\n\n\n"


def source(lines: list[str], out: str) -> str:
    """A model's text: ``lines`` then ``return out`` in f."""
    return SETUP + "def f(x):\n" + "".join(line + "\n" for line in lines) + f"    return {out}\n"


@st.composite
def models(draw, max_depth: int = 3) -> Case:
    """A random model at small n (2 to 5), scalar or vector valued."""
    n = draw(st.integers(2, 5))
    cx = Context(n)
    vector_out = draw(st.integers(0, 3)) == 0  # mostly scalar: the Hessians need one
    # a sum of up to three terms: each model (a compile per run) tries more operations
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        depth = draw(st.integers(1, max_depth))
        length = terms[0].shape[0] if terms and vector_out else None
        term = vector(draw, depth, cx, length) if vector_out else scalar(draw, depth, cx)
        if term.bound > 1e6:  # keep the values moderate: relative error is then meaningful
            term = replace(term, text=squash(term), bound=1.0)
        terms.append(term)
    node = Node(" + ".join(atom(t) for t in terms) if len(terms) > 1 else terms[0].text,
                terms[0].shape, sum(t.bound for t in terms),
                smooth=all(t.smooth for t in terms))  # fmt: skip
    seed = draw(st.integers(0, 2**16))
    ops = tuple(sorted(cx.ops))
    return Case(source(cx.lines, node.text), n, seed, node.smooth, vector_out, ops)


def model_case(body: str, n: int = 3, seed: int = 0, smooth: bool = True) -> Case:
    """A fixed model from f's body (lines indented by the caller's 4 spaces or none)."""
    lines = [line if line.startswith("    ") else "    " + line for line in body.splitlines()]
    *head, last = lines
    assert last.strip().startswith("return "), body
    src = source(head, last.strip()[len("return ") :])
    return Case(src, n, seed, smooth, vector=False, ops=())
