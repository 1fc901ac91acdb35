"""``checkpoint=`` on TensorFlow: ``tf.recompute_grad`` per step or segment.

``tf.recompute_grad(g)(*args)`` differentiates the recomputation with respect to
``args`` only: a tensor the body closes over (x itself, in most models) would get no
gradient through it, silently (seen with TensorFlow 2.21: None). So the floating
tensors the piece reaches through its closures (nested functions, lists, dicts) are
passed as arguments too, and the recomputation runs a copy of the function whose
closures hold the tensors ``tf.recompute_grad`` watches. A tensor hidden elsewhere (an
object's attribute) is not found: keep such values in plain closures.

The recomputation runs in the backward pass, which adlab runs under TensorFlow's own
rules (``own_rules``): it is run under the rules the step first ran under (NumPy's
promotion and slicing), or a float times a bool would not be what f computed. Every tape
is stopped while ``tf.recompute_grad`` runs a step forward, so the model's own
``grad(fn)`` has none there: it is refused inside a checkpointed loop (``inside``).
Forward mode (``tf.autodiff.ForwardAccumulator``) cannot cross ``tf.recompute_grad``
(NotImplementedError): it has no backward pass to save memory for, so a loop under it
runs its steps as written.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf
from tensorflow.python.framework import ops as _ops  # the rules a step ran under

from ..checkpoint import NoCheckpointing

#: the model's grad(...) inside a checkpointed step, refused (``inside``)
WHY = ("TensorFlow's checkpointing (tf.recompute_grad) runs a step with every tape "
       "stopped, so the model's own grad(...) inside the loop would see no derivative: "
       "use backend='jax', or checkpoint=False")  # fmt: skip
_DEPTH = [0]


def inside() -> None:
    """Refuse (``NoCheckpointing``) where a checkpointed step is running: the model's
    ``grad`` calls it (``inner_grad``)."""
    if _DEPTH[0]:
        raise NoCheckpointing(WHY)


@contextlib.contextmanager
def _stepping(rules: tuple) -> Iterator[None]:
    """A step's body runs: under ``rules`` (promotion, slicing), counted for ``inside``."""
    saved = (_ops._dtype_conversion_mode, _ops._numpy_style_slicing)
    _ops._dtype_conversion_mode, _ops._numpy_style_slicing = rules
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        _ops._dtype_conversion_mode, _ops._numpy_style_slicing = saved


def _floating(value: Any) -> bool:
    return isinstance(value, tf.Tensor) and (value.dtype.is_floating or value.dtype.is_complex)


def _cells(fn: types.FunctionType) -> list:
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell (a name assigned later)
            pass
    return out


def captured(value: Any, seen: set[int] | None = None) -> list:
    """The floating tensors ``value`` reaches through closures and containers, once each."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if _floating(value):
        return [value]
    if isinstance(value, types.FunctionType):
        inner = [*_cells(value), *(value.__defaults__ or ())]
    elif isinstance(value, functools.partial):
        inner = [value.func, *value.args, *value.keywords.values()]
    elif isinstance(value, (list, tuple)):
        inner = list(value)
    elif isinstance(value, dict):
        inner = list(value.values())
    else:
        return []
    return [t for v in inner for t in captured(v, seen)]


def rebound(value: Any, swap: dict[int, Any], memo: dict[int, Any]) -> Any:
    """``value`` with every tensor ``t`` it reaches as in ``captured`` replaced by
    ``swap[id(t)]``: functions copied with new closure cells (cycles kept)."""
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, tf.Tensor):
        return swap.get(id(value), value)
    if isinstance(value, types.FunctionType) and value.__closure__:
        cells = tuple(types.CellType() for _ in value.__closure__)
        new = types.FunctionType(value.__code__, value.__globals__, value.__name__,
                                 value.__defaults__, cells)  # fmt: skip
        new.__kwdefaults__ = value.__kwdefaults__
        memo[id(value)] = new
        for old, cell in zip(value.__closure__, cells, strict=True):
            try:
                cell.cell_contents = rebound(old.cell_contents, swap, memo)
            except ValueError:  # empty: stays empty
                pass
        return new
    if isinstance(value, functools.partial):
        return functools.partial(rebound(value.func, swap, memo),
                                 *rebound(value.args, swap, memo),
                                 **rebound(value.keywords, swap, memo))  # fmt: skip
    if isinstance(value, (list, tuple)):
        items = [rebound(v, swap, memo) for v in value]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: rebound(v, swap, memo) for k, v in value.items()}
    return value


def _flatten(tree: Any) -> tuple[list, Callable[[list], Any]]:
    """(the floating tensors of ``tree``, ``rebuild(tensors)`` -> the tree with them)."""
    found = captured(tree)
    ids = [id(t) for t in found]
    return found, lambda new: rebound(tree, dict(zip(ids, new, strict=True)), {})


def remat(fn: Callable, carry: Any) -> Any:
    """``fn(carry)``, recomputed in the backward pass (``_loops.python_loops``)."""
    leaves, rebuild = _flatten(carry)
    # a tensor both carried and closed over (x as the first carry) is one argument
    caps = [t for t in captured(fn) if all(t is not a for a in leaves)]
    k, out_tree = len(leaves), {}
    ids = [id(t) for t in (*leaves, *caps)]
    rules = (_ops._dtype_conversion_mode, _ops._numpy_style_slicing)

    @tf.autograph.experimental.do_not_convert  # a rebound copy has no source to convert
    def piece(*args: Any) -> list:
        run = rebound(fn, dict(zip(ids, args, strict=True)), {})
        with _stepping(rules):
            outs, out_tree["rebuild"] = _flatten(run(rebuild(list(args[:k]))))
        return outs

    try:
        outs = tf.recompute_grad(piece)(*leaves, *caps)
    except NotImplementedError:  # a forward accumulator: nothing to recompute for
        return fn(carry)
    return out_tree["rebuild"](list(outs))
