"""PyTorch's second derivatives: ``torch.func``'s transforms nested, as its docs compose them.

``torch.func.grad`` / ``jvp`` / ``vjp`` / ``jacfwd`` / ``jacrev`` are functions
of functions, so they nest the way JAX's do: forward-over-reverse is
``jacfwd(grad(f))`` (what ``torch.func.hessian`` is) and its HVP
``jvp(grad(f), x, v)``, whose primal output is the gradient (``FUSED``). They run
eagerly, and under ``torch.compile``.
First order uses ``torch.autograd.grad`` on a tape instead (as PyTorch's users
write a gradient); a tape's double backward would give only reverse-over-reverse.

Complex step of the gradient is not offered: PyTorch's reverse mode
differentiates real-valued outputs (``torch.autograd.grad`` refuses the complex
f(x + ih); see ``second_order.WHY_NOT``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.func import grad, jacfwd, jacrev, jvp, vjp

#: the compositions nested here, each with its Hessian and its HVP of f(x) (x 1-D)
HESSIAN: dict[str, Callable[[Callable, Any], Any]] = {
    "forward-over-reverse": lambda f, x: jacfwd(grad(f))(x),
    "reverse-over-reverse": lambda f, x: jacrev(grad(f))(x),
    "reverse-over-forward": lambda f, x: jacrev(jacfwd(f))(x),
    "forward-over-forward": lambda f, x: jacfwd(jacfwd(f))(x),
}
HVP: dict[str, Callable[[Callable, Any, Any], Any]] = {
    "forward-over-reverse": lambda f, x, v: jvp(grad(f), (x,), (v,))[1],
    "reverse-over-reverse": lambda f, x, v: vjp(grad(f), x)[1](v)[0],
    "reverse-over-forward": lambda f, x, v: grad(lambda y: jvp(f, (y,), (v,))[1])(x),
    "forward-over-forward": lambda f, x, v: jvp(jacfwd(f), (x,), (v,))[1],
}
#: each HVP as (gradient, HVP): torch.func's jvp and vjp return the primal, which over
#: grad (or jacfwd) is the gradient; reverse-over-forward's outer primal is not, so it
#: takes one more reverse gradient
FUSED: dict[str, Callable[[Callable, Any, Any], tuple[Any, Any]]] = {
    "forward-over-reverse": lambda f, x, v: jvp(grad(f), (x,), (v,)),
    "reverse-over-reverse": lambda f, x, v: (lambda g, pull: (g, pull(v)[0]))(*vjp(grad(f), x)),
    "reverse-over-forward": lambda f, x, v: (grad(f)(x), grad(lambda y: jvp(f, (y,), (v,))[1])(x)),
    "forward-over-forward": lambda f, x, v: jvp(jacfwd(f), (x,), (v,)),
}

#: the compositions nested here
NESTED = tuple(HESSIAN)


def hessian(name: str, f: Callable, x: Any, jit: bool) -> Any:
    return HESSIAN[name](f, x)


def hvp(name: str, f: Callable, x: Any, v: Any, jit: bool, with_gradient: bool = False) -> Any:
    """H v, or with ``with_gradient`` (gradient, H v) from the same call."""
    return (FUSED if with_gradient else HVP)[name](f, x, v)


def gradient(f: Callable, i: int) -> Callable:
    """The reverse gradient the numeric composition differences: ``torch.func.grad``,
    which ``torch.func.vmap`` batches (``torch.autograd.grad`` it cannot)."""
    return grad(f, argnums=i)


def scale(a: Any, floor: float) -> Any:
    """max(max |a|, floor), a 0-d tensor (no host sync: it stays traceable)."""
    return a.abs().max().clamp(min=floor)
