"""The frameworks a model runs on, one file each; see ``base`` for what a backend is."""

from ._registry import (
    KNOWN,
    MissingFramework,
    default_jit,
    get_backend,
    has_compiler,
    installed,
    pip_command,
)
from .base import Backend, Program

__all__ = ["KNOWN", "Backend", "MissingFramework", "Program", "default_jit", "get_backend",
           "has_compiler", "installed", "pip_command"]  # fmt: skip
