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
(``adlab.engine.second`` inserts it).

Each composition is written once, as DifferentiationInterface.jl writes its HVP,
on a few primitives every framework provides (``Primitives``): the nestable
gradient a model's own ``grad(fn)`` is made of (``backends.inner_grad``, reverse
or forward), the backend's push-forward and pull-back (``Backend.pushforward`` /
``pullback``, which differentiate through that gradient), its Jacobian, and its
NumPy-like ``xp`` for the differences. ``ON`` says which compositions each
framework runs, without importing it: one a framework does not nest is refused
(``WHY_NOT``), never emulated.

References:
    Pearlmutter, "Fast exact multiplication by the Hessian", Neural Computation
    6(1), 1994. Griewank & Walther, *Evaluating Derivatives*, 2nd ed., SIAM 2008
    (second-order adjoints). Nocedal & Wright, *Numerical Optimization*,
    2nd ed., 2006, sec. 8.1 (Hessians from gradient differences).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..backends import DEFAULT, FACTS, Backend, get_backend
from ..backends.inner_grad import make as inner_gradient
from ..backends.js import then_on_host
from ..programs import memory as _memory
from ._registry import Built, Spec, get_rule, register

#: the cheap-HVP guide: an HVP over a reverse gradient costs a small constant times f
#: (Pearlmutter 1994), about this many; costs are shown beside it, not held to it
HVP_BOUND = 5.0


def _of_x(f: Callable, args: tuple, i: int) -> Callable:
    """f as a function of argument i alone, the others held."""
    return lambda x: f(*args[:i], x, *args[i + 1 :])


@functools.cache
def _gradient_maker(backend: str, inner: str, precision: str) -> Callable:
    return inner_gradient(backend, inner, precision)


@dataclass(frozen=True)
class Primitives:
    """What the compositions ask of a framework (DifferentiationInterface's backend).

    Attributes:
        backend: the framework's name.
        precision: "float32" or "float64"; None: the differentiated argument's own
            dtype (JAX's, for ``adlab.engine.sparse``, which calls the HVPs itself).
        jit: the program runs under the framework's compiler (TensorFlow's Jacobians
            are vectorized there).
    """

    backend: str = DEFAULT
    precision: str | None = None
    jit: bool = True

    @property
    def impl(self) -> Backend:
        return get_backend(self.backend)

    def gradient(self, f: Callable, inner: str = "reverse") -> Callable:
        """``x -> grad f(x)`` by ``inner`` mode, for f of x alone; differentiable again,
        holomorphic at a complex x (a model's own ``grad(fn)``: ``inner_grad``)."""
        return _gradient_maker(self.backend, inner, self.precision or "float64")(f)

    def gradient_in(self, f: Callable, i: int) -> Callable:
        """``fn(*args)`` -> the reverse gradient of f in argument i (made once)."""
        d = self.gradient(lambda x, *rest: f(*rest[:i], x, *rest[i:]))
        return lambda *a: d(a[i], *a[:i], *a[i + 1 :])

    def jacobian(self, g: Callable, x: Any, forward: bool) -> Any:
        return self.impl.jacobian(g, 0, forward, self.jit)(x)

    def eps_tiny(self, x: Any) -> tuple[float, float]:
        info = np.finfo(self.precision or x.dtype)
        return float(info.eps), float(info.tiny)

    def scale(self, a: Any, floor: float) -> Any:
        """max(max |a|, floor), an array of a's dtype (no host sync: it stays traceable)."""
        xp = self.impl.xp
        return xp.maximum(xp.max(xp.abs(a)), xp.asarray(floor, dtype=a.dtype))


JAX = Primitives()


@dataclass(frozen=True)
class Composition:
    """One way of nesting modes.

    Attributes:
        name: "outer-over-inner", or "numeric" / "complex-step".
        hessian: ``hessian(spec, primitives) -> fn(*args)``, the n x n Hessian.
        hvp: ``hvp(f, i, with_gradient=False, primitives=JAX) -> fn(*args, v)``, or None
            where it has no HVP; with ``with_gradient``, ``fn`` returns (gradient, HVP)
            from one program.
        passes: ``passes(n, hvp) -> int``: the passes of the composed program
            (gradient evaluations for "numeric" and "complex-step").
        exact: False for finite differences (an error O(h^2) besides rounding).
        gradient_passes: what the gradient adds to the HVP's passes when both are
            asked of one program: 0 where the HVP computes it on the way.
    """

    name: str
    hessian: Callable[[Spec, Primitives], Callable]
    hvp: Callable[..., Callable] | None
    passes: Callable[[int, bool], int]
    exact: bool = True
    gradient_passes: int = 0


# ------------------------------------------------------ nested: outer-over-inner
def _nested_hessian(name: str) -> Callable:
    """The outer mode's Jacobian of the inner mode's gradient."""
    outer, inner = name.split("-over-")
    return lambda p, f, x: p.jacobian(p.gradient(f, inner), x, outer == "forward")


