"""How each JAX primitive is written in TF.js: one rule per primitive, as data.

A rule ``rule(t, eqn, ins)`` returns the TF.js expression of the equation's output
(or a list, one per output), or an input ``Val`` unchanged where nothing moves; it
may bind intermediate values itself (``t.bind``). The operations it writes have
gradients in TF.js 4.22, so ``tf.grad`` differentiates the program; where JAX's
primitive has no such counterpart (``einsum``, ``stridedSlice`` and ``gatherND``
have none), it is written with ones that do, or refused (``t.uncovered``), or, where
TF.js runs it but has no gradient (``cumprod``), said (``t.no_gradient``): mode
'reverse' through it is refused at the model's line, f and its differences run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .code import Code, Val, tf_dtype

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


# ------------------------------------------------------------ elementwise
def _unary(fn: str) -> Rule:
    return lambda t, eqn, ins: f"tf.{fn}({ins[0].name})"


def _binary(fn: str) -> Rule:
    return lambda t, eqn, ins: f"tf.{fn}({ins[0].name}, {ins[1].name})"


for _jax, _tf in (("exp", "exp"), ("log", "log"), ("log1p", "log1p"), ("expm1", "expm1"),
                  ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("tanh", "tanh"),
                  ("sinh", "sinh"), ("cosh", "cosh"), ("asin", "asin"), ("acos", "acos"),
                  ("atan", "atan"), ("asinh", "asinh"), ("acosh", "acosh"),
                  ("atanh", "atanh"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"), ("abs", "abs"),
                  ("sign", "sign"), ("floor", "floor"), ("ceil", "ceil"), ("neg", "neg"),
                  ("logistic", "sigmoid"), ("square", "square"), ("erf", "erf"),
                  ("is_finite", "isFinite")):  # fmt: skip
    RULES[_jax] = _unary(_tf)
for _jax, _tf in (("add", "add"), ("add_any", "add"), ("sub", "sub"), ("mul", "mul"),
                  ("max", "maximum"), ("min", "minimum"), ("pow", "pow"),
                  ("atan2", "atan2"), ("eq", "equal"), ("ne", "notEqual"), ("lt", "less"),
                  ("le", "lessEqual"), ("gt", "greater"), ("ge", "greaterEqual")):  # fmt: skip
    RULES[_jax] = _binary(_tf)


def _trunc(expr: str) -> str:
    """Rounded toward zero, as lax's integer division and ``rem`` round."""
    return f"tf.mul(tf.sign({expr}), tf.floor(tf.abs({expr})))"


