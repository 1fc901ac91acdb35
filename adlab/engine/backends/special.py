"""What a model gets beside ``np`` from SciPy's ``special``: ``logsumexp``.

``logsumexp(a, axis=None, keepdims=False)`` is ``log(sum(exp(a)))`` over
``axis`` (all of ``a`` when None), as ``scipy.special.logsumexp`` and
``jax.nn.logsumexp`` compute it for real input: shifted by the maximum, so
``exp`` cannot overflow.

Why not let models write it in NumPy syntax (``m = np.max(a); m +
np.log(np.sum(np.exp(a - m)))``)? Then AD differentiates the shift too:
max's masks, tie counts and broadcasts, whose contributions cancel exactly,
since the sum does not depend on the shift. Each framework's own function
holds the shift constant instead (a stop-gradient or a derivative rule of
its own): GradBench's gmm gradient on JAX cost 2.2-2.5 primals that way,
3.2 written out (D=10, K=5, n=1000; 1.5-1.7 against 2.4-3.0 at D=2), measured
with the model's earlier formulation. The shift is constant at every order, so
Hessians stay exact.

On each framework it is the framework's own: ``jax.nn.logsumexp``,
``torch.logsumexp``, ``tf.reduce_logsumexp``, autograd's and SciPy's
``scipy.special.logsumexp``. Under complex step, on a complex input, it is
the real-part rule (``real_part.logsumexp``): the shift taken from the real
parts and held constant, so the imaginary part carries the derivative exactly.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from . import real_part

#: the names this module puts beside ``np`` (``np.logsumexp`` is told to call them)
BESIDE_NP = frozenset({"logsumexp"})


def _axes(a: Any, axis: Any) -> tuple[int, ...] | None:
    """``axis`` checked against ``a``: None, or the axes as non-negative ints."""
    shape = getattr(a, "shape", None)
    if shape is None:
        raise TypeError(f"logsumexp takes an array, got {type(a).__name__}: make one with "
                        "np.asarray(...) or np.stack([...])")  # fmt: skip
    if axis is None:
        return None
    ndim = len(shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    try:
        axes = tuple(operator.index(k) for k in axes)
    except TypeError:
        raise TypeError(f"logsumexp's axis must be an int, a tuple of ints or None, "
                        f"got {axis!r}") from None  # fmt: skip
    if any(not -ndim <= k < ndim for k in axes):
        raise ValueError(f"logsumexp's axis {axis!r} is out of range for an array with "
                         f"{ndim} dimension{'s' * (ndim != 1)} (shape {tuple(shape)})")  # fmt: skip
    return tuple(k % ndim for k in axes)


def framework_functions(name: str) -> tuple[Callable, Callable]:
    """(the framework's own logsumexp(a, axes, keepdims), what holds a value constant)."""
    if name == "jax":
        import jax

        return (lambda a, axes, keep: jax.nn.logsumexp(a, axis=axes, keepdims=keep),
                jax.lax.stop_gradient)  # fmt: skip
    if name == "torch":
        import torch

        def own(a, axes, keep):  # torch wants dims: all of them for None
            return torch.logsumexp(a, dim=tuple(range(a.ndim)) if axes is None else axes,
                                   keepdim=keep)  # fmt: skip

        return own, lambda v: v.detach()
    if name == "tensorflow":
        import tensorflow as tf

        return (lambda a, axes, keep: tf.reduce_logsumexp(a, axis=axes, keepdims=keep),
                tf.stop_gradient)  # fmt: skip
    # SciPy's special functions are imported on the first call, not with the namespace
    # (seconds under load: a point's prepare would pay it, and its budget predict it)
    if name == "autograd":
        from autograd.tracer import getval

        def autograd_own(a, axes, keep):
            from autograd.scipy.special import logsumexp as autograd_lse

            return autograd_lse(a, axis=axes, keepdims=keep)

        return autograd_own, getval
    if name == "numpy":

        def scipy_own(a, axes, keep):
            from scipy.special import logsumexp as scipy_lse

            return scipy_lse(a, axis=axes, keepdims=keep)

        return scipy_own, lambda v: v
    raise ValueError(f"no logsumexp for framework {name!r}")


def special_functions(framework: str, np: Any) -> dict[str, Callable]:
    """``logsumexp`` for the model's namespace on ``framework``, whose ``np`` is ``np``."""
    own, constant = framework_functions(framework)

    def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """log(sum(exp(a))) over ``axis``, as ``scipy.special.logsumexp``."""
        axes = _axes(a, axis)
        if real_part.COMPLEX_STEP.get() and real_part.is_complex(a):
            return real_part.logsumexp(np, a, axes, bool(keepdims), constant)
        return own(a, axes, bool(keepdims))

    return {"logsumexp": logsumexp}
