"""PyTorch's and TensorFlow's tensor operators under complex step (``x ** 3``, ``A @ x``).

The real-part rules (``real_part``) replace the model's ``np`` functions; an operator
belongs to the tensor class, so it is patched on the class while complex step evaluates
f, and restored after.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from .real_part import (
    COMPLEX_STEP,
    NAMESPACES,
    as_complex_beside,
    integer_power,
    integral,
    is_complex,
    real_part_functions,
)


@contextlib.contextmanager
def operators(framework: str) -> Iterator[None]:
    """Operators of PyTorch's and TensorFlow's tensors under complex step, on a complex
    x, while complex step evaluates f (set on the class, restored after: the operators
    are the class's, and patched ones would cost every other call a Python frame):

    - ``x ** p`` with a whole p by ``integer_power``: both compute a complex power as
      exp(p log x) past p = 3 (TensorFlow's eager ops even at 2 and 3), which at a
      negative real part leaves ~1e-16 in the imaginary part, 1e4 times complex step's;
    - PyTorch: ``A @ x`` with a real A (``as_complex_beside``), and ``x.max()``,
      ``x.min()`` of the real parts (PyTorch refuses complex ones), by its rules."""
    patches = _operator_patches(framework) if framework in NAMESPACES else ()
    saved = [(cls, name, cls.__dict__.get(name)) for cls, name, _ in patches]
    for cls, name, method in patches:
        setattr(cls, name, method)
    try:
        yield
    finally:
        for cls, name, before in saved:
            if before is None:
                delattr(cls, name)
            else:
                setattr(cls, name, before)


@functools.cache
def _operator_patches(framework: str) -> tuple:
    """(class, name, method) for ``operators``."""
    if framework == "torch":
        import torch

        cls = torch.Tensor
    else:
        import tensorflow as tf

        cls = tf.Tensor
    patches = []

    def under_complex_step_(name: str, rule: Callable) -> None:
        own = getattr(cls, name)

        @functools.wraps(own)
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            if COMPLEX_STEP.get() and (is_complex(self) or any(map(is_complex, args))):
                out = rule(self, *args, **kwargs)
                if out is not NotImplemented:
                    return out
            return own(self, *args, **kwargs)

        patches.append((cls, name, method))

    def power(z: Any, p: Any) -> Any:
        q = integral(p)
        return NotImplemented if q is None or not is_complex(z) else integer_power(z, q)

    under_complex_step_("__pow__", power)
    if framework == "torch":
        import torch

        under_complex_step_("__matmul__", lambda a, b: torch.matmul(*as_complex_beside((a, b))))
        under_complex_step_("__rmatmul__", lambda a, b: torch.matmul(*as_complex_beside((b, a))))
        rules = real_part_functions(NAMESPACES[framework])
        for name in ("max", "min"):  # NumPy's x.max(): no arguments (PyTorch's dims differ)
            amax = rules[name]
            under_complex_step_(name, lambda z, *a, amax=amax, **k: NotImplemented
                                if a or k else amax(z))  # fmt: skip
    return tuple(patches)
