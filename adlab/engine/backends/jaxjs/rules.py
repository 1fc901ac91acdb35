"""How each JAX primitive is written in jax-js: one rule per primitive, as data.

A rule ``rule(t, eqn, ins)`` returns the jax-js expression of the equation's output
(or a list, one per output), or an input ``Val`` unchanged where nothing moves; it
may bind intermediate values itself (``t.bind``). Each read of a value is its mark
(``v.name``), settled later into a reference taken or handed over (``code``), so a rule
reads a value as often as it likes. jax-js 0.1.25 mirrors most of JAX's primitives
(``lax.dot`` takes ``dot_general``'s dimension numbers as they are); where it has no
counterpart, the rule is missing or refuses (``t.uncovered``): a ``ModelError`` at the
model's line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .code import Code, Val, jaxjs_dtype

Rule = Callable[[Code, Any, list[Val]], Any]
RULES: dict[str, Rule] = {}


def rule(*names: str):
    def deco(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn

    return deco


def js(v: Any) -> str:
    """A Python list or number as JS text."""
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(js(x) for x in v) + "]"
    return repr(int(v)) if isinstance(v, (int, np.integer)) else repr(float(v))


def out_shape(eqn: Any, k: int = 0) -> tuple[int, ...]:
    return tuple(int(s) for s in eqn.outvars[k].aval.shape)


def out_dtype(eqn: Any, k: int = 0) -> str:
    return jaxjs_dtype(eqn.outvars[k].aval.dtype)


# ------------------------------------------------------------ elementwise
def _unary(fn: str) -> Rule:
    return lambda t, eqn, ins: f"{fn}({ins[0].name})"


def _binary(fn: str) -> Rule:
    return lambda t, eqn, ins: f"{fn}({ins[0].name}, {ins[1].name})"


for _jax, _js in (("exp", "np.exp"), ("exp2", "np.exp2"), ("log", "np.log"),
                  ("log1p", "np.log1p"), ("expm1", "np.expm1"), ("sin", "np.sin"),
                  ("cos", "np.cos"), ("tan", "np.tan"), ("tanh", "np.tanh"),
                  ("sinh", "np.sinh"), ("cosh", "np.cosh"), ("asin", "np.arcsin"),
                  ("acos", "np.arccos"), ("atan", "np.arctan"), ("asinh", "np.arcsinh"),
                  ("acosh", "np.arccosh"), ("atanh", "np.arctanh"), ("sqrt", "np.sqrt"),
                  ("cbrt", "np.cbrt"), ("abs", "np.abs"), ("sign", "np.sign"),
                  ("floor", "np.floor"), ("ceil", "np.ceil"), ("neg", "np.negative"),
                  ("logistic", "nn.sigmoid"), ("square", "np.square"), ("erf", "lax.erf"),
                  ("erfc", "lax.erfc"), ("stop_gradient", "lax.stopGradient")):  # fmt: skip
    RULES[_jax] = _unary(_js)
for _jax, _js in (("add", "np.add"), ("add_any", "np.add"), ("sub", "np.subtract"),
                  ("mul", "np.multiply"), ("max", "np.maximum"), ("min", "np.minimum"),
                  ("pow", "np.power"), ("atan2", "np.arctan2"), ("eq", "np.equal"),
                  ("ne", "np.notEqual"), ("lt", "np.less"), ("le", "np.lessEqual"),
                  ("gt", "np.greater"), ("ge", "np.greaterEqual")):  # fmt: skip
    RULES[_jax] = _binary(_js)


@rule("is_finite")
def _is_finite(t: Code, eqn: Any, ins: list[Val]) -> str:
    # |x| < inf is false at NaN and at either infinity. Not np.isfinite: in jax-js 0.1.25,
    # under grad, it leaks 5 buffers a call where x is a max reduction (logsumexp's guard)
    return f"np.less(np.abs({ins[0].name}), Infinity)"


@rule("rsqrt")
def _rsqrt(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"np.reciprocal(np.sqrt({ins[0].name}))"


@rule("div")
def _div(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, b = ins
    if a.dtype != "int32":
        return f"np.divide({a.name}, {b.name})"
    # lax.div of integers rounds toward zero: jax-js's np.trunc of the float quotient
    return f"np.astype(np.trunc(np.divide(np.astype({a.name}, 'float64'), {b.name})), 'int32')"


@rule("rem")
def _rem(t: Code, eqn: Any, ins: list[Val]) -> str:
    # lax.rem takes the dividend's sign (C's fmod), as jax-js's fmod
    return f"np.fmod({ins[0].name}, {ins[1].name})"


@rule("integer_pow")
def _integer_pow(t: Code, eqn: Any, ins: list[Val]) -> Any:
    """Products, by squaring: exact where JAX's are, for any sign of x (a power
    through exp and log is not defined at x < 0)."""
    a, y = ins[0], int(eqn.params["y"])
    if y == 0:
        return f"np.onesLike({a.name})"
    power: Any = None
    base: Any = a
    k = abs(y)
    while k:
        if k & 1:
            power = base if power is None else f"np.multiply({_text(power)}, {base.name})"
        k >>= 1
        if k:
            base = t.bind(f"np.square({base.name})", a.shape, np.dtype(a.dtype))
    return power if y > 0 else f"np.reciprocal({_text(power)})"


def _text(v: Any) -> str:
    return v.name if isinstance(v, Val) else v


@rule("and", "or", "xor", "not")
def _logical(t: Code, eqn: Any, ins: list[Val]) -> str:
    if any(v.dtype != "bool" for v in ins):
        raise t.uncovered(eqn, "bitwise, on integers")
    fn = {"and": "logicalAnd", "or": "logicalOr", "xor": "logicalXor",
          "not": "logicalNot"}[eqn.primitive.name]  # fmt: skip
    return f"np.{fn}({', '.join(v.name for v in ins)})"


@rule("select_n")
def _select(t: Code, eqn: Any, ins: list[Val]) -> str:
    pred, *cases = ins
    if len(cases) == 2:
        cond = pred.name if pred.dtype == "bool" else f"np.astype({pred.name}, 'bool')"
        return f"np.where({cond}, {cases[1].name}, {cases[0].name})"
    expr = cases[-1].name
    for k in range(len(cases) - 2, -1, -1):
        expr = f"np.where(np.equal({pred.name}, {k}), {cases[k].name}, {expr})"
    return expr


@rule("clamp")
def _clamp(t: Code, eqn: Any, ins: list[Val]) -> str:
    lo, x, hi = ins
    return f"np.minimum(np.maximum({x.name}, {lo.name}), {hi.name})"


@rule("convert_element_type")
def _convert(t: Code, eqn: Any, ins: list[Val]) -> Any:
    new = out_dtype(eqn)
    if new == ins[0].dtype:
        return ins[0]
    if ins[0].dtype.startswith("float") and not new.startswith("float"):
        # JAX's derivative through an integer is zero
        return f"np.astype(lax.stopGradient({ins[0].name}), {new!r})"
    return f"np.astype({ins[0].name}, {new!r})"


@rule("copy", "copy_p", "optimization_barrier", "reduce_precision")
def _same(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    return list(ins[: len(eqn.outvars)])


# ------------------------------------------------------------- shapes
@rule("reshape", "squeeze", "expand_dims")
def _reshape(t: Code, eqn: Any, ins: list[Val]) -> Any:
    shape = out_shape(eqn)
    return ins[0] if shape == ins[0].shape else f"np.reshape({ins[0].name}, {js(shape)})"


@rule("broadcast_in_dim")
def _broadcast(t: Code, eqn: Any, ins: list[Val]) -> Any:
    a, shape = ins[0], out_shape(eqn)
    inter = [1] * len(shape)
    for k, d in enumerate(eqn.params["broadcast_dimensions"]):
        inter[d] = a.shape[k]
    expr = a.name if tuple(inter) == a.shape else f"np.reshape({a.name}, {js(inter)})"
    if tuple(inter) == shape:
        return expr if expr != a.name else a
    return f"np.broadcastTo({expr}, {js(shape)})"


@rule("transpose")
def _transpose(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"np.transpose({ins[0].name}, {js(eqn.params['permutation'])})"


@rule("rev")
def _rev(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"np.flip({ins[0].name}, {js(eqn.params['dimensions'])})"


def _take(t: Code, expr: str, picked: list[int], axis: int) -> str:
    """Elements ``picked`` along ``axis`` of ``expr``."""
    index = t.const(np.asarray(picked, np.int32))
    return f"np.take({expr}, {index.name}, {axis})"


@rule("slice")
def _slice(t: Code, eqn: Any, ins: list[Val]) -> str:
    a = ins[0]
    start, limit = eqn.params["start_indices"], eqn.params["limit_indices"]
    steps = eqn.params["strides"] or (1,) * len(start)
    # jax-js's slice takes [start, stop] pairs (numbers: not null for "all")
    spans = ", ".join(js([lo, hi]) for lo, hi in zip(start, limit, strict=True))
    expr = f"{a.name}.slice({spans})"
    for d, step in enumerate(steps):  # every step-th element: a gather
        if step != 1:
            expr = _take(t, expr, list(range(0, limit[d] - start[d], step)), d)
    return expr


@rule("concatenate")
def _concatenate(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"np.concatenate([{', '.join(v.name for v in ins)}], {eqn.params['dimension']})"


@rule("stack")
def _stack(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"np.stack([{', '.join(v.name for v in ins)}], {eqn.params['axis']})"


@rule("split")
def _split(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    x, axis, sizes = ins[0], eqn.params["axis"], [int(s) for s in eqn.params["sizes"]]
    cuts = list(np.cumsum(sizes)[:-1])
    parts = t.temp("p")
    t.line(f"const {parts} = np.split({x.name}, {js(cuts)}, {axis});")
    outs = []
    for k, var in enumerate(eqn.outvars):
        name = t.temp("v")
        t.line(f"const {name} = {parts}[{k}];")
        outs.append(t.owned(name, tuple(var.aval.shape), jaxjs_dtype(var.aval.dtype)))
    return outs


@rule("pad")
def _pad(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, value = ins
    config = eqn.params["padding_config"]
    if any(interior for _, _, interior in config):
        raise t.uncovered(eqn, "with interior padding")
    pairs = [[max(lo, 0), max(hi, 0)] for lo, hi, _ in config]
    expr = f"np.pad({a.name}, {js(pairs)})"  # jax-js pads with zeros
    inner = [n + lo + hi for n, (lo, hi) in zip(a.shape, pairs, strict=True)]
    if t.value_of(value) != 0:  # the padding's value where jax-js put zeros: a mask, made once
        mask = np.pad(np.ones(a.shape, bool), pairs)
        fill = f"np.broadcastTo({value.name}, {js(inner)})"
        expr = f"np.where({t.const(mask).name}, {expr}, {fill})"
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):  # negative padding crops
        begin = [max(-lo, 0) for lo, _, _ in config]
        spans = [[b, b + n] for b, n in zip(begin, out_shape(eqn), strict=True)]
        expr = f"{t.bind(expr, inner, np.dtype(a.dtype)).name}.slice({', '.join(map(js, spans))})"
    return expr


@rule("iota")
def _iota(t: Code, eqn: Any, ins: list[Val]) -> Val:
    shape, d = out_shape(eqn), eqn.params["dimension"]
    index = np.arange(shape[d]).reshape([-1 if k == d else 1 for k in range(len(shape))])
    return t.const(np.broadcast_to(index, shape).astype(eqn.params["dtype"]))


# ------------------------------------------------------------ sums
def _reduction(fn: str) -> Rule:
    def translate(t: Code, eqn: Any, ins: list[Val]) -> Any:
        axes = list(eqn.params["axes"])
        return ins[0] if not axes else f"{fn}({ins[0].name}, {js(axes)})"

    return translate


for _jax, _js in (("reduce_sum", "np.sum"), ("reduce_max", "np.max"), ("reduce_min", "np.min"),
                  ("reduce_prod", "np.prod"), ("reduce_and", "np.all"),
                  ("reduce_or", "np.any")):  # fmt: skip
    RULES[_jax] = _reduction(_js)


@rule("argmax", "argmin")
def _argmax(t: Code, eqn: Any, ins: list[Val]) -> str:
    (axis,) = eqn.params["axes"]
    return f"np.{eqn.primitive.name}({ins[0].name}, {axis})"


@rule("cumsum", "cumprod")
def _cumulative(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, axis = ins[0], eqn.params["axis"]
    fn = f"np.{eqn.primitive.name}"
    if not eqn.params["reverse"]:
        return f"{fn}({a.name}, {axis})"
    return f"np.flip({fn}(np.flip({a.name}, [{axis}]), {axis}), [{axis}])"


@rule("dot_general")
def _dot(t: Code, eqn: Any, ins: list[Val]) -> str:
    """``lax.dot``, whose dimension numbers and output order (batch, lhs free, rhs free)
    are JAX's."""
    lhs, rhs = ins
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    dims = (f"{{ lhsContractingDims: {js(lc)}, rhsContractingDims: {js(rc)}, "
            f"lhsBatchDims: {js(lb)}, rhsBatchDims: {js(rb)} }}")  # fmt: skip
    expr = f"lax.dot({lhs.name}, {rhs.name}, {dims})"
    new = out_dtype(eqn)
    return expr if new == lhs.dtype else f"np.astype({expr}, {new!r})"


