"""The frameworks a model runs on, one folder each, and each one's entry of facts (``facts``)."""

from ._registry import (
    KNOWN,
    Known,
    MissingFramework,
    default_jit,
    get_backend,
    has_compiler,
    installed,
    pip_command,
)
from .base import Backend, Program
from .facts import (
    BASELINE,
    COMPOSITIONS,
    DEFAULT,
    FACTS,
    JAVASCRIPT,
    JAXJS,
    REFERENCE,
    TFJS,
    Facts,
    KnownBug,
    always_installed,
    facts_of,
    label_of,
    with_fact,
)
from .levels import levels

__all__ = ["BASELINE", "COMPOSITIONS", "DEFAULT", "FACTS", "JAVASCRIPT", "JAXJS", "KNOWN",
           "REFERENCE",
           "TFJS", "Backend",
           "Facts", "Known", "KnownBug", "MissingFramework", "Program", "always_installed",
           "default_jit", "facts_of", "get_backend", "has_compiler", "installed", "label_of",
           "levels", "pip_command", "with_fact"]  # fmt: skip
