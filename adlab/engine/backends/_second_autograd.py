"""autograd's second derivatives: its operators nested over its tape.

``grad``, ``jacobian`` (reverse) and ``make_jvp`` (forward, a trace of JVP nodes)
are functions of functions, and autograd traces through each of them:
forward-over-reverse is ``make_jvp(grad(f))``, reverse-over-reverse
``jacobian(grad(f))`` (what ``autograd.hessian`` is; its HVP is
``autograd.make_hvp``), reverse-over-forward ``grad`` of a JVP. Complex step of
the gradient uses ``holomorphic_grad``, autograd's reverse gradient of an
analytic f at a complex x (checked against the exact Hessian in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as np
from autograd.differential_operators import make_hvp, make_jvp


def _columns(g: Callable, x: Any) -> Any:
    """g's Jacobian by forward mode: one JVP pass per input."""
    push = make_jvp(g)(x)
    # autograd.numpy's stack: an outer autograd operator traces through it (NumPy's drops it)
    return anp.stack([push(e)[1] for e in np.eye(x.size, dtype=x.dtype)], axis=-1)


def _forward_gradient(f: Callable) -> Callable:
    return lambda x: _columns(f, x)


HESSIAN: dict[str, Callable[[Callable, Any], Any]] = {
    "forward-over-reverse": lambda f, x: _columns(autograd.grad(f), x),
    "reverse-over-reverse": lambda f, x: autograd.jacobian(autograd.grad(f))(x),
    "reverse-over-forward": lambda f, x: autograd.jacobian(_forward_gradient(f))(x),
    "forward-over-forward": lambda f, x: _columns(_forward_gradient(f), x),
}
HVP: dict[str, Callable[[Callable, Any, Any], Any]] = {
    "forward-over-reverse": lambda f, x, v: make_jvp(autograd.grad(f))(x)(v)[1],
    "reverse-over-reverse": lambda f, x, v: make_hvp(f)(x)[0](v),
    "reverse-over-forward": lambda f, x, v: autograd.grad(lambda y: make_jvp(f)(y)(v)[1])(x),
    "forward-over-forward": lambda f, x, v: make_jvp(_forward_gradient(f))(x)(v)[1],
}
#: each HVP as (gradient, HVP): the outer operator's primal output is the gradient
#: (``make_hvp`` returns it beside its product); reverse-over-forward's is not, so it
#: takes one more reverse gradient
FUSED: dict[str, Callable[[Callable, Any, Any], tuple[Any, Any]]] = {
    "forward-over-reverse": lambda f, x, v: make_jvp(autograd.grad(f))(x)(v),
    "reverse-over-reverse": lambda f, x, v: (lambda pull, g: (g, pull(v)))(*make_hvp(f)(x)),
    "reverse-over-forward": lambda f, x, v: (
        autograd.grad(f)(x),
        HVP["reverse-over-forward"](f, x, v),
    ),
    "forward-over-forward": lambda f, x, v: make_jvp(_forward_gradient(f))(x)(v),
}

#: the compositions nested here
NESTED = tuple(HESSIAN)


def hessian(name: str, f: Callable, x: Any, jit: bool) -> Any:
    return HESSIAN[name](f, x)


def hvp(name: str, f: Callable, x: Any, v: Any, jit: bool, with_gradient: bool = False) -> Any:
    """H v, or with ``with_gradient`` (gradient, H v) from the same call."""
    return (FUSED if with_gradient else HVP)[name](f, x, v)


def gradient(f: Callable, i: int) -> Callable:
    """The reverse gradient, ``holomorphic_grad`` at a complex x (complex step)."""
    real, holomorphic = autograd.grad(f, i), autograd.holomorphic_grad(f, i)
    return lambda *a: (holomorphic if np.iscomplexobj(a[i]) else real)(*a)


def scale(a: Any, floor: float) -> Any:
    return np.maximum(np.max(np.abs(a)), floor)
