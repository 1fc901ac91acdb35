"""NumPy's meaning on PyTorch where a name alone cannot give it (``torch.py``'s aliases can).

- Functions of two arrays take a Python number or list beside a tensor, as NumPy's
  do (``np.arctan2(x, 2.0)``, ``np.hypot``, ``np.fmax``, ``np.logaddexp``): PyTorch's
  take only tensors there. The number becomes a tensor of the tensor's dtype and
  device (the precision's float type where there is no float tensor beside it).
- ``np.array([x[0], x[1]])`` stacks the tensors (``torch.asarray`` copies their
  values, so forward mode lost the derivative and reverse mode failed);
  ``np.array([0.1, 0.2])`` is in the precision's float type (``torch.asarray``
  would round it to float32 first).
- On tensors (``GUARD``, see ``_detach``): slices with a negative step
  (``x[::-1]``, which PyTorch refuses: NumPy's meaning, always); while adlab runs
  the model, ``x.size`` as NumPy's element count (still callable as PyTorch's
  ``x.size()``), and no silent constant from ``float(v)`` of a value that carries
  a derivative.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._detach import Guard

#: NumPy's functions of two arrays whose PyTorch namesake refuses a Python number
#: in some position (checked against PyTorch 2.x); NumPy's ``equal`` is PyTorch's ``eq``
#: (``torch.equal`` says whether two tensors are equal, one bool)
BINARY = ("arctan2", "atan2", "copysign", "fmax", "fmin", "fmod", "hypot", "logaddexp",
          "logaddexp2", "heaviside", "ldexp", "nextafter", "greater", "greater_equal",
          "less", "less_equal", "not_equal", "logical_and", "logical_or",
          "logical_xor")  # fmt: skip


def _as_tensor(a: Any, like: Any, dtype: torch.dtype, device: torch.device) -> Any:
    """``a`` as a tensor beside ``like`` (a tensor or None): a float of ``like``'s float
    type, else of ``dtype``; an int of ``like``'s type, else int64."""
    if isinstance(a, torch.Tensor):
        return a
    t = torch.as_tensor(np.asarray(a), device=like.device if like is not None else device)
    if t.is_floating_point() or t.is_complex():
        if like is not None and (like.is_floating_point() or like.is_complex()):
            return t.to(like.dtype if like.is_complex() or not t.is_complex() else
                        torch.promote_types(like.dtype, t.dtype))  # fmt: skip
        return t.to(dtype if t.is_floating_point() else torch.promote_types(dtype, t.dtype))
    if like is not None and t.dtype != torch.bool and like.dtype != torch.bool:
        return t.to(like.dtype)
    return t


def numbers_beside(fn: Callable, dtype: torch.dtype, device: torch.device) -> Callable:
    """``fn`` with its Python numbers and lists made tensors (``_as_tensor``)."""

    @functools.wraps(fn)
    def numpy_like(*args: Any, **kwargs: Any) -> Any:
        like = next((a for a in args if isinstance(a, torch.Tensor)), None)
        return fn(*(_as_tensor(a, like, dtype, device) for a in args), **kwargs)

    return numpy_like


def _holds_tensor(obj: Any) -> bool:
    if isinstance(obj, torch.Tensor):
        return True
    return isinstance(obj, (list, tuple)) and any(_holds_tensor(o) for o in obj)


def _stacked(obj: Any, like: Any, dtype: torch.dtype, device: torch.device) -> Any:
    if isinstance(obj, (list, tuple)):
        return torch.stack([_stacked(o, like, dtype, device) for o in obj])
    return _as_tensor(obj, like, dtype, device)


