"""A Python number made of a value that carries a derivative: refused, never silently constant.

``float(np.sum(x ** 2))`` under JAX or autograd fails: a traced value has no
number yet. PyTorch and TensorFlow run eagerly, so they hand the number over,
and the derivative then treats it as a constant: silently wrong. So while
adlab runs a model on them, their tensors' ``__float__``, ``__int__``,
``item``, ``tolist`` and ``numpy`` refuse a value that carries a derivative
(one the tape records, or one with a forward-mode tangent); one that does not
(data, or any value in a numeric mode) converts as before. The methods are
swapped on the tensor class around each of adlab's calls only (``Guard``,
about a microsecond), so the user's own code outside adlab is untouched; as
with TensorFlow's NumPy behaviour (``tensorflow.numpy_behaviour``), not
thread-safe: another thread's code during adlab's call sees the guard.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any


class Detached(TypeError):
    """A tensor that carries a derivative, made a Python number (or NumPy array) in f."""

    def __init__(self, label: str, method: str) -> None:
        super().__init__(f"{method}() of a {label} tensor that carries a derivative")
        self.label, self.method = label, method

    def adlab_gap(self, expr: str | None) -> tuple[str, str]:
        """(message, hint) for the model's error (``explain.framework_gap``)."""
        what = f"`{expr}`" if expr else f"{self.method}(...) on this line"
        call = "float(...)" if self.method == "__float__" else (
            "int(...)" if self.method == "__int__" else f".{self.method}()")  # fmt: skip
        return (f"{what} makes a plain number of a value that depends on x: {self.label} "
                "would treat it as a constant, and the derivative would silently leave "
                "out its dependence on x",
                f"drop the {call} and compute with the array itself (a 0-d array works "
                "wherever a number does, in `if` too); or take this derivative with "
                "mode='numeric'")  # fmt: skip


def _refusing(own: Callable, name: str, label: str, carries: Callable[[Any], bool]) -> Callable:
    @functools.wraps(own)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if carries(self):
            raise Detached(label, name)
        return own(self, *args, **kwargs)

    return method


class Guard:
    """Swaps attributes of ``cls`` in, around a call, and back: ``with guard: ...``.

    ``refuse``: methods that raise ``Detached`` on a value ``carries`` says carries a
    derivative; ``extra``: other attributes put in place (PyTorch's NumPy slicing).
    """

    __slots__ = ("cls", "swap", "saved")

    def __init__(self, cls: type, label: str, carries: Callable[[Any], bool],
                 refuse: Iterable[str], extra: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.cls = cls
        swap = {n: _refusing(getattr(cls, n), n, label, carries) for n in refuse
                if hasattr(cls, n)}  # fmt: skip
        swap.update(extra or {})
        self.swap = tuple(swap.items())
        self.saved: list = []

    def __enter__(self) -> None:
        cls = self.cls
        # nested calls (a Hessian's inner gradient) find the guard in place already
        self.saved.append(tuple((n, cls.__dict__.get(n)) for n, _ in self.swap))
        for n, v in self.swap:
            setattr(cls, n, v)

    def __exit__(self, *exc: Any) -> bool:
        cls = self.cls
        for n, v in self.saved.pop():
            if v is None:
                delattr(cls, n)
            else:
                setattr(cls, n, v)
        return False

    def around(self, fn: Callable) -> Callable:
        """``fn`` with the guard in place while it runs."""

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return run
