"""A Python number made of a value that carries a derivative: refused, never silently constant.

``float(np.sum(x ** 2))`` under JAX or autograd fails: a traced value has no
number yet. PyTorch and TensorFlow run eagerly, so they hand the number over,
and the derivative then treats it as a constant: silently wrong. So while
adlab runs a model on them, their tensors' ``__float__``, ``__int__``,
``item``, ``tolist`` and ``numpy`` refuse a value that carries a derivative
(one the tape records, or one with a forward-mode tangent); one that does not
(data, or any value in a numeric mode) converts as before. The methods are
the tensor class's own outside adlab's calls (``Guard``: on only around them),
so the user's own code outside adlab computes as before; as with TensorFlow's
NumPy behaviour (``tensorflow.numpy_behaviour``), not thread-safe: another
thread's code during adlab's call sees the guard.
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


def _refusing(own: Callable, name: str, label: str, carries: Callable[[Any], bool],
              on: list) -> Callable:  # fmt: skip
    @functools.wraps(own)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if on[0] and carries(self):
            raise Detached(label, name)
        return own(self, *args, **kwargs)

    return method


class Guard:
    """Methods of ``cls`` that refuse, while the guard is on (``with guard:``), a value
    ``carries`` says carries a derivative; ``extra(on)``: other attributes, which read
    the list ``on`` (``on[0]``: the guard is on) to act while it is (PyTorch's ``size``).

    They are put on the class once, when the guard is made: swapping a class's
    attributes around each call costs PyTorch's tensors 3-15 us a name (Python updates
    every subclass's slots); turning the guard on and off costs a list item. Off, each
    is the class's own, behind one Python call.
    """

    __slots__ = ("on",)

    def __init__(self, cls: type, label: str, carries: Callable[[Any], bool],
                 refuse: Iterable[str],
                 extra: Callable[[list], dict[str, Any]] | None = None) -> None:  # fmt: skip
        self.on = [0]
        swap = {n: _refusing(getattr(cls, n), n, label, carries, self.on) for n in refuse
                if hasattr(cls, n)}  # fmt: skip
        swap.update(extra(self.on) if extra else {})
        for n, v in swap.items():
            setattr(cls, n, v)

    def __enter__(self) -> None:
        self.on[0] += 1  # nested calls (a Hessian's inner gradient): a count

    def __exit__(self, *exc: Any) -> bool:
        self.on[0] -= 1
        return False

    def around(self, fn: Callable) -> Callable:
        """``fn`` with the guard on while it runs."""
        on = self.on

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            on[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                on[0] -= 1

        return run
