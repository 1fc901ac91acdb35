"""Ways of taking a derivative, each registered under its name.

Importing this package registers the built-in modes: ``forward`` and
``reverse`` (JAX AD), ``numeric`` (finite differences), ``complex-step``,
``primal`` (f itself, timed the same way for ratios), and the second-order
``hessian`` and ``hvp``, whose bracket names a composition of modes.
"""

from . import ad, complex_step, hessian, numeric, primal  # noqa: F401  (registers the modes)
from ._registry import (
    Built,
    Rule,
    Spec,
    Stepping,
    get_rule,
    mode_names,
    register,
    registered_modes,
    stepping_of,
)

#: every built-in mode, read from the registry: the first-order ``MODES`` first, then
#: ``primal`` and the second-order ones (``registered_modes()`` also sees modes added later)
ALL_MODES: tuple[str, ...] = registered_modes()

__all__ = [
    "ALL_MODES", "Built", "Rule", "Spec", "Stepping", "get_rule", "mode_names", "register",
    "registered_modes", "stepping_of",
]  # fmt: skip
