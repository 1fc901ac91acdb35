"""``grad(fn)``: the derivative a model takes inside itself, each framework's own AD.

A model may differentiate inside ``f`` (Pearlmutter & Siskind's particle and saddle:
a gradient inside an ODE step, an argmin inside an argmax). ``grad(fn)`` is provided
beside ``np``, as ``jax.grad`` is: ``grad(fn)(y, *rest)`` is d fn / d y, of y's shape,
for an fn that returns a scalar. The inner mode is ``prepare``'s ``inner=``:

=============  ==================================  ===============================
framework      inner="reverse" (default)           inner="forward"
=============  ==================================  ===============================
jax            ``jax.grad``                        ``jax.jacfwd``
torch          ``torch.func.grad``                 ``torch.func.jacfwd``
tensorflow     a nested ``tf.GradientTape``        ``tf.autodiff.ForwardAccumulator``
autograd       ``autograd.grad``                   ``make_jvp``, one unit tangent each
numpy          central differences (no AD)         the same
=============  ==================================  ===============================

Each is made once, when the model's source runs under that framework and inner mode
(``Model.function``), so a call pays nothing for the choice. The outer derivative
(``prepare``'s ``mode``) is taken through it by the same framework, whose AD keeps the
two perturbations apart (no perturbation confusion: d/dx [x * d/dy (x + y)] is 1, not 2).
TensorFlow's tapes and accumulators watch tensors by identity, so the inner y is a new
tensor (``tf.identity``) even where the model passes the outer x itself.

References:
    Siskind & Pearlmutter, "Nesting forward-mode AD in a functional framework",
    Higher-Order and Symbolic Computation 21(4), 2008 (perturbation confusion).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._vocab import ModelError
from ..model.precision import dtype_of

INNER_MODES = ("reverse", "forward")
#: the filenames adlab gives a model's source (``Model.from_source``)
_MODEL_FILE = "<adlab model "


def check_inner(inner: str) -> str:
    """``inner`` if it names an inner mode, else a ValueError listing them."""
    if inner not in INNER_MODES:
        raise ValueError(f"inner must be one of {list(INNER_MODES)}, got {inner!r}")
    return inner


def make(framework: str, inner: str, precision: str) -> Callable:
    """The model's ``grad`` on ``framework`` ("jax", "torch", ..., "numpy")."""
    check_inner(inner)
    return _MAKERS[framework](inner, precision)


# ------------------------------------------------------------------ checks
def _model_line() -> tuple[int | None, str | None]:
    """The innermost line of model source on the stack (the one that called ``grad``'s
    result: the function it differentiated has returned by the time it is checked)."""
    from ..model.userline import source_line

    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_MODEL_FILE):
            return frame.f_lineno, source_line(name, frame.f_lineno)
        frame = frame.f_back
    return None, None


def _scalar(fn: Callable) -> Callable:
    """``fn``, refusing a result that is not a scalar with the model's error at its line."""

    def checked(*args: Any) -> Any:
        out = fn(*args)
        shape = tuple(getattr(out, "shape", ()))
        if shape:
            lineno, line = _model_line()
            raise ModelError(
                f"grad(fn) differentiates a function that returns a scalar; this fn "
                f"returned an array of shape {shape}",
                lineno=lineno,
                line=line,
                hint="make fn return one number (np.sum(...), or one entry v[i]); for a "
                "vector function, take grad of each entry",
            )
        return out

    return checked


def _unit_tangents(shape: tuple[int, ...], dtype: Any) -> list[np.ndarray]:
    """The unit vectors of y's space, each in y's shape: forward mode's tangents."""
    size = int(np.prod(shape, dtype=int))
    return [e.reshape(shape) for e in np.eye(size, dtype=dtype)]


# -------------------------------------------------------------- frameworks
def _complex_refused(exc: BaseException) -> bool:
    """Whether a framework's reverse mode refused fn for its complex value (under complex
    step, fn closes over x + ih): forward mode then takes the derivative, which for a
    real y is the holomorphic one, as complex step needs."""
    text = str(exc).lower()
    return "complex" in text or "holomorphic" in text or "real scalar" in text


def _jax(inner: str, precision: str) -> Callable:
    import jax
    import jax.numpy as jnp

    def grad(fn: Callable) -> Callable:
        checked = _scalar(fn)
        forward = jax.jacfwd(checked)
        if inner == "forward":
            return forward
        reverse, holomorphic = jax.grad(checked), jax.grad(checked, holomorphic=True)

        def at(*args: Any) -> Any:
            try:  # at a complex y (complex step of a gradient), the holomorphic derivative
                return (holomorphic if jnp.iscomplexobj(args[0]) else reverse)(*args)
            except TypeError as exc:  # raised while tracing: nothing ran twice
                if not _complex_refused(exc):
                    raise
            return forward(*args)

        return at

    return grad