@rule("div")
def _div(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, b = ins
    if a.dtype != "int32":
        return f"tf.div({a.name}, {b.name})"
    q = t.bind(f"tf.div(tf.cast({a.name}, 'float32'), tf.cast({b.name}, 'float32'))",
               out_shape(eqn), np.float32)  # fmt: skip
    return f"tf.cast({_trunc(q.name)}, 'int32')"


@rule("rem")
def _rem(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, b = ins
    if a.dtype != "float32":
        raise t.uncovered(eqn, "on integers")
    q = t.bind(f"tf.div({a.name}, {b.name})", out_shape(eqn), np.float32)
    return f"tf.sub({a.name}, tf.mul({b.name}, {_trunc(q.name)}))"


@rule("exp2")
def _exp2(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"tf.pow(tf.scalar(2), {ins[0].name})"


@rule("integer_pow")
def _integer_pow(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, y = ins[0].name, int(eqn.params["y"])
    if y == 0:
        return f"tf.onesLike({a})"
    if abs(y) == 2:
        power = f"tf.square({a})"
    elif abs(y) <= 4:  # products: exact, as XLA's, and with TF.js's exact gradients
        power = a
        for _ in range(abs(y) - 1):
            power = f"tf.mul({power}, {a})"
    else:
        power = f"tf.pow({a}, tf.scalar({abs(y)}, {ins[0].dtype!r}))"
    return power if y > 0 else f"tf.reciprocal({power})"


@rule("and", "or", "not")
def _logical(t: Code, eqn: Any, ins: list[Val]) -> str:
    if any(v.dtype != "bool" for v in ins):
        raise t.uncovered(eqn, "bitwise, on integers")
    fn = {"and": "logicalAnd", "or": "logicalOr", "not": "logicalNot"}[eqn.primitive.name]
    return f"tf.{fn}({', '.join(v.name for v in ins)})"


@rule("select_n")
def _select(t: Code, eqn: Any, ins: list[Val]) -> str:
    pred, *cases = ins
    if len(cases) == 2:
        cond = pred.name if pred.dtype == "bool" else f"tf.cast({pred.name}, 'bool')"
        return f"tf.where({cond}, {cases[1].name}, {cases[0].name})"
    expr = cases[-1].name
    for k in range(len(cases) - 2, -1, -1):
        expr = f"tf.where(tf.equal({pred.name}, {k}), {cases[k].name}, {expr})"
    return expr


@rule("clamp")
def _clamp(t: Code, eqn: Any, ins: list[Val]) -> str:
    lo, x, hi = ins
    return f"tf.minimum(tf.maximum({x.name}, {lo.name}), {hi.name})"


@rule("convert_element_type")
def _convert(t: Code, eqn: Any, ins: list[Val]) -> Any:
    new = tf_dtype(eqn.params["new_dtype"])
    if new == ins[0].dtype:
        return ins[0]
    if ins[0].dtype == "float32":  # to integers: TF.js's cast passes the gradient through,
        return f"tf.cast(H.stop({ins[0].name}), {new!r})"  # JAX's is zero
    return f"tf.cast({ins[0].name}, {new!r})"


@rule("stop_gradient")
def _stop(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"H.stop({ins[0].name})"


@rule("copy", "copy_p", "optimization_barrier", "reduce_precision")
def _same(t: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    return list(ins[: len(eqn.outvars)])


# ------------------------------------------------------------- shapes
@rule("reshape", "squeeze", "expand_dims")
def _reshape(t: Code, eqn: Any, ins: list[Val]) -> Any:
    shape = out_shape(eqn)
    return ins[0] if shape == ins[0].shape else f"tf.reshape({ins[0].name}, {js(shape)})"


@rule("broadcast_in_dim")
def _broadcast(t: Code, eqn: Any, ins: list[Val]) -> Any:
    a, shape = ins[0], out_shape(eqn)
    inter = [1] * len(shape)
    for k, d in enumerate(eqn.params["broadcast_dimensions"]):
        inter[d] = a.shape[k]
    expr = a.name if tuple(inter) == a.shape else f"tf.reshape({a.name}, {js(inter)})"
    if tuple(inter) == shape:
        return expr if expr != a.name else a
    return f"tf.broadcastTo({expr}, {js(shape)})"


@rule("transpose")
def _transpose(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"tf.transpose({ins[0].name}, {js(eqn.params['permutation'])})"


@rule("rev")
def _rev(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"tf.reverse({ins[0].name}, {js(eqn.params['dimensions'])})"


@rule("slice")
def _slice(t: Code, eqn: Any, ins: list[Val]) -> str:
    a = ins[0]
    start, limit = eqn.params["start_indices"], eqn.params["limit_indices"]
    steps = eqn.params["strides"] or (1,) * len(start)
    size = [hi - lo for lo, hi in zip(start, limit, strict=True)]
    expr = f"tf.slice({a.name}, {js(start)}, {js(size)})"
    for d, step in enumerate(steps):  # every step-th element: a gather (TF.js's stridedSlice
        if step != 1:  # has no gradient)
            picked = list(range(0, size[d], step))
            expr = f"tf.gather({expr}, tf.tensor1d({js(picked)}, 'int32'), {d})"
    return expr


@rule("concatenate")
def _concatenate(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"tf.concat([{', '.join(v.name for v in ins)}], {eqn.params['dimension']})"


@rule("stack")
def _stack(t: Code, eqn: Any, ins: list[Val]) -> str:
    return f"tf.stack([{', '.join(v.name for v in ins)}], {eqn.params['axis']})"


@rule("split")
def _split(t: Code, eqn: Any, ins: list[Val]) -> list[str]:
    # one tf.slice per part, not tf.split: TF.js's split gradient concatenates the parts'
    # gradients and fails ("Pass at least one tensor to concat") where a part goes unused
    x, axis = ins[0], eqn.params["axis"]
    parts, start = [], 0
    for size in eqn.params["sizes"]:
        begin = [0] * len(x.shape)
        begin[axis] = start
        shape = list(x.shape)
        shape[axis] = int(size)
        parts.append(f"tf.slice({x.name}, {js(begin)}, {js(shape)})")
        start += int(size)
    return parts


@rule("pad")
def _pad(t: Code, eqn: Any, ins: list[Val]) -> str:
    a, value = ins
    config = eqn.params["padding_config"]
    if any(interior for _, _, interior in config):
        raise t.uncovered(eqn, "with interior padding")
    if not value.name.startswith("C["):
        raise t.uncovered(eqn, "with a padding value computed by f")
    fill = t.consts[int(value.name[2:-1])][0]
    pairs = [[max(lo, 0), max(hi, 0)] for lo, hi, _ in config]
    expr = f"tf.pad({a.name}, {js(pairs)}, {js(float(fill))})"
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):  # negative padding crops
        begin = [max(-lo, 0) for lo, _, _ in config]
        expr = f"tf.slice({expr}, {js(begin)}, {js(list(out_shape(eqn)))})"
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
        return ins[0] if not axes else f"tf.{fn}({ins[0].name}, {js(axes)})"

    return translate


for _jax, _tf in (
    ("reduce_sum", "sum"),
    ("reduce_max", "max"),
    ("reduce_min", "min"),
    ("reduce_prod", "prod"),
    ("reduce_and", "all"),
    ("reduce_or", "any"),
):
    RULES[_jax] = _reduction(_tf)


@rule("reduce_max", "reduce_min")
def _extreme(t: Code, eqn: Any, ins: list[Val]) -> Any:
    """Of floats, ``H.reduce``: TF.js's Max and Min gradients hand each tied extreme the
    whole of dy, JAX's share it among them (runtime_tfjs.js)."""
    fn = eqn.primitive.name[len("reduce_") :]
    axes = list(eqn.params["axes"])
    if not axes or ins[0].dtype != "float32":
        return _reduction(fn)(t, eqn, ins)
    return f"H.reduce({fn!r}, {js(axes)})({ins[0].name})"


@rule("argmax", "argmin")
def _argmax(t: Code, eqn: Any, ins: list[Val]) -> str:
    (axis,) = eqn.params["axes"]
    fn = "argMax" if eqn.primitive.name == "argmax" else "argMin"
    return f"tf.{fn}({ins[0].name}, {axis})"


@rule("cumsum")
def _cumsum(t: Code, eqn: Any, ins: list[Val]) -> str:
    """Along the last axis, another one moved there and back: TF.js 4.22's Cumsum gradient
    transposes its result once too often where the axis is not the last (a gradient of
    the wrong shape, refused; or, on a square array, the transposed one: wrong)."""
    a, axis = ins[0], eqn.params["axis"]
    rev = "true" if eqn.params["reverse"] else "false"
    last = len(a.shape) - 1
    if axis == last:
        return f"tf.cumsum({a.name}, {axis}, false, {rev})"
    order = [d for d in range(len(a.shape)) if d != axis] + [axis]
    back = [order.index(d) for d in range(len(a.shape))]
    return (f"tf.transpose(tf.cumsum(tf.transpose({a.name}, {js(order)}), {last}, false, "
            f"{rev}), {js(back)})")  # fmt: skip


@rule("cumprod")
def _cumprod(t: Code, eqn: Any, ins: list[Val]) -> str:
    # TF.js runs Cumprod but registers no gradient for it: f and differences of f only
    t.no_gradient("TF.js 4.22 has no gradient for cumprod, its kernel Cumprod")
    rev = "true" if eqn.params["reverse"] else "false"
    return f"tf.cumprod({ins[0].name}, {eqn.params['axis']}, false, {rev})"


@rule("dot_general")
def _dot(t: Code, eqn: Any, ins: list[Val]) -> str:
    """Transposes to (batch, free, contracted) and (batch, contracted, free), reshapes
    to three (or two) dimensions, ``tf.matMul``, and the output's shape: JAX's order,
    batch then lhs free then rhs free."""
    lhs, rhs = ins
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lf = [d for d in range(len(lhs.shape)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rhs.shape)) if d not in rc and d not in rb]
    size = lambda v, dims: math.prod(v.shape[d] for d in dims)  # noqa: E731
    batch, k = size(lhs, lb), size(lhs, lc)
    lead = [batch] if lb else []

    def arranged(v: Val, order: list[int], shape: list[int]) -> str:
        expr = v.name
        if order != list(range(len(v.shape))):
            expr = f"tf.transpose({expr}, {js(order)})"
        return expr if tuple(shape) == v.shape else f"tf.reshape({expr}, {js(shape)})"

    left = arranged(lhs, [*lb, *lf, *lc], [*lead, size(lhs, lf), k])
    right = arranged(rhs, [*rb, *rc, *rf], [*lead, k, size(rhs, rf)])
    if lhs.dtype != "float32":
        left, right = f"tf.cast({left}, 'float32')", f"tf.cast({right}, 'float32')"
    expr = f"tf.matMul({left}, {right})"
    shape = out_shape(eqn)
    if tuple(shape) != (*lead, size(lhs, lf), size(rhs, rf)):
        expr = f"tf.reshape({expr}, {js(shape)})"
    new = tf_dtype(eqn.outvars[0].aval.dtype)
    return expr if new == "float32" else f"tf.cast({expr}, {new!r})"


# ------------------------------------------------------------ gather
@rule("gather")
def _gather(t: Code, eqn: Any, ins: list[Val]) -> str:
    """``x[..., idx, ...]`` along one axis (JAX's gather of whole slices): ``tf.gather``, the
    indices clamped into bounds (mode ``clip``, ``promise_in_bounds``) or the values
    out of bounds filled (``fill``), as JAX's modes say."""
    (a, idx), dn = ins, eqn.params["dimension_numbers"]
    sizes = eqn.params["slice_sizes"]
    batch = len(idx.shape) - 1
    ax = dn.start_index_map[0] if len(dn.start_index_map) == 1 else -1
    rank = len(a.shape)
    # tf.gather(a, idx, ax) is a.shape[:ax] + idx's batch + a.shape[ax + 1:]: JAX's layout
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
    flat = t.bind(f"tf.reshape({idx.name}, {js(list(idx.shape[:-1]))})", idx.shape[:-1],
                  np.int32)  # fmt: skip
    mode = str(eqn.params["mode"]).rsplit(".", 1)[-1]
    clipped = f"tf.clipByValue({flat.name}, 0, {n - 1})"
    picked = f"tf.gather({a.name}, {clipped}, {ax})"
    if mode != "FILL_OR_DROP":
        return picked
    fill = eqn.params.get("fill_value")
    fill = float("nan") if fill is None else float(fill)
    inside = (f"tf.logicalAnd(tf.greaterEqual({flat.name}, 0), "
              f"tf.less({flat.name}, {n}))")  # fmt: skip
    shape = out_shape(eqn)
    mask = f"tf.reshape({inside}, {js([1] * ax + [*idx.shape[:-1]] + [1] * (rank - 1 - ax))})"
    return (
        f"tf.where(tf.broadcastTo({mask}, {js(shape)}), {picked}, "
        f"tf.fill({js(shape)}, {'NaN' if math.isnan(fill) else js(fill)}))"
    )
