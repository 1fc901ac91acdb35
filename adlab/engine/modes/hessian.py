"""Second derivatives: the Hessian and the Hessian-vector product (HVP), by composition.

A second derivative nests two first-order modes: the inner one differentiates
f, the outer one differentiates the inner one's program. Each composition is
an entry of ``COMPOSITIONS``, named "outer-over-inner" as in JAX's docs:

- forward-over-reverse: the JVP of the reverse gradient (``jax.hessian``).
- reverse-over-reverse: the VJP of the reverse gradient.
- reverse-over-forward: the VJP of a JVP of f.
- forward-over-forward: the JVP of the forward gradient, which takes n JVPs of f.
- numeric: central differences of the reverse gradient (not of f: differencing
  f twice loses twice the digits; this loses those of one difference).
- complex-step (Hessian only): Im grad f(x + ih e_j) / h, the complex step of the
  reverse gradient, for an analytic f (the first-order check of f's program
  refuses non-analytic operations, with the user's line).

An HVP costs a small constant times f whichever of the first three is used
(Pearlmutter 1994): one pass of the outer mode over the inner program. A
Hessian is n HVPs. Over a forward gradient each pass drags n tangents along.

The modes register as ``hessian`` and ``hvp``: ``prepare(model, x, *args,
mode="hessian", scheme="forward-over-reverse")`` compiles one, and a sweep's
variant ``hessian[forward-over-reverse]`` names one. ``gradient-and-hvp``
returns (gradient, HVP) from one program (``hvp(..., with_gradient=True)``):
the outer pass over a gradient computes that gradient on its way. An HVP's
direction v is the argument right after the differentiated one
(``adlab.engine.second`` inserts it). JAX's compositions are ``COMPOSITIONS``;
PyTorch, TensorFlow and autograd nest their own operators
(``backends/_second_<framework>.py``), and ``ON`` says which compositions each
runs, without importing it: a composition a framework does not nest is refused
(``WHY_NOT``), never emulated.

References:
    Pearlmutter, "Fast exact multiplication by the Hessian", Neural Computation
    6(1), 1994. Griewank & Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008
    (second-order adjoints). Nocedal & Wright, *Numerical Optimization*,
    2nd ed., 2006, sec. 8.1 (Hessians from gradient differences).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..programs import memory as _memory
from ._registry import Built, Spec, get_rule, register

#: the cheap-HVP guide: an HVP over a reverse gradient costs a small constant times f
#: (Pearlmutter 1994), about this many; costs are shown beside it, not held to it
HVP_BOUND = 5.0


def _of_x(f: Callable, args: tuple, i: int) -> Callable:
    """f as a function of argument i alone, the others held."""
    return lambda x: f(*args[:i], x, *args[i + 1 :])


def _grad(f: Callable, i: int) -> Callable:
    """The reverse gradient of f in argument i; holomorphic at a complex x (complex step)."""

    def g(*args):
        holo = jnp.iscomplexobj(args[i])
        return jax.grad(f, argnums=i, holomorphic=holo)(*args)

    return g


@dataclass(frozen=True)
class Composition:
    """One way of nesting modes.

    Attributes:
        name: "outer-over-inner", or "numeric" / "complex-step".
        hessian: ``hessian(spec) -> fn(*args)``, the n x n Hessian.
        hvp: ``hvp(f, i, with_gradient=False) -> fn(*args, v)``, or None where it has no
            HVP; with ``with_gradient``, ``fn`` returns (gradient, HVP) from one program.
        passes: ``passes(n, hvp) -> int``: the passes of the composed program
            (gradient evaluations for "numeric" and "complex-step").
        exact: False for finite differences (an error O(h^2) besides rounding).
        gradient_passes: what the gradient adds to the HVP's passes when both are
            asked of one program: 0 where the HVP computes it on the way.
    """

    name: str
    hessian: Callable[[Spec], Callable]
    hvp: Callable[..., Callable] | None
    passes: Callable[[int, bool], int]
    exact: bool = True
    gradient_passes: int = 0


def _nested(outer: Callable, inner: Callable) -> Callable[[Spec], Callable]:
    i_of = lambda spec: spec.indices[0]  # noqa: E731

    def build(spec: Spec) -> Callable:
        i = i_of(spec)
        return lambda *args: outer(inner(spec.f, argnums=i), argnums=i)(*args)

    return build


def _pair(out: tuple, with_gradient: bool) -> Any:
    """(gradient, HVP) as a fused program returns them, or the HVP alone."""
    return out if with_gradient else out[1]


# Each HVP builder takes ``with_gradient``: then ``fn(*args, v)`` returns (gradient, HVP)
# from the same program. Where the inner program is the gradient (over reverse, and over
# forward's n-column gradient), the outer pass computes it on the way and returning it is
# free; reverse-over-forward and numeric compute it once more inside (``gradient_passes``).
def _hvp_fwd_rev(f, i, with_gradient=False):
    def fn(*a):
        out = jax.jvp(_of_x(_grad(f, i), a[:-1], i), (a[i],), (a[-1],))  # (g, Hv)
        return _pair(out, with_gradient)

    return fn


def _hvp_rev_rev(f, i, with_gradient=False):
    def fn(*a):
        g = _of_x(_grad(f, i), a[:-1], i)

        def inner(x):
            gx = g(x)
            return jnp.vdot(gx, a[-1]), gx

        hv, gx = jax.grad(inner, has_aux=True)(a[i])
        return _pair((gx, hv), with_gradient)

    return fn


def _hvp_rev_fwd(f, i, with_gradient=False):
    def fn(*a):
        fx = _of_x(f, a[:-1], i)
        hv = jax.grad(lambda x: jax.jvp(fx, (x,), (a[-1],))[1])(a[i])
        # the outer pass's primal is the directional derivative, not the gradient
        return (_grad(f, i)(*a[:-1]), hv) if with_gradient else hv

    return fn


def _hvp_fwd_fwd(f, i, with_gradient=False):
    def fn(*a):
        out = jax.jvp(_of_x(jax.jacfwd(f, argnums=i), a[:-1], i), (a[i],), (a[-1],))
        return _pair(out, with_gradient)

    return fn


def _difference(g: Callable, x: Any, v: Any, eps: float, tiny: float, scale: Callable,
                with_gradient: bool = False) -> Any:  # fmt: skip
    """(g(x + h v) - g(x - h v)) / 2h, g the reverse gradient, h ~ eps^(1/3) scaled to x, v;
    ``scale(a, floor)`` is max(max |a|, floor) in the framework's arrays. With
    ``with_gradient``, (g(x), that): one more gradient, in the same program."""
    h = eps ** (1 / 3) * scale(x, 1.0) / scale(v, tiny)
    hv = (g(x + h * v) - g(x - h * v)) / (2 * h)
    return (g(x), hv) if with_gradient else hv


def _hvp_numeric(f, i, with_gradient=False):
    def fn(*a):
        x, info = a[i], jnp.finfo(a[i].dtype)
        scale = lambda b, floor: jnp.maximum(jnp.max(jnp.abs(b)), floor)  # noqa: E731
        return _difference(_of_x(_grad(f, i), a[:-1], i), x, a[-1], info.eps, info.tiny, scale,
                           with_gradient)  # fmt: skip

    return fn


def _first_order(mode: str, spec: Spec, symmetric: bool, grad: Callable = _grad) -> Callable:
    """The first-order ``mode``'s Jacobian of the reverse gradient: a Hessian column by column."""
    i = spec.indices[0]
    inner = replace(spec, f=grad(spec.f, i), wrt=i, out_shape=np.shape(spec.args[i]),
                    scheme="central", f_jax=spec.f_jax)  # fmt: skip
    fn = get_rule(mode).build(inner).fn
    if not symmetric:
        return fn
    return lambda *args: (lambda h: (h + h.T) / 2)(fn(*args))