def _torch(inner: str, precision: str) -> Callable:
    import torch

    transform = torch.func.grad if inner == "reverse" else torch.func.jacfwd
    dtype = getattr(torch, precision)

    def grad(fn: Callable) -> Callable:
        checked = _scalar(fn)
        d = transform(checked)

        def forward(y: Any, *rest: Any) -> Any:
            """One ``torch.func.jvp`` per unit tangent: unlike ``jacfwd``, it takes fn's
            complex values (under complex step)."""
            one = lambda v: checked(v, *rest)  # noqa: E731
            basis = torch.eye(y.numel(), dtype=y.dtype, device=y.device)
            cols = [torch.func.jvp(one, (y,), (e.reshape(y.shape),))[1] for e in basis]
            return torch.stack(cols).reshape(y.shape)

        def at(y: Any, *rest: Any) -> Any:
            if not isinstance(y, torch.Tensor) or not y.is_floating_point() and not y.is_complex():
                y = torch.as_tensor(y, dtype=dtype)
            try:
                return d(y, *rest)
            except RuntimeError as exc:
                if not _complex_refused(exc):
                    raise
            return forward(y, *rest)

        return at

    return grad


def _tensorflow(inner: str, precision: str) -> Callable:
    import tensorflow as tf

    from .tensorflow import forward_jacobian, own_rules
    from .tensorflow.remat import inside

    zero = tf.UnconnectedGradients.ZERO
    dtype = getattr(tf, precision)

    def fresh(y: Any) -> Any:
        """y as a tensor of its own: watched by identity, it must not be the outer x.
        A Python number is of the precision's type (TensorFlow would make it float32)."""
        if not isinstance(y, (tf.Tensor, tf.Variable)):
            y = np.asarray(y)
            y = tf.convert_to_tensor(y.astype(np.result_type(y.dtype, dtype_of(precision))))
        return tf.identity(y if y.dtype.is_floating or y.dtype.is_complex else tf.cast(y, dtype))

    def reverse(fn: Callable) -> Callable:
        checked = _scalar(fn)
        by_columns = forward(fn)

        def at(y: Any, *rest: Any) -> Any:
            inside()  # no tape records in a checkpointed step: refused there
            y = fresh(y)
            with tf.GradientTape() as tape:
                tape.watch(y)
                out = checked(y, *rest)
            if out.dtype.is_complex:  # a tape's gradient of it is not the holomorphic one
                return by_columns(y, *rest)
            with own_rules():  # the backward pass in TensorFlow's rules, as the outer one
                return tape.gradient(out, y, unconnected_gradients=zero)

        return at

    def forward(fn: Callable) -> Callable:
        checked = _scalar(fn)

        def at(y: Any, *rest: Any) -> Any:
            """One accumulator pass per unit tangent, vectorized inside a compiled function
            (as first order's forward mode: a loop there would be unrolled n times)."""
            args = (fresh(y), *rest)
            return forward_jacobian(checked, args, 0, vectorized=not tf.executing_eagerly())

        return at

    return reverse if inner == "reverse" else forward


def _autograd(inner: str, precision: str) -> Callable:
    import autograd
    import autograd.numpy as anp
    from autograd.differential_operators import make_jvp

    def forward(fn: Callable) -> Callable:
        checked = _scalar(fn)

        def at(y: Any, *rest: Any) -> Any:
            push = make_jvp(checked, 0)(y, *rest)
            shape = anp.shape(y)
            cols = [push(e)[1] for e in _unit_tangents(shape, dtype_of(precision))]
            return anp.reshape(anp.stack(cols), shape)

        return at

    def reverse(fn: Callable) -> Callable:
        checked = _scalar(fn)
        d, holomorphic = autograd.grad(checked), autograd.holomorphic_grad(checked)
        by_columns = forward(fn)

        def at(*args: Any) -> Any:
            try:  # at a complex y (complex step of a gradient), the holomorphic derivative
                return (holomorphic if np.iscomplexobj(args[0]) else d)(*args)
            except TypeError as exc:
                if not _complex_refused(exc):
                    raise
            return by_columns(*args)

        return at

    return reverse if inner == "reverse" else forward


def _numpy(inner: str, precision: str) -> Callable:
    """Central differences with NumPy's default step, eps**(1/3) * max(|y|, 1) per
    component (``adlab.engine.modes.numeric``): NumPy has no AD, so both inner modes
    are this, and the records say so (``inner_note``)."""
    dtype = dtype_of(precision)
    eps = np.finfo(dtype).eps

    def grad(fn: Callable) -> Callable:
        checked = _scalar(fn)

        def at(y: Any, *rest: Any) -> Any:
            y = np.asarray(y)  # a Python number: of the precision's type
            y = (
                y
                if isinstance(y, np.ndarray) and y.ndim and np.issubdtype(y.dtype, np.inexact)
                else np.asarray(y, dtype=np.result_type(y.dtype, dtype))
            )
            h = eps ** (1 / 3) * np.maximum(np.abs(y.real), 1.0)
            cols = []
            for j in np.ndindex(*y.shape):
                up, down = y.copy(), y.copy()
                up[j] += h[j]
                down[j] -= h[j]
                cols.append((checked(up, *rest) - checked(down, *rest)) / (2 * h[j]))
            return np.reshape(np.array(cols), y.shape)  # complex where fn's values are

        return at

    return grad


def inner_note(backend: str) -> str | None:
    """What a record says about the model's ``grad`` on ``backend``, where it is not AD."""
    if backend == "numpy":
        return "the model's grad(...) is central differences on numpy (no AD)"
    return None


_MAKERS: dict[str, Callable[[str, str], Callable]] = {
    "jax": _jax,
    "torch": _torch,
    "tensorflow": _tensorflow,
    "autograd": _autograd,
    "numpy": _numpy,
    # JavaScript is emitted from JAX's program: a grad inside f is JAX's, traced with it
    "js": _jax,
}