def _first_tensor(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj
    for o in obj:
        t = _first_tensor(o) if isinstance(o, (list, tuple, torch.Tensor)) else None
        if t is not None:
            return t
    return None


def array_maker(to_dtype: Callable, dtype: torch.dtype, device: torch.device) -> Callable:
    """NumPy's ``np.array``/``np.asarray``: tensors in a list are stacked (their
    derivatives kept), numbers take the precision's float type."""

    def array(obj: Any, dtype_: Any = None, *args: Any, dtype: Any = None,
              **kwargs: Any) -> Any:  # fmt: skip
        want = dtype if dtype is not None else dtype_
        if isinstance(obj, torch.Tensor):
            out = obj
        elif _holds_tensor(obj):
            out = _stacked(obj, _first_tensor(obj), default, device)
        else:
            out = _as_tensor(obj, None, default, device)
        return out if want is None else out.to(to_dtype(want))

    default = dtype
    return array


# ------------------------------------------------------- tensors, while adlab runs
_GETITEM = torch.Tensor.__getitem__
_SIZE = torch.Tensor.size


def _flipped(t: Any, key: Any) -> tuple[Any, Any]:
    """(t flipped along the axes a negative-step slice of ``key`` takes, the key
    with those slices' positive-step equivalents): PyTorch slices only forwards."""
    key = key if isinstance(key, tuple) else (key,)

    def used(k: Any) -> int:  # the axes of t an index entry takes
        if k is None or k is Ellipsis:
            return 0
        return k.ndim if isinstance(k, torch.Tensor) and k.dtype == torch.bool else 1

    rest = t.ndim - sum(used(k) for k in key)
    dims, new, d = [], [], 0
    for k in key:
        if k is Ellipsis:
            d += rest
        elif isinstance(k, slice) and k.step is not None and k.step < 0:
            n = int(t.shape[d])
            idx = range(*k.indices(n))
            j = n - 1 - idx[0] if len(idx) else 0
            k = slice(j, j - k.step * (len(idx) - 1) + 1, -k.step) if len(idx) else slice(0, 0)
            dims.append(d)
        new.append(k)
        d += used(k)
    return t.flip(dims), tuple(new)


def _getitem(self: Any, key: Any) -> Any:
    """``Tensor.__getitem__`` with NumPy's negative steps."""
    try:
        return _GETITEM(self, key)
    except ValueError as exc:
        if "step must be greater than zero" not in str(exc):
            raise
    return _GETITEM(*_flipped(self, key))


class _Size(int):
    """``x.size``: NumPy's attribute (the number of elements), which PyTorch's code can
    still call as its method (``x.size()``, ``x.size(0)``)."""

    def __call__(self, *dim: Any) -> Any:
        return _SIZE(self.tensor, *dim)  # type: ignore[attr-defined]


class _NumpySize:
    """``Tensor.size``: NumPy's (``_Size``) while adlab runs the model (``on[0]``), else
    PyTorch's method. A descriptor with a name, as PyTorch's compiler reads one."""

    __name__ = __qualname__ = "size"

    def __init__(self, on: list) -> None:
        self.on = on

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None or not self.on[0]:
            return _SIZE.__get__(obj, cls)
        s = _Size(obj.numel())
        s.tensor = obj  # type: ignore[attr-defined]
        return s


def _numpy_size(on: list) -> dict[str, Any]:
    return {"__getitem__": _getitem, "size": _NumpySize(on)}


def _carries(t: Any) -> bool:
    """Whether ``t`` carries a derivative: recorded for reverse mode, or holding a
    forward-mode tangent, at any level of ``torch.func``'s transforms."""
    if not (t.is_floating_point() or t.is_complex()):
        return False
    functorch = torch._C._functorch
    while True:
        if t.requires_grad or torch.autograd.forward_ad.unpack_dual(t).tangent is not None:
            return True
        if not functorch.is_functorch_wrapped_tensor(t):
            return False
        inner = functorch.get_unwrapped(t)
        if inner is t:
            return False
        t = inner


GUARD = Guard(torch.Tensor, "PyTorch", _carries,
              ("__float__", "__int__", "item", "tolist", "numpy"),
              extra=_numpy_size)  # fmt: skip