# An HVP with ``with_gradient`` returns (gradient, HVP) from the same program. Over a
# gradient (reverse, or forward's n columns) the outer pass's primal is that gradient, so
# it comes free; reverse-over-forward pulls back one push-forward of f, whose primal is
# the directional derivative, so it takes one more gradient (``gradient_passes``).
def _nested_hvp(name: str) -> Callable:
    outer, inner = name.split("-over-")

    def product(p: Primitives, f: Callable, x: Any, v: Any, with_gradient: bool) -> Any:
        if name == "reverse-over-forward":
            hv = p.gradient(lambda y: p.impl.pushforward(f, y, v)[1])(x)
            return (p.gradient(f)(x), hv) if with_gradient else hv
        passes = p.impl.pushforward if outer == "forward" else p.impl.pullback
        out = passes(p.gradient(f, inner), x, v)  # (gradient, HVP)
        return out if with_gradient else out[1]

    return product


def _at_x(run: Callable, f: Callable, i: int, p: Primitives, hvp: bool,
          with_gradient: bool = False) -> Callable:  # fmt: skip
    """``fn(*args)`` (with ``hvp``, ``fn(*args, v)``) running ``run`` on f of x alone.
    The frameworks' Jacobians take a 1-D x: a 0-d one goes as (1,)."""

    def fn(*a: Any) -> Any:
        args = a[:-1] if hvp else a
        x, fx = args[i], _of_x(f, args, i)
        scalar = len(x.shape) == 0
        if scalar:
            x, fx = x.reshape(1), (lambda g: lambda y: g(y.reshape(())))(fx)
        if hvp:
            out = run(p, fx, x, a[-1].reshape(1) if scalar else a[-1], with_gradient)
        else:
            out = run(p, fx, x)
        if not scalar:
            return out
        return tuple(o.reshape(()) for o in out) if with_gradient else out.reshape(())

    return fn


def _nested(name: str) -> tuple[Callable, Callable]:
    """(hessian, hvp) builders of composition ``name``."""
    hessian, product = _nested_hessian(name), _nested_hvp(name)

    def build_hessian(spec: Spec, p: Primitives) -> Callable:
        return _at_x(hessian, spec.f, spec.indices[0], p, False)

    def build_hvp(f: Callable, i: int, with_gradient: bool = False,
                  p: Primitives = JAX) -> Callable:  # fmt: skip
        return _at_x(product, f, i, p, True, with_gradient)

    return build_hessian, build_hvp


# ------------------------------------------- differences of the reverse gradient
def _difference(g: Callable, x: Any, v: Any, p: Primitives, with_gradient: bool = False) -> Any:
    """(g(x + h v) - g(x - h v)) / 2h, g the reverse gradient, h ~ eps^(1/3) scaled to x,
    v. With ``with_gradient``, (g(x), that): one more gradient, in the same program."""
    eps, tiny = p.eps_tiny(x)
    h = eps ** (1 / 3) * p.scale(x, 1.0) / p.scale(v, tiny)
    hv = (g(x + h * v) - g(x - h * v)) / (2 * h)
    return (g(x), hv) if with_gradient else hv


def _hvp_numeric(f: Callable, i: int, with_gradient: bool = False,
                 p: Primitives = JAX) -> Callable:  # fmt: skip
    g = p.gradient_in(f, i)
    return lambda *a: _difference(_of_x(g, a[:-1], i), a[i], a[-1], p, with_gradient)


def _first_order(mode: str, spec: Spec, p: Primitives, symmetric: bool) -> Callable:
    """The first-order ``mode``'s Jacobian of the reverse gradient: a Hessian column by column."""
    i = spec.indices[0]
    inner = replace(spec, f=p.gradient_in(spec.f, i), wrt=i, out_shape=np.shape(spec.args[i]),
                    scheme="central", f_jax=spec.f_jax)  # fmt: skip
    fn = get_rule(mode).build(inner).fn
    if not symmetric:
        return fn
    return lambda *args: (lambda h: (h + h.T) / 2)(fn(*args))


COMPOSITIONS: dict[str, Composition] = {
    c.name: c
    for c in (
        Composition("forward-over-reverse", *_nested("forward-over-reverse"),
                    lambda n, hvp: 1 if hvp else n),
        Composition("reverse-over-forward", *_nested("reverse-over-forward"),
                    lambda n, hvp: 1 if hvp else n * n, gradient_passes=1),
        Composition("reverse-over-reverse", *_nested("reverse-over-reverse"),
                    lambda n, hvp: 1 if hvp else n),
        Composition("forward-over-forward", *_nested("forward-over-forward"),
                    lambda n, hvp: n if hvp else n * n),
        # the differences are symmetrized, (H + H^T) / 2: the exact Hessian is symmetric
        Composition("numeric", lambda spec, p: _first_order("numeric", spec, p, True),
                    _hvp_numeric, lambda n, hvp: 2 if hvp else 2 * n, exact=False,
                    gradient_passes=1),
        Composition("complex-step", lambda spec, p: _first_order("complex-step", spec, p, False),
                    None, lambda n, hvp: n),
    )
}  # fmt: skip
NAMES: tuple[str, ...] = tuple(COMPOSITIONS)
HVP_NAMES: tuple[str, ...] = tuple(c.name for c in COMPOSITIONS.values() if c.hvp is not None)

