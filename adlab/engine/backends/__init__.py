"""The frameworks a model runs on, one file each; see ``_base`` for what a backend is."""

from ._base import Backend, Program
from ._registry import (
    KNOWN,
    MissingFramework,
    default_jit,
    get_backend,
    has_compiler,
    installed,
    pip_command,
)

__all__ = ["KNOWN", "Backend", "MissingFramework", "Program", "default_jit", "get_backend",
           "has_compiler", "installed", "pip_command"]  # fmt: skip