# ------------------------------------------------------------ gather
@rule("gather")
def _gather(t: Code, eqn: Any, ins: list[Val]) -> str:
    """``x[..., idx, ...]`` along one axis (JAX's gather of whole slices): ``np.take``, the
    indices clamped into bounds (modes ``clip``, ``promise_in_bounds``) or the values out
    of bounds filled (``fill``), as JAX's modes say."""
    (a, idx), dn = ins, eqn.params["dimension_numbers"]
    sizes = eqn.params["slice_sizes"]
    batch = len(idx.shape) - 1
    ax = dn.start_index_map[0] if len(dn.start_index_map) == 1 else -1
    rank = len(a.shape)
    # np.take(a, idx, ax) is a.shape[:ax] + idx's batch + a.shape[ax + 1:]: JAX's layout
    # when its offset dims are the operand's others, around the batch
    simple = (
        ax >= 0
        and tuple(dn.collapsed_slice_dims) == (ax,)
        and not getattr(dn, "operand_batching_dims", ())
        and bool(idx.shape)
        and idx.shape[-1] == 1
        and tuple(sizes) == tuple(1 if d == ax else a.shape[d] for d in range(rank))
        and tuple(dn.offset_dims) == (*range(ax), *range(ax + batch, batch + rank - 1))
    )
    if not simple:
        raise t.uncovered(eqn, "other than x[..., indices, ...] along one axis")
    n = a.shape[ax]
    flat = t.bind(f"np.reshape({idx.name}, {js(list(idx.shape[:-1]))})", idx.shape[:-1],
                  np.int32)  # fmt: skip
    clipped = f"np.clip({flat.name}, 0, {n - 1})"
    if t.jit:
        picked = _one_hot(t, a, clipped, idx.shape[:-1], ax)
    else:
        picked = f"np.take({a.name}, {clipped}, {ax})"
    mode = str(eqn.params["mode"]).rsplit(".", 1)[-1]
    if mode != "FILL_OR_DROP":
        return picked
    fill = eqn.params.get("fill_value")
    fill = float("nan") if fill is None else float(fill)
    inside = f"np.logicalAnd(np.greaterEqual({flat.name}, 0), np.less({flat.name}, {n}))"
    shape = out_shape(eqn)
    mask = f"np.reshape({inside}, {js([1] * ax + [*idx.shape[:-1]] + [1] * (rank - 1 - ax))})"
    filler = "NaN" if math.isnan(fill) else js(fill)
    return (f"np.where(np.broadcastTo({mask}, {js(shape)}), {picked}, "
            f"np.full({js(shape)}, {filler}, {{ dtype: {a.dtype!r} }}))")  # fmt: skip


def _one_hot(t: Code, a: Val, index: str, batch: tuple[int, ...], ax: int) -> str:
    """``np.take(a, index, ax)`` as a product with a one-hot matrix, for ``jit``: jax-js
    0.1.25's ``jit`` refuses take's transpose (a scatter: "routine primitive scatter input
    is not imm"), so reverse mode under it cannot take a gather; a product it can."""
    n, k = a.shape[ax], len(batch)
    hits = t.const(np.arange(n, dtype=np.int32))
    column = f"np.reshape({index}, {js([*batch, 1])})"
    one_hot = f"np.astype(np.equal({column}, {hits.name}), {a.dtype!r})"
    dims = f"{{ lhsContractingDims: [{k}], rhsContractingDims: [{ax}] }}"
    product = f"lax.dot({one_hot}, {a.name}, {dims})"  # batch, then a's axes but ax
    order = [*range(k, k + ax), *range(k), *range(k + ax, len(a.shape) - 1 + k)]
    if order == sorted(order):
        return product
    return f"np.transpose({product}, {js(order)})"
