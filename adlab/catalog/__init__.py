"""The built-in models, one source file each (read as text, not imported)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ..engine.model.source import Model, is_model_source

#: catalog modules that are not models (GradBench's adapters)
NOT_MODELS = frozenset({"gradbench.py"})


def list_models() -> list[str]:
    """Names of the built-in models.

    Returns:
        A list of the catalog's model names.

    Example:
        >>> "rosenbrock" in adlab.list_models()
        True
    """
    files = resources.files(__name__).iterdir()
    return sorted(
        p.name[:-3]
        for p in files
        if p.name.endswith(".py") and not p.name.startswith("_") and p.name not in NOT_MODELS
    )


def source_of(name: str) -> str:
    """The source text of a built-in model."""
    if name not in list_models():
        raise ValueError(f"no model named {name!r} in the catalog; choose one of {list_models()}")
    return resources.files(__name__).joinpath(f"{name}.py").read_text()


def load_model(name: str, **settings) -> Model:
    """A built-in model by name, with optional new values for its settings.

    Returns:
        A ``Model``.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> model.name
        'rosenbrock'
        >>> x, *data = model.setup(4)
        >>> x.shape
        (4,)
    """
    return Model.from_source(source_of(name), name=name, **settings)


def resolve_model(spec: str | Model | Callable, **settings: Any) -> Model:
    """A ``Model`` from a catalog name, a path to a model file, source text, or a Model."""
    if isinstance(spec, Model):
        return spec.with_settings(**settings) if settings else spec
    if callable(spec):
        return Model.from_function(spec)
    if not isinstance(spec, str):
        raise TypeError(f"a model is a catalog name, a path or a Model, got {type(spec).__name__}")
    if spec in list_models():
        return load_model(spec, **settings)
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ValueError(f"no model file {spec!r}")
        return Model.from_source(path.read_text(), name=path.stem, **settings)
    if is_model_source(spec):
        return Model.from_source(spec, **settings)
    raise ValueError(
        f"no model named {spec!r}; choose one of {list_models()} or give a path to a .py file"
    )