COMPOSITIONS: dict[str, Composition] = {
    c.name: c
    for c in (
        Composition("forward-over-reverse", _nested(jax.jacfwd, jax.grad), _hvp_fwd_rev,
                    lambda n, hvp: 1 if hvp else n),
        Composition("reverse-over-forward", _nested(jax.jacrev, jax.jacfwd), _hvp_rev_fwd,
                    lambda n, hvp: 1 if hvp else n * n, gradient_passes=1),
        Composition("reverse-over-reverse", _nested(jax.jacrev, jax.grad), _hvp_rev_rev,
                    lambda n, hvp: 1 if hvp else n),
        Composition("forward-over-forward", _nested(jax.jacfwd, jax.jacfwd), _hvp_fwd_fwd,
                    lambda n, hvp: n if hvp else n * n),
        # the differences are symmetrized, (H + H^T) / 2: the exact Hessian is symmetric
        Composition("numeric", lambda spec: _first_order("numeric", spec, True), _hvp_numeric,
                    lambda n, hvp: 2 if hvp else 2 * n, exact=False, gradient_passes=1),
        Composition("complex-step", lambda spec: _first_order("complex-step", spec, False), None,
                    lambda n, hvp: n),
    )
}  # fmt: skip
NAMES: tuple[str, ...] = tuple(COMPOSITIONS)
HVP_NAMES: tuple[str, ...] = tuple(c.name for c in COMPOSITIONS.values() if c.hvp is not None)

