"""The built-in models, one source file each (read as text, not imported)."""

from __future__ import annotations

from importlib import resources

from .._model import Model


def catalog() -> list[str]:
    """Names of the built-in models."""
    files = resources.files(__name__).iterdir()
    return sorted(p.name[:-3] for p in files if p.name.endswith(".py") and not p.name.startswith("_"))


def source_of(name: str) -> str:
    """The source text of a built-in model."""
    if name not in catalog():
        raise ValueError(f"no model named {name!r} in the catalog; choose one of {catalog()}")
    return resources.files(__name__).joinpath(f"{name}.py").read_text()


def load_model(name: str, **settings) -> Model:
    """A built-in model by name, with optional new values for its settings."""
    return Model.from_source(source_of(name), name=name, **settings)