#: the compositions each framework runs: its facts entry's ``nests`` (NumPy: no AD to nest)
ON: dict[str, tuple[str, ...]] = {name: f.nests for name, f in FACTS.items() if f.nests}
#: the frameworks whose modes nest here
NESTING_BACKENDS: tuple[str, ...] = tuple(ON)
#: why a framework does not run a composition (its entry's ``why_not_nested``; each checked
#: where the framework is tested)
WHY_NOT: dict[tuple[str, str], str] = {
    (name, c): why for name, f in FACTS.items() for c, why in f.why_not_nested.items()
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


def _composition(name: str, hvp: bool, backend: str = DEFAULT) -> Composition:
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


def _reverse_part(name: str, spec: Spec, p: Primitives, hvp: bool) -> Callable | None:
    """What the composition's reverse pass runs forward (``Built.reverse_of``): f, where
    reverse mode is innermost (its gradient differentiated again, by forward mode or by
    differences); the inner derivative, where it is outermost; None without one."""
    outer, _, inner = name.partition("-over-")
    if name == "forward-over-forward":
        return None
    if outer != "reverse":
        return spec.f
    i = spec.indices[0]
    if hvp and inner == "forward":  # one push-forward along v (after x), pulled back
        return lambda *a: p.impl.pushforward(_of_x(spec.f, a, i), a[i], a[i + 1])[1]
    return lambda *a: p.gradient(_of_x(spec.f, a, i), inner)(a[i])


def _primitives(spec: Spec) -> Primitives:
    return Primitives(spec.backend, np.dtype(spec.dtype).name, spec.jit)


@register("hessian", backends=NESTING_BACKENDS, summary="the Hessian, by a composition of modes",
          eager_cures=True, schemes=NAMES, order=2)  # fmt: skip
def hessian(spec: Spec) -> Built:
    n = check_spec(spec, "Hessian")
    c = _composition(spec.scheme, hvp=False, backend=spec.backend)
    _memory.check(n * n * np.dtype(spec.dtype).itemsize, f"the Hessian ({n} x {n})")
    p = _primitives(spec)
    own = getattr(p.impl, "nested", None)  # a framework nesting its own transforms (jax-js)
    fn, passes = own(spec, c.name, n, False) if own else (c.hessian(spec, p), c.passes(n, False))
    return Built(fn, f_evals=passes, note=NOTES.get(c.name),
                 reverse_of=_reverse_part(c.name, spec, p, hvp=False))  # fmt: skip


def _hvp(spec: Spec, with_gradient: bool) -> Built:
    """``spec.f`` takes v after the differentiated argument and ignores it (see the docstring)."""
    n = check_spec(spec, "Hessian-vector product")
    c = _composition(spec.scheme, hvp=True, backend=spec.backend)
    i = spec.indices[0]
    # the compositions take f without v, and v last; spec.f ignores its v, so any array serves
    f = lambda *b: spec.f(*b[: i + 1], b[i], *b[i + 1 :])  # noqa: E731
    p = _primitives(spec)
    product = c.hvp(f, i, with_gradient, p)

    def fn(*a):
        return product(*a[: i + 1], *a[i + 2 :], a[i + 1])

    passes = c.passes(n, True) + (c.gradient_passes if with_gradient else 0)
    if hasattr(p.impl, "nested"):  # jax-js: its own program takes v after x as spec.f does
        fn, passes = p.impl.nested(spec, c.name, n, True, with_gradient)
    return Built(fn, f_evals=passes, note=NOTES.get(c.name),
                 reverse_of=_reverse_part(c.name, spec, p, hvp=True))  # fmt: skip


@register("hvp", backends=NESTING_BACKENDS, eager_cures=True, schemes=HVP_NAMES, order=2,
          summary="the Hessian times v, by a composition of modes")  # fmt: skip
def hvp(spec: Spec) -> Built:
    return _hvp(spec, with_gradient=False)


@register("gradient-and-hvp", backends=NESTING_BACKENDS, eager_cures=True, schemes=HVP_NAMES,
          order=2,
          summary="the gradient and the Hessian times v, from one program")  # fmt: skip
def gradient_and_hvp(spec: Spec) -> Built:
    """(gradient, HVP): ``hvp`` with the gradient the composition computes on the way."""
    return _hvp(spec, with_gradient=True)


@register("gradient-over-hvp", backends=NESTING_BACKENDS, eager_cures=True, schemes=HVP_NAMES,
          order=2,
          summary="the gradient over the Hessian times v, elementwise, in one program")  # fmt: skip
def gradient_over_hvp(spec: Spec) -> Built:
    """gradient / HVP elementwise: with v = ones and a diagonal Hessian, the Newton step
    (GradBench kmeans's ``dir``). Divided in the program: taking the pair to the host
    and dividing there cost ~40 us beside kmeans's ~100 us program (JAX, k=10, n=1000)."""
    built = _hvp(spec, with_gradient=True)
    # a framework's pair from Node (jax-js, TF.js) is divided in Python, not traced by JAX
    return replace(built, fn=then_on_host(built.fn, lambda pair: pair[0] / pair[1]))