_NESTED = NAMES[:4]
#: the compositions each framework runs (see the module docstring); NumPy has no AD to nest
ON: dict[str, tuple[str, ...]] = {
    "jax": NAMES,
    "torch": (*_NESTED, "numeric"),
    "tensorflow": (*_NESTED, "numeric"),
    "autograd": NAMES,
}
#: the frameworks whose modes nest here
BACKENDS: tuple[str, ...] = tuple(ON)
#: why a framework does not run a composition (each checked where the framework is tested)
WHY_NOT: dict[tuple[str, str], str] = {
    ("torch", "complex-step"): (
        "PyTorch's reverse mode differentiates real-valued outputs: torch.autograd.grad and "
        "torch.func.grad refuse the complex f(x + ih) that complex step of the gradient needs"
    ),
    ("tensorflow", "complex-step"): (
        "TensorFlow's GradientTape.gradient at a complex x returns the conjugate derivative, "
        "and for x**2 a wrong one (its power's gradient mishandles the complex x), so "
        "Im grad f(x + ih) / h would be silently wrong"
    ),
}

#: what a record's note says of each inexact composition
NOTES = {
    "numeric": "central differences of the reverse gradient (not of f), symmetrized",
    "complex-step": "complex step of the reverse gradient",
}


class NotScalar(ValueError):
    """f returns a vector where a second derivative needs a scalar (named at the user's
    return line by ``adlab.engine.second``)."""


def check_spec(spec: Spec, what: str) -> int:
    """The differentiated argument's size; a ValueError where a second derivative cannot be."""
    if isinstance(spec.wrt, tuple) and len(spec.wrt) != 1:
        raise ValueError(f"a {what} differentiates one argument; got wrt={spec.wrt!r}: "
                         "choose one with wrt=i")  # fmt: skip
    if spec.out_shape != ():
        raise NotScalar(f"a {what} needs f to return a scalar; f returns shape {spec.out_shape}")
    shape = np.shape(spec.args[spec.indices[0]])
    if len(shape) > 1:
        raise ValueError(
            f"a {what} here needs the differentiated argument to be a scalar or 1-D array; "
            f"argument {spec.indices[0]} has shape {shape}: flatten it (x.reshape(-1)) in f"
        )
    return int(np.prod(shape, dtype=int))


def refusal(name: str, backend: str, hvp: bool = False) -> str | None:
    """Why ``backend`` does not run composition ``name``, naming what it runs; None if it does."""
    runs = [c for c in ON.get(backend, ()) if not (hvp and COMPOSITIONS[c].hvp is None)]
    if name in runs or name not in COMPOSITIONS or backend not in ON:
        return None
    why = WHY_NOT.get((backend, name), f"backend={backend!r} does not nest it")
    what = "an HVP" if hvp else "a Hessian"
    return (f"{what} by {name!r} is not available on backend={backend!r}: {why}. "
            f"backend={backend!r} runs {', '.join(map(repr, runs))}; use one of those, "
            f"or backend='jax', which runs every composition")  # fmt: skip


def _composition(name: str, hvp: bool, backend: str = "jax") -> Composition:
    if name not in COMPOSITIONS:
        raise ValueError(f"unknown composition {name!r}; choose one of {list(NAMES)}")
    c = COMPOSITIONS[name]
    if hvp and c.hvp is None:
        raise ValueError(
            f"hvp has no mode {name!r}: adlab offers complex step for the full Hessian only; "
            "use 'forward-over-reverse' (exact, one pass) or 'numeric'"
        )
    why = refusal(name, backend, hvp=hvp)
    if why:
        raise ValueError(why)
    return c


def _framework(backend: str) -> Any:
    """A framework's nested operators (``backends/_second_<backend>.py``), imported on use."""
    return importlib.import_module(f"..backends._second_{backend}", __package__)


