"""TensorFlow's second derivatives: tapes and forward accumulators nested.

A ``tf.GradientTape`` records what runs inside it, another tape's gradient
included, and a ``tf.autodiff.ForwardAccumulator`` pushes its tangent through
a tape's gradient too, as TensorFlow's guide on advanced autodiff composes
them: forward-over-reverse is an accumulator around a tape (its HVP one pass),
reverse-over-forward a tape around an accumulator, reverse-over-reverse a tape
around a tape, forward-over-forward an accumulator around accumulators. A
Hessian is the Jacobian of the inner gradient, taken as first order takes
one (``tensorflow._forward_jacobian`` / ``reverse_jacobian``: a loop when
eager, vectorized when compiled).

Complex step of the gradient is not offered: ``GradientTape.gradient`` at a
complex x returns the conjugate derivative, and for ``x**2`` a wrong one (see
``second_order.WHY_NOT``; the tests check that it still is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from .tensorflow import ZERO, forward_jacobian, reverse_jacobian


def _grad(f: Callable) -> Callable:
    def g(x: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x, unconnected_gradients=ZERO)

    return g


def _forward_gradient(f: Callable, jit: bool) -> Callable:
    return lambda x: forward_jacobian(f, (x,), 0, vectorized=jit)


# each returns (g(x), the product): the primal comes with the pass
def _jvp(g: Callable, x: Any, v: Any) -> tuple[Any, Any]:
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = g(x)
    return y, acc.jvp(y, unconnected_gradients=ZERO)


def _vjp(g: Callable, x: Any, v: Any) -> tuple[Any, Any]:
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = g(x)
    return y, tape.gradient(y, x, output_gradients=v, unconnected_gradients=ZERO)


def hessian(name: str, f: Callable, x: Any, jit: bool) -> Any:
    outer, inner = name.split("-over-")
    g = _grad(f) if inner == "reverse" else _forward_gradient(f, jit)
    jacobian = forward_jacobian if outer == "forward" else reverse_jacobian
    return jacobian(g, (x,), 0, vectorized=jit)


def hvp(name: str, f: Callable, x: Any, v: Any, jit: bool, with_gradient: bool = False) -> Any:
    """H v, or with ``with_gradient`` (gradient, H v) from the same call: the outer pass's
    primal is the inner gradient, but for reverse-over-forward (one more gradient)."""
    outer, inner = name.split("-over-")
    if name == "reverse-over-forward":  # a tape around one accumulator: no n-column gradient
        hv = _grad(lambda y: _jvp(f, y, v)[1])(x)
        return (_grad(f)(x), hv) if with_gradient else hv
    g = _grad(f) if inner == "reverse" else _forward_gradient(f, jit)
    out = (_jvp if outer == "forward" else _vjp)(g, x, v)
    return out if with_gradient else out[1]


#: the compositions nested here
NESTED = (
    "forward-over-reverse", "reverse-over-reverse", "reverse-over-forward", "forward-over-forward",
)  # fmt: skip


def gradient(f: Callable, i: int) -> Callable:
    """The reverse gradient the numeric composition differences."""

    def g(*a: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(a[i])
            y = f(*a)
        return tape.gradient(y, a[i], unconnected_gradients=ZERO)

    return g


def scale(a: Any, floor: float) -> Any:
    return tf.maximum(tf.reduce_max(tf.abs(a)), floor)
