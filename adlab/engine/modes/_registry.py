"""The mode registry: each mode is an entry, not a branch of an if-chain.

A mode turns a *spec* (the function, example arguments, which arguments to
differentiate, options) into a *built* derivative function. The caller
(``adlab.prepare``) jit-compiles, times and guards it; modes only say what to
compute. New modes register themselves with ``@register(...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._vocab import MODES
from ..backends import Backend, get_backend
from ..model.args import wrt_indices


@dataclass(frozen=True)
class Spec:
    """What a mode needs to build a derivative function.

    Attributes:
        f: the model's function for ``backend``.
        args: example arguments, already cast to ``dtype``.
        wrt: argument index, or tuple of indices (as JAX's ``argnums``).
        out_shape: shape of f's output: () or (m,).
        scheme: finite-difference scheme (numeric mode only).
        step: user's step, or None for the mode's default.
        dtype: the float type of the computation.
        backend: the backend's name ("jax", "numpy", "torch", ...); ``impl`` is the backend.
        f_jax: the JAX twin of f (for analysing the function), or None.
        files: the model's source file names, to find the user's line.
        jit: the built function will run under the framework's compiler.
        device: the device the backend's programs run on (``prepare``'s ``device``; None:
            its default): its derivatives are built there too, not on the default.
    """

    f: Callable
    args: tuple[Any, ...]
    wrt: int | tuple[int, ...]
    out_shape: tuple[int, ...]
    scheme: str
    step: Any
    dtype: type[np.floating]
    backend: str
    f_jax: Callable | None = None
    files: frozenset[str] = frozenset()
    jit: bool = False
    device: Any = None

    @property
    def impl(self) -> Backend:
        """The backend on ``device``: its primitives (``adlab.engine.backends``); one that
        chooses no device (its ``devices`` empty: PyTorch's is its own) as it is."""
        impl = get_backend(self.backend)
        return impl.on_device(self.device) if impl.devices else impl

    @property
    def indices(self) -> tuple[int, ...]:
        return wrt_indices(self.wrt)

    def size(self, i: int) -> int:
        return int(np.size(self.args[i]))


@dataclass(frozen=True)
class Built:
    """A mode's answer.

    Attributes:
        fn: ``fn(*args)`` -> the derivative (a tuple when ``wrt`` is a tuple);
            with ``with_error``, a pair (derivative, error estimate).
        f_evals: evaluations of f (or AD passes) per derivative.
        with_error: whether ``fn`` also returns an error estimate.
        trusted: False when the result cannot be vouched for (see ``note``).
        note: why it is not trusted, or other caveats.
        step: the step used (numeric and complex step), for reports.
        cost_fn: the same computation written without loops, for XLA's cost
            analysis, which counts a loop body once; None when ``fn`` has no
            loop of the mode's own.
        chunked: its batch of f_evals copies of x is evaluated in chunks, never
            held at once (refused only when it would take too long).
        reverse_of: ``g(*args)``, the function whose reverse pass the derivative runs
            (f for reverse mode; a composition's inner derivative where reverse mode is
            outermost): what its forward pass keeps for the backward pass is the record's
            ``residual_bytes``. None: the derivative has no reverse part.
    """

    fn: Callable
    f_evals: int
    with_error: bool = False
    trusted: bool = True
    note: str | None = None
    step: Any = None
    cost_fn: Callable | None = None
    chunked: bool = False
    reverse_of: Callable | None = None


@dataclass(frozen=True)
class Stepping:
    """What a mode with a step h says about it, for step sweeps (``adlab.step_errors``).

    Attributes:
        powers: for each scheme the mode offers a step sweep, its default
            relative step as a power of eps: where truncation (h**q) meets
            round-off (eps / h). None for a scheme with no round-off arm
            (complex step: every h below ~sqrt(eps) is as good).
        at_step: ``at_step(spec, i, h, args) -> (derivative, error estimate or None)``
            for argument i at relative step h, h a traced value (so one compiled
            program serves every h); ``spec.scheme`` names the scheme.
        fixed_step: the default step of the schemes whose power is None.
    """

    powers: Mapping[str, float | None]
    at_step: Callable[..., tuple[Any, Any]]
    fixed_step: float | None = None


@dataclass(frozen=True)
class Rule:
    """One registered mode, with the facts that callers read instead of its name.

    Attributes:
        name, build, summary: what it is and how it is built.
        backends: the only backends it runs on; None: every backend that has what it
            ``needs``.
        eager_cures: ``jit=False`` cures Python control flow on traced values:
            the mode runs f itself on concrete values (AD's primal pass). Modes
            that batch f's evaluations with vmap trace f even when eager.
        is_derivative: False for "primal" (f itself): no derivative or batch of
            perturbed copies to fit in memory.
        stepping: for modes with a step h (finite differences, complex step).
        schemes: the names a variant's bracket takes for this mode (a second-order
            mode's compositions, e.g. "forward-over-reverse"), the first the default;
            empty: the finite-difference schemes (``SCHEMES``).
        order: 1 for first derivatives, 2 for Hessians and Hessian-vector products.
        needs: the direction of AD it is built on ("forward", "reverse"; a backend's
            ``ad`` says which it has), or None: it only evaluates f.
    """

    name: str
    build: Callable[[Spec], Built]
    backends: tuple[str, ...] | None
    summary: str
    eager_cures: bool = False
    is_derivative: bool = True
    stepping: Stepping | None = None
    schemes: tuple[str, ...] = ()
    order: int = 1
    needs: str | None = None

    def runs_on(self, backend: Backend) -> bool:
        """Whether this mode can run on ``backend``."""
        if self.backends is not None and backend.name not in self.backends:
            return False
        if self.name in getattr(backend, "refuses", {}):
            return False
        return self.needs is None or self.needs in backend.ad

    def refusal(self, backend: Backend) -> str | None:
        """Why this mode cannot run on ``backend``, naming the modes it can; None if it can.

        A mode a framework cannot do is refused with this, never emulated.
        """
        if self.runs_on(backend):
            return None
        runs = [repr(name) for name in registered_modes() if _RULES[name].runs_on(backend)]
        if self.name in getattr(backend, "refuses", {}):  # the backend's own reason
            why = (
                f"cannot run on backend={backend.name!r}, which does not have what it "
                f"needs: {backend.refuses[self.name]}"
            )
            exact = [repr(m) for m in ("forward", "reverse") if m in backend.ad]
            other = f"use mode {' or '.join(exact or [repr('numeric')])} instead"
        elif self.needs is not None and self.needs not in backend.ad:
            why = f"needs {self.needs}-mode AD, which backend={backend.name!r} does not have"
            other = "use backend='jax' or another framework with it"
        else:
            only = " or ".join(map(repr, self.backends or ()))
            why, other = f"runs only on backend {only} yet", f"use backend={only}"
        return (f"mode {self.name!r} {why}; backend={backend.name!r} runs "
                f"{', '.join(runs[:-1])} and {runs[-1]} ({other} for {self.name!r})")  # fmt: skip


_RULES: dict[str, Rule] = {}


def register(
    name: str,
    *,
    backends: tuple[str, ...] | None = None,
    needs: str | None = None,
    summary: str,
    eager_cures: bool = False,
    is_derivative: bool = True,
    stepping: Stepping | None = None,
    schemes: tuple[str, ...] = (),
    order: int = 1,
):
    """Decorator registering ``build(spec) -> Built`` as mode ``name``, with its facts."""

    def deco(build: Callable[[Spec], Built]) -> Callable[[Spec], Built]:
        _RULES[name] = Rule(name, build, backends, summary, eager_cures, is_derivative, stepping,
                            schemes, order, needs)  # fmt: skip
        return build

    return deco


def get_rule(name: str) -> Rule:
    """The registered mode ``name``, or a ValueError listing the known ones."""
    try:
        return _RULES[name]
    except KeyError:
        raise ValueError(f"unknown mode {name!r}; choose one of {sorted(_RULES)}") from None


def mode_names() -> list[str]:
    """Names of the registered modes, in registration order."""
    return list(_RULES)


def registered_modes() -> tuple[str, ...]:
    """Every registered mode: the first-order ``MODES`` first, then the others as registered.

    Returns:
        A tuple of mode names.

    Example:
        >>> adlab.registered_modes()[:4]
        ('forward', 'reverse', 'numeric', 'complex-step')
    """
    return tuple(dict.fromkeys((*(m for m in MODES if m in _RULES), *_RULES)))


def pick(per_index: list[Any], wrt: int | tuple[int, ...]) -> Any:
    """One result per differentiated argument, shaped like JAX's argnums."""
    return tuple(per_index) if isinstance(wrt, tuple) else per_index[0]


def stepping_of(scheme: str) -> tuple[Rule, Stepping]:
    """The mode that runs step-sweep scheme ``scheme``, and its ``Stepping``."""
    for rule in _RULES.values():
        if rule.stepping is not None and scheme in rule.stepping.powers:
            return rule, rule.stepping
    known = [s for r in _RULES.values() if r.stepping for s in r.stepping.powers]
    raise ValueError(f"scheme must be one of {known}, got {scheme!r}")