def _nested_on(fw: Any, name: str, f: Callable, i: int, jit: bool, hvp: bool,
               with_gradient: bool = False) -> Callable:  # fmt: skip
    """A framework's nesting ``name``: ``fn(*args)`` -> the Hessian, or with ``hvp``
    ``fn(*args, v)`` -> the HVP (with ``with_gradient``, (gradient, HVP)). Its operators
    take a 1-D x: a 0-d one goes as (1,)."""

    def fn(*a: Any) -> Any:
        args = a[:-1] if hvp else a
        x, fx = args[i], _of_x(f, args, i)
        scalar = len(x.shape) == 0
        if scalar:
            x, fx = x.reshape(1), (lambda g: lambda y: g(y.reshape(())))(fx)
        if hvp:
            v = a[-1].reshape(1) if scalar else a[-1]
            out = fw.hvp(name, fx, x, v, jit, with_gradient)
        else:
            out = fw.hessian(name, fx, x, jit)
        if not scalar:
            return out
        return tuple(o.reshape(()) for o in out) if with_gradient else out.reshape(())

    return fn


def _on_framework(spec: Spec, c: Composition, f: Callable, hvp: bool,
                  with_gradient: bool = False) -> Callable:  # fmt: skip
    """Composition ``c`` in the framework of ``spec.backend`` (not JAX)."""
    fw, i = _framework(spec.backend), spec.indices[0]
    if c.name in fw.NESTED:
        return _nested_on(fw, c.name, f, i, spec.jit, hvp, with_gradient)
    if not hvp:
        return _first_order(c.name, spec, c.name == "numeric", grad=fw.gradient)
    info = np.finfo(spec.dtype)
    eps, tiny = float(info.eps), float(info.tiny)
    return lambda *a: _difference(_of_x(fw.gradient(f, i), a[:-1], i), a[i], a[-1], eps,
                                  tiny, fw.scale, with_gradient)  # fmt: skip


@register("hessian", backends=BACKENDS, summary="the Hessian, by a composition of modes",
          eager_cures=True, schemes=NAMES, order=2)  # fmt: skip
def hessian(spec: Spec) -> Built:
    n = check_spec(spec, "Hessian")
    c = _composition(spec.scheme, hvp=False, backend=spec.backend)
    _memory.check(n * n * np.dtype(spec.dtype).itemsize, f"the Hessian ({n} x {n})")
    fn = c.hessian(spec) if spec.backend == "jax" else _on_framework(spec, c, spec.f, False)
    return Built(fn, f_evals=c.passes(n, False), note=NOTES.get(c.name))


def _hvp(spec: Spec, with_gradient: bool) -> Built:
    """``spec.f`` takes v after the differentiated argument and ignores it (see the docstring)."""
    n = check_spec(spec, "Hessian-vector product")
    c = _composition(spec.scheme, hvp=True, backend=spec.backend)
    i = spec.indices[0]
    # the compositions take f without v, and v last; spec.f ignores its v, so any array serves
    f = lambda *b: spec.f(*b[: i + 1], b[i], *b[i + 1 :])  # noqa: E731
    if spec.backend == "jax":
        product = c.hvp(f, i, with_gradient)
    else:
        product = _on_framework(spec, c, f, True, with_gradient)

    def fn(*a):
        return product(*a[: i + 1], *a[i + 2 :], a[i + 1])

    passes = c.passes(n, True) + (c.gradient_passes if with_gradient else 0)
    return Built(fn, f_evals=passes, note=NOTES.get(c.name))


@register("hvp", backends=BACKENDS, summary="the Hessian times v, by a composition of modes",
          eager_cures=True, schemes=HVP_NAMES, order=2)  # fmt: skip
def hvp(spec: Spec) -> Built:
    return _hvp(spec, with_gradient=False)


@register("gradient-and-hvp", backends=BACKENDS, eager_cures=True, schemes=HVP_NAMES, order=2,
          summary="the gradient and the Hessian times v, from one program")  # fmt: skip
def gradient_and_hvp(spec: Spec) -> Built:
    """(gradient, HVP): ``hvp`` with the gradient the composition computes on the way."""
    return _hvp(spec, with_gradient=True)


@register("gradient-over-hvp", backends=BACKENDS, eager_cures=True, schemes=HVP_NAMES, order=2,
          summary="the gradient over the Hessian times v, elementwise, in one program")  # fmt: skip
def gradient_over_hvp(spec: Spec) -> Built:
    """gradient / HVP elementwise: with v = ones and a diagonal Hessian, the Newton step
    (GradBench kmeans's ``dir``). Divided in the program: taking the pair to the host
    and dividing there cost ~40 us beside kmeans's ~100 us program (JAX, k=10, n=1000)."""
    built = _hvp(spec, with_gradient=True)
    pair = built.fn
    return replace(built, fn=lambda *a: (lambda g, hv: g / hv)(*pair(*a)))
