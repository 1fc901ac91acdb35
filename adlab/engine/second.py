"""``hessian`` and ``hvp``: second derivatives in every composition of modes.

Both compile through ``prepare`` (modes ``hessian`` and ``hvp`` of the
registry, ``adlab.engine.modes.hessian``), so data binding, compile time,
``p.f_evals`` and ``p.cost()`` work as for first derivatives. An HVP's
direction v is held like data: ``p(x)`` takes the product at a new x along the
bound v; ``p(x, v, *args)`` binds a new v (and data).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._vocab import Backend, Composition, Inner, ModelError, Precision
from .backends import DEFAULT, REFERENCE, facts_of, get_backend
from .derivative import crosscheck, prepare, unchecked
from .model.source import Model, normalize_wrt
from .modes.hessian import COMPOSITIONS, NAMES, NESTING_BACKENDS, ON, NotScalar, refusal
from .prepared import DerivativeInfo, Prepared, UntrustedWarning, measured_memory
from .sparse import prepare_sparse

#: jax.hessian's composition: the default scheme of hessian and hvp, where the backend
#: nests it (else the first composition the backend nests: TF.js's reverse-over-reverse)
DEFAULT_COMPOSITION = "forward-over-reverse"
#: JAX's float64 compositions that are the Hessian's reference (``derivative.crosscheck``)
ROUTES = ("forward-over-reverse", "reverse-over-reverse")


def _model(f_or_model: Callable | Model) -> Model:
    return f_or_model if isinstance(f_or_model, Model) else Model.from_function(f_or_model)


def default_composition(backend: str, hvp: bool = False) -> str:
    """The composition a call that names none runs: ``DEFAULT_COMPOSITION`` where
    ``backend`` nests it (or nests none: its refusal then says why), else the first it
    nests (TF.js's reverse-over-reverse)."""
    runs = [c for c in ON.get(backend, ()) if not (hvp and COMPOSITIONS[c].hvp is None)]
    return DEFAULT_COMPOSITION if DEFAULT_COMPOSITION in runs or not runs else runs[0]


def _composition(scheme: str | None, mode: str | None, backend: str, hvp: bool) -> str:
    """The composition asked for: ``scheme``, or ``mode``, its old name (still accepted);
    neither: ``default_composition``."""
    if mode is not None and scheme is not None and mode != scheme:
        raise ValueError(f"scheme={scheme!r} and mode={mode!r} name two compositions; give "
                         "scheme= alone (mode= is its old name)")  # fmt: skip
    asked = scheme if scheme is not None else mode
    return asked if asked is not None else default_composition(backend, hvp)


def _check(mode: str, scheme: str, backend: str) -> None:
    """Refuse composition ``scheme`` of ``mode`` ("hessian", "hvp") where it cannot run."""
    if scheme not in NAMES:
        raise ValueError(f"unknown {mode} scheme {scheme!r}; choose one of {list(NAMES)}")
    if backend not in NESTING_BACKENDS:
        runs = ", ".join(repr(b) for b in NESTING_BACKENDS)
        raise ValueError(
            f"{mode} scheme {scheme!r} is not available on backend {backend!r}: "
            f"{facts_of(backend).why_no_nesting}; use backend= one of {runs}"
        )
    why = refusal(scheme, backend, hvp=mode == "hvp" and scheme != "complex-step")
    if why:
        raise ValueError(why)


def _index(model: Model, wrt: Any, nargs: int) -> int:
    """The one differentiated argument's index in 0..nargs-1."""
    wrt = model.wrt if wrt is None else normalize_wrt(wrt)
    if isinstance(wrt, tuple):
        if len(wrt) != 1:
            raise ValueError(f"a second derivative differentiates one argument; got "
                             f"wrt={wrt!r}: choose one with wrt=i")  # fmt: skip
        wrt = wrt[0]
    if not -nargs <= wrt < nargs:
        raise ValueError(f"wrt={wrt!r} is out of range: f gets {nargs} argument(s)")
    return wrt % nargs


def _scalar_error(model: Model, exc: NotScalar) -> ModelError:
    """A vector f named at its return line, in the user's terms."""
    lineno, line = model.return_line
    return ModelError(str(exc), lineno=lineno, line=line,
                      hint="return a scalar (e.g. np.sum(r**2) / 2 for residuals r), or "
                      "use derivative() for the Jacobian of a vector f")  # fmt: skip


def _precision(precision: str | None, backend: str) -> str:
    """The precision asked for; None: float64, or the framework's one (TF.js: float32)."""
    if precision is not None:
        return precision
    offered = facts_of(backend).precisions
    return "float64" if "float64" in offered else offered[0]


def with_direction(model: Model, i: int, backend: str = DEFAULT, precision: str = "float64"
                   ) -> Model:  # fmt: skip
    """``model`` whose f takes an HVP's v right after argument i, and ignores it."""
    f = model.function(backend, precision)
    return model.derived(lambda *a: f(*a[: i + 1], *a[i + 2 :]))


def prepare_hessian(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    scheme: Composition | None = None,
    wrt: int | None = None,
    jit: bool | None = None,
    precision: Precision | None = None,
    backend: Backend = DEFAULT,
    sparse: bool = False,
    step: Any = None,
    inner: Inner = "reverse",
    mode: Composition | None = None,  # the old name of scheme, still accepted
) -> Any:
    """Compile the Hessian of a scalar ``f(x, *args)``; see ``hessian``.

    Returns:
        A ``Prepared`` (``p(x)``, ``p.compile_s``, ``p.f_evals``, ``p.cost()``), or
        with ``sparse=True`` a ``SparsePrepared`` returning ``scipy.sparse.csr_array``.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> p = adlab.prepare_hessian(model, x, *data, scheme="reverse-over-forward")
        >>> p(x).shape
        (3, 3)
    """
    model = _model(f_or_model)
    precision = _precision(precision, backend)
    scheme = _composition(scheme, mode, backend, hvp=False)
    _check("hessian", scheme, backend)
    i = _index(model, wrt, 1 + len(args))
    try:
        if sparse:
            return prepare_sparse(model, x, *args, mode="hessian", scheme=scheme, wrt=i,
                                  jit=jit is not False, precision=precision,
                                  backend=backend, prepare=prepare)  # fmt: skip
        return prepare(model, x, *args, mode="hessian", scheme=scheme, wrt=i, jit=jit,
                       precision=precision, backend=backend, step=step,
                       inner=inner)  # fmt: skip
    except NotScalar as exc:
        raise _scalar_error(model, exc) from None


def prepare_hvp(
    f_or_model: Callable | Model,
    x: Any,
    v: Any,
    *args: Any,
    scheme: Composition | None = None,
    wrt: int | None = None,
    jit: bool | None = None,
    precision: Precision | None = None,
    backend: Backend = DEFAULT,
    with_gradient: bool = False,
    divided: bool = False,
    mode: Composition | None = None,  # the old name of scheme, still accepted
) -> Prepared:
    """Compile the Hessian-vector product of a scalar ``f(x, *args)``; see ``hvp``.

    Returns:
        A ``Prepared``: ``p(x)`` at a new x along the bound v; ``p(x, v, *args)``
        binds a new v and data (v always follows the differentiated argument).
        With ``with_gradient``, each call returns (gradient, HVP) from one program
        (mode ``gradient-and-hvp``; see ``hvp``); with ``divided``, gradient / HVP
        elementwise from one program (mode ``gradient-over-hvp``: with v = ones and a
        diagonal Hessian, the Newton step).

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> p = adlab.prepare_hvp(model, x, np.ones(3), *data)
        >>> p(x, np.ones(3)).shape
        (3,)
    """
    model = _model(f_or_model)
    precision = _precision(precision, backend)
    scheme = _composition(scheme, mode, backend, hvp=True)
    _check("hvp", scheme, backend)
    if scheme == "complex-step":
        raise ValueError("hvp has no scheme 'complex-step': adlab offers complex step for the "
                         "full Hessian only; use 'forward-over-reverse' (exact, one pass) "
                         "or 'numeric'")  # fmt: skip
    given = (x, *args)
    i = _index(model, wrt, len(given))
    if np.shape(v) != np.shape(given[i]):
        raise ValueError(f"v must have the shape of the differentiated argument {i}, "
                         f"{np.shape(given[i])}; got {np.shape(v)}")  # fmt: skip
    inputs = (*given[: i + 1], v, *given[i + 1 :])
    mode = "gradient-over-hvp" if divided else "gradient-and-hvp" if with_gradient else "hvp"
    try:
        return prepare(with_direction(model, i, backend, precision), *inputs,
                       mode=mode, scheme=scheme, wrt=i,
                       jit=jit, precision=precision, backend=backend)  # fmt: skip
    except NotScalar as exc:
        raise _scalar_error(model, exc) from None


def _value(p: Any, full_output: bool, check: tuple | None = None, checked: bool = True) -> Any:
    """``p``'s value (and info); ``check``: (model, args, v or None) to cross-check a Hessian
    (or its product with v) with; ``checked`` False: only tested to be finite, and never
    called trusted (``derivative``'s ``check=False``)."""
    value = p(*p.inputs)
    if hasattr(p, "info"):  # sparse: a csr_array and its own info
        return (value, p.info()) if full_output else value
    value = get_backend(p.backend).to_numpy(value)  # NumPy, as each framework hands it over
    trusted, note = p.trusted, p.note
    if check is not None:
        model, args, v = check
        mode = "hessian" if v is None else "hvp"
        wrong = crosscheck(model, args, value, wrt=p.wrt, mode=mode, scheme=p.scheme,
                           precision=p.precision, backend=p.backend, order=2, direction=v,
                           reference=not checked or p.backend == REFERENCE
                           and p.precision == "float64" and p.scheme in ROUTES)  # fmt: skip
        if wrong:
            trusted, note = False, wrong
            warnings.warn(f"{mode} {p.scheme} on {p.backend}: {wrong}", UntrustedWarning,
                          stacklevel=3)  # fmt: skip
        elif not checked:
            trusted, note = unchecked(trusted, note)
    if not full_output:
        return value
    return value, DerivativeInfo(None, p.f_evals, p.compile_s, p.step, trusted, note,
                                 **measured_memory(p))  # fmt: skip


def hessian(
    f_or_model: Callable | Model,
    x: Any,
    *args: Any,
    scheme: Composition | None = None,
    wrt: int | None = None,
    precision: Precision | None = None,
    jit: bool | None = None,
    backend: Backend = DEFAULT,
    sparse: bool = False,
    full_output: bool = False,
    inner: Inner = "reverse",
    mode: Composition | None = None,  # the old name of scheme, still accepted
    check: bool = True,
) -> Any:
    """The Hessian of a scalar ``f(x, *args)`` in argument ``wrt``: an (n, n) NumPy array.

    Args:
        f_or_model: a ``Model`` or a function written with ``jax.numpy``.
        x, *args: f's arguments; the differentiated one is a scalar or 1-D array.
        scheme: how the modes nest: "forward-over-reverse" (``jax.hessian``'s choice, the
            default where the backend nests it; else the first it nests: TF.js's
            "reverse-over-reverse"), "reverse-over-forward", "reverse-over-reverse",
            "forward-over-forward",
            "numeric" (central differences of the reverse gradient, symmetrized) or
            "complex-step" (complex step of the reverse gradient: f must be analytic).
        wrt: the argument index; default 0 (or the model's ``wrt``).
        precision, jit, backend: as for ``derivative`` (jit=None: the framework's default,
            JAX compiled, the others eager). JAX runs every scheme; PyTorch (``torch.func``)
            and TensorFlow (nested tapes and accumulators) all but "complex-step";
            autograd all, eagerly (``modes.hessian.ON``; a scheme a framework does not
            nest is refused with the reason). NumPy has no AD to nest.
        sparse: a ``scipy.sparse.csr_array``, from the pattern of the gradient's
            program, star-colored: one HVP per color (``adlab.engine.sparse``).
        full_output: also return a ``DerivativeInfo`` (f_evals: passes, compile_s).
        inner: the mode of the model's own ``grad(fn)``, as for ``derivative``.
        mode: the old name of ``scheme`` (a composition), still accepted.
        check: hold the Hessian to JAX's checked float64 one, as ``derivative`` holds a
            first derivative; False skips that (``derivative``'s ``check``).

    References:
        Pearlmutter, Neural Computation 6(1), 1994; Gebremedhin, Manne & Pothen,
        SIAM Review 47(4), 2005 (coloring a Hessian).

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> H = adlab.hessian(model, x, *data, scheme="forward-over-reverse")
        >>> H.shape, bool(np.allclose(H, H.T))
        ((3, 3), True)
    """
    p = prepare_hessian(f_or_model, x, *args, scheme=scheme, mode=mode, wrt=wrt,
                        jit=jit, precision=precision, backend=backend, sparse=sparse,
                        inner=inner)  # fmt: skip
    return _value(p, full_output, None if sparse else (_model(f_or_model), (x, *args), None),
                  check)  # fmt: skip


def hvp(
    f_or_model: Callable | Model,
    x: Any,
    v: Any,
    *args: Any,
    scheme: Composition | None = None,
    wrt: int | None = None,
    precision: Precision | None = None,
    jit: bool | None = None,
    backend: Backend = DEFAULT,
    full_output: bool = False,
    with_gradient: bool = False,
    mode: Composition | None = None,  # the old name of scheme, still accepted
    check: bool = True,
) -> Any:
    """The Hessian of a scalar ``f(x, *args)`` times ``v`` (shaped like the argument ``wrt``).

    Schemes as for ``hessian`` (``mode=`` is their old name) but complex step.
    The first three cost one pass each,
    a small constant times f (``HVP_BOUND``); "forward-over-forward" costs n, since
    its inner gradient takes n forward passes; "numeric" takes two reverse gradients.

    With ``with_gradient``, returns (gradient, HVP), both from one compiled program
    (as ``jax.jvp(jax.grad(f), (x,), (v,))`` does; Newton-type steps need both). Over
    a gradient ("forward-over-reverse", "reverse-over-reverse", "forward-over-forward")
    the outer pass computes the gradient on its way and it costs nothing more;
    "reverse-over-forward" (whose outer pass sees f's directional derivative, not the
    gradient) and "numeric" compute one more reverse gradient inside the program
    (``f_evals`` counts it). On every framework that nests modes; the gradient is the
    one the composition's inner program takes (reverse or forward AD, also for
    "numeric", whose differences are of the reverse gradient).

    ``check``: hold the product to JAX's checked float64 Hessian times v, as ``hessian``
    does (not with ``with_gradient``); False skips that (``derivative``'s ``check``).

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> x, *data = model.setup(3)
        >>> v = np.ones(3)
        >>> hv = adlab.hvp(model, x, v, *data)
        >>> bool(np.allclose(hv, adlab.hessian(model, x, *data) @ v))
        True
    """
    p = prepare_hvp(f_or_model, x, v, *args, scheme=scheme, mode=mode, wrt=wrt,
                    jit=jit, precision=precision, backend=backend,
                    with_gradient=with_gradient)  # fmt: skip
    return _value(p, full_output, None if with_gradient else (_model(f_or_model), (x, *args), v),
                  check)  # fmt: skip
