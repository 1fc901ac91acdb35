"""The ``np`` a model sees on a framework: its NumPy-like namespace, completed once.

A framework's own functions are bound as they are (``np.exp`` *is*
``torch.exp``), so a model pays nothing per operation for running under
adlab. Where NumPy's name is missing or means something else there, an alias
fills it in, made once when the namespace is built: another function of the
framework, or one with NumPy's defaults bound (``functools.partial``, a C call).
Functions that create arrays get the precision's float type and the device,
as JAX's do under its x64 setting; without it PyTorch would make float32
arrays in a float64 model.

A name the framework does not have raises an ``AttributeError`` that says so
(``explain.missing_attribute`` turns it into the model's error: "torch has no
np.interp here").
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: NumPy's functions that make new float arrays: their default dtype is the precision's
CREATORS = ("linspace", "zeros", "ones", "empty", "eye", "identity", "full")
#: where NumPy's signature takes ``dtype`` by position (``np.zeros(3, int)``)
DTYPE_AT = {"linspace": 5, "zeros": 1, "ones": 1, "empty": 1, "eye": 3, "identity": 1, "full": 2}


def float32_defaults(precision: str) -> dict[str, Any]:
    """``creator_defaults`` for a framework whose array makers default to float64, as
    NumPy's do: float32 where the precision asks for it (else ``np.linspace`` would turn
    a float32 model's result into float64), nothing at float64, where NumPy's default
    is the precision already and NumPy code passing dtype by position keeps working."""
    import numpy

    return {"dtype": numpy.float32} if precision == "float32" else {}


class Namespace(types.ModuleType):
    """A module object holding a framework's functions under NumPy's names.

    Attribute lookups are a module's own (no Python code runs for a name it
    holds); only a missing name reaches ``__getattr__``, which asks the
    framework's module (lazily imported submodules) and otherwise says which
    framework lacks it.
    """

    def __init__(self, framework: str, base: Any, names: Mapping[str, Any]) -> None:
        super().__init__(f"np ({framework})")
        self.__dict__.update(names)
        self.__dict__["__adlab_framework__"] = framework
        self.__dict__["__adlab_base__"] = base

    def __getattr__(self, name: str) -> Any:
        base = self.__dict__["__adlab_base__"]
        if not name.startswith("__"):
            try:
                return getattr(base, name)
            except AttributeError:
                pass
        raise AttributeError(
            f"{self.__adlab_framework__} has no np.{name} here", name=name, obj=self
        )

    def __dir__(self) -> list[str]:
        return sorted(k for k in self.__dict__ if not k.startswith("__"))


def build(
    framework: str,
    base: Any,
    *,
    aliases: Mapping[str, Any] = {},  # noqa: B006 - read only
    creators: Iterable[str] = (),
    creator_defaults: Mapping[str, Any] = {},  # noqa: B006
    drop: Iterable[str] = (),
    dtype_of: Callable[[Any], Any] | None = None,
) -> Namespace:
    """A namespace with ``base``'s public names, then ``aliases``; the ``creators``
    get ``creator_defaults`` (dtype, device) unless the model passes its own; names
    in ``drop`` are removed (a framework's function that means something else).
    ``dtype_of``: for a framework whose creators take ``dtype`` only by keyword and
    only as its own type (PyTorch's ``zeros(*size, dtype=)``): the creators then take
    NumPy's dtype by position or keyword (``np.zeros(3, int)``) and hand it over so."""
    names = {k: v for k, v in vars(base).items() if not k.startswith("_")}
    for name in drop:
        names.pop(name, None)
    names.update(aliases)
    for name in creators:
        fn = names.get(name)
        if fn is not None and creator_defaults:
            names[name] = _defaulted(fn, creator_defaults, DTYPE_AT[name], dtype_of)
    return Namespace(framework, base, names)


def _defaulted(fn: Callable, defaults: Mapping[str, Any], dtype_at: int,
               dtype_of: Callable[[Any], Any] | None = None) -> Callable:  # fmt: skip
    """``fn`` with ``defaults`` for what the call does not give. Without a dtype default,
    a C partial; with one, a dtype the model gives by position wins over it. With
    ``dtype_of``, the model's dtype goes by keyword, as the framework's own type."""
    if "dtype" not in defaults and dtype_of is None:
        return functools.partial(fn, **defaults)

    @functools.wraps(fn)
    def make(*args: Any, **kwargs: Any) -> Any:
        if dtype_of is not None:
            if len(args) > dtype_at:
                kwargs["dtype"] = args[dtype_at]
                args = args[:dtype_at] + args[dtype_at + 1 :]
            if "dtype" in kwargs:
                kwargs["dtype"] = dtype_of(kwargs["dtype"])
        given = kwargs.keys() | ({"dtype"} if len(args) > dtype_at else set())
        return fn(*args, **{k: v for k, v in defaults.items() if k not in given}, **kwargs)

    return make


def loop_map(stack: Callable) -> Callable:
    """``map_samples`` for frameworks with no compiled loop: f on each row, stacked."""

    def map_samples(fn: Callable, xs: Any) -> Any:
        return stack([fn(x) for x in xs])

    return map_samples
